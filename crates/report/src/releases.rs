//! OpenSSL release by release: the same handshakes on every OpenSSL release line a run has
//! (1.1.1, 3.0, 3.6, 4.0, ...), each as a factor against the release before it, and the
//! finding set beside the figure others publish for the 3.0 regression.
//!
//! The releases run in different drivers (one libssl each), so no two of them were sampled
//! side by side; each was paired with the run's baseline. A release's factor against another
//! is the quotient of their factors against that baseline ([`Factor::over`]), which keeps
//! both pairings and widens the interval for the two separate sets of rounds.

use tlsmatrix_analysis::provider::{explained, layers, releases, Layer, Runs, UNNAMED_LIMIT};
use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::side::Side;
use tlsmatrix_model::stats::Factor;

use crate::doc::{Block, Cell, Class, Section, Table};
use crate::figures::{factor_text, figure, own_factor, summary};

/// The handshakes compared, each side apart.
const SCENARIOS: &[&str] = &[
    "handshake-tls13-ecdsa-p256-x25519-full",
    "handshake-tls13-rsa-2048-x25519-full",
    "handshake-tls12-ecdsa-p256-x25519-full",
    "handshake-tls13-ecdsa-p256-x25519-ticket",
];

/// What others measured: a FreeBSD openssl-bench run of TLS 1.3 server handshakes.
const PUBLISHED: &str = "a published FreeBSD openssl-bench run measured TLS 1.3 server handshakes at 1,774/s on 1.1.1w and 1,334/s on 3.0.16 (0.75x, -25%)";

fn side_name(m: Metric) -> &'static str {
    if m == Metric::ClientCpuNs {
        "client"
    } else {
        "server"
    }
}

/// What others published about the provider layer, never restated as this run's.
const PUBLISHED_PROVIDER: &str = "What others published, not measured here: OpenSSL 3.0 takes at least two read locks per algorithm lookup (openssl#20286, #23388), and nginx's QUIC handshakes on it were found spending 12% of their CPU walking one OpenSSL hash table against 2% over TCP (quictls#10).";

