//! The time above a handshake's crypto floor, split: a profile of the same scenario
//! (`tlsmatrix run --measure profile`) gives each side's perf samples by what their function
//! does, classed as the instruction split classes functions; each share times the floor run's
//! handshake is µs per handshake. The profile's cryptography minus the floor is the crypto the
//! floor does not see (work a stack does that the protocol does not require of it, or its
//! primitives slower inside TLS than through its own API). When the profile names less
//! cryptography than the floor, the other parts overshoot the overhead, and the cell says so
//! rather than stretching or cutting them to fit.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::{Class as CodeClass, TIME_CLASSES};
use tlsmatrix_model::side::Side;

pub use tlsmatrix_analysis::overhead::{OverheadSplit, MOSTLY_CRYPTO, TOLERANCE};

use crate::doc::{Block, Cell, Class, Table};
use crate::figures::figure;

/// The split table's columns after the crypto beyond the floor: every class but the crypto,
/// the largest parts of a handshake first.
const TABLE_ORDER: [CodeClass; TIME_CLASSES - 1] = [
    CodeClass::Provider,
    CodeClass::Parsing,
    CodeClass::Other,
    CodeClass::Allocation,
    CodeClass::Locks,
    CodeClass::Copies,
    CodeClass::Kernel,
    CodeClass::Unnamed,
];

/// The stacked chart's segments between the crypto beyond the floor and the unsplit rest:
/// each its label and the classes it draws.
const CHART_GROUPS: [(&str, &[CodeClass]); 6] = [
    ("provider layer", &[CodeClass::Provider]),
    ("X.509 & encoding", &[CodeClass::Parsing]),
    ("state machine & rest", &[CodeClass::Other]),
    ("allocation", &[CodeClass::Allocation]),
    ("locks", &[CodeClass::Locks]),
    (
        "copies, kernel & unnamed",
        &[CodeClass::Copies, CodeClass::Kernel, CodeClass::Unnamed],
    ),
];

pub const METHOD: &str = "The time above the floor is split by a profile of the same handshakes (perf sampling the driver's thread at 4 kHz while each side's calls are logged, so every sample belongs to one side), each sample classed by its function's name as the instruction split below classes functions: OpenSSL 3's provider layer, X.509 and encoding, allocation, locks, copies, the TLS state machine and records, the kernel, and code perf cannot name (a stripped library). The profile's cryptography minus the floor is cryptography the floor does not count: the transcript hash, random numbers and ticket keys the floor leaves out, or primitives slower inside the stack than through its own API. Where the floor is four fifths of the handshake or more, what lies above it is within the two runs' noise and is neither split nor judged. Each part is its share of the side's samples times the floor run's handshake, so the parts sum to the time above the floor whenever the profile finds at least the floor's cryptography; where it finds less (crypto perf cannot name, a name the classes miss, or time the floor spends inside its crypto API's own machinery, such as OpenSSL 3's provider dispatch and name lookups, whose own functions the profile names as the provider layer but whose hash-table walks and comparisons it classes as the rest), the parts overshoot, and a cell more than 10% over says so instead of being drawn.";

/// The chart's segments above the floor (`CHART_PARTS`' order): where the parts do not
/// sum or are not judged, the whole overhead as one unsplit segment.
pub fn segments(s: &OverheadSplit) -> [f64; CHART_PARTS.len()] {
    let mut out = [0.0; CHART_PARTS.len()];
    if !s.sums() {
        out[CHART_PARTS.len() - 1] = s.overhead.max(0.0);
        return out;
    }
    out[0] = s.crypto_beyond.max(0.0);
    for (slot, (_, classes)) in out[1..].iter_mut().zip(CHART_GROUPS) {
        *slot = classes.iter().map(|&c| s.part(c)).sum();
    }
    out
}

