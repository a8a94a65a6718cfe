//! The shape of everything tlsmatrix shows: sections of paragraphs, tables and charts. The
//! terminal, Markdown and HTML renderers all draw the same document, so they cannot disagree.

use tlsmatrix_model::record::{CellRecord, CellStatus, Metric, Record};

use crate::figures::{self, advantage, factor_text, figure, with_interval};

pub struct Doc {
    pub title: String,
    pub subtitle: String,
    pub sections: Vec<Section>,
}

pub struct Section {
    /// Anchor for links.
    pub id: String,
    pub title: String,
    pub blocks: Vec<Block>,
}

pub enum Block {
    Para(String),
    Bullets(Vec<String>),
    /// The report's headline: a few lines read before anything else.
    Headlines(Vec<String>),
    Table(Table),
    Chart(Chart),
    /// Blocks folded under a one-line summary (`<details>` in HTML), for long lists.
    Folded(String, Vec<Block>),
}

pub struct Table {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Columns before this one are labels (left-aligned); the rest are figures.
    pub label_cols: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Plain,
    /// Significantly better than the baseline.
    Good,
    /// Significantly worse than the baseline.
    Bad,
    /// Within noise of the baseline.
    Same,
    Noisy,
    Unsupported,
    Failed,
    /// Failed exactly as the case requires.
    Expected,
    /// Failed because a third-party peer deviates, as a listed known deviation says.
    Deviation,
}

impl Class {
    /// How an unmeasured cell shows, and its text.
    pub fn of_status(status: CellStatus) -> (Class, &'static str) {
        match status {
            CellStatus::Unsupported => (Class::Unsupported, "unsupported"),
            CellStatus::Failed => (Class::Failed, "FAILED"),
        }
    }

    /// A factor against the baseline: better or worse when the difference is significant,
    /// the same otherwise.
    pub fn of_factor(significant: bool, ratio: f64) -> Class {
        match (significant, ratio >= 1.0) {
            (false, _) => Class::Same,
            (true, true) => Class::Good,
            (true, false) => Class::Bad,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Plain => "plain",
            Class::Good => "good",
            Class::Bad => "bad",
            Class::Same => "same",
            Class::Noisy => "noisy",
            Class::Unsupported => "unsupported",
            Class::Failed => "failed",
            Class::Expected => "expected",
            Class::Deviation => "deviation",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub text: String,
    pub class: Class,
    /// Hover text: the reason for an unsupported cell, the interval of a figure.
    pub title: Option<String>,
}

impl Cell {
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            class: Class::Plain,
            title: None,
        }
    }

    pub fn with(text: impl Into<String>, class: Class, title: Option<String>) -> Cell {
        Cell {
            text: text.into(),
            class,
            title,
        }
    }

    /// A figure with its interval; noisy figures are classed so.
    pub fn figure(r: &Record) -> Cell {
        let s = figures::summary(r);
        Cell::with(
            with_interval(&s),
            if s.is_noisy() && s.median != 0.0 {
                Class::Noisy
            } else {
                Class::Plain
            },
            Some(format!(
                "median {:.4e}, 95% CI {:.4e} to {:.4e}, {} samples",
                s.median,
                s.ci_low,
                s.ci_high,
                r.samples.len()
            )),
        )
    }

    /// "times better" than a baseline figure, classed by significance; `floor` is the run's
    /// noise floor ([`figures::NoiseFloor`]).
    pub fn factor(r: &Record, base: &Record, floor: f64) -> Cell {
        if let Some(whole) = r.metric.row().part_of {
            return Cell::with(
                "part",
                Class::Plain,
                Some(format!(
                    "a part of {}: the factor is on the whole, which this part can leave most of out",
                    whole.row().title
                )),
            );
        }
        Cell::of_factor(advantage(r, base, floor))
    }

    pub fn of_factor(f: Option<tlsmatrix_model::stats::Factor>) -> Cell {
        match f {
            Some(f) => Cell::with(
                factor_text(&f),
                Class::of_factor(f.significant, f.ratio),
                Some(format!(
                    "95% CI {:.3}x to {:.3}x; {}; {}",
                    f.ci_low,
                    f.ci_high,
                    if f.paired {
                        "paired: the median of ratios of samples taken side by side"
                    } else {
                        "unpaired: two sets of samples taken at different times"
                    },
                    if f.significant {
                        "significant"
                    } else {
                        "not significant (the interval holds 1, or the factor is within the run's noise floor)"
                    }
                )),
            ),
            None => Cell::plain("-"),
        }
    }
}

