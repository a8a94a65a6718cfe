//! Each handshake against its crypto floor, from a floor run (`tlsmatrix run --measure
//! floor`): per impl and side, the handshake's time, the floor (the library's own primitives for
//! exactly the operations that side must perform) in its three parts, and what lies above it;
//! a stacked bar per scenario, and a sentence per stack naming its largest cost above the floor
//! from the instruction run's split of the same scenario where there is one.

use tlsmatrix_analysis::floor::{scenarios, side_floor, SideFloor, Standing};
use tlsmatrix_history::RunData;
use tlsmatrix_model::side::Side;
use tlsmatrix_model::variant::SYMBOLS;

use crate::doc::{Block, Cell, Chart, ChartKind, Class, Point, Series, Table};
use crate::figures::figure;
use crate::overhead::{self, OverheadSplit, MOSTLY_CRYPTO};
use crate::self_pairs::{micros, refusals};

const METHOD: &str = "The crypto floor of a handshake is what its side's cryptography alone costs through the library's own crypto API: the key shares and the secret (for a hybrid group, both halves), each signature the side must make and each it must verify (the peer's handshake signature and one per certificate of the chain), and the HMACs of the key schedule (HKDF, Finished, binders; TLS 1.2's PRF). Each operation is timed apart from any TLS, in batches taken in turns with batches of the handshake itself in one process, so a floor and its handshake are figures taken milliseconds apart. The floor leaves out what a stack may do but the protocol does not require (ticket encryption, transcript hashing), so it is a lower bound: everything above it is protocol, parsing, allocation and locking.";

/// The scenario shown first.
const LEAD: &str = "handshake-tls13-ecdsa-p256-x25519-full";

/// A side's sentence: how far above its floor it is, and what the instruction split says the
/// rest is, where the instruction run counted the scenario.
fn sentence(
    imp: &str,
    side: Side,
    f: &SideFloor,
    above: Option<(&str, f64)>,
    split: Option<&OverheadSplit>,
) -> String {
    let (h, fl) = (f.handshake.median, f.floor.median);
    let times = h / fl.max(1.0);
    let head = if let Standing::WithinNoise { low, high } = f.standing {
        format!(
            "{imp} ({side}): its {} µs handshake is its crypto floor within the run's noise (the floor's share of it, 95% interval {:.0}-{:.0}%); nothing measurable lies outside the cryptography",
            figure(h / 1e3),
            100.0 * low,
            100.0 * high
        )
    } else if f.standing == Standing::Above {
        format!(
            "{imp} ({side}): its floor ({} µs) is above its handshake ({} µs): an operation is counted that this stack does not perform, or the two were measured apart",
            figure(fl / 1e3),
            figure(h / 1e3)
        )
    } else if fl >= MOSTLY_CRYPTO * h {
        format!(
            "{imp} ({side}): {:.0}% of its {} µs handshake is its crypto floor; little is left to gain outside the cryptography",
            100.0 * fl / h,
            figure(h / 1e3)
        )
    } else {
        format!(
            "{imp} ({side}): {times:.1}x its crypto floor ({} µs of {} µs); {} µs above it",
            figure(fl / 1e3),
            figure(h / 1e3),
            figure((h - fl) / 1e3)
        )
    };
    match (split, above) {
        (Some(split), _) if split.judged() => format!("{head}{}.", overhead::clause(split)),
        (_, Some((part, share))) if fl < MOSTLY_CRYPTO * h => format!(
            "{head}, of which its instructions put the largest part in {part} ({:.0}% of the side's instructions).",
            100.0 * share
        ),
        _ => format!("{head}."),
    }
}

