//! A record's figure as people see it and how many times better one figure is than another:
//! the statistics of its shown samples (over its blocks, bootstrapped once per distinct
//! input), the factor between two records (paired round by round where they were sampled in
//! turns), an impl's own factor against the baseline with itself, and the run's noise floor
//! and memory weather. Which pair's figure stands for an impl is decided here too, so every
//! table, chart and sentence of the report agrees.

use std::cell::RefCell;
use std::collections::HashMap;

use tlsmatrix_model::metric::Scale;
use tlsmatrix_model::record::{is_aa, Metric, Record};
use tlsmatrix_model::stats::{self, Factor, Summary};

#[derive(Debug, Clone, Copy)]
pub struct Shown {
    pub title: &'static str,
    pub unit: &'static str,
    /// From the recorded sample to the figure shown.
    pub scale: Scale,
    pub higher_is_better: bool,
}

pub fn shown(m: Metric) -> Shown {
    let row = m.row();
    Shown {
        title: row.title,
        unit: row.shown_unit,
        scale: row.scale,
        // Per-handshake time is shown as its inverse, a rate, so it points the other way.
        higher_is_better: m.higher_is_better() != (row.scale == Scale::PerSecond),
    }
}

/// Which side a figure belongs to, and so which side is held at the baseline to compare.
pub use tlsmatrix_model::metric::FigureSide as Side;

pub fn side(m: Metric) -> Side {
    m.side()
}

/// The (client, server) whose figure stands for `imp` when the other side is the baseline.
pub fn pair_for(m: Metric, imp: &str, baseline: &str) -> (String, String) {
    match side(m) {
        Side::Client => (imp.into(), baseline.into()),
        Side::Server => (baseline.into(), imp.into()),
        Side::Pair => (imp.into(), imp.into()),
    }
}

/// The pairs whose figure may stand for `imp`, best first: `pair_for`, then `imp` with
/// itself. An impl that shares no driver with the baseline has no in-memory pair with it
/// (go-crypto-tls), so its own pair stands in and is compared with the baseline's own pair;
/// [`with_itself`] tells such a record, and every table that shows one says so.
pub fn pairs_for(m: Metric, imp: &str, baseline: &str) -> Vec<(String, String)> {
    let first = pair_for(m, imp, baseline);
    let alone = (imp.to_string(), imp.to_string());
    // The A/A copy has its own row for the noise floor; its one-side figures stay out.
    if first == alone || tlsmatrix_model::record::is_aa(imp) {
        vec![first]
    } else {
        vec![first, alone]
    }
}

/// Whether a non-baseline impl's one-side figure comes from the impl with itself (see
/// [`pairs_for`]).
pub fn with_itself(r: &Record) -> bool {
    side(r.metric) != Side::Pair && r.client == r.server
}

/// The pair rate is the sum of the two sides the tables already show.
pub fn in_tables(m: Metric) -> bool {
    m != Metric::HandshakesPerS
}

/// The shown figures of a record's samples.
pub fn values(r: &Record) -> Vec<f64> {
    let scale = shown(r.metric).scale;
    r.samples.iter().map(|&v| scale.apply(v)).collect()
}

/// The statistics of the shown figures, over the record's blocks when it has them.
pub fn summary(r: &Record) -> Summary {
    blocked_summary(&values(r), &r.blocks).unwrap_or(r.summary())
}

/// [`stats::summarize_blocked`], once per distinct input and thread: the report shows each
/// figure and factor in several places (tables, charts, headlines, the markdown, the CSV),
/// and the bootstrap was most of its time.
fn blocked_summary(samples: &[f64], blocks: &[u32]) -> Option<Summary> {
    type Key = (Vec<u64>, Vec<u32>);
    thread_local! {
        static SEEN: RefCell<HashMap<Key, Option<Summary>>> = Default::default();
    }
    let key: Key = (
        samples.iter().map(|v| v.to_bits()).collect(),
        blocks.to_vec(),
    );
    if let Some(s) = SEEN.with(|seen| seen.borrow().get(&key).copied()) {
        return s;
    }
    let s = stats::summarize_blocked(samples, blocks);
    SEEN.with(|seen| seen.borrow_mut().insert(key, s));
    s
}

