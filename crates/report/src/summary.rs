//! The terminal summary of a run: per area a compact table of each impl's figures and factors
//! against the first impl (the baseline), and with `--verbose` per scenario a row per pair
//! with each figure's median, its 95% confidence interval as ±%, and the factor. Factors are
//! "times better" whichever way a metric points; `~` marks a factor within noise, `*` a noisy
//! figure.

use tlsmatrix_model::record::{CellRecord, CellStatus, Record};

use crate::area::{area, Area};
use crate::doc::{self, scenario_order, Class};
use crate::figures::Describe;
use crate::text_table::Table;

/// The run at a glance: per area one table, a row per scenario and figure, a column per impl,
/// each cell the figure and its factor against the baseline; cells not measured are counted
/// in one line. `verbose` adds every pair's table with intervals and each unmeasured cell's
/// reason.
pub fn render(records: &[Record], cells: &[CellRecord], impls: &[String], verbose: bool) -> String {
    let baseline = impls.first().cloned().unwrap_or_default();
    let mut out = String::new();
    if verbose {
        out.push_str(&pair_tables(records, cells, &baseline));
    }
    let ids = scenario_order(records.iter().map(|r| r.scenario.as_str()), cells);
    let mut areas: Vec<(Area, Vec<&str>)> = Vec::new();
    for id in &ids {
        let a = area(id);
        match areas.iter_mut().find(|(x, _)| *x == a) {
            Some((_, list)) => list.push(id),
            None => areas.push((a, vec![id])),
        }
    }
    areas.sort_by_key(|(a, _)| *a);
    for (a, scenarios) in &areas {
        let t = doc::area_table(String::new(), records, cells, scenarios, impls);
        if t.rows.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n{}   (median; in brackets times better than {baseline}, ~ within noise, self: the impl with itself against {baseline} with itself)\n",
            a.title()
        ));
        out.push_str(&Table::from_doc(&t).render());
    }
    if !cells.is_empty() {
        let unsupported = cells
            .iter()
            .filter(|c| c.outcome == CellStatus::Unsupported)
            .count();
        out.push_str(&format!(
            "\n{unsupported} cells unsupported, {} failed{}\n",
            cells.len() - unsupported,
            if verbose {
                ""
            } else {
                " (--verbose lists each with its reason)"
            }
        ));
        for c in cells
            .iter()
            .filter(|c| verbose || c.outcome == CellStatus::Failed)
        {
            out.push_str(&format!(
                "  {} {} -> {}: {}: {}\n",
                c.scenario,
                c.client,
                c.server,
                Class::of_status(c.outcome).1,
                c.reason
            ));
        }
    }
    if !out.is_empty() {
        out.push_str("\n* noisy: the 95% interval is wider than ±5% of the median.  factor [95% CI]: ~ not significant (the interval holds 1, or the factor is within the noise floor); u unpaired (two blocks of samples, not ratios taken side by side).\n");
    }
    if let Some(n) = crate::figures::NoiseFloor::of(records) {
        out.push_str(&n.describe());
        out.push('\n');
    }
    if let Some(w) = crate::figures::MemoryWeather::of(records) {
        out.push_str(&w.describe());
        out.push('\n');
    }
    out
}

/// Per scenario a row per pair, every figure with its interval and factor.
fn pair_tables(records: &[Record], cells: &[CellRecord], baseline: &str) -> String {
    let mut out = String::new();
    for t in doc::pair_tables(records, cells, baseline) {
        out.push_str(&format!(
            "\n{}   (median ±95% CI; factor = times better than {baseline} -> {baseline})\n",
            t.caption
        ));
        out.push_str(&Table::from_doc(&t).render());
    }
    out
}
