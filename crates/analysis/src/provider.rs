//! OpenSSL 3's provider layer, release by release: per release line and side, the layer's
//! own instructions per handshake (the instruction run's split), its time (the profile run's
//! share of the side's samples times the floor run's handshake, as the time above the
//! floor is split), and the side's locks and atomics; and how much of a release's time above
//! the oldest release's the layer's growth accounts for.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::Class;
use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::side::Side;
use tlsmatrix_model::variant::SYMBOLS;

/// An OpenSSL release line's impl name as numbers: `openssl-3.6` -> [3, 6]. Variants
/// (`openssl-3.6+clang`) and other stacks are not release lines.
pub fn release_of(imp: &str) -> Option<Vec<u32>> {
    let line = imp.strip_prefix("openssl-")?;
    line.split('.').map(|n| n.parse().ok()).collect()
}

/// The OpenSSL release lines among `impls`, oldest first.
pub fn releases(impls: &[String]) -> Vec<&str> {
    let mut found: Vec<(Vec<u32>, &str)> = impls
        .iter()
        .filter_map(|i| release_of(i).map(|v| (v, i.as_str())))
        .collect();
    found.sort();
    found.into_iter().map(|(_, i)| i).collect()
}

fn own<'a>(run: Option<&'a RunData>, scenario: &str, imp: &str, m: Metric) -> Option<&'a Record> {
    run?.records
        .iter()
        .find(|r| r.scenario == scenario && r.client == imp && r.server == imp && r.metric == m)
}

/// The provider layer's time on one side: µs per handshake with the share's interval
/// carried over (the handshake's own interval is the floor table's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerTime {
    pub us: f64,
    pub low_us: f64,
    pub high_us: f64,
    pub handshake_us: f64,
}

/// One release line's provider layer on one side of one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub release: String,
    pub side: Side,
    /// The layer's own instructions and the side's total, per handshake.
    pub instructions: Option<(f64, f64)>,
    pub time: Option<LayerTime>,
    /// The side's lock calls and atomics per handshake, all of them.
    pub locks: Option<f64>,
    pub atomics: Option<f64>,
    /// The lock calls and atomics made on the layer's behalf (its own functions' and, in
    /// proportion, those of the code they reach).
    pub layer_locks: Option<f64>,
    pub layer_atomics: Option<f64>,
    /// The share of the side's instructions callgrind had no name for (a stripped library's
    /// internal functions, among them the layer's own where the library is stripped).
    pub unnamed: Option<f64>,
}

/// Above this share of unnamed instructions a side's layer figure is incomplete (the
/// instruction split's own bound).
pub const UNNAMED_LIMIT: f64 = 0.10;

/// The runs a layer's figures come from; any may be missing.
#[derive(Clone, Copy, Default)]
pub struct Runs<'a> {
    pub instructions: Option<&'a RunData>,
    pub profile: Option<&'a RunData>,
    pub floor: Option<&'a RunData>,
    /// The instruction and profile runs of builds with symbols (`impl+symbols`), which name
    /// a stripped release line's layer; its time is taken on the release's own floor run.
    pub symbols_instructions: Option<&'a RunData>,
    pub symbols_profile: Option<&'a RunData>,
}

/// Each release line's layer on `side` of `scenario`, in the order given; a line no run
/// has figures for is left out. A line with a build with symbols in the symbols runs is
/// followed by that build's layer, named "`line`, named by `line`+symbols": the stripped
/// line's figures explained, never in its place.
pub fn layers<'a>(runs: Runs<'a>, lines: &[&str], scenario: &str, side: Side) -> Vec<Layer> {
    let mut out = Vec::new();
    for &line in lines {
        let own = Sources {
            instructions: runs.instructions,
            profile: runs.profile,
            imp: line.to_string(),
        };
        out.extend(layer(
            own,
            runs.floor,
            line,
            line.to_string(),
            scenario,
            side,
        ));
        let companion = format!("{line}+{SYMBOLS}");
        let named = Sources {
            instructions: runs.symbols_instructions,
            profile: runs.symbols_profile,
            imp: companion.clone(),
        };
        out.extend(layer(
            named,
            runs.floor,
            line,
            format!("{line}, named by {companion}"),
            scenario,
            side,
        ));
    }
    out
}

/// Where one layer's instructions and profile share come from: the runs and the impl.
struct Sources<'a> {
    instructions: Option<&'a RunData>,
    profile: Option<&'a RunData>,
    imp: String,
}

