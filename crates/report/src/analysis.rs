//! From a run's records to the report's document: which areas it covers, each impl against
//! the baseline with the peer held constant, the sentences of the executive summary, the
//! charts, and the cells that were not measured.

use std::collections::{BTreeMap, BTreeSet};

use tlsmatrix_model::measure::Measure;
use tlsmatrix_model::record::{is_aa, Metric, Record};
use tlsmatrix_model::stats::Factor;

use crate::area::{area, Area};
pub use crate::companions::Companions;
use crate::doc::{self, Block, Cell, Chart, ChartKind, Class, Doc, Point, Section, Series, Table};
use crate::environment::{environment, timings_table};
use crate::figures::{self, advantage, pairs_for, shown, side, with_itself, Describe, Side};
use tlsmatrix_history::interop_file::CellLine;
use tlsmatrix_history::RunData;

/// (what the impl does, the word when better, the word when worse, the phrase when equal),
/// from the metric's row with its `{kind}` of handshake filled in.
fn phrase(m: Metric, area: Area) -> (String, &'static str, &'static str, &'static str) {
    let kind = match area {
        Area::Resumption => "resumed",
        Area::Extras => "mTLS, long-chain and retried",
        _ => "full",
    };
    let w = m.row().wording;
    (w.does.replace("{kind}", kind), w.better, w.worse, w.same)
}

struct Index<'a> {
    by_key: BTreeMap<(&'a str, &'a str, &'a str, Metric), &'a Record>,
}

impl<'a> Index<'a> {
    fn new(records: &'a [Record]) -> Index<'a> {
        Index {
            by_key: records
                .iter()
                .map(|r| {
                    (
                        (
                            r.scenario.as_str(),
                            r.client.as_str(),
                            r.server.as_str(),
                            r.metric,
                        ),
                        r,
                    )
                })
                .collect(),
        }
    }

    fn get(&self, scenario: &str, client: &str, server: &str, m: Metric) -> Option<&'a Record> {
        self.by_key.get(&(scenario, client, server, m)).copied()
    }
}

/// One impl against the baseline on one figure of one scenario.
struct Comparison<'a> {
    scenario: &'a str,
    metric: Metric,
    imp: &'a str,
    rec: &'a Record,
    base: &'a Record,
    factor: Factor,
}

fn comparisons<'a>(
    run: &'a RunData,
    idx: &Index<'a>,
    area_scenarios: &[&'a str],
    impls: &'a [String],
) -> Vec<Comparison<'a>> {
    let baseline = impls[0].as_str();
    let floor = figures::NoiseFloor::floor_of(&run.records);
    let mut out = Vec::new();
    for &scenario in area_scenarios {
        for m in metrics_of(run, scenario) {
            let Some(base) = idx.get(scenario, baseline, baseline, m) else {
                continue;
            };
            for imp in &impls[1..] {
                let Some(rec) = pairs_for(m, imp, baseline)
                    .iter()
                    .find_map(|(c, s)| idx.get(scenario, c, s, m))
                else {
                    continue;
                };
                if let Some(factor) = advantage(rec, base, floor) {
                    out.push(Comparison {
                        scenario,
                        metric: m,
                        imp,
                        rec,
                        base,
                        factor,
                    });
                }
            }
        }
    }
    out
}

fn metrics_of(run: &RunData, scenario: &str) -> Vec<Metric> {
    let mut ms: Vec<Metric> = run
        .records
        .iter()
        .filter(|r| r.scenario == scenario && figures::in_tables(r.metric))
        .map(|r| r.metric)
        .collect();
    ms.sort();
    ms.dedup();
    ms
}

fn times(f: f64) -> String {
    format!("{f:.2}x")
}

/// Differences smaller than this are reported as "as fast", significant or not: a 0.5%
/// difference in instruction counts is real but tells a reader nothing.
const NEGLIGIBLE: f64 = 0.01;

fn negligible(ratio: f64) -> bool {
    ratio.ln().abs() < (1.0 + NEGLIGIBLE).ln()
}

/// "2.10x faster" or "1.30x slower", in the direction of the ratio.
fn directed(ratio: f64, better: &str, worse: &str) -> String {
    if ratio >= 1.0 {
        format!("{} {better}", times(ratio))
    } else {
        format!("{} {worse}", times(1.0 / ratio))
    }
}

/// An area's comparisons grouped by (figure, impl), in a stable order.
fn by_figure_and_impl<'c, 'a>(
    cmps: &'c [Comparison<'a>],
) -> BTreeMap<(Metric, &'a str), Vec<&'c Comparison<'a>>> {
    let mut groups: BTreeMap<(Metric, &str), Vec<&Comparison>> = BTreeMap::new();
    for c in cmps {
        groups.entry((c.metric, c.imp)).or_default().push(c);
    }
    groups
}

/// The geometric mean of a group's factors.
fn geometric_mean(group: &[&Comparison]) -> f64 {
    (group.iter().map(|c| c.factor.ratio.ln()).sum::<f64>() / group.len() as f64).exp()
}