/// The stacked chart's segments above the floor: the crypto beyond it, `CHART_GROUPS`, and
/// the whole overhead where it is not split.
pub const CHART_PARTS: [&str; CHART_GROUPS.len() + 2] = [
    "crypto beyond the floor",
    CHART_GROUPS[0].0,
    CHART_GROUPS[1].0,
    CHART_GROUPS[2].0,
    CHART_GROUPS[3].0,
    CHART_GROUPS[4].0,
    CHART_GROUPS[5].0,
    "above the floor, not split",
];

/// The sentence's clause for a side with a split: its largest part above the floor, or why
/// the parts do not sum.
pub fn clause(s: &OverheadSplit) -> String {
    if !s.sums() {
        let unnamed = if s.unnamed() > 0.0 && s.unnamed() > TOLERANCE * s.overhead {
            format!(
                "; {} µs of its time is in code perf cannot name",
                figure(s.unnamed() / 1e3)
            )
        } else {
            String::new()
        };
        return format!(
            "; its profile names {} µs less cryptography than its floor, so the parts above the floor sum to {:.0}% of it and are not drawn{unnamed}",
            figure(-s.crypto_beyond / 1e3),
            100.0 * s.sum_over_overhead()
        );
    }
    let (name, v) = s.largest();
    format!(
        "; its profile puts the largest part of that in {name} ({} µs, {:.0}%)",
        figure(v / 1e3),
        100.0 * v / s.overhead.max(1.0)
    )
}

/// A table row of the split, after the impl and side.
fn row(s: &OverheadSplit) -> Vec<Cell> {
    let us = |v: f64| Cell::plain(figure(v / 1e3));
    let mut row = vec![us(s.overhead), us(s.crypto_beyond)];
    for class in TABLE_ORDER {
        row.push(us(s.part(class)));
    }
    let sum = s.sum_over_overhead();
    row.push(if !s.judged() {
        Cell::with(
            "-",
            Class::Plain,
            Some(format!(
                "the floor is {:.0}% or more of the handshake: what lies above it is within the runs' noise, so it is not split",
                100.0 * MOSTLY_CRYPTO
            )),
        )
    } else if s.sums() {
        Cell::plain(format!("{:.0}%", 100.0 * sum))
    } else {
        Cell::with(
            format!("{:.0}%", 100.0 * sum),
            Class::Bad,
            Some(format!(
                "the parts do not sum to the time above the floor within {:.0}%: the profile names less cryptography than the floor",
                100.0 * TOLERANCE
            )),
        )
    });
    row
}

