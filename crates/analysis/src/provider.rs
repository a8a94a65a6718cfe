//! OpenSSL 3's provider layer, release by release: per release line and side, the layer's
//! own instructions per handshake (the instruction run's split), its time (the profile run's
//! share of the side's samples times the floor run's handshake, as the time above the
//! floor is split), and the side's locks and atomics; and how much of a release's time above
//! the oldest release's the layer's growth accounts for.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::Class;
use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::side::Side;

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
    pub locks: Option<f64>,
    pub atomics: Option<f64>,
    /// The share of the side's instructions callgrind had no name for (a stripped library's
    /// internal functions, among them the layer's own where the library is stripped).
    pub unnamed: Option<f64>,
}

/// Above this share of unnamed instructions a side's layer figure is incomplete (the
/// instruction split's own bound).
pub const UNNAMED_LIMIT: f64 = 0.10;

/// The runs a layer's figures come from; any may be missing.
#[derive(Clone, Copy)]
pub struct Runs<'a> {
    pub instructions: Option<&'a RunData>,
    pub profile: Option<&'a RunData>,
    pub floor: Option<&'a RunData>,
}

/// Each release line's layer on `side` of `scenario`, in the order given; a line no run
/// has figures for is left out.
pub fn layers<'a>(runs: Runs<'a>, lines: &[&str], scenario: &str, side: Side) -> Vec<Layer> {
    let (total, _, locks) = Metric::split_of(side);
    let row = Class::Provider.row();
    let provider = row
        .instructions
        .expect("the instruction split names the provider layer")[side.index()];
    let share = row.time_share[side.index()];
    let unnamed = Class::Unnamed
        .row()
        .instructions
        .expect("the instruction split names unnamed code")[side.index()];
    lines
        .iter()
        .filter_map(|&line| {
            let at = |run: Option<&'a RunData>, m: Metric| own(run, scenario, line, m);
            let instructions = at(runs.instructions, provider)
                .zip(at(runs.instructions, total))
                .map(|(p, t)| (p.median, t.median));
            let time = at(runs.profile, share)
                .zip(at(runs.floor, Metric::handshake_ns_of(side)))
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
                release: line.to_string(),
                side,
                instructions,
                time,
                locks: at(runs.instructions, locks).map(|r| r.median),
                atomics: at(runs.instructions, Metric::atomics_of(side)).map(|r| r.median),
                unnamed: at(runs.instructions, unnamed)
                    .zip(instructions)
                    .map(|(u, (_, t))| u.median / t.max(1.0)),
            };
            (layer.instructions.is_some() || layer.time.is_some()).then_some(layer)
        })
        .collect()
}

/// A release's handshake time above an older release's, and the part of it the provider
/// layer's growth accounts for (µs, and as a share of the difference).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explained {
    pub extra_us: f64,
    pub layer_us: f64,
    /// `None` where the release is not slower than the older one.
    pub share: Option<f64>,
}

pub fn explained(older: &Layer, newer: &Layer) -> Option<Explained> {
    let (o, n) = (older.time?, newer.time?);
    let extra_us = n.handshake_us - o.handshake_us;
    let layer_us = n.us - o.us;
    Some(Explained {
        extra_us,
        layer_us,
        share: (extra_us > 0.0).then(|| layer_us / extra_us),
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
        };
        let lines = ["openssl-1.1.1", "openssl-3.5", "openssl-4.0"];
        let l = layers(runs, &lines, S, Side::Client);
        assert_eq!(l.len(), 2, "4.0 has no figures");
        assert_eq!(l[1].instructions, Some((50_000.0, 4_000_000.0)));
        assert_eq!(l[1].locks, Some(3_000.0));
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
        assert_eq!(explained(&l[1], &l[0]).unwrap().share, None, "not slower");
    }
}
