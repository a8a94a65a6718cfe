//! `cargo xtask weather`: whether an impl's speed against the baseline follows the machine's
//! memory weather over minutes. An experiment, not a measurement, so it lives here rather than
//! in the user's `tlsmatrix` (`make weather` runs it). Turn after turn on one core: the memory probe, the impl's own
//! pair alone in its driver (a short process), the probe again, the baseline's own pair alone
//! in its driver. A turn gives the ratio of the two processes' median rates and the mean of
//! the probe readings around them; the summary sorts the turns into thirds by the cache probe
//! and correlates the ratio with each probe.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tlsmatrix_measure::memprobe::MemoryProbe;
use tlsmatrix_model::record::Metric;
use tlsmatrix_model::scenario::Scenario;
use tlsmatrix_model::stats;
use tlsmatrix_model::weather::Weather;
use tlsmatrix_registry::registry::{usable_cpus, ImplEntry, Registry};
use tlsmatrix_report::figures;
use tlsmatrix_report::text_table::Table;

use tlsmatrix_runner::groups::{self, CellRun, GroupRequest};

/// Whether an impl's speed against the baseline follows the machine's memory weather: for
/// some minutes, turn after turn on one core, a memory probe (pointer chases through half and
/// four times the last-level cache), the impl's own pair alone in its driver, the probe, the
/// baseline's own pair alone in its driver. Prints the ratio by thirds of the cache probe and
/// its correlation with each probe; every turn goes to --out as CSV.
///
/// Drivers inherit the environment, so `GOGC=25 cargo xtask weather --impl go-crypto-tls`
/// follows Go with a smaller heap goal.
#[derive(clap::Parser)]
#[command(
    name = "cargo xtask weather",
    after_help = "Example:\n  cargo xtask weather --impl go-crypto-tls --minutes 7"
)]
pub struct SeriesOptions {
    /// The impl to follow.
    #[arg(long = "impl", value_name = "NAME")]
    pub imp: String,
    /// The impl it is compared with.
    #[arg(long, default_value = "rustls-aws-lc", value_name = "NAME")]
    pub baseline: String,
    /// A timed handshake or bulk scenario id.
    #[arg(
        long,
        default_value = "handshake-tls12-ecdsa-p256-x25519-ticket",
        value_name = "ID"
    )]
    pub scenario: Scenario,
    /// How long to follow, in minutes (a turn takes about half a second).
    #[arg(long, default_value_t = 5.0, value_parser = parse_minutes)]
    pub minutes: f64,
    /// Follow exactly this many turns instead of for --minutes (a machine's speed does not
    /// change how many there are, so a test can ask for enough to sort into thirds).
    #[arg(long, value_name = "N", conflicts_with = "minutes", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub turns: Option<u32>,
    /// The CPU every turn runs on (default: the last this process may use).
    #[arg(long, value_name = "N")]
    pub core: Option<usize>,
    /// Where the test certificates are kept (made if missing).
    #[arg(long, default_value = "results/certs", value_name = "DIR")]
    pub certs: PathBuf,
    /// CSV file for every turn (replaced).
    #[arg(long, default_value = "results/weather.csv", value_name = "FILE")]
    pub out: PathBuf,
}

/// `--minutes`: a positive number of minutes, at most a day.
fn parse_minutes(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(m) if m > 0.0 && m <= 1440.0 => Ok(m),
        _ => Err(format!(
            "'{s}' is not a number of minutes between 0 and 1440"
        )),
    }
}

/// One turn: when it ended (s), each side's median rate, the weather around it.
struct Turn {
    at: f64,
    imp: f64,
    baseline: f64,
    weather: Weather,
}

/// One figure of a turn, to sort or summarize turns by.
type TurnValue = fn(&Turn) -> f64;

impl Turn {
    fn ratio(&self) -> f64 {
        self.imp / self.baseline
    }
}

/// Rounds a process samples; 20 of 5 ms with 20 ms of warm-up make a process of about a
/// tenth of a second, short enough that a turn sees one weather.
const ROUNDS: u32 = 20;