/// How many times better `r` is than `base` (same metric): above 1 is better whichever way
/// the metric points, with the interval and significance of that ratio. When `r` was sampled
/// in turns with `base` the factor is the median of their per-round ratios (paired);
/// otherwise it compares the two sets of samples. A paired factor is significant when its
/// interval excludes 1 and it is further from 1 than `floor` (the run's [`NoiseFloor`]).
pub fn advantage(r: &Record, base: &Record, floor: f64) -> Option<Factor> {
    // A part of a whole (Go's heap of a handshake's allocations) is never judged alone.
    if !same_machine_kind(r, base) || r.metric.row().part_of.is_some() {
        return None;
    }
    let paired = r
        .paired
        .as_ref()
        .filter(|p| p.reference_client == base.client && p.reference_server == base.server)
        .and_then(|_| paired_advantage(r));
    if let Some(f) = paired {
        return Some(f.beyond(floor));
    }
    let (v, b) = (values(r), values(base));
    if shown(r.metric).higher_is_better {
        stats::factor(&v, &b)
    } else {
        stats::factor(&b, &v)
    }
}

/// Whether two figures may be compared: timings only when taken on the same CPU model (a
/// factor between two machines measures the machines); counts and heap bytes always.
pub fn same_machine_kind(r: &Record, base: &Record) -> bool {
    r.metric.machine_independent() || r.env.cpu_model == base.env.cpu_model
}

/// The CPU models a set of records' timings were taken on, when more than one: the report
/// says that factors across them are not computed.
pub fn timing_cpu_models(records: &[Record]) -> Vec<&str> {
    let mut models: Vec<&str> = Vec::new();
    for r in records.iter().filter(|r| !r.metric.machine_independent()) {
        if !models.contains(&r.env.cpu_model.as_str()) {
            models.push(&r.env.cpu_model);
        }
    }
    if models.len() < 2 {
        models.clear();
    }
    models
}

/// A record's paired factor against its own reference, as times better; `None` unpaired.
pub fn paired_advantage(r: &Record) -> Option<Factor> {
    let p = r.paired.as_ref()?;
    let f = Factor::from_ratios(blocked_summary(&p.ratios, &p.blocks)?);
    Some(if r.metric.higher_is_better() {
        f
    } else {
        f.inverted()
    })
}

/// An impl with itself in a scenario: its figure, and its factor against the run's baseline
/// with itself, paired round by round (exactly 1 for the baseline; None when the record was
/// not paired with that baseline).
pub fn own_factor<'a>(
    records: &'a [Record],
    scenario: &str,
    imp: &str,
    m: Metric,
    baseline: &str,
) -> Option<(&'a Record, Factor)> {
    let r = records
        .iter()
        .find(|r| r.scenario == scenario && r.client == imp && r.server == imp && r.metric == m)?;
    let f = if imp == baseline {
        Factor {
            ratio: 1.0,
            ci_low: 1.0,
            ci_high: 1.0,
            significant: false,
            paired: true,
        }
    } else {
        let p = r.paired.as_ref()?;
        if p.reference_client != baseline || p.reference_server != baseline {
            return None;
        }
        paired_advantage(r)?
    };
    Some((r, f))
}

/// How far apart two identical figures land in this run: the baseline measured against a
/// copy of itself (the A/A cells), paired like every other comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct NoiseFloor {
    /// The largest distance from 1 of an A/A factor: a difference smaller than this is not
    /// told apart from noise.
    pub floor: f64,
    /// Where it was: scenario, figure title, the A/A factor.
    pub worst: (String, &'static str, Factor),
    /// How many A/A figures there were.
    pub figures: usize,
}

/// An A/A factor further than this from 1 marks the run as taken on a noisy machine.
pub const NOISY_MACHINE: f64 = 0.02;