/// Per release line and side, the provider layer on the lead handshake, and per side a
/// sentence on how much of each release's time above the oldest the layer accounts for.
fn provider_blocks(runs: Runs, lines: &[&str]) -> Vec<Block> {
    let scenario = SCENARIOS[0];
    let mut rows = Vec::new();
    let mut said = Vec::new();
    for side in [Side::Client, Side::Server] {
        let found = layers(runs, lines, scenario, side);
        rows.extend(found.iter().map(layer_row));
        let Some((oldest, newer)) = found.split_first() else {
            continue;
        };
        let parts: Vec<String> = newer
            .iter()
            .filter_map(|l| {
                let e = explained(oldest, l)?;
                let reach = match (e.by_instructions_us, e.by_instructions_share()) {
                    (Some(us), Some(share)) => format!(
                        ", and with what they reach, at its share of the instructions, {} µs ({:.0}%)",
                        figure(us),
                        100.0 * share
                    ),
                    _ => String::new(),
                };
                Some(match e.share {
                    Some(share) => format!(
                        "{} {} µs above {}, of which the layer's own functions {} µs ({:.0}%){reach}",
                        l.release,
                        figure(e.extra_us),
                        oldest.release,
                        figure(e.layer_us),
                        100.0 * share
                    ),
                    None => format!("{} not slower than {}", l.release, oldest.release),
                })
            })
            .collect();
        if !parts.is_empty() {
            said.push(format!("{side}: {}.", parts.join("; ")));
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![
        Block::Para(format!("The provider layer (method fetches and their cache, name maps, property queries, decoder and encoder lookups, the library context) on {scenario}, per release and side: its instructions per handshake (callgrind, their share of the side's in brackets): its functions' own, and the share of the hash-table walks, string comparisons, allocations, copies and locks they call that was done for them (each callee's own cost shared among its callers by the inclusive cost of their calls, as gprof shares time; cryptography and parsing a fetch reaches stay theirs); the lock calls and atomics made on its behalf, counted the same way, beside the side's whole; and its time: the profile run's share of the side's samples in the layer's own functions times the floor run's handshake, the interval the share's. The time counts the layer's own functions only (a profile sample has no call stack here), so it is the layer's lower bound in time. *: the side's library is stripped (hover).")),
        Block::Table(Table {
            caption: format!("OpenSSL's provider layer per release, {scenario} (hover: the time's interval)"),
            header: [
                "release",
                "side",
                "provider instr/hs",
                "provider µs/hs",
                "handshake µs",
                "layer locks/hs",
                "locks/hs",
                "layer atomics/hs",
                "atomics/hs",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            label_cols: 2,
        }),
    ];
    if !said.is_empty() {
        blocks.push(Block::Para(format!(
            "Each release's handshake time above the oldest's (the floor run's handshakes, one run), and the part the provider layer's growth accounts for: in time, its own functions' (the profile's); and, where the instruction run counted the layer with what it reaches, its share of the side's instructions set on the handshake's time, an estimate that assumes the layer runs at the side's average instructions per cycle (a stripped line's own row counts its named functions only; its build with symbols names them all): {}",
            said.join(" ")
        )));
    }
    blocks.push(Block::Para(PUBLISHED_PROVIDER.into()));
    blocks
}

/// A count per handshake, whole: `figure` keeps a decimal under 100.
fn whole(v: f64) -> String {
    if v.abs() < 100.0 {
        format!("{v:.0}")
    } else {
        figure(v)
    }
}

fn layer_row(l: &Layer) -> Vec<Cell> {
    let opt = |v: Option<f64>| Cell::plain(v.map_or("-".into(), whole));
    let incomplete = l.unnamed.filter(|u| *u > UNNAMED_LIMIT).map(|u| {
        format!(
            "split incompletely: {:.0}% of the side's instructions have no name (a stripped library), the layer's internal functions among them; the figure counts the layer's named functions only",
            100.0 * u
        )
    });
    vec![
        Cell::plain(l.release.clone()),
        Cell::plain(l.side.to_string()),
        match l.instructions {
            Some((p, t)) => Cell::with(
                format!(
                    "{} ({:.1}%){}",
                    whole(p),
                    100.0 * p / t.max(1.0),
                    if incomplete.is_some() { " *" } else { "" }
                ),
                Class::Plain,
                incomplete,
            ),
            None => Cell::plain("-"),
        },
        match l.time {
            Some(t) => Cell::with(
                figure(t.us),
                Class::Plain,
                Some(format!(
                    "95% interval {}-{} µs",
                    figure(t.low_us),
                    figure(t.high_us)
                )),
            ),
            None => Cell::plain("-"),
        },
        opt(l.time.map(|t| t.handshake_us)),
        opt(l.layer_locks),
        opt(l.locks),
        opt(l.layer_atomics),
        opt(l.atomics),
    ]
}

/// The section, when the run has at least two OpenSSL release lines; `runs` gives the
/// provider layer's figures where the report has those runs.
pub fn section(records: &[Record], impls: &[String], runs: Runs) -> Option<Section> {
    let lines = releases(impls);
    if lines.len() < 2 {
        return None;
    }
    let baseline = impls.first()?.as_str();
    let mut header = vec!["handshake".to_string(), "side".to_string()];
    header.extend(lines.iter().map(|l| format!("{l} hs/s (x the one before)")));
    header.push(format!("{} vs {}", lines[lines.len() - 1], lines[0]));
    let mut rows = Vec::new();
    let mut server_tls13 = Vec::new();
    for &scenario in SCENARIOS {
        for m in [Metric::ClientCpuNs, Metric::ServerCpuNs] {
            let figures: Vec<Option<(&Record, Factor)>> = lines
                .iter()
                .map(|l| own_factor(records, scenario, l, m, baseline))
                .collect();
            if figures.iter().all(Option::is_none) {
                continue;
            }
            let mut row = vec![Cell::plain(scenario), Cell::plain(side_name(m))];
            let mut before: Option<Factor> = None;
            for (i, f) in figures.iter().enumerate() {
                let Some((r, own)) = f else {
                    row.push(Cell::plain("-"));
                    before = None;
                    continue;
                };
                let rate = figure(summary(r).median);
                match before.map(|b| own.over(b)) {
                    Some(step) => {
                        if scenario == SCENARIOS[0] && m == Metric::ServerCpuNs {
                            server_tls13.push(format!("{} {}", lines[i], factor_text(&step)));
                        }
                        row.push(Cell::with(
                            format!("{rate} ({})", factor_text(&step)),
                            Class::of_factor(step.significant, step.ratio),
                            Some(format!("against {}", lines[i - 1])),
                        ));
                    }
                    None => row.push(Cell::plain(rate)),
                }
                before = Some(*own);
            }
            match (&figures[0], &figures[figures.len() - 1]) {
                (Some((_, first)), Some((_, last))) => {
                    let f = last.over(*first);
                    row.push(Cell::with(
                        factor_text(&f),
                        Class::of_factor(f.significant, f.ratio),
                        None,
                    ));
                }
                _ => row.push(Cell::plain("-")),
            }
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut blocks = Vec::new();
    if !server_tls13.is_empty() {
        blocks.push(Block::Para(format!(
            "TLS 1.3 server handshakes (ECDSA P-256, X25519), each release against the one before: {}; {PUBLISHED}.",
            server_tls13.join(", ")
        )));
    }
    if rows
        .iter()
        .any(|r| r[0].text.contains("rsa") && r[1].text == "server")
    {
        blocks.push(Block::Para("RSA server handshakes can go the other way: from 3.0 on, OpenSSL signs RSA-2048 with code for AVX-512 IFMA where the CPU has it, which 1.1.1 lacks (docs/findings.md shows the row with that path masked).".into()));
    }
    blocks.push(Block::Para(format!(
        "Each release ran in a driver of its own, paired round by round with {baseline}; a release's factor against another is the quotient of their factors against {baseline}, its interval widened for the two separate sets of rounds (u: one of them unpaired). Above 1 is faster. Each row pins its certificate, group and suite on both sides."
    )));
    blocks.push(Block::Table(Table {
        caption: "OpenSSL release by release".into(),
        header,
        rows,
        label_cols: 2,
    }));
    blocks.extend(provider_blocks(runs, &lines));
    Some(Section {
        id: "openssl-releases".into(),
        title: "OpenSSL release by release".into(),
        blocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;

    #[test]
    fn each_release_is_compared_with_the_one_before_through_the_baseline() {
        let base = "rustls-aws-lc";
        // Per-handshake server time; each release paired with the baseline, ratio = its time
        // over the baseline's: 1.1.1 at 2x the baseline's time, 3.0 at 3x, 3.6 at 2.4x.
        let rec = |imp: &str, ratio: f64| {
            RecordFixture::new(Metric::ServerCpuNs, 100_000.0 * ratio)
                .pair(imp, imp)
                .paired_with(base, &[ratio; 8])
                .build()
        };
        let records = vec![
            rec("openssl-1.1.1", 2.0),
            rec("openssl-3.0", 3.0),
            rec("openssl-3.6", 2.4),
        ];
        let impls: Vec<String> = [base, "openssl-1.1.1", "openssl-3.0", "openssl-3.6"]
            .map(String::from)
            .to_vec();
        let none = Runs {
            instructions: None,
            profile: None,
            floor: None,
            ..Default::default()
        };
        let s = section(&records, &impls, none).expect("three releases");
        let Block::Table(t) = s.blocks.last().unwrap() else {
            panic!("no table")
        };
        let row = &t.rows[0];
        assert_eq!(row[1].text, "server");
        // 3.0 takes 1.5x 1.1.1's time: 0.67x; 3.6 takes 0.8x 3.0's: 1.25x; 3.6 vs 1.1.1 0.83x.
        assert!(row[3].text.contains("(0.67x"), "{}", row[3].text);
        assert!(row[4].text.contains("(1.25x"), "{}", row[4].text);
        assert!(row[5].text.starts_with("0.83x"), "{}", row[5].text);
        let Block::Para(finding) = &s.blocks[0] else {
            panic!("no finding")
        };
        assert!(finding.contains("openssl-3.0 0.67x") && finding.contains("-25%"));
    }

    #[test]
    fn the_provider_layer_is_set_out_per_release_and_its_share_of_the_time_above_the_oldest() {
        use tlsmatrix_history::RunData;
        use tlsmatrix_model::record::Env;
        let rec = |imp: &str, m: Metric, v: f64| {
            RecordFixture::new(m, v)
                .scenario(SCENARIOS[0])
                .pair(imp, imp)
                .samples(vec![v; 5])
                .build()
        };
        let run = |records| RunData {
            run_id: "r".into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        };
        let instructions = run(vec![
            rec("openssl-1.1.1", Metric::ServerInstructions, 2_000_000.0),
            rec("openssl-1.1.1", Metric::ServerProviderInstructions, 0.0),
            rec("openssl-3.0", Metric::ServerInstructions, 2_500_000.0),
            rec("openssl-3.0", Metric::ServerProviderInstructions, 45_000.0),
            rec(
                "openssl-3.0",
                Metric::ServerUnnamedInstructions,
                1_000_000.0,
            ),
        ]);
        let profile = run(vec![
            rec("openssl-1.1.1", Metric::ServerProviderTimeShare, 0.0),
            rec("openssl-3.0", Metric::ServerProviderTimeShare, 0.04),
        ]);
        let floor = run(vec![
            rec("openssl-1.1.1", Metric::ServerCpuNs, 150_000.0),
            rec("openssl-3.0", Metric::ServerCpuNs, 200_000.0),
        ]);
        let runs = Runs {
            instructions: Some(&instructions),
            profile: Some(&profile),
            floor: Some(&floor),
            ..Default::default()
        };
        let b = provider_blocks(runs, &["openssl-1.1.1", "openssl-3.0"]);
        let Block::Table(t) = &b[1] else {
            panic!("the table second")
        };
        assert_eq!(t.rows.len(), 2, "the server side of each release");
        let texts: Vec<&str> = t.rows[1].iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "openssl-3.0",
                "server",
                "45,000 (1.8%) *",
                "8.0",
                "200",
                "-",
                "-",
                "-",
                "-"
            ]
        );
        let hover = t.rows[1][2].title.as_deref().unwrap();
        assert!(hover.starts_with("split incompletely: 40%"), "{hover}");
        assert_eq!(t.rows[0][2].text, "0 (0.0%)");
        let Block::Para(said) = &b[2] else {
            panic!("the sentence third")
        };
        assert!(
            said.contains("server: openssl-3.0 50.0 µs above openssl-1.1.1, of which the layer's own functions 8.0 µs (16%)"),
            "{said}"
        );
        let Block::Para(published) = &b[3] else {
            panic!("the published finding last")
        };
        assert!(published.starts_with("What others published, not measured here"));
    }
}