/// One layer: its instructions and share from `from`, its handshake time from the floor
/// run's `timed` impl; `None` where neither instructions nor time are found.
fn layer(
    from: Sources,
    floor: Option<&RunData>,
    timed: &str,
    release: String,
    scenario: &str,
    side: Side,
) -> Option<Layer> {
    let (total, _, locks) = Metric::split_of(side);
    let (layer_locks, layer_atomics) = Metric::provider_locks_of(side);
    let row = Class::Provider.row();
    let provider = row
        .instructions
        .expect("the instruction split names the provider layer")[side.index()];
    let share = row.time_share[side.index()];
    let unnamed = Class::Unnamed
        .row()
        .instructions
        .expect("the instruction split names unnamed code")[side.index()];
    let at = |run: Option<&RunData>, m: Metric| own(run, scenario, &from.imp, m).map(|r| r.median);
    let instructions = at(from.instructions, provider).zip(at(from.instructions, total));
    let time = own(from.profile, scenario, &from.imp, share)
        .zip(own(floor, scenario, timed, Metric::handshake_ns_of(side)))
        .map(|(s, h)| {
            let hs = h.median / 1e3;
            LayerTime {
                us: s.median * hs,
                low_us: s.ci_low * hs,
                high_us: s.ci_high * hs,
                handshake_us: hs,
            }
        });
    let layer = Layer {
        release,
        side,
        instructions,
        time,
        locks: at(from.instructions, locks),
        atomics: at(from.instructions, Metric::atomics_of(side)),
        layer_locks: at(from.instructions, layer_locks),
        layer_atomics: at(from.instructions, layer_atomics),
        unnamed: at(from.instructions, unnamed)
            .zip(instructions)
            .map(|(u, (_, t))| u / t.max(1.0)),
    };
    (layer.instructions.is_some() || layer.time.is_some()).then_some(layer)
}

/// A release's handshake time above an older release's, and the part of it the provider
/// layer's growth accounts for (µs, and as a share of the difference): in time, its own
/// functions (what the profile names); and at its share of the side's instructions with what
/// it reaches, set on the handshake's time, an estimate that assumes the layer's code runs at
/// the side's average instructions per cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explained {
    pub extra_us: f64,
    pub layer_us: f64,
    /// `None` where the release is not slower than the older one.
    pub share: Option<f64>,
    /// The layer's growth at its instruction share (µs), where both have instructions.
    pub by_instructions_us: Option<f64>,
}

impl Explained {
    /// The instruction-share estimate over the time above the older release.
    pub fn by_instructions_share(&self) -> Option<f64> {
        self.by_instructions_us
            .filter(|_| self.extra_us > 0.0)
            .map(|us| us / self.extra_us)
    }
}