/// One row of the summary's table: an area's figure, and each impl's factor over the area's
/// scenarios.
struct GlanceRow {
    area: String,
    figure: &'static str,
    /// impl -> (geometric mean factor, significant in every scenario, scenarios).
    factors: BTreeMap<String, (f64, bool, usize)>,
    /// The impls whose factors compare their own pair with the baseline's (no shared driver).
    alone: BTreeSet<String>,
    /// What the headline must add for the figures to be read right, if anything.
    caveat: Option<&'static str>,
}

/// Instruction counts are taken on valgrind's virtual CPU: a stack with an AVX-512 or VAES
/// path natively runs another path there (the instruction section's caption says more).
const VALGRIND_CPU: &str = "counted on valgrind's CPU, which has no AVX-512 or VAES";

fn glance_rows(cmps: &[Comparison], area_label: &str) -> Vec<GlanceRow> {
    let mut rows: Vec<GlanceRow> = Vec::new();
    for ((m, imp), group) in by_figure_and_impl(cmps) {
        let figure = shown(m).title;
        let at = match rows.iter().position(|r| r.figure == figure) {
            Some(at) => at,
            None => {
                rows.push(GlanceRow {
                    area: area_label.to_string(),
                    figure,
                    factors: BTreeMap::new(),
                    alone: BTreeSet::new(),
                    caveat: None,
                });
                rows.len() - 1
            }
        };
        let all_significant = group.iter().all(|c| c.factor.significant);
        if group.iter().any(|c| with_itself(c.rec)) {
            rows[at].alone.insert(imp.to_string());
        }
        rows[at].factors.insert(
            imp.to_string(),
            (geometric_mean(&group), all_significant, group.len()),
        );
    }
    rows
}

/// The summary's table: a row per figure of every area, a column per impl, each cell the
/// impl's factor against the baseline (the geometric mean over the area's scenarios).
fn glance_table(rows: &[GlanceRow], impls: &[String], baseline: &str) -> Table {
    // The main run's impls in its order, then any only a companion run measured.
    let mut others: Vec<String> = impls.iter().skip(1).cloned().collect();
    for r in rows {
        for imp in r.factors.keys() {
            if !others.contains(imp) && imp != baseline {
                others.push(imp.clone());
            }
        }
    }
    let table_rows = rows
        .iter()
        .map(|r| {
            let most = r.factors.values().map(|f| f.2).max().unwrap_or(0);
            let mut cells = vec![Cell::plain(&r.area), Cell::plain(r.figure)];
            for imp in &others {
                cells.push(match r.factors.get(imp) {
                    None => Cell::plain("-"),
                    Some(&(ratio, significant, n)) => {
                        let class = Class::of_factor(significant && !negligible(ratio), ratio);
                        let mut text = times(ratio);
                        if class == Class::Same {
                            text.push('~');
                        }
                        // Fewer scenarios than its neighbours: a mean over another set.
                        if n < most {
                            text.push_str(&format!(" ({n} of {most})"));
                        }
                        let alone = r.alone.contains(imp);
                        if alone {
                            text.push_str(" self");
                        }
                        Cell::with(
                            text,
                            class,
                            Some(format!(
                                "{imp} against {baseline}: geometric mean over {n} scenario(s); {}{}",
                                if significant {
                                    "significant in each"
                                } else {
                                    "within noise in at least one"
                                },
                                if alone {
                                    format!("; {imp} with itself against {baseline} with itself (they share no driver, so no in-memory pair)")
                                } else {
                                    String::new()
                                }
                            )),
                        )
                    }
                });
            }
            cells
        })
        .collect();
    let mut header = vec!["area".to_string(), "figure".to_string()];
    header.extend(others);
    Table {
        caption: format!(
            "At a glance: each impl's factor against {baseline} (times better; above 1 is better, whichever way the figure points), the geometric mean over the area's scenarios, with the other side held at {baseline}. Bold (green): significantly better in every scenario; red: significantly worse in every one; ~: within noise in at least one. \"(6 of 12)\": the impl ran fewer of the area's scenarios (the rest are unsupported), so its mean is over those. \"self\": the impl shares no driver with {baseline} and so no in-memory pair (go-crypto-tls runs in a Go process), so its own pair is compared with {baseline}'s own pair (in a paired run the two drivers take turns on one core, a few milliseconds each). The sections below give every scenario."
        ),
        header,
        rows: table_rows,
        label_cols: 2,
    }
}