impl NoiseFloor {
    /// From a run's records; `None` when it has no A/A cells (an unpaired run).
    pub fn of(records: &[Record]) -> Option<NoiseFloor> {
        let mut worst: Option<(String, &'static str, Factor)> = None;
        let mut figures = 0;
        for r in records
            .iter()
            .filter(|r| is_aa(&r.client) && in_tables(r.metric))
        {
            // Read the way the tables read it: times better.
            let Some(f) = paired_advantage(r) else {
                continue;
            };
            figures += 1;
            let distance = |f: &Factor| (f.ratio - 1.0).abs();
            if worst.as_ref().is_none_or(|w| distance(&f) > distance(&w.2)) {
                worst = Some((r.scenario.clone(), shown(r.metric).title, f));
            }
        }
        let worst = worst?;
        Some(NoiseFloor {
            floor: (worst.2.ratio - 1.0).abs(),
            worst,
            figures,
        })
    }

    pub fn noisy(&self) -> bool {
        self.floor > NOISY_MACHINE
    }

    /// The floor of a run's records, 0 when it has none.
    pub fn floor_of(records: &[Record]) -> f64 {
        NoiseFloor::of(records).map_or(0.0, |n| n.floor)
    }
}

/// The memory weather a run's passes met (`memprobe`): each probe's range and median over
/// the run's blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryWeather {
    /// Half the last-level cache, ns a load: (lowest, median, highest).
    pub cache_ns: (f64, f64, f64),
    /// Four times the last-level cache.
    pub memory_ns: (f64, f64, f64),
    pub blocks: usize,
}

