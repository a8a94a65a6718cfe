//! Runs for other crates' tests (the report's renders what these compute), compiled always
//! as `tlsmatrix_model::fixture` is: a dev-dependency feature would give every crate above
//! this one a second release build for `cargo test`.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::{Class, TIME_CLASSES};
use tlsmatrix_model::fixture::RecordFixture;
use tlsmatrix_model::record::{Env, Metric, Record};
use tlsmatrix_model::side::Side;

/// A profile run of impl "a"'s client in scenario "s", with these shares of its samples by
/// class (the classes not named none), three samples each.
pub fn profile_run(shares: &[(Class, f64)]) -> RunData {
    RunData {
        run_id: "p".into(),
        env: Env::default(),
        status: "complete".into(),
        records: share_records(Metric::time_split_of(Side::Client), shares),
        cells: Vec::new(),
    }
}

/// `run` with the client's crypto floor split by the profile: `shares` by class.
pub fn with_floor_split(mut run: RunData, shares: &[(Class, f64)]) -> RunData {
    run.records
        .extend(share_records(Metric::floor_split_of(Side::Client), shares));
    run
}

/// Impl "a"'s records of `shares` under `metrics` (the time split's order), three samples
/// each.
fn share_records(metrics: [Metric; TIME_CLASSES], shares: &[(Class, f64)]) -> Vec<Record> {
    let share = |c: Class| shares.iter().find(|s| s.0 == c).map_or(0.0, |s| s.1);
    metrics
        .into_iter()
        .zip(Class::all().map(share))
        .map(|(m, v)| {
            Record::from_samples(
                "p",
                "s",
                ("a", "1"),
                ("a", "1"),
                m,
                vec![v; 3],
                Env::default(),
            )
            .expect("three samples make a record")
        })
        .collect()
}

/// One arm of a libp2p benchmark: `imp`'s handshake time, paired round by round with
/// upstream go-libp2p's at these ratios.
pub fn libp2p_arm(scenario: &str, imp: &str, ratios: &[f64]) -> Record {
    RecordFixture::new(Metric::NsPerOp, 1000.0)
        .scenario(scenario)
        .pair(imp, imp)
        .paired_with(crate::libp2p::UPSTREAM, ratios)
        .build()
}

/// A dial scenario's records as pairedbench writes them: TCP with upstream's TLS (the
/// reference), its A/A copy and QUIC, each with its CPU (1.2, 1.21 and 1.8 ms), round trips
/// (4, 4, 2) and the first byte through each link (85/405, 85/405, 45/205 ms).
pub fn libp2p_dial(scenario: &str) -> Vec<Record> {
    use crate::libp2p::{DIAL_LINKS, QUIC, UPSTREAM};
    let mut out = Vec::new();
    for (imp, cpu_us, rtts, ttfb) in [
        (UPSTREAM, 1200.0, 4.0, [85.0, 405.0]),
        ("go-libp2p-upstream (A/A)", 1210.0, 4.0, [85.0, 405.0]),
        (QUIC, 1800.0, 2.0, [45.0, 205.0]),
    ] {
        let fixture = |metric, centre| {
            RecordFixture::new(metric, centre)
                .scenario(scenario)
                .pair(imp, imp)
        };
        let mut cpu = fixture(Metric::CpuNsPerOp, 0.0).samples(vec![cpu_us * 1e3; 8]);
        if imp != UPSTREAM {
            cpu = cpu.paired_with(UPSTREAM, &[cpu_us / 1200.0; 8]);
        }
        out.push(cpu.build());
        out.push(
            fixture(Metric::FirstByteRoundTrips, rtts)
                .samples(vec![rtts])
                .build(),
        );
        for ((metric, _), ms) in DIAL_LINKS.iter().zip(ttfb) {
            out.push(fixture(*metric, ms).samples(vec![ms]).build());
        }
    }
    out
}

/// Impl `imp`'s QUIC instruction counts on `scenario` (`--measure quic-instructions`), both
/// sides: 1,000 instructions a class over TCP, and over QUIC 1,000 plus `extra` in the class
/// `grows`; each total the sum of its classes, three samples each.
pub fn quic_instruction_records(
    scenario: &str,
    imp: &str,
    grows: Class,
    extra: f64,
) -> Vec<Record> {
    use tlsmatrix_model::class::Carrier;
    let mut out = Vec::new();
    for side in [Side::Client, Side::Server] {
        for carrier in Carrier::BOTH {
            let (whole, parts) = Metric::carried_split_of(side, carrier);
            let mut values: Vec<(Metric, f64)> = parts
                .into_iter()
                .zip(Class::split())
                .map(|(m, class)| {
                    let more = carrier == Carrier::Quic && class == grows;
                    (m, 1000.0 + if more { extra } else { 0.0 })
                })
                .collect();
            values.push((whole, values.iter().map(|v| v.1).sum()));
            out.extend(values.into_iter().map(|(m, v)| {
                RecordFixture::new(m, 0.0)
                    .samples(vec![v; 3])
                    .scenario(scenario)
                    .pair(imp, imp)
                    .build()
            }));
        }
    }
    out
}