/// The table of one scenario's splits: (impl, side, split) in the order shown.
pub fn table(scenario: &str, profile: &RunData, rows: &[(String, Side, OverheadSplit)]) -> Block {
    Block::Table(Table {
        caption: format!(
            "{scenario}: each side's time above its crypto floor, split by a profile, µs per handshake (profile run {}; crypto beyond: the profile's cryptography less the floor; state machine: the TLS state machine, records and the rest; parts sum: the parts over the time above the floor)",
            profile.run_id
        ),
        header: ["impl", "side", "above floor", "crypto beyond"]
            .into_iter()
            .chain(TABLE_ORDER.map(|c| c.row().short))
            .chain(["parts sum"])
            .map(String::from)
            .collect(),
        rows: rows
            .iter()
            .map(|(imp, side, s)| {
                let mut r = vec![Cell::plain(imp.clone()), Cell::plain(side.to_string())];
                r.extend(row(s));
                r
            })
            .collect(),
        label_cols: 2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_analysis::fixture::profile_run as profile;

    #[test]
    fn parts_are_shares_of_the_handshake_and_sum_to_the_overhead_when_the_profile_covers_the_floor()
    {
        // 100 µs handshake, 60 µs floor; the profile finds 70% crypto, 10% X.509, 20% state
        // machine: 10 µs crypto beyond the floor, 10 and 20 µs for the others.
        let p = profile(&[
            (CodeClass::Crypto, 0.7),
            (CodeClass::Parsing, 0.1),
            (CodeClass::Other, 0.2),
        ]);
        let s = OverheadSplit::of(&p, "s", "a", Side::Client, 100e3, 60e3).unwrap();
        assert!((s.crypto_beyond - 10e3).abs() < 1.0, "{s:?}");
        assert!(
            (s.part(CodeClass::Parsing) - 10e3).abs() < 1.0
                && (s.part(CodeClass::Other) - 20e3).abs() < 1.0
        );
        assert!((s.sum_over_overhead() - 1.0).abs() < 1e-9);
        assert!(s.sums());
        assert_eq!(s.largest().0, "state machine & rest");
        assert!(
            clause(&s).contains("state machine & rest (20.0 µs, 50%)"),
            "{}",
            clause(&s)
        );
        assert_eq!(segments(&s)[CHART_PARTS.len() - 1], 0.0);
    }

    #[test]
    fn a_profile_naming_less_crypto_than_the_floor_is_said_and_not_drawn() {
        // The floor is 60 µs; the profile names only 30% crypto and half the time unnamed
        // (a stripped library): the other parts are 70 µs against 40 µs above the floor.
        let p = profile(&[
            (CodeClass::Crypto, 0.3),
            (CodeClass::Parsing, 0.1),
            (CodeClass::Unnamed, 0.5),
            (CodeClass::Other, 0.1),
        ]);
        let s = OverheadSplit::of(&p, "s", "a", Side::Client, 100e3, 60e3).unwrap();
        assert!((s.sum_over_overhead() - 1.75).abs() < 1e-9, "{s:?}");
        assert!(!s.sums());
        let said = clause(&s);
        assert!(said.contains("30.0 µs less cryptography"), "{said}");
        assert!(said.contains("sum to 175%"), "{said}");
        assert!(
            said.contains("50.0 µs of its time is in code perf cannot name"),
            "{said}"
        );
        assert_eq!(segments(&s), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 40e3]);
        let Block::Table(t) = table("s", &p, &[("a".into(), Side::Client, s)]) else {
            panic!("a table")
        };
        assert_eq!(t.rows[0].last().unwrap().class, Class::Bad);
        assert_eq!(t.rows[0].len(), t.header.len());
    }

    #[test]
    fn a_floor_that_is_most_of_its_handshake_is_neither_split_nor_judged() {
        // A 100 µs handshake with a 95 µs floor: 5 µs above it, within the runs' noise.
        let p = profile(&[
            (CodeClass::Crypto, 0.7),
            (CodeClass::Parsing, 0.1),
            (CodeClass::Other, 0.2),
        ]);
        let s = OverheadSplit::of(&p, "s", "a", Side::Client, 100e3, 95e3).unwrap();
        assert!(!s.judged() && !s.sums());
        assert_eq!(segments(&s), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5e3]);
        let Block::Table(t) = table("s", &p, &[("a".into(), Side::Client, s)]) else {
            panic!("a table")
        };
        assert_eq!(t.rows[0].last().unwrap().text, "-");
        // A floor above its handshake draws nothing above it.
        let s = OverheadSplit::of(&p, "s", "a", Side::Client, 100e3, 110e3).unwrap();
        assert_eq!(segments(&s), [0.0; CHART_PARTS.len()]);
    }

    #[test]
    fn shares_whose_medians_miss_one_are_scaled_and_a_missing_part_is_no_split() {
        let p = profile(&[(CodeClass::Crypto, 0.45), (CodeClass::Other, 0.45)]);
        let s = OverheadSplit::of(&p, "s", "a", Side::Client, 100e3, 40e3).unwrap();
        assert!(
            (s.crypto_beyond - 10e3).abs() < 1.0 && (s.part(CodeClass::Other) - 50e3).abs() < 1.0
        );
        assert!(OverheadSplit::of(&p, "s", "a", Side::Server, 100e3, 40e3).is_none());
        assert!(OverheadSplit::of(&p, "other", "a", Side::Client, 100e3, 40e3).is_none());
    }
}