pub struct Point {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

pub struct Series {
    pub name: String,
    pub points: Vec<Option<Point>>,
}

pub enum ChartKind {
    /// Horizontal bars grouped by category, with error bars.
    Bars,
    /// One line per series across the categories (x axis), with interval whiskers.
    Lines,
    /// One horizontal bar per category, the series' medians stacked along it in order (parts
    /// of one whole); no whiskers, each part's interval is in its hover text.
    Stacked,
}

pub struct Chart {
    pub kind: ChartKind,
    pub title: String,
    /// Axis label, e.g. "handshakes/s (higher is better)".
    pub unit: String,
    pub categories: Vec<String>,
    pub series: Vec<Series>,
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

/// Per scenario, every pair as a row with each figure and its factor against the baseline's
/// own pair; cells that were not measured say so, with the reason as hover text.
pub fn pair_tables(records: &[Record], cells: &[CellRecord], baseline: &str) -> Vec<Table> {
    let mut out = Vec::new();
    let floor = figures::NoiseFloor::floor_of(records);
    for id in scenario_order(records.iter().map(|r| r.scenario.as_str()), cells) {
        let recs: Vec<&Record> = records.iter().filter(|r| r.scenario == id).collect();
        let mut metrics: Vec<Metric> = recs
            .iter()
            .map(|r| r.metric)
            .filter(|&m| figures::in_tables(m))
            .collect();
        metrics.sort();
        metrics.dedup();
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        let all = recs
            .iter()
            .map(|r| (r.client.as_str(), r.server.as_str()))
            .chain(
                cells
                    .iter()
                    .filter(|c| c.scenario == id)
                    .map(|c| (c.client.as_str(), c.server.as_str())),
            );
        for p in all {
            if !pairs.contains(&p) {
                pairs.push(p);
            }
        }
        let find = |c: &str, s: &str, m: Metric| {
            recs.iter()
                .find(|r| r.client == c && r.server == s && r.metric == m)
                .copied()
        };
        let mut header = vec!["client".to_string(), "server".to_string()];
        for &m in &metrics {
            header.push(figures::shown(m).title.into());
            header.push("factor".into());
        }
        let mut rows = Vec::new();
        for &(c, s) in &pairs {
            let mut row = vec![Cell::plain(c), Cell::plain(s)];
            if let Some(cell) = cells
                .iter()
                .find(|x| x.scenario == id && x.client == c && x.server == s)
            {
                let (class, text) = Class::of_status(cell.outcome);
                row.push(Cell::with(text, class, Some(cell.reason.clone())));
                while row.len() < header.len() {
                    row.push(Cell::with("", class, None));
                }
            } else {
                for &m in &metrics {
                    match find(c, s, m) {
                        Some(r) => {
                            row.push(Cell::figure(r));
                            row.push(if (c, s) == (baseline, baseline) {
                                Cell::plain("baseline")
                            } else {
                                find(baseline, baseline, m)
                                    .map_or(Cell::plain("-"), |b| Cell::factor(r, b, floor))
                            });
                        }
                        None => row.extend([Cell::plain("-"), Cell::plain("-")]),
                    }
                }
            }
            rows.push(row);
        }
        out.push(Table {
            caption: id,
            header,
            rows,
            label_cols: 2,
        });
    }
    out
}

/// One area's figures at a glance: a row per scenario and figure, a column per impl (the
/// baseline first), each cell the impl's figure with its other side held at the baseline and
/// its factor against the baseline's own pair. A cell that was not measured shows `-`, classed
/// by its outcome with the reason as hover text.
pub fn area_table(
    caption: String,
    records: &[Record],
    cells: &[CellRecord],
    scenarios: &[&str],
    impls: &[String],
) -> Table {
    let baseline = impls.first().map(String::as_str).unwrap_or_default();
    let floor = figures::NoiseFloor::floor_of(records);
    let find = |sc: &str, c: &str, s: &str, m: Metric| {
        records
            .iter()
            .find(|r| r.scenario == sc && r.client == c && r.server == s && r.metric == m)
    };
    let mut rows = Vec::new();
    for &sc in scenarios {
        let mut metrics: Vec<Metric> = records
            .iter()
            .filter(|r| r.scenario == sc && figures::in_tables(r.metric))
            .map(|r| r.metric)
            .collect();
        metrics.sort();
        metrics.dedup();
        for m in metrics {
            let mut row = vec![Cell::plain(sc), Cell::plain(figures::shown(m).title)];
            for imp in impls {
                let (c, s) = figures::pair_for(m, imp, baseline);
                let base = find(sc, baseline, baseline, m);
                let found = figures::pairs_for(m, imp, baseline)
                    .iter()
                    .find_map(|(c, s)| find(sc, c, s, m));
                row.push(match found {
                    Some(r) if imp == baseline => {
                        let mut cell = Cell::figure(r);
                        cell.text = figure(figures::summary(r).median);
                        cell
                    }
                    Some(r) => glance_cell(r, base, floor, baseline),
                    None => match cells
                        .iter()
                        .find(|x| x.scenario == sc && x.client == c && x.server == s)
                    {
                        Some(x) => Cell::with("-", Class::of_status(x.outcome).0, {
                            Some(format!("{c} -> {s}: {}", x.reason))
                        }),
                        None => Cell::plain(""),
                    },
                });
            }
            rows.push(row);
        }
    }
    let mut header = vec!["scenario".to_string(), "figure".to_string()];
    header.extend(impls.iter().cloned());
    Table {
        caption,
        header,
        rows,
        label_cols: 2,
    }
}

/// "1,656 (0.35x)": a figure and its factor against the baseline, classed by the factor, its
/// intervals in the hover text.
/// A figure from the impl with itself (no in-memory pair with the baseline) says "self".
fn glance_cell(r: &Record, base: Option<&Record>, floor: f64, baseline: &str) -> Cell {
    let figure = figure(figures::summary(r).median);
    // A share of a profile says where a stack's time goes, not how it does against another.
    if r.metric.is_profile_share() {
        return Cell::figure(r);
    }
    let Some(f) = base.and_then(|b| advantage(r, b, floor)) else {
        return Cell::figure(r);
    };
    let factor = Cell::of_factor(Some(f));
    let interval = Cell::figure(r);
    let alone = figures::with_itself(r);
    let mut cell = Cell::with(
        format!(
            "{figure} ({:.2}x{}{})",
            f.ratio,
            if f.significant { "" } else { "~" },
            if alone { " self" } else { "" }
        ),
        if interval.class == Class::Noisy && factor.class == Class::Same {
            Class::Noisy
        } else {
            factor.class
        },
        Some(format!(
            "{}; factor {}",
            interval.title.unwrap_or_default(),
            factor.title.unwrap_or_default()
        )),
    );
    if alone {
        if let Some(t) = cell.title.as_mut() {
            t.push_str(&format!(
                "; {} with itself against {baseline} with itself: the two share no driver, so no in-memory pair",
                r.client
            ));
        }
    }
    cell
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::fixture::RecordFixture;
    use tlsmatrix_model::record::Metric;

    /// Twelve times fewer Go-heap bytes is no factor: Go's heap is a part of what a handshake
    /// allocates (libssl's is the other), and only the whole is judged, as time is.
    #[test]
    fn a_part_of_a_figure_has_no_factor_and_its_whole_has_one() {
        let fig = |metric, centre| {
            RecordFixture::new(metric, centre)
                .scenario("libp2p-handshake-tls13-ecdsa-p256-x25519")
                .build()
        };
        let part = Cell::factor(
            &fig(Metric::BytesPerOp, 10_000.0),
            &fig(Metric::BytesPerOp, 120_000.0),
            0.01,
        );
        assert_eq!((part.class, part.text.as_str()), (Class::Plain, "part"));
        assert!(part.title.unwrap().contains("B/op (Go heap + libssl)"));
        let whole = Cell::factor(
            &fig(Metric::TotalBytesPerOp, 490_000.0),
            &fig(Metric::TotalBytesPerOp, 120_000.0),
            0.01,
        );
        assert_eq!(whole.class, Class::Bad);
        assert!(whole.text.starts_with("0.24x"), "{}", whole.text);
        let time = Cell::factor(
            &fig(Metric::NsPerOp, 500_000.0),
            &fig(Metric::NsPerOp, 1_000_000.0),
            0.01,
        );
        assert_eq!(time.class, Class::Good);
    }
}