/// The "above the floor" and "floor share" cells: a floor above its handshake beyond noise
/// is flagged; a handshake that is its floor within noise reads as about all floor, with
/// the interval, never as a share above 100%.
fn standing_cells(f: &SideFloor) -> (Cell, Cell) {
    let (h, fl) = (f.handshake.median, f.floor.median);
    let share = format!("{:.0}%", 100.0 * fl / h.max(1.0));
    match f.standing {
        Standing::Below => (
            Cell::plain(figure(f.above_floor_ns() / 1e3)),
            Cell::plain(share),
        ),
        Standing::Above => (
            Cell::with(
                figure((h - fl) / 1e3),
                Class::Bad,
                Some("the floor is above the handshake: a counting error".into()),
            ),
            Cell::with(share, Class::Bad, None),
        ),
        Standing::WithinNoise { low, high } => {
            let why = format!(
                "the handshake is its floor within the run's noise: the floor's share of it, per sample, has its 95% interval at {:.0}-{:.0}% (median {share})",
                100.0 * low,
                100.0 * high
            );
            (
                Cell::with("≈0", Class::Same, Some(why.clone())),
                Cell::with(
                    format!("≈100% ({:.0}-{:.0}%)", 100.0 * low, 100.0 * high),
                    Class::Same,
                    Some(why),
                ),
            )
        }
    }
}

/// For a scenario, impl and side: the largest part of its instructions besides the
/// cryptography, and that part's share.
pub type LargestAbove<'a> = dyn Fn(&str, &str, Side) -> Option<(&'static str, f64)> + 'a;