impl MemoryWeather {
    /// `None` when the run did not probe (an unpaired run, or one from before the probe).
    pub fn of(records: &[Record]) -> Option<MemoryWeather> {
        // Shards of one run number their blocks alike, so a block is known by its reading too.
        let mut seen: Vec<(u32, u64, u64)> = records
            .iter()
            .flat_map(|r| &r.weather)
            .map(|b| {
                (
                    b.block,
                    b.weather.cache_ns.to_bits(),
                    b.weather.memory_ns.to_bits(),
                )
            })
            .collect();
        seen.sort_unstable();
        seen.dedup();
        if seen.is_empty() {
            return None;
        }
        let spread = |values: Vec<f64>| {
            let lo = values.iter().copied().fold(f64::MAX, f64::min);
            let hi = values.iter().copied().fold(f64::MIN, f64::max);
            (lo, stats::median(&values), hi)
        };
        Some(MemoryWeather {
            cache_ns: spread(seen.iter().map(|s| f64::from_bits(s.1)).collect()),
            memory_ns: spread(seen.iter().map(|s| f64::from_bits(s.2)).collect()),
            blocks: seen.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;

    fn on(cpu: &str, metric: Metric, centre: f64) -> Record {
        let env = tlsmatrix_model::record::Env {
            cpu_model: cpu.into(),
            ..Default::default()
        };
        RecordFixture::new(metric, centre)
            .scenario("s")
            .pair("a", "b")
            .env(env)
            .build()
    }

    #[test]
    fn memory_weather_counts_each_block_once_across_records() {
        use tlsmatrix_model::record::BlockWeather;
        use tlsmatrix_model::weather::Weather;
        let at = |block, cache_ns, memory_ns| BlockWeather {
            block,
            weather: Weather {
                cache_ns,
                memory_ns,
            },
        };
        let mut a = on("x", Metric::ClientCpuNs, 1e6);
        a.weather = vec![at(0, 14.0, 150.0), at(1, 120.0, 180.0)];
        let mut b = a.clone();
        // Block 1 again (another cell of the same pass), and a shard's block 1 of its own.
        b.weather = vec![at(1, 120.0, 180.0), at(1, 30.0, 160.0)];
        let w = MemoryWeather::of(&[a, b]).expect("probed");
        assert_eq!(w.blocks, 3);
        assert_eq!(w.cache_ns, (14.0, 30.0, 120.0));
        assert_eq!(w.memory_ns, (150.0, 160.0, 180.0));
        assert_eq!(
            MemoryWeather::of(&[on("x", Metric::ClientCpuNs, 1e6)]),
            None
        );
    }

    #[test]
    fn timings_from_two_cpu_models_are_never_compared_counts_are() {
        let (x, y) = ("EPYC 7B13", "Xeon 8375C");
        let time = |cpu| on(cpu, Metric::ClientCpuNs, 1e6);
        assert!(advantage(&time(x), &time(x), 0.0).is_some());
        assert!(advantage(&time(x), &time(y), 0.0).is_none());
        let count = |cpu| on(cpu, Metric::ClientInstructions, 5e6);
        assert!(advantage(&count(x), &count(y), 0.0).is_some());
        assert_eq!(timing_cpu_models(&[time(x), time(y), count(x)]), vec![x, y]);
        assert!(timing_cpu_models(&[time(x), count(y)]).is_empty());
    }

    /// libssl's allocations are a part of a handshake's: no factor even where both sides
    /// have them (and none against a side that runs no libssl, whose count is 0); the total
    /// has one.
    #[test]
    fn a_part_gets_no_factor_and_its_total_does() {
        let with = |m, samples: Vec<f64>| {
            let mut r = on("cpu", m, 1.0);
            r.samples = samples;
            r
        };
        let openssl = with(Metric::CBytesPerOp, vec![816_000.0, 816_500.0, 817_000.0]);
        let other = with(Metric::CBytesPerOp, vec![400_000.0, 401_000.0, 402_000.0]);
        let upstream = with(Metric::CBytesPerOp, vec![0.0, 0.0, 29.0]);
        assert!(advantage(&other, &openssl, 0.0).is_none());
        assert!(advantage(&openssl, &upstream, 0.0).is_none());
        let total = |samples| with(Metric::TotalBytesPerOp, samples);
        let f = advantage(
            &total(vec![400_000.0, 401_000.0, 402_000.0]),
            &total(vec![816_000.0, 816_500.0, 817_000.0]),
            0.0,
        )
        .unwrap();
        assert!((f.ratio - 2.04).abs() < 0.01, "{f:?}");
    }

    /// An impl with no in-memory pair with the baseline stands in with its own pair, and the
    /// record says so; an impl that has the pair, and the A/A copy, never fall back.
    #[test]
    fn a_figure_falls_back_to_the_impl_with_itself_and_says_so() {
        let b = "rustls-aws-lc";
        assert_eq!(
            pairs_for(Metric::ClientCpuNs, "go-crypto-tls", b),
            [
                ("go-crypto-tls".to_string(), b.to_string()),
                ("go-crypto-tls".to_string(), "go-crypto-tls".to_string())
            ]
        );
        assert_eq!(
            pairs_for(Metric::ServerCpuNs, "x", b)[0],
            (b.into(), "x".into())
        );
        assert_eq!(pairs_for(Metric::ClientWireBytes, "x", b).len(), 1);
        let aa = tlsmatrix_model::record::aa_label(b);
        assert_eq!(pairs_for(Metric::ClientCpuNs, &aa, b).len(), 1);
        let mut r = on("cpu", Metric::ClientCpuNs, 1e6);
        assert!(!with_itself(&r));
        r.server = r.client.clone();
        assert!(with_itself(&r));
        r.metric = Metric::ClientWireBytes;
        assert!(
            !with_itself(&r),
            "a pair figure is always the impl with itself"
        );
    }

    #[test]
    fn handshake_cost_is_shown_as_a_rate_and_counts_lower_is_better() {
        let s = shown(Metric::ClientCpuNs);
        assert!(s.higher_is_better);
        assert_eq!(s.scale.apply(1e6), 1000.0);
        assert!(!shown(Metric::ServerInstructions).higher_is_better);
        assert!(shown(Metric::SendMbPerS).higher_is_better);
        assert!(!shown(Metric::NsPerOp).higher_is_better);
    }
}
