//! A run where each impl ran with itself (setup costs, crypto floors, contention, profiles):
//! the record of one impl's self pair.

use tlsmatrix_history::RunData;
use tlsmatrix_model::record::{Metric, Record};

/// The record of `imp` with itself for `m` in `scenario`.
pub fn record<'a>(run: &'a RunData, scenario: &str, imp: &str, m: Metric) -> Option<&'a Record> {
    run.records
        .iter()
        .find(|r| r.scenario == scenario && r.client == imp && r.server == imp && r.metric == m)
}