/// The blocks, when the run has a floor; `split` names a side's largest part above its
/// cryptography (by instructions) for a scenario, impl and side; `profile`, a profile run of
/// handshakes, splits the time above each floor where it has the cell; `named`, a profile
/// run of builds with symbols (`impl+symbols`), splits a stripped system library's time
/// above its floor again, by its rebuild's names, in a row of its own.
pub fn blocks(
    run: &RunData,
    split: &LargestAbove,
    profile: Option<&RunData>,
    named: Option<&RunData>,
) -> Vec<Block> {
    let scenarios = scenarios(run);
    if scenarios.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::Para(METHOD.into())];
    if profile.is_some() {
        blocks.push(Block::Para(overhead::METHOD.into()));
    }
    let impls = run.impls();
    // The handshake most readers compare first leads; the others fold under it.
    let mut scenarios = scenarios;
    if let Some(at) = scenarios.iter().position(|s| *s == LEAD) {
        let lead = scenarios.remove(at);
        scenarios.insert(0, lead);
    }
    let mut folded = Vec::new();
    for (n, scenario) in scenarios.into_iter().enumerate() {
        let into = if n == 0 { &mut blocks } else { &mut folded };
        let mut rows = Vec::new();
        let mut said = Vec::new();
        let mut categories = Vec::new();
        let mut splits = Vec::new();
        let mut series: Vec<Series> = std::iter::once("crypto floor")
            .chain(overhead::CHART_PARTS)
            .map(|n| Series {
                name: n.to_string(),
                points: Vec::new(),
            })
            .collect();
        for imp in &impls {
            for side in [Side::Client, Side::Server] {
                let Some(f) = side_floor(run, scenario, imp, side) else {
                    continue;
                };
                let (h, fl) = (f.handshake.median, f.floor.median);
                let split_of = profile
                    .and_then(|p| OverheadSplit::of(p, scenario, imp, side, h, fl))
                    .filter(|_| f.standing == Standing::Below);
                // The system library's time, split by its rebuild's profile shares.
                let named_by = named
                    .and_then(|p| {
                        let companion = format!("{imp}+{SYMBOLS}");
                        OverheadSplit::of(p, scenario, &companion, side, h, fl)
                            .map(|s| (format!("{imp}, named by {companion}"), s))
                    })
                    .filter(|_| f.standing == Standing::Below);
                let (over, share) = standing_cells(&f);
                let mut row = vec![
                    Cell::plain(imp.clone()),
                    Cell::plain(side.to_string()),
                    micros(&f.handshake),
                    micros(&f.floor),
                ];
                row.extend(
                    f.parts
                        .iter()
                        .map(|p| Cell::plain(p.map_or("-".into(), |v| figure(v / 1e3)))),
                );
                row.push(over);
                row.push(share);
                rows.push(row);
                said.push(sentence(
                    imp,
                    side,
                    &f,
                    split(scenario, imp, side),
                    split_of.as_ref(),
                ));
                categories.push(format!("{imp} {side}"));
                let point = |v: f64| {
                    Some(Point {
                        median: v / 1e3,
                        low: v / 1e3,
                        high: v / 1e3,
                    })
                };
                series[0].points.push(Some(Point {
                    median: fl / 1e3,
                    low: f.floor.ci_low / 1e3,
                    high: f.floor.ci_high / 1e3,
                }));
                let mut unsplit = [0.0; overhead::CHART_PARTS.len()];
                unsplit[overhead::CHART_PARTS.len() - 1] = (h - fl).max(0.0);
                let segments = split_of.as_ref().map_or(unsplit, overhead::segments);
                for (s, v) in series[1..].iter_mut().zip(segments) {
                    s.points.push(point(v));
                }
                if let Some(s) = split_of {
                    splits.push((imp.clone(), side, s));
                }
                if let Some((label, s)) = named_by {
                    splits.push((label, side, s));
                }
            }
        }
        if rows.is_empty() {
            continue;
        }
        into.push(Block::Chart(Chart {
            kind: ChartKind::Stacked,
            title: format!("{scenario}: each side's crypto floor, then the rest"),
            unit: "µs per handshake (lower is better)".into(),
            categories,
            series,
        }));
        into.push(Block::Table(Table {
            caption: format!(
                "{scenario}: each side's handshake against its crypto floor, µs (run {}; hover: the interval)",
                run.run_id
            ),
            header: [
                "impl",
                "side",
                "handshake",
                "floor",
                "key exchange",
                "signatures",
                "key schedule",
                "above the floor",
                "floor share",
            ]
            .map(String::from)
            .to_vec(),
            rows,
            label_cols: 2,
        }));
        if let (Some(p), false) = (profile, splits.is_empty()) {
            into.push(overhead::table(scenario, p, &splits));
        }
        into.push(Block::Bullets(said));
    }
    if !folded.is_empty() {
        let n = folded
            .iter()
            .filter(|b| matches!(b, Block::Table(_)))
            .count();
        blocks.push(Block::Folded(
            format!("The other {n} handshakes against their crypto floor"),
            folded,
        ));
    }
    blocks.extend(refusals(run, "No floor"));
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::{Env, Metric, Record};

    fn rec(imp: &str, m: Metric, ns: f64) -> Record {
        Record::from_samples(
            "floor",
            "handshake-tls13-ecdsa-p256-x25519-full",
            (imp, "v"),
            (imp, "v"),
            m,
            vec![ns, ns * 1.01, ns * 0.99],
            Env::default(),
        )
        .unwrap()
    }

    fn run_data(id: &str, records: Vec<Record>) -> RunData {
        RunData {
            run_id: id.into(),
            env: Env::default(),
            status: "complete".into(),
            records,
            cells: Vec::new(),
        }
    }

    fn run_of(imp: &str, handshake: f64, floor: f64) -> Vec<Record> {
        let mut out = Vec::new();
        for side in [Side::Client, Side::Server] {
            let (total, parts) = Metric::floor_of(side);
            out.push(rec(imp, Metric::handshake_ns_of(side), handshake));
            out.push(rec(imp, total, floor));
            for m in parts {
                out.push(rec(imp, m, floor / 3.0));
            }
            out.push(rec(imp, Metric::floor_share_of(side), floor / handshake));
        }
        out
    }

    #[test]
    fn rows_bars_and_sentences_per_side_and_a_floor_above_its_handshake_is_flagged() {
        let mut records = run_of("slow", 400_000.0, 100_000.0);
        records.extend(run_of("lean", 100_000.0, 90_000.0));
        records.extend(run_of("wrong", 100_000.0, 120_000.0));
        let run = run_data("floor", records);
        let split = |_: &str, imp: &str, _: Side| (imp == "slow").then_some(("allocation", 0.3));
        let b = blocks(&run, &split, None, None);
        let Block::Chart(c) = &b[1] else {
            panic!("a bar chart first")
        };
        assert_eq!(c.categories.len(), 6);
        assert_eq!(c.series[0].points[0].as_ref().unwrap().median, 100.0);
        // Without a profile, the time above the floor is one segment, not split.
        let unsplit = &c.series[overhead::CHART_PARTS.len()];
        assert_eq!(unsplit.points[0].as_ref().unwrap().median, 300.0);
        let Block::Table(t) = &b[2] else {
            panic!("then the table")
        };
        assert_eq!(t.rows[0][7].text, "300");
        assert_eq!(t.rows[0][8].text, "25%");
        assert_eq!(t.rows[4][7].class, Class::Bad);
        let Block::Bullets(said) = &b[3] else {
            panic!("then the sentences")
        };
        assert!(
            said[0].starts_with("slow (client): 4.0x its crypto floor"),
            "{}",
            said[0]
        );
        assert!(said[0].contains("allocation (30%"), "{}", said[0]);
        assert!(
            said[2].contains("90% of its 100 µs handshake"),
            "{}",
            said[2]
        );
        assert!(said[4].contains("is above its handshake"), "{}", said[4]);
    }

    /// With a profile of the same handshakes, the time above the floor is drawn in its parts
    /// and tabled, and the sentence names the largest part from it.
    #[test]
    fn a_profile_splits_the_bar_above_the_floor_and_tables_the_parts() {
        let records = run_of("slow", 400_000.0, 100_000.0);
        let run = run_data("floor", records);
        // 25% crypto (the floor's 100 µs), 50% the state machine, 25% allocation.
        use tlsmatrix_model::class::Class as CodeClass;
        let share = |c: CodeClass| match c {
            CodeClass::Crypto | CodeClass::Allocation => 0.25,
            CodeClass::Other => 0.5,
            _ => 0.0,
        };
        let profile = run_data(
            "profile",
            [Side::Client, Side::Server]
                .into_iter()
                .flat_map(|side| {
                    Metric::time_split_of(side)
                        .into_iter()
                        .zip(CodeClass::all().map(share))
                })
                .map(|(m, v)| rec("slow", m, v))
                .collect(),
        );
        let none = |_: &str, _: &str, _: Side| None;
        let b = blocks(&run, &none, Some(&profile), None);
        let Block::Chart(c) = &b[2] else {
            panic!("the chart after the two method paragraphs")
        };
        let at = |name: &str| {
            let s = c.series.iter().find(|s| s.name == name).unwrap();
            s.points[0].as_ref().unwrap().median
        };
        assert!((at("state machine & rest") - 200.0).abs() < 5.0);
        assert!((at("allocation") - 100.0).abs() < 3.0);
        assert_eq!(at("above the floor, not split"), 0.0);
        let Block::Table(split) = &b[4] else {
            panic!("the split's table after the floor's")
        };
        assert_eq!(split.rows.len(), 2);
        assert_eq!(split.rows[0].last().unwrap().text, "100%");
        let Block::Bullets(said) = &b[5] else {
            panic!("then the sentences")
        };
        assert!(
            said[0].contains("largest part of that in state machine & rest"),
            "{}",
            said[0]
        );
    }

    #[test]
    fn a_handshake_that_is_its_floor_within_noise_never_reads_above_100_percent() {
        let mut records = run_of("rsa", 1_000_000.0, 1_040_000.0);
        for r in records
            .iter_mut()
            .filter(|r| r.metric == Metric::ServerFloorShare)
        {
            *r = Record::from_samples(
                "floor",
                &r.scenario,
                ("rsa", "v"),
                ("rsa", "v"),
                r.metric,
                vec![1.04, 0.97, 1.09, 0.99, 1.06, 1.01, 0.98, 1.12],
                Env::default(),
            )
            .unwrap();
        }
        let b = blocks(&run_data("floor", records), &|_, _, _| None, None, None);
        let Block::Table(t) = &b[2] else {
            panic!("the table")
        };
        let server = &t.rows[1];
        assert_eq!(server[1].text, "server");
        assert_eq!(server[7].text, "≈0");
        assert!(server[8].text.starts_with("≈100% ("), "{}", server[8].text);
        assert_eq!(server[8].class, Class::Same);
        // The client's share stays above 1 beyond noise: flagged as before.
        assert_eq!(t.rows[0][8].class, Class::Bad);
        let Block::Bullets(said) = &b[3] else {
            panic!("the sentences")
        };
        assert!(
            said[1].contains(
                "is its crypto floor within the run's noise (the floor's share of it, 95% interval"
            ),
            "{}",
            said[1]
        );
    }
}
