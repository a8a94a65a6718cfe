//! What the tables of runs where each impl ran with itself (setup costs, crypto floors,
//! contention) share: a self pair's record, a µs figure with its interval, and the sentence
//! naming the impls the run could not measure.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::Record;

use crate::doc::{Block, Cell, Class};
use crate::figures::figure;

pub(crate) use tlsmatrix_analysis::self_pairs::record;

/// A figure in ns shown in µs, its interval as hover text.
pub(crate) fn micros(r: &Record) -> Cell {
    Cell::with(
        figure(r.median / 1e3),
        Class::Plain,
        Some(format!(
            "{} samples, 95% interval {}-{} µs",
            r.samples.len(),
            figure(r.ci_low / 1e3),
            figure(r.ci_high / 1e3)
        )),
    )
}

/// "`lead`: impl: reason; ...", each self pair the run refused once, or nothing.
pub(crate) fn refusals(run: &RunData, lead: &str) -> Option<Block> {
    let refused: std::collections::BTreeSet<String> = run
        .cells
        .iter()
        .filter(|c| c.client == c.server)
        .map(|c| {
            // A driver may name the impl in its reason already.
            let prefix = format!("{}: ", c.client);
            let reason = c.reason.strip_prefix(&prefix).unwrap_or(&c.reason);
            format!("{prefix}{reason}")
        })
        .collect();
    (!refused.is_empty()).then(|| {
        Block::Para(format!(
            "{lead}: {}.",
            refused.into_iter().collect::<Vec<_>>().join("; ")
        ))
    })
}