pub fn series(o: &SeriesOptions) -> Result<bool> {
    if !groups::is_grouped(&o.scenario) {
        bail!(
            "{} is not a timed handshake or bulk scenario; `cargo xtask weather` follows those",
            o.scenario
        );
    }
    let reg = Registry::discover()?;
    let (imp, baseline) = (reg.get(&o.imp)?, reg.get(&o.baseline)?);
    if imp.name == baseline.name {
        bail!("--impl and --baseline are both {}: a stack against itself says nothing about the weather", imp.name);
    }
    let cpus = usable_cpus();
    let core = match o.core {
        Some(c) if !cpus.contains(&c) => bail!("--core {c}: this process may use CPUs {cpus:?}"),
        Some(c) => c,
        None => *cpus.last().expect("usable_cpus gives at least one"),
    };
    let probe = MemoryProbe::for_cpu(core)
        .map_err(|why| anyhow::anyhow!("{why}, so there is no probe to size"))?;
    tlsmatrix_harness::certs::load_or_generate(&o.certs, o.scenario.params().sig)?;
    let mut csv = std::fs::File::create(&o.out)
        .with_context(|| format!("cannot write {}", o.out.display()))?;
    writeln!(
        csv,
        "seconds,{},{},ratio,cache_ns,memory_ns",
        imp.name, baseline.name
    )?;

    let req = GroupRequest {
        certs: &o.certs,
        rounds: ROUNDS,
        warmup_ms: 20,
        sample_ms: 5,
        silence_limit: Duration::from_secs(30),
        core: Some(core),
        heap_shift: 0,
    };
    let metric = match o.scenario {
        Scenario::Bulk(_) => Metric::SendMbPerS,
        _ => Metric::HandshakesPerS,
    };
    let total = Duration::from_secs_f64(o.minutes * 60.0);
    let bar = match o.turns {
        Some(n) => tlsmatrix_runner::progress::bar(u64::from(n), "turns"),
        None => tlsmatrix_runner::progress::bar(total.as_secs(), "s"),
    };
    let start = Instant::now();
    let mut turns: Vec<Turn> = Vec::new();
    let more = |done: usize| match o.turns {
        Some(n) => done < n as usize,
        None => start.elapsed() < total,
    };
    while more(turns.len()) {
        let before = tlsmatrix_runner::weather::read_on(&probe, core);
        let imp_rate = median_rate(imp, o.scenario, &req, metric)?;
        let after = tlsmatrix_runner::weather::read_on(&probe, core);
        let base_rate = median_rate(baseline, o.scenario, &req, metric)?;
        let t = Turn {
            at: start.elapsed().as_secs_f64(),
            imp: imp_rate,
            baseline: base_rate,
            weather: Weather::between(before, after),
        };
        writeln!(
            csv,
            "{:.1},{:.1},{:.1},{:.4},{:.1},{:.1}",
            t.at,
            t.imp,
            t.baseline,
            t.ratio(),
            t.weather.cache_ns,
            t.weather.memory_ns
        )?;
        bar.set_position(match o.turns {
            Some(_) => turns.len() as u64 + 1,
            None => start.elapsed().as_secs().min(total.as_secs()),
        });
        bar.set_message(format!(
            "{} turns, last ratio {:.3}",
            turns.len() + 1,
            t.ratio()
        ));
        turns.push(t);
    }
    bar.finish_and_clear();
    csv.flush()?;
    print!(
        "{}",
        summary(o, imp, baseline, core, &probe, metric, &turns)
    );
    println!("each turn: {}", o.out.display());
    Ok(true)
}

