//! The summary printed after a run: per scenario, a row per pair with each figure's median,
//! its 95% confidence interval as ±%, and the factor against the first impl's own pair.
//! Every figure is a rate, so higher is better and a factor above 1 means faster.

use std::collections::BTreeMap;

use tlsmatrix_core::record::Metric;
use tlsmatrix_core::scenario::{Kind, Scenario};
use tlsmatrix_core::stats::{self, Summary};

use crate::drivers::CellOutcome;
use crate::run::Cell;
use crate::table::{figure, Table};

/// A column of the summary: a rate derived from one metric's samples.
struct Column {
    title: &'static str,
    metric: Metric,
    /// Turns a sample into the rate shown (per-handshake ns become handshakes/s).
    rate: fn(f64) -> f64,
}

fn columns(kind: Kind) -> Vec<Column> {
    let per_second = |ns: f64| 1e9 / ns;
    let same = |v: f64| v;
    match kind {
        Kind::Handshake => vec![
            Column {
                title: "client hs/s",
                metric: Metric::ClientCpuNs,
                rate: per_second,
            },
            Column {
                title: "server hs/s",
                metric: Metric::ServerCpuNs,
                rate: per_second,
            },
        ],
        Kind::Bulk => vec![
            Column {
                title: "send MB/s",
                metric: Metric::SendMbPerS,
                rate: same,
            },
            Column {
                title: "recv MB/s",
                metric: Metric::RecvMbPerS,
                rate: same,
            },
        ],
    }
}

fn rate_summary(samples: &[Vec<(Metric, f64)>], col: &Column) -> Option<Summary> {
    let values: Vec<f64> = samples
        .iter()
        .flatten()
        .filter(|(m, _)| *m == col.metric)
        .map(|(_, v)| (col.rate)(*v))
        .collect();
    stats::summarize(&values)
}

/// "4,231 ±1.2%": the median and the half-width of its 95% interval, relative.
fn with_interval(s: &Summary) -> String {
    let half = (s.ci_high - s.ci_low) / 2.0 / s.median * 100.0;
    format!("{} ±{half:.1}%", figure(s.median))
}

pub fn render(cells: &[Cell], impls: &[String]) -> String {
    let mut by_scenario: BTreeMap<String, Vec<&Cell>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for c in cells {
        let id = c.scenario.to_string();
        if !by_scenario.contains_key(&id) {
            order.push(id.clone());
        }
        by_scenario.entry(id).or_default().push(c);
    }
    let baseline = impls.first().cloned().unwrap_or_default();
    let mut out = String::new();
    for id in order {
        let group = &by_scenario[&id];
        let scenario: Scenario = group[0].scenario;
        let cols = columns(scenario.kind());
        let base_summaries: Vec<Option<Summary>> = group
            .iter()
            .find(|c| c.client == baseline && c.server == baseline)
            .and_then(|c| match &c.outcome {
                CellOutcome::Measured { samples, .. } => {
                    Some(cols.iter().map(|col| rate_summary(samples, col)).collect())
                }
                _ => None,
            })
            .unwrap_or_else(|| cols.iter().map(|_| None).collect());

        let mut header = vec!["client", "server"];
        for col in &cols {
            header.push(col.title);
            header.push("factor");
        }
        let mut table = Table::new(&header, 2);
        let mut notes = Vec::new();
        for c in group {
            let mut row = vec![c.client.clone(), c.server.clone()];
            match &c.outcome {
                CellOutcome::Measured { samples, .. } => {
                    for (col, base) in cols.iter().zip(&base_summaries) {
                        match rate_summary(samples, col) {
                            Some(s) => {
                                row.push(with_interval(&s));
                                row.push(match base {
                                    Some(b) => format!("{:.2}x", s.median / b.median),
                                    None => "-".into(),
                                });
                            }
                            None => row.extend(["-".to_string(), "-".to_string()]),
                        }
                    }
                }
                CellOutcome::Unsupported(why) => {
                    row.push("unsupported".into());
                    notes.push(format!(
                        "  {} -> {}: unsupported: {why}",
                        c.client, c.server
                    ));
                }
                CellOutcome::Failed(why) => {
                    row.push("FAILED".into());
                    notes.push(format!("  {} -> {}: failed: {why}", c.client, c.server));
                }
            }
            table.row(row);
        }
        out.push_str(&format!(
            "\n{id}   (median ±95% CI; factor vs {baseline} -> {baseline}; higher is better)\n"
        ));
        out.push_str(&table.render());
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out
}
