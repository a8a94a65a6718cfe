//! A side's instructions by class, as the instruction-count runs carry them: the records
//! every table of the split reads (the stacks' split in "Where the time goes", a system
//! library beside its build with symbols), and how their counts are written.

use tlsmatrix_history::RunData;
use tlsmatrix_model::class::{Class as CodeClass, SPLIT_CLASSES};
use tlsmatrix_model::record::{Metric, Record};
use tlsmatrix_model::side::Side;

use crate::doc::{Cell, Class};

/// The self pair's record of one metric, or the impl on that side against another.
pub(crate) fn figure<'a>(
    run: &'a RunData,
    scenario: &str,
    imp: &str,
    m: Metric,
) -> Option<&'a Record> {
    let on_side = |r: &&Record| match m.side() {
        tlsmatrix_model::metric::FigureSide::Server => r.server == imp,
        _ => r.client == imp,
    };
    let of = |r: &&Record| r.scenario == scenario && r.metric == m;
    run.records
        .iter()
        .filter(of)
        .find(|r| r.client == imp && r.server == imp)
        .or_else(|| run.records.iter().filter(of).find(on_side))
}

/// One impl's side: total instructions, the parts and the lock calls, medians.
pub(crate) struct SideSplit {
    pub(crate) total: f64,
    /// By class, in the instruction split's order (`CodeClass::split`).
    pub(crate) parts: [f64; SPLIT_CLASSES],
    pub(crate) locks: f64,
    /// Atomic read-modify-writes, where the run counted them.
    pub(crate) atomics: Option<f64>,
}

impl SideSplit {
    /// A class's instructions; zero for one callgrind does not see (the kernel).
    pub(crate) fn part(&self, class: CodeClass) -> f64 {
        class.split_index().map_or(0.0, |i| self.parts[i])
    }
}

pub(crate) fn side_split(
    run: &RunData,
    scenario: &str,
    imp: &str,
    side: Side,
) -> Option<SideSplit> {
    let (all, parts, locks) = Metric::split_of(side);
    let total = figure(run, scenario, imp, all)?.median;
    // A split has its cryptography; a class a run has no figure for (one counted before the
    // class was added to the list) holds none of it.
    figure(run, scenario, imp, parts[0])?;
    let mut out = [0.0; SPLIT_CLASSES];
    for (slot, m) in out.iter_mut().zip(parts) {
        *slot = figure(run, scenario, imp, m).map_or(0.0, |r| r.median);
    }
    Some(SideSplit {
        total,
        parts: out,
        locks: figure(run, scenario, imp, locks).map_or(0.0, |r| r.median),
        atomics: figure(run, scenario, imp, Metric::atomics_of(side)).map(|r| r.median),
    })
}

/// A count as people read it: "35", "3,653", "2,317,281".
pub(crate) fn count(v: f64) -> String {
    if v.abs() < 1000.0 {
        format!("{v:.0}")
    } else {
        crate::figures::figure(v)
    }
}

pub(crate) fn percent(part: f64, total: f64) -> Cell {
    let share = if total > 0.0 { part / total } else { 0.0 };
    Cell::with(
        format!("{:.0}%", share * 100.0),
        Class::Plain,
        Some(format!("{} instructions per handshake", count(part))),
    )
}

/// The handshake scenarios the run split, in its order.
pub(crate) fn split_scenarios(run: &RunData) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &run.records {
        if r.metric == Metric::ClientCryptoInstructions && !out.contains(&r.scenario) {
            out.push(r.scenario.clone());
        }
    }
    out
}