/// The report's headline: per row of the summary's table, which impl leads and by how much
/// over the runner-up, and which comes last. Factors are all "times better than the
/// baseline", so the ratio of two of them is how many times better one is than the other.
fn headlines(rows: &[GlanceRow], baseline: &str) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            let most = r.factors.values().map(|f| f.2).max()?;
            // (impl, factor, significant against the baseline in every scenario, scenarios)
            let mut ranked: Vec<(&str, f64, bool, usize)> = r
                .factors
                .iter()
                .filter(|(imp, _)| !is_aa(imp))
                .map(|(imp, &(ratio, sig, n))| (imp.as_str(), ratio, sig, n))
                .collect();
            ranked.push((baseline, 1.0, true, most));
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
            let [(lead, lead_f, lead_sig, lead_n), (second, second_f, second_sig, _), ..] =
                ranked[..]
            else {
                return None;
            };
            let (last, last_f, _, _) = *ranked.last()?;
            let over = |n: usize| {
                if n < most {
                    format!(" (over {n} of {most} scenarios)")
                } else {
                    String::new()
                }
            };
            let margin = lead_f / second_f;
            // Against the baseline the factor's own significance decides; between two others
            // a margin under 1% is a tie.
            let within_noise =
                (lead == baseline && !second_sig) || (second == baseline && !lead_sig);
            let lead_text = if within_noise {
                format!(
                    "{lead}{} and {second} lead together (within noise)",
                    over(lead_n)
                )
            } else if negligible(margin) {
                format!(
                    "{lead}{} and {second} lead together (within 1%)",
                    over(lead_n)
                )
            } else {
                format!(
                    "{lead}{} leads, {} better than the runner-up {second}",
                    over(lead_n),
                    times(margin)
                )
            };
            let tail = if ranked.len() > 2 {
                format!("; last {last} at {} {baseline}'s", times(last_f))
            } else {
                String::new()
            };
            let caveat = r.caveat.map(|c| format!(" ({c})")).unwrap_or_default();
            Some(format!(
                "{}, {}: {lead_text}{tail}{caveat}.",
                r.area, r.figure
            ))
        })
        .collect()
}

/// One sentence per (figure, impl) of an area: a single scenario gets its interval, several
/// get the geometric mean and the range.
fn sentences(cmps: &[Comparison], area: Area, baseline: &str) -> Vec<String> {
    let mut out = Vec::new();
    for ((m, imp), group) in by_figure_and_impl(cmps) {
        let (does, better, worse, equal) = phrase(m, area);
        let mut side = side(m).as_phrase().to_string();
        if group.iter().any(|c| with_itself(c.rec)) {
            side.push_str(", each with itself (they share no driver),");
        }
        if let [c] = group.as_slice() {
            let f = &c.factor;
            let how = if !f.significant || negligible(f.ratio) {
                format!("{equal} as")
            } else {
                format!("{} than", directed(f.ratio, better, worse))
            };
            out.push(format!(
                "{imp} {does} {how} {baseline}{side} in {} (factor {}, 95% CI {:.2}-{:.2}{}).",
                c.scenario,
                times(f.ratio),
                f.ci_low,
                f.ci_high,
                if f.significant { "" } else { "; within noise" }
            ));
            continue;
        }
        let n = group.len();
        let gmean = geometric_mean(&group);
        let by_ratio =
            |a: &&&Comparison, b: &&&Comparison| a.factor.ratio.total_cmp(&b.factor.ratio);
        let lo = group
            .iter()
            .min_by(by_ratio)
            .expect("a group is never empty");
        let hi = group
            .iter()
            .max_by(by_ratio)
            .expect("a group is never empty");
        let significant = group.iter().filter(|c| c.factor.significant).count();
        let how = if significant == 0 || negligible(gmean) {
            format!("{equal} as")
        } else {
            format!("{} than", directed(gmean, better, worse))
        };
        // The range runs from the least to the most favourable end of the sentence's direction.
        let (from, to) = if gmean >= 1.0 { (lo, hi) } else { (hi, lo) };
        out.push(format!(
            "{imp} {does} {how} {baseline}{side} across {n} scenarios (geometric mean of the factors; from {} in {} to {} in {}; {significant} of {n} significant).",
            directed(from.factor.ratio, better, worse),
            from.scenario,
            directed(to.factor.ratio, better, worse),
            to.scenario
        ));
    }
    out
}

fn factor_table(cmps: &[Comparison], baseline: &str) -> Table {
    let rows = cmps
        .iter()
        .map(|c| {
            vec![
                Cell::plain(c.scenario),
                Cell::plain(shown(c.metric).title),
                Cell::plain(c.imp),
                Cell::plain(baseline),
                Cell::figure(c.rec),
                Cell::figure(c.base),
                Cell::of_factor(Some(c.factor)),
            ]
        })
        .collect();
    Table {
        caption: format!(
            "Each impl (A) against {baseline} (B) with the other side held at {baseline}: client figures are A -> {baseline}, server figures {baseline} -> A. Factor = times better than B; ~ = the intervals overlap."
        ),
        header: [
            "scenario", "figure", "impl A", "impl B", "A", "B", "factor A vs B",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
        label_cols: 4,
    }
}

fn point(r: &Record) -> Point {
    let s = figures::summary(r);
    Point {
        median: s.median,
        low: s.ci_low,
        high: s.ci_high,
    }
}

fn direction(m: Metric) -> &'static str {
    if shown(m).higher_is_better {
        "higher is better"
    } else {
        "lower is better"
    }
}

