//! The terminal summary of a run: per scenario, a row per pair with each figure's median, its
//! 95% confidence interval as ±%, and the factor against the first impl's own pair. Factors
//! are "times better" whichever way a metric points; `~` marks a factor whose intervals
//! overlap, `*` a noisy figure.

use tlsmatrix_core::record::{CellRecord, Record};
use tlsmatrix_core::stats::Summary;

use crate::doc;
use crate::table::{figure, Table};

/// "4,231 ±1.2%", with `*` when the interval is wider than ±5%.
pub fn with_interval(s: &Summary) -> String {
    format!(
        "{} ±{:.1}%{}",
        figure(s.median),
        s.relative_half_width() * 100.0,
        if s.is_noisy() { "*" } else { "" }
    )
}

/// Scenario ids in the order the run met them.
pub fn scenario_order<'a>(
    records: impl IntoIterator<Item = &'a str>,
    cells: &'a [CellRecord],
) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for id in records
        .into_iter()
        .chain(cells.iter().map(|c| c.scenario.as_str()))
    {
        if !order.iter().any(|o| o == id) {
            order.push(id.to_string());
        }
    }
    order
}

pub fn render(records: &[Record], cells: &[CellRecord], impls: &[String]) -> String {
    let baseline = impls.first().cloned().unwrap_or_default();
    let mut out = String::new();
    for t in doc::pair_tables(records, cells, &baseline) {
        out.push_str(&format!(
            "\n{}   (median ±95% CI; factor = times better than {baseline} -> {baseline})\n",
            t.caption
        ));
        out.push_str(&Table::from_doc(&t).render());
        for row in &t.rows {
            if let Some(reason) = row
                .get(2)
                .and_then(|c| c.title.as_ref())
                .filter(|_| matches!(row[2].class, doc::Class::Unsupported | doc::Class::Failed))
            {
                out.push_str(&format!(
                    "  {} -> {}: {}: {reason}\n",
                    row[0].text, row[1].text, row[2].text
                ));
            }
        }
    }
    if !out.is_empty() {
        out.push_str("\n* noisy: the 95% interval is wider than ±5% of the median.  factor [95% CI]: ~ not significant (the interval holds 1, or the factor is within the noise floor); u unpaired (two blocks of samples, not ratios taken side by side).\n");
    }
    if let Some(n) = crate::figures::NoiseFloor::of(records) {
        out.push_str(&n.describe());
        out.push('\n');
    }
    out
}
