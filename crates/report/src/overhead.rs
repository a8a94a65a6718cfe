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

pub const METHOD: &str = "The time above the floor is split by a profile of the same handshakes (perf sampling the driver's thread at 4 kHz while each side's calls are logged, so every sample belongs to one side), each sample classed by its function's name as the instruction split below classes functions: OpenSSL 3's provider layer, X.509 and encoding, allocation, locks, copies, the TLS state machine and records, the kernel, and code perf cannot name (a stripped library). The same profile runs each side's floor operations through the library's own API between the handshakes and splits them by the same classes, so the floor's own provider dispatch, allocation and locks are named as such: each class's time above the floor is the handshake's time in it less the floor's, and the crypto beyond the floor is cryptography the floor does not count (the transcript hash, random numbers and ticket keys it leaves out, or primitives slower inside the stack than through its own API). Where a profile run predates that split, the whole floor counts as cryptography. Where the floor is four fifths of the handshake or more, what lies above it is within the two runs' noise and is neither split nor judged. Each part is its share of the side's samples times the floor run's handshake (the floor's parts its own shares times the floor), so the parts sum to the time above the floor unless the floor spends more in some class than the handshake does (crypto perf cannot name, a name the classes miss, or a floor that pays a cost the stack avoids); such a class adds nothing, the others overshoot, and a cell more than 10% over says so instead of being drawn.";

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
        *slot = classes.iter().map(|&c| s.part(c).max(0.0)).sum();
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

/// Why a side's parts do not sum: the class its floor spends the most more in than its
/// handshake (the crypto, without the floor's own split), and by how much, in µs.
fn shortfall(s: &OverheadSplit) -> String {
    let mut worst = ("cryptography", s.crypto_beyond);
    for class in CodeClass::all().filter(|&c| c != CodeClass::Crypto) {
        if s.part(class) < worst.1 {
            worst = (class.name(), s.part(class));
        }
    }
    let whose = if s.floor_parts.is_some() {
        "its floor's own profile"
    } else {
        "its floor (all of it cryptography, the profile run not having split it)"
    };
    format!(
        "{whose} puts {} µs more in {} than its handshake's profile",
        figure(-worst.1 / 1e3),
        worst.0
    )
}

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
            "; {}, so the parts above the floor sum to {:.0}% of it and are not drawn{unnamed}",
            shortfall(s),
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
    let floor_layer = s.floor_parts.map(|f| f[CodeClass::Provider.time_index()]);
    let mut row = vec![
        us(s.overhead),
        floor_layer.map_or(
            Cell::with(
                "-",
                Class::Plain,
                Some("the profile run did not split this floor".into()),
            ),
            us,
        ),
        us(s.crypto_beyond),
    ];
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
                "the parts do not sum to the time above the floor within {:.0}%: {}",
                100.0 * TOLERANCE,
                shortfall(s)
            )),
        )
    });
    row
}

/// The table of one scenario's splits: (impl, side, split) in the order shown.
pub fn table(scenario: &str, profile: &RunData, rows: &[(String, Side, OverheadSplit)]) -> Block {
    Block::Table(Table {
        caption: format!(
            "{scenario}: each side's time above its crypto floor, split by a profile, µs per handshake (profile run {}; floor's provider: the floor's own time in the provider layer, which the parts leave out; crypto beyond and each part: the handshake's time in it less the floor's; state machine: the TLS state machine, records and the rest; parts sum: the positive parts over the time above the floor)",
            profile.run_id
        ),
        header: ["impl", "side", "above floor", "floor's provider", "crypto beyond"]
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
        assert!(
            said.contains("puts 30.0 µs more in cryptography than its handshake's profile"),
            "{said}"
        );
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