/// A bar chart per figure of an area: each impl with the other side held at the baseline.
fn area_charts(run: &RunData, idx: &Index, scenarios: &[&str], impls: &[String]) -> Vec<Chart> {
    let baseline = impls[0].as_str();
    let mut metrics: Vec<Metric> = scenarios.iter().flat_map(|s| metrics_of(run, s)).collect();
    metrics.sort();
    metrics.dedup();
    metrics
        .into_iter()
        .map(|m| Chart {
            kind: ChartKind::Bars,
            title: format!(
                "{}{}",
                shown(m).title,
                match side(m) {
                    Side::Client => format!(" (server: {baseline})"),
                    Side::Server => format!(" (client: {baseline})"),
                    Side::Pair => String::new(),
                }
            ),
            unit: format!("{} ({}; median, 95% CI)", shown(m).unit, direction(m)),
            categories: scenarios.iter().map(|s| s.to_string()).collect(),
            series: impls
                .iter()
                .map(|imp| {
                    let recs: Vec<Option<&Record>> = scenarios
                        .iter()
                        .map(|sc| {
                            pairs_for(m, imp, baseline)
                                .iter()
                                .find_map(|(c, s)| idx.get(sc, c, s, m))
                        })
                        .collect();
                    let alone = imp != baseline && recs.iter().flatten().any(|r| with_itself(r));
                    Series {
                        name: if alone {
                            format!("{imp} (with itself)")
                        } else {
                            imp.clone()
                        },
                        points: recs.into_iter().map(|r| r.map(point)).collect(),
                    }
                })
                .filter(|s| s.points.iter().any(Option::is_some))
                .collect(),
        })
        .filter(|c| !c.series.is_empty())
        .collect()
}

/// "2026-11-23 11:43" from the run's start: shorter than its id, and ordered.
fn run_label(run: &RunData) -> String {
    let t = &run.env.timestamp;
    if t.len() >= 16 {
        t[..16].replace('T', " ")
    } else {
        run.run_id.clone()
    }
}

/// Lines over runs for the figures every run shares: each impl's own pair.
fn history_charts(history: &[RunData]) -> Vec<Chart> {
    let Some(last) = history.last() else {
        return Vec::new();
    };
    let impls = last.impls();
    let mut keys: Vec<(String, Metric)> = Vec::new();
    for r in &last.records {
        let k = (r.scenario.clone(), r.metric);
        if figures::in_tables(r.metric) && r.client == r.server && !keys.contains(&k) {
            keys.push(k);
        }
    }
    // A few figures: the first of each area's scenarios and metric.
    let mut seen_area: Vec<(Area, Metric)> = Vec::new();
    keys.retain(|(s, m)| {
        let a = (area(s), *m);
        if seen_area.contains(&a) {
            false
        } else {
            seen_area.push(a);
            true
        }
    });
    keys.into_iter()
        .map(|(scenario, m)| Chart {
            kind: ChartKind::Lines,
            title: format!("{} in {scenario}, each impl's own pair", shown(m).title),
            unit: format!("{} ({})", shown(m).unit, direction(m)),
            categories: history.iter().map(run_label).collect(),
            series: impls
                .iter()
                .map(|imp| Series {
                    name: imp.clone(),
                    points: history
                        .iter()
                        .map(|run| {
                            run.records
                                .iter()
                                .find(|r| {
                                    r.scenario == scenario
                                        && r.metric == m
                                        && &r.client == imp
                                        && &r.server == imp
                                })
                                .map(point)
                        })
                        .collect(),
                })
                .filter(|s| s.points.iter().filter(|p| p.is_some()).count() >= 2)
                .collect(),
        })
        .filter(|c| !c.series.is_empty())
        .collect()
}