pub fn explained(older: &Layer, newer: &Layer) -> Option<Explained> {
    let (o, n) = (older.time?, newer.time?);
    let extra_us = n.handshake_us - o.handshake_us;
    let layer_us = n.us - o.us;
    let at_share = |l: &Layer, hs: f64| l.instructions.map(|(p, t)| p / t.max(1.0) * hs);
    Some(Explained {
        extra_us,
        layer_us,
        share: (extra_us > 0.0).then(|| layer_us / extra_us),
        by_instructions_us: at_share(newer, n.handshake_us)
            .zip(at_share(older, o.handshake_us))
            .map(|(n, o)| n - o),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::record::Env;

    const S: &str = "handshake-tls13-ecdsa-p256-x25519-full";

    fn rec(imp: &str, m: Metric, v: f64) -> Record {
        RecordFixture::new(m, v)
            .scenario(S)
            .pair(imp, imp)
            .samples(vec![v; 5])
            .build()
    }

    fn run(records: Vec<Record>) -> RunData {
        RunData {
            run_id: "r".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    #[test]
    fn release_lines_are_ordered_by_number_and_variants_left_out() {
        let impls: Vec<String> = [
            "rustls-aws-lc",
            "openssl-4.0",
            "openssl-1.1.1",
            "openssl-3.6+clang",
            "openssl-3.0",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            releases(&impls),
            ["openssl-1.1.1", "openssl-3.0", "openssl-4.0"]
        );
    }

    #[test]
    fn each_release_s_layer_in_instructions_and_time_and_what_it_explains() {
        let instructions = run(vec![
            rec("openssl-1.1.1", Metric::ClientInstructions, 2_000_000.0),
            rec("openssl-1.1.1", Metric::ClientProviderInstructions, 0.0),
            rec("openssl-3.5", Metric::ClientInstructions, 4_000_000.0),
            rec("openssl-3.5", Metric::ClientProviderInstructions, 50_000.0),
            rec("openssl-3.5", Metric::ClientLockCalls, 3_000.0),
            rec("openssl-3.5", Metric::ClientProviderLockCalls, 2_900.0),
        ]);
        let profile = run(vec![
            rec("openssl-1.1.1", Metric::ClientProviderTimeShare, 0.0),
            rec("openssl-3.5", Metric::ClientProviderTimeShare, 0.05),
        ]);
        let floor = run(vec![
            rec("openssl-1.1.1", Metric::ClientCpuNs, 200_000.0),
            rec("openssl-3.5", Metric::ClientCpuNs, 300_000.0),
        ]);
        let runs = Runs {
            instructions: Some(&instructions),
            profile: Some(&profile),
            floor: Some(&floor),
            ..Default::default()
        };
        let lines = ["openssl-1.1.1", "openssl-3.5", "openssl-4.0"];
        let l = layers(runs, &lines, S, Side::Client);
        assert_eq!(l.len(), 2, "4.0 has no figures");
        assert_eq!(l[1].instructions, Some((50_000.0, 4_000_000.0)));
        assert_eq!(l[1].locks, Some(3_000.0));
        // The layer's own share of them; a release without the layer has no figure for it.
        assert_eq!((l[1].layer_locks, l[0].layer_locks), (Some(2_900.0), None));
        assert_eq!(l[1].atomics, None);
        assert_eq!(l[1].unnamed, None, "no unnamed figure in the run");
        let t = l[1].time.unwrap();
        assert!(
            (t.us - 15.0).abs() < 1e-9 && t.handshake_us == 300.0,
            "{t:?}"
        );
        let e = explained(&l[0], &l[1]).unwrap();
        assert!((e.extra_us - 100.0).abs() < 1e-9);
        assert!((e.share.unwrap() - 0.15).abs() < 1e-9);
        // 50,000 of 4,000,000 instructions on a 300 µs handshake, none on 1.1.1's 200.
        assert!((e.by_instructions_us.unwrap() - 3.75).abs() < 1e-9, "{e:?}");
        assert!((e.by_instructions_share().unwrap() - 0.0375).abs() < 1e-9);
        assert_eq!(explained(&l[1], &l[0]).unwrap().share, None, "not slower");
    }

    /// A stripped line's build with symbols follows it: its instructions and share from the
    /// symbols runs, its time on the line's own floor-run handshake.
    #[test]
    fn a_stripped_line_is_followed_by_its_build_with_symbols() {
        let instructions = run(vec![
            rec("openssl-3.0", Metric::ClientInstructions, 5_000_000.0),
            rec(
                "openssl-3.0",
                Metric::ClientProviderInstructions,
                1_000_000.0,
            ),
        ]);
        let named = run(vec![
            rec("openssl-3.0", Metric::ClientInstructions, 5_000_000.0),
            rec(
                "openssl-3.0+symbols",
                Metric::ClientInstructions,
                5_001_000.0,
            ),
            rec(
                "openssl-3.0+symbols",
                Metric::ClientProviderInstructions,
                1_500_000.0,
            ),
        ]);
        let named_profile = run(vec![rec(
            "openssl-3.0+symbols",
            Metric::ClientProviderTimeShare,
            0.1,
        )]);
        let floor = run(vec![rec("openssl-3.0", Metric::ClientCpuNs, 400_000.0)]);
        let runs = Runs {
            instructions: Some(&instructions),
            floor: Some(&floor),
            symbols_instructions: Some(&named),
            symbols_profile: Some(&named_profile),
            ..Default::default()
        };
        let l = layers(runs, &["openssl-3.0"], S, Side::Client);
        let names: Vec<&str> = l.iter().map(|l| l.release.as_str()).collect();
        assert_eq!(
            names,
            ["openssl-3.0", "openssl-3.0, named by openssl-3.0+symbols"]
        );
        assert_eq!(l[0].time, None, "no profile of the system line");
        assert_eq!(l[1].instructions, Some((1_500_000.0, 5_001_000.0)));
        let t = l[1].time.unwrap();
        assert!(
            (t.us - 40.0).abs() < 1e-9 && t.handshake_us == 400.0,
            "{t:?}"
        );
    }
}