/// The median of one short process's rates for the impl's own pair.
fn median_rate(
    e: &ImplEntry,
    scenario: Scenario,
    req: &GroupRequest,
    metric: Metric,
) -> Result<f64> {
    let g = groups::own_pair(scenario, e);
    let run = groups::run_batch(&[&g], req, || {})
        .into_iter()
        .flatten()
        .next();
    let samples = match run {
        Some(CellRun::Measured { samples, .. }) => samples,
        Some(CellRun::Unsupported(why)) => bail!("{} cannot run {scenario}: {why}", e.name),
        Some(CellRun::Failed(why)) => bail!("{} failed in {scenario}: {why}", e.name),
        Some(CellRun::NotStarted) | None => bail!("{}'s driver gave no cell", e.name),
    };
    let values: Vec<f64> = samples
        .iter()
        .flat_map(|(_, v)| v.iter().filter(|(m, _)| *m == metric).map(|(_, x)| *x))
        .collect();
    if values.len() != ROUNDS as usize || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        bail!(
            "{} gave {} usable {} samples of {ROUNDS}",
            e.name,
            values.len(),
            metric.as_str()
        );
    }
    Ok(stats::median(&values))
}

fn summary(
    o: &SeriesOptions,
    imp: &ImplEntry,
    baseline: &ImplEntry,
    core: usize,
    probe: &MemoryProbe,
    metric: Metric,
    turns: &[Turn],
) -> String {
    let mut out = format!(
        "{} against {}, {}, {} turns over {:.1} min on CPU {core}; memory probe: chases of {}\n",
        imp.name,
        baseline.name,
        o.scenario,
        turns.len(),
        turns.last().map_or(0.0, |t| t.at / 60.0),
        probe.sizes()
    );
    if turns.len() < 6 {
        out.push_str("too few turns to sort into thirds; give it more --minutes or --turns\n");
        return out;
    }
    let unit = figures::shown(metric).title;
    let (h_imp, h_base) = (
        format!("{} {unit}", imp.name),
        format!("{} {unit}", baseline.name),
    );
    // The cache probe tells whether the last-level cache is ours (a few ns) or others' (near
    // DRAM); the memory probe how loaded main memory is. Either may be what moves a stack.
    let probes: [(&str, TurnValue); 2] = [
        ("cache probe", |t| t.weather.cache_ns),
        ("memory probe", |t| t.weather.memory_ns),
    ];
    for (probe_name, by) in probes {
        let mut sorted: Vec<&Turn> = turns.iter().collect();
        sorted.sort_by(|a, b| by(a).total_cmp(&by(b)));
        let head = format!("turns by {probe_name}");
        let mut t = Table::new(
            &[
                &head,
                "turns",
                "cache ns",
                "memory ns",
                &h_imp,
                &h_base,
                "ratio",
            ],
            1,
        );
        let n = sorted.len();
        for (i, name) in ["lowest third", "middle third", "highest third"]
            .iter()
            .enumerate()
        {
            let part = &sorted[i * n / 3..(i + 1) * n / 3];
            let med =
                |f: fn(&Turn) -> f64| stats::median(&part.iter().map(|t| f(t)).collect::<Vec<_>>());
            t.row(vec![
                name.to_string(),
                part.len().to_string(),
                format!("{:.0}", med(|t| t.weather.cache_ns)),
                format!("{:.0}", med(|t| t.weather.memory_ns)),
                figures::figure(med(|t| t.imp)),
                figures::figure(med(|t| t.baseline)),
                format!("{:.3}", med(Turn::ratio)),
            ]);
        }
        out.push_str(&t.render());
    }
    let logs = |f: TurnValue| turns.iter().map(|t| f(t).ln()).collect::<Vec<f64>>();
    let (ratio, cache, memory) = (
        logs(Turn::ratio),
        logs(|t| t.weather.cache_ns),
        logs(|t| t.weather.memory_ns),
    );
    out.push_str(&format!(
        "correlation (of logarithms, over turns): ratio with the cache probe r = {:+.2}, with the memory probe r = {:+.2}; {} alone with the memory probe r = {:+.2}, {} alone r = {:+.2}\n",
        stats::pearson(&ratio, &cache),
        stats::pearson(&ratio, &memory),
        imp.name,
        stats::pearson(&logs(|t| t.imp), &memory),
        baseline.name,
        stats::pearson(&logs(|t| t.baseline), &memory),
    ));
    out
}