fn not_measured_table(run: &RunData) -> Table {
    Table {
        caption: "Cells that produced no figures, and why.".into(),
        header: ["scenario", "client", "server", "outcome", "reason"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        rows: run
            .cells
            .iter()
            .map(|c| {
                let (class, text) = Class::of_status(c.outcome);
                vec![
                    Cell::plain(&c.scenario),
                    Cell::plain(&c.client),
                    Cell::plain(&c.server),
                    Cell::with(text, class, Some(c.reason.clone())),
                    Cell::plain(&c.reason),
                ]
            })
            .collect(),
        label_cols: 5,
    }
}

fn noise_note(run: &RunData) -> String {
    let shown_records: Vec<&Record> = run
        .records
        .iter()
        .filter(|r| figures::in_tables(r.metric))
        .collect();
    let noisy = shown_records
        .iter()
        .filter(|r| figures::summary(r).is_noisy())
        .count();
    let runs = shown_records
        .iter()
        .map(|r| r.samples.len())
        .max()
        .unwrap_or(0);
    let paired = shown_records.iter().any(|r| r.paired.is_some());
    let mut note = format!(
        "Every figure is the median of up to {runs} samples with a bootstrap 95% confidence interval of the median; {noisy} of {} figures are noisy (interval wider than ±5% of the median, marked *).",
        shown_records.len()
    );
    if paired {
        note.push_str(" Timed handshakes and bulk transfers were sampled paired: each impl's cells and the baseline's own pair took turns in one process, a few milliseconds each, and each factor is the median of the ratios of samples taken side by side, its interval a bootstrap over the run's passes and their rounds (so it says what a rerun would give). A factor counts as significant when its interval excludes 1 and it is further from 1 than the noise floor.");
        let lanes = run.records.first().map_or(1, |r| r.env.lanes());
        if lanes > 1 {
            note.push_str(&format!(" {lanes} such processes ran at once, each pinned to a core of its own (`--lanes {lanes}`): the two sides of a factor always shared a core, and every absolute figure was taken with the other core(s) busy with another group."));
        }
    }
    if let Some(n) = figures::NoiseFloor::of(&run.records) {
        note.push(' ');
        note.push_str(&n.describe());
        note.push('.');
    }
    if let Some(w) = figures::MemoryWeather::of(&run.records) {
        note.push(' ');
        note.push_str(&w.describe());
        note.push('.');
    }
    let models = figures::timing_cpu_models(&run.records);
    if !models.is_empty() {
        note.push_str(&format!(
            " This run's timings were taken on {} CPU models ({}), e.g. shards run on different machines: a factor between timings from two CPU models would measure the machines, so none is computed (shown as -); instruction counts and heap bytes compare across machines.",
            models.len(),
            models.join("; ")
        ));
    }
    note
}

/// Per case a client-by-server matrix; colour and text both give the outcome, the hover the
/// reason.
fn interop_section(cells: &[CellLine]) -> Section {
    let peers = crate::interop::peers_of(cells);
    let count = |o: &str| cells.iter().filter(|c| c.outcome == o).count();
    let mut blocks = vec![Block::Para(format!(
        "Run {}: {} cells over TCP, each peer in its own process with a hard time limit: {} pass, {} failed exactly as the case requires, {} known deviations of third-party peers (orange; the hover says what and why), {} fail, {} unsupported. Rows are clients, columns servers.",
        cells[0].run_id,
        cells.len(),
        count("pass"),
        count("expected-failure"),
        count("known-deviation"),
        count("fail"),
        count("unsupported")
    ))];
    let mut versions = Vec::new();
    for p in &peers {
        let version = cells
            .iter()
            .find_map(|c| (c.client == *p).then_some(&c.client_version))
            .or_else(|| {
                cells
                    .iter()
                    .find_map(|c| (c.server == *p).then_some(&c.server_version))
            });
        if let Some(v) = version {
            versions.push(format!("{p}: {v}"));
        }
    }
    blocks.push(Block::Bullets(versions));
    blocks.push(Block::Table(crate::interop::summary_matrix(cells)));
    blocks.push(Block::Folded(
        "Each case's matrix".into(),
        crate::interop::matrix_tables(cells, |o| o)
            .into_iter()
            .map(Block::Table)
            .collect(),
    ));
    Section {
        id: "interop".into(),
        title: "Interoperability".into(),
        blocks,
    }
}

/// A section per area of a run, each opening with its sentences, and the rows the area adds
/// to the summary's table; `suffix` tells the sections of a companion run apart
/// ("handshake" and "handshake-instructions").
fn area_sections(
    run: &RunData,
    suffix: &str,
    main_baseline: Option<&str>,
) -> (Vec<GlanceRow>, Vec<Section>) {
    let main_baseline = main_baseline.map(str::to_string);
    let impls = run.impls();
    let baseline = impls.first().cloned().unwrap_or_default();
    let idx = Index::new(&run.records);
    let mut areas: BTreeMap<Area, Vec<&str>> = BTreeMap::new();
    for r in &run.records {
        let list = areas.entry(area(&r.scenario)).or_default();
        if !list.contains(&r.scenario.as_str()) {
            list.push(&r.scenario);
        }
    }
    let mut glance = Vec::new();
    let mut sections = Vec::new();
    for (&a, scenarios) in &areas {
        let cmps = if impls.len() > 1 {
            comparisons(run, &idx, scenarios, &impls)
        } else {
            Vec::new()
        };
        let label = if suffix.is_empty() {
            a.short().to_string()
        } else {
            format!("{} ({suffix})", a.short())
        };
        // Companion runs normally share the main run's baseline; a row says when not.
        let label = match &main_baseline {
            Some(b) if *b != baseline => format!("{label}, against {baseline}"),
            _ => label,
        };
        glance.extend(glance_rows(&cmps, &label));
        let mut blocks = vec![Block::Table(doc::area_table(
            format!(
                "Each impl's figure (median) and, in brackets, its factor against {baseline} (times better; ~ within noise): client figures are the impl as client against a {baseline} server, server figures the reverse, pair figures the impl with itself; \"self\" marks an impl that shares no driver with {baseline}, whose figures come from its own pair against {baseline}'s own pair. Hover a cell for its intervals or, for -, why it was not measured."
            ),
            &run.records,
            &run.cells,
            scenarios,
            &impls,
        ))];
        let unmeasured = run
            .cells
            .iter()
            .filter(|c| scenarios.contains(&c.scenario.as_str()))
            .count();
        if unmeasured > 0 {
            blocks.push(Block::Para(format!(
                "{unmeasured} of this area's planned cells produced no figures (unsupported or failed); \"Not measured\" lists each with its reason."
            )));
        }
        blocks.extend(
            area_charts(run, &idx, scenarios, &impls)
                .into_iter()
                .map(Block::Chart),
        );
        let said = sentences(&cmps, a, &baseline);
        if cmps.is_empty() {
            blocks.push(Block::Para(format!(
                "Only {baseline} has figures here, so there is nothing to compare."
            )));
        } else {
            blocks.push(Block::Folded(
                format!(
                    "In words, and every comparison with its intervals ({} comparisons)",
                    cmps.len()
                ),
                vec![
                    Block::Bullets(said),
                    Block::Table(factor_table(&cmps, &baseline)),
                ],
            ));
        }
        let (id, title) = if suffix.is_empty() {
            (a.id().to_string(), a.title().to_string())
        } else {
            (
                format!("{}-{suffix}", a.id()),
                format!("{} ({suffix})", a.title()),
            )
        };
        sections.push(Section { id, title, blocks });
    }
    (glance, sections)
}

const MEMORY_METHOD: &str = "Heap each side keeps per connection with N connections alive (the scenario's nN), after the handshake and after 1 KiB each way. The drivers wrap the C allocator and count the usable size of every block allocated and freed during the measurement, reading the count around every call a side makes, so each side is charged with the net heap its own calls left allocated, whatever its peer; Rust and C allocations are counted alike. The harness's transport buffers are allocated before counting starts (and a run fails if they grow). The figure is bytes in use, not resident pages or peak.";

const THROUGHPUT_METHOD: &str = "Full handshakes per second of wall time with one thread (1core) or one per core (allcores), each thread handshaking its own client+server pairs in windows kept by the clock; both sides run in the process, so a pair's rate is what one machine does playing both. \"server-only\" sums, over the threads, handshakes over the time the server calls took: what the servers would sustain if the clients cost nothing. Compare 1core with allcores for scaling.";

/// How far a cell's repeated samples lie apart in an instruction-count run, said from the
/// run's own samples: the widest cell, and the spread half the cells stay within.
fn sample_agreement(run: &RunData) -> String {
    let mut spreads: Vec<(f64, &Record)> = run
        .records
        .iter()
        .filter(|r| r.samples.len() >= 2 && r.median > 0.0)
        .map(|r| {
            let (lo, hi) = r
                .samples
                .iter()
                .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            ((hi - lo) / r.median, r)
        })
        .collect();
    if spreads.is_empty() {
        return "each cell was counted once, so this run cannot say how far repeated counts differ"
            .into();
    }
    spreads.sort_by(|a, b| a.0.total_cmp(&b.0));
    let half = spreads[spreads.len() / 2].0;
    let (widest, r) = spreads[spreads.len() - 1];
    format!(
        "a cell's repeated samples lie within {} of each other in half of the {} cells, and within {} in the widest ({} on {})",
        percent(half),
        spreads.len(),
        percent(widest),
        r.client,
        r.scenario
    )
}

/// A relative spread as a percentage with the digits it needs.
fn percent(x: f64) -> String {
    let p = x * 100.0;
    if p < 0.1 {
        format!("{p:.3}%")
    } else if p < 1.0 {
        format!("{p:.2}%")
    } else {
        format!("{p:.1}%")
    }
}

pub fn build(run: &RunData, history: &[RunData], extra: &Companions) -> Doc {
    let impls = run.impls();
    let baseline = impls.first().cloned().unwrap_or_default();
    let (glance, sections_by_area) = area_parts(run, extra, &baseline);
    let mut sections = vec![summary_section(run, &glance, &impls, &baseline)];
    sections.extend(sections_by_area);
    // libp2p over QUIC goes in the QUIC section when the run has one, else beside the rest of
    // the Go benchmarks.
    let quic = extra.of(Measure::Quic).and_then(|quic| {
        crate::quic::section(
            quic,
            crate::quic::Companions {
                bulk: extra.of(Measure::QuicBulk),
                memory: extra.of(Measure::QuicMemory),
                instructions: extra.of(Measure::QuicInstructions),
                proxy_check: extra.quic_proxy_check.as_ref(),
                interop: extra.interop.as_deref(),
                libp2p: extra.libp2p.as_ref(),
            },
        )
    });
    sections.extend(
        extra
            .libp2p
            .as_ref()
            .map(|go| libp2p_section(go, quic.is_none())),
    );
    sections.extend(crate::post_quantum::section(
        &run.records,
        &run.cells,
        &impls,
        extra.twins.as_ref(),
        extra.of(Measure::Instructions),
        extra.of(Measure::Wire),
        extra.offers.as_ref(),
    ));
    sections.extend(crate::time_goes::section(extra));
    sections.extend(quic);
    sections.extend(crate::releases::section(
        &run.records,
        &impls,
        tlsmatrix_analysis::provider::Runs {
            instructions: extra.of(Measure::Instructions),
            profile: extra.of(Measure::Profile),
            floor: extra.of(Measure::Floor),
            symbols_instructions: extra.with_symbols(Measure::Instructions),
            symbols_profile: extra.with_symbols(Measure::Profile),
        },
    ));
    sections.extend(extra.published.iter().filter_map(crate::published::section));
    sections.extend(history_section(history));
    sections.extend(
        extra
            .of(Measure::Wire)
            .and_then(|w| crate::network::section(w, extra.proxy_check.as_ref(), &baseline)),
    );
    sections.extend(crate::bulk_causes::section(&crate::bulk_causes::Inputs {
        main: Some(run),
        ceiling: extra.of(Measure::Ceiling),
        profile: extra.of(Measure::Profile),
        counters: extra.of(Measure::Counters),
        allocators: extra.allocators.as_ref(),
    }));
    if let Some(cells) = extra.interop.as_ref().filter(|c| !c.is_empty()) {
        sections.push(interop_section(cells));
    }
    sections.extend(
        extra
            .conformance
            .as_ref()
            .and_then(|(id, rows)| crate::conformance::section(id, rows)),
    );
    if let Some(scan) = extra.outside_scan.as_ref().filter(|s| !s.peers.is_empty()) {
        sections.push(crate::outside_scan::section(scan));
    }
    sections.push(results_section(run, &baseline));
    sections.push(not_measured_section(run));
    sections.push(environment_section(run, extra));
    Doc {
        title: "tlsmatrix report".into(),
        subtitle: format!(
            "run {} ({}), {}, {} impls: {}",
            run.run_id,
            run.status,
            run.env.timestamp,
            impls.len(),
            impls.join(", ")
        ),
        sections,
    }
}

/// The area sections of the run and its companions (instruction counts, areas measured
/// apart), and the glance rows they give.
fn area_parts(run: &RunData, extra: &Companions, baseline: &str) -> (Vec<GlanceRow>, Vec<Section>) {
    let (mut glance, mut sections_by_area) = area_sections(run, "", None);
    if let Some(ir) = extra.of(Measure::Instructions) {
        // The split of each side's count is its own section ("Where the time goes"); the
        // instruction area's tables keep the totals.
        let totals = RunData {
            records: ir
                .records
                .iter()
                .filter(|r| !r.metric.is_split())
                .cloned()
                .collect(),
            ..ir.clone()
        };
        let (mut rows, mut secs) = area_sections(&totals, "instructions", Some(baseline));
        for r in &mut rows {
            r.caveat = Some(VALGRIND_CPU);
        }
        glance.extend(rows);
        if let Some(first) = secs.first_mut() {
            first.blocks.insert(
                0,
                Block::Para(format!(
                    "Instructions counted by callgrind in run {}, each side's calls only; {}, so these compare code paths without the noise of a shared machine.{} Valgrind's virtual CPU has no AVX-512 and no VAES, so libraries take their AES-NI/AVX paths here even where this CPU would run wider ones: a gap in time that is absent in instructions points there.",
                    ir.run_id,
                    sample_agreement(ir),
                    figures::varying_count_note(ir.records.iter().map(|r| r.scenario.as_str()))
                )),
            );
        }
        sections_by_area.extend(secs);
    }
    for extra_run in &extra.areas {
        let (rows, secs) = area_sections(extra_run, "", Some(baseline));
        // The main run's own figures for an area win over a separate run's.
        if secs
            .iter()
            .all(|sec| sections_by_area.iter().all(|have| have.id != sec.id))
        {
            glance.extend(rows);
            sections_by_area.extend(secs);
        }
    }
    // Areas measured in a way the tables cannot show say how, first.
    for (a, method) in [
        (Area::Memory, MEMORY_METHOD),
        (Area::Throughput, THROUGHPUT_METHOD),
    ] {
        if let Some(section) = sections_by_area.iter_mut().find(|s| s.id == a.id()) {
            section.blocks.insert(0, Block::Para(method.into()));
        }
    }
    (glance, sections_by_area)
}

/// The lead: headlines, the glance table, the noise floor and what was not measured.
fn summary_section(
    run: &RunData,
    glance: &[GlanceRow],
    impls: &[String],
    baseline: &str,
) -> Section {
    let mut lead = vec![Block::Para(format!(
        "Baseline: {baseline}. Factors are \"times better than the baseline\" whichever way a figure points (rates: higher; time, memory and instructions: lower), with the side not being compared held at {baseline}."
    ))];
    lead.push(Block::Para(noise_note(run)));
    if glance.is_empty() {
        lead.insert(0, Block::Para("This run has a single impl, so it compares nothing; the tables below give its figures.".into()));
    } else {
        lead.insert(0, Block::Table(glance_table(glance, impls, baseline)));
        lead.insert(0, Block::Headlines(headlines(glance, baseline)));
    }
    if !run.cells.is_empty() {
        let n = run.cells.len();
        lead.push(Block::Para(format!(
            "{n} {} no figures; the section \"Not measured\" says why.",
            if n == 1 {
                "cell produced"
            } else {
                "cells produced"
            }
        )));
    }
    Section {
        id: "summary".into(),
        title: "Summary".into(),
        blocks: lead,
    }
}

/// The Go transport's benchmarks: headlines, the pair tables and the ns/op charts, and libp2p
/// over QUIC when `with_dial` (no QUIC section to hold it).
fn libp2p_section(go: &RunData, with_dial: bool) -> Section {
    let go_impls = go.impls();
    let base = go_impls.first().cloned().unwrap_or_default();
    // The headline first: new peers, then reconnecting, each in time against upstream.
    let mut blocks: Vec<Block> = crate::libp2p::headlines(&go.records)
        .into_iter()
        .map(Block::Para)
        .collect();
    blocks.push(Block::Para(format!(
        "The Go libp2p TLS transport's benchmarks (make bench-go, run {}), each pair over loopback TCP, new peers first; in the tables, factor = times better than {base} -> {base}.",
        go.run_id
    )));
    blocks.extend(
        doc::pair_tables(&go.records, &go.cells, &base)
            .into_iter()
            .map(Block::Table),
    );
    let go_idx = Index::new(&go.records);
    let scenarios = doc::scenario_order(go.records.iter().map(|r| r.scenario.as_str()), &[]);
    let scenarios: Vec<&str> = scenarios.iter().map(String::as_str).collect();
    blocks.extend(
        area_charts(go, &go_idx, &scenarios, &go_impls)
            .into_iter()
            .filter(|c| c.title.starts_with("ns/op"))
            .map(Block::Chart),
    );
    if with_dial {
        blocks.extend(crate::libp2p::dial_blocks(&go.records, &go.run_id));
    }
    Section {
        id: "libp2p".into(),
        title: "libp2p TLS transport (Go)".into(),
        blocks,
    }
}

/// The last runs of the database, oldest first, when there is more than one.
fn history_section(history: &[RunData]) -> Option<Section> {
    if history.len() <= 1 {
        return None;
    }
    let mut blocks = vec![Block::Para(format!(
        "The last {} runs in the database, oldest first.",
        history.len()
    ))];
    blocks.extend(history_charts(history).into_iter().map(Block::Chart));
    Some(Section {
        id: "history".into(),
        title: "History".into(),
        blocks,
    })
}

/// Every pair of the run, folded by scenario table.
fn results_section(run: &RunData, baseline: &str) -> Section {
    let mut results = vec![Block::Para(format!(
        "Every pair of run {}: median ±95% CI and the factor against {baseline} -> {baseline}.",
        run.run_id
    ))];
    results.extend(
        doc::pair_tables(&run.records, &run.cells, baseline)
            .into_iter()
            .map(|t| {
                Block::Folded(
                    format!("{} ({} pairs)", t.caption, t.rows.len()),
                    vec![Block::Table(t)],
                )
            }),
    );
    Section {
        id: "results".into(),
        title: "All results".into(),
        blocks: results,
    }
}

/// Every planned cell that gave no figures, with its reason.
fn not_measured_section(run: &RunData) -> Section {
    Section {
        id: "not-measured".into(),
        title: "Not measured".into(),
        blocks: vec![if run.cells.is_empty() {
            Block::Para("Every cell of this run was measured.".into())
        } else {
            Block::Table(not_measured_table(run))
        }],
    }
}

/// Where and with what the run was made, and how long each stage of `make report` took.
fn environment_section(run: &RunData, extra: &Companions) -> Section {
    let mut environment_blocks = vec![Block::Table(Table {
        caption: "Where and with what this run was made.".into(),
        header: vec!["".into(), "".into()],
        rows: environment(run)
            .into_iter()
            .map(|(k, v)| vec![Cell::plain(k), Cell::plain(v)])
            .collect(),
        label_cols: 2,
    })];
    if let Some(t) = extra.timings.as_ref().filter(|t| !t.stages.is_empty()) {
        environment_blocks.push(Block::Table(timings_table(t)));
    }
    Section {
        id: "environment".into(),
        title: "Environment".into(),
        blocks: environment_blocks,
    }
}
