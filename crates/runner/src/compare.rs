//! `tlsmatrix compare BASE CAND`: match the figures of two runs and flag regressions. A figure
//! regresses when the candidate is worse by more than the threshold *and* the two intervals
//! are apart; noise alone never fails the gate.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Result};
use tlsmatrix_model::record::{Metric, Record};

use tlsmatrix_history::{resolve, RunData, RunKind};
use tlsmatrix_report::comparison::{ConformanceComparison, FigureComparison, Row, Verdict};
use tlsmatrix_report::figures::{self, shown, Describe};

fn same_reference(a: &Record, b: &Record) -> bool {
    match (&a.paired, &b.paired) {
        (Some(x), Some(y)) => {
            (&x.reference_client, &x.reference_server) == (&y.reference_client, &y.reference_server)
        }
        _ => false,
    }
}

type Key = (String, String, String, Metric);

fn by_key(run: &RunData) -> BTreeMap<Key, &Record> {
    run.records
        .iter()
        .filter(|r| figures::in_tables(r.metric))
        .map(|r| (r.key(), r))
        .collect()
}

/// Matches figures and judges each; also the keys found on one side only.
pub fn judge<'a>(
    base: &'a RunData,
    cand: &'a RunData,
    threshold: f64,
) -> (Vec<Row<'a>>, usize, usize) {
    let (b, c) = (by_key(base), by_key(cand));
    let mut rows = Vec::new();
    for (key, &br) in &b {
        let Some(&cr) = c.get(key) else { continue };
        // Both runs paired this figure with the same reference: compare the factors, which a
        // shared machine's drift between the runs does not move; else the figures themselves.
        let factors = figures::paired_advantage(br)
            .zip(figures::paired_advantage(cr))
            .filter(|_| same_reference(br, cr));
        let (ratio, significant, higher_is_better, by_factor) = match factors {
            Some((fb, fc)) => (
                fc.ratio / fb.ratio,
                fc.ci_high < fb.ci_low || fb.ci_high < fc.ci_low,
                true,
                true,
            ),
            None => {
                let (bs, cs) = (figures::summary(br), figures::summary(cr));
                (
                    cs.median / bs.median,
                    cs.ci_high < bs.ci_low || bs.ci_high < cs.ci_low,
                    shown(br.metric).higher_is_better,
                    false,
                )
            }
        };
        let better = if higher_is_better {
            ratio > 1.0
        } else {
            ratio < 1.0
        };
        let beyond = if higher_is_better {
            ratio < 1.0 - threshold
        } else {
            ratio > 1.0 + threshold
        };
        let verdict = match (significant, better, beyond) {
            (false, _, _) => Verdict::Same,
            (true, true, _) => Verdict::Better,
            (true, false, true) => Verdict::Regression,
            (true, false, false) => Verdict::Worse,
        };
        rows.push(Row {
            base: br,
            cand: cr,
            ratio,
            verdict,
            by_factor,
        });
    }
    let only_base = b.keys().filter(|k| !c.contains_key(*k)).count();
    let only_cand = c.keys().filter(|k| !b.contains_key(*k)).count();
    (rows, only_base, only_cand)
}

/// Parses "5%", "5" or "0.05%"-style thresholds into a fraction.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%');
    let v: f64 = t
        .parse()
        .map_err(|_| format!("threshold '{s}' is not a percentage like 5% or 0.5%"))?;
    if !(0.0..100.0).contains(&v) {
        return Err(format!(
            "threshold '{s}' must be at least 0% and below 100%"
        ));
    }
    Ok(v / 100.0)
}

/// A command's outcome: what it prints, and whether it passed (no figure regressed, no
/// test newly fails, every target met).
pub struct Outcome {
    pub text: String,
    pub passed: bool,
}

/// Compares two runs (ids, `latest`, or results files), figure by figure or, for two
/// conformance runs, test by test.
pub fn compare(base: &str, cand: &str, threshold: f64, db: &Path) -> Result<Outcome> {
    if let Some(c) = compare_conformance(base, cand, db)? {
        return Ok(Outcome {
            text: c.render(),
            passed: c.passed(),
        });
    }
    let b = resolve(base, db, RunKind::Any)?;
    let c = resolve(cand, db, RunKind::Any)?;
    let found = figure_comparison(&b, &c, threshold)?;
    Ok(Outcome {
        text: found.render(),
        passed: found.passed(),
    })
}

/// Two runs' figures matched and judged, with what a reader needs beside them: the versions
/// that differ, the figures only one run has, and each run's memory weather.
pub fn figure_comparison<'a>(
    b: &'a RunData,
    c: &'a RunData,
    threshold: f64,
) -> Result<FigureComparison<'a>> {
    let (rows, only_base, only_cand) = judge(b, c, threshold);
    if rows.is_empty() {
        bail!(
            "{} and {} have no figure in common (same scenario, client, server and metric)",
            b.run_id,
            c.run_id
        );
    }
    let cand_versions = c.versions();
    let versions = b
        .versions()
        .into_iter()
        .filter_map(|(name, v)| match cand_versions.get(&name) {
            Some(o) if *o != v => Some((name, v, o.clone())),
            _ => None,
        })
        .collect();
    // Factors of stacks that lean on the shared cache and memory (go-crypto-tls) move with
    // them between runs; the two runs' weather says whether that could be the difference.
    let weather = [("base", b), ("candidate", c)]
        .into_iter()
        .filter_map(|(which, run)| {
            figures::MemoryWeather::of(&run.records).map(|w| (which, w.describe()))
        })
        .collect();
    Ok(FigureComparison {
        base_id: b.run_id.clone(),
        cand_id: c.run_id.clone(),
        threshold,
        rows,
        only_base,
        only_cand,
        versions,
        weather,
    })
}

/// Two conformance runs are compared test by test: a test that did not fail in the base and
/// fails in the candidate is a regression. `None` when either run is not a conformance run.
fn compare_conformance(base: &str, cand: &str, db: &Path) -> Result<Option<ConformanceComparison>> {
    if !db.is_file() {
        return Ok(None);
    }
    let store = tlsmatrix_history::Store::open_existing(db)?;
    if !(store.is_conformance_run(base)? && store.is_conformance_run(cand)?) {
        return Ok(None);
    }
    let (b, c) = (store.conformance(base)?, store.conformance(cand)?);
    let newly = tlsmatrix_history::conformance::newly_failing(&b, &c);
    let passed = |rows: &[tlsmatrix_history::conformance::ConformanceRow], imp: &str| {
        rows.iter()
            .filter(|r| r.imp == imp && r.outcome == "passed")
            .count()
    };
    let impls: std::collections::BTreeSet<&str> = c.iter().map(|r| r.imp.as_str()).collect();
    Ok(Some(ConformanceComparison {
        base_id: base.to_string(),
        cand_id: cand.to_string(),
        impls: impls
            .into_iter()
            .map(|imp| {
                (
                    imp.to_string(),
                    passed(&b, imp),
                    passed(&c, imp),
                    newly.iter().filter(|r| r.imp == imp).count(),
                )
            })
            .collect(),
        newly_failing: newly
            .iter()
            .map(|r| {
                let first = r.reason.lines().next().unwrap_or("");
                (r.imp.clone(), r.test.clone(), first.to_string())
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::Env;

    fn run(id: &str, metric: Metric, samples: Vec<f64>) -> RunData {
        let r = Record::from_samples(
            id,
            "s",
            ("a", "1"),
            ("a", "1"),
            metric,
            samples,
            Env::default(),
        );
        RunData {
            run_id: id.into(),
            env: Env::default(),
            status: "file".into(),
            records: vec![r.unwrap()],
            cells: vec![],
        }
    }

    fn around(v: f64) -> Vec<f64> {
        (0..20).map(|i| v + (i % 5) as f64 * v * 0.001).collect()
    }

    #[test]
    fn direction_threshold_and_significance_decide() {
        let verdict = |m, b: f64, c: f64, t| {
            let (rb, rc) = (run("b", m, around(b)), run("c", m, around(c)));
            judge(&rb, &rc, t).0[0].verdict
        };
        // Time per handshake is shown as a rate: 10% more nanoseconds is a slower client.
        let cases = [
            (Metric::ClientCpuNs, 100.0, 110.0, 0.05, Verdict::Regression),
            (Metric::ClientCpuNs, 100.0, 103.0, 0.05, Verdict::Worse),
            (Metric::ClientCpuNs, 100.0, 90.0, 0.05, Verdict::Better),
            (Metric::SendMbPerS, 100.0, 90.0, 0.05, Verdict::Regression),
            (
                Metric::ServerInstructions,
                1e6,
                1.01e6,
                0.005,
                Verdict::Regression,
            ),
            (Metric::SendMbPerS, 100.0, 100.0, 0.05, Verdict::Same),
        ];
        for (m, b, c, t, want) in cases {
            assert_eq!(verdict(m, b, c, t), want, "{m} {b} -> {c} at {t}");
        }
        // Wide, overlapping intervals: never a regression, however far apart the medians.
        let noisy = |v: f64| vec![v * 0.5, v, v * 1.5, v * 0.7, v * 1.3];
        let (rb, rc) = (
            run("b", Metric::SendMbPerS, noisy(100.0)),
            run("c", Metric::SendMbPerS, noisy(80.0)),
        );
        assert_eq!(judge(&rb, &rc, 0.05).0[0].verdict, Verdict::Same);
    }

    /// Two runs on machines of different speed: every figure of the second is 20% slower,
    /// but the impl's factor against the baseline it was paired with held, so the figure is
    /// judged the same; a factor that fell 10% is a regression.
    #[test]
    fn paired_figures_are_judged_on_their_factors() {
        let paired_run = |id: &str, scale: f64, factor: f64| {
            let mut r = run(id, Metric::ClientCpuNs, around(100.0 * scale));
            r.records[0].paired = Some(tlsmatrix_model::record::Paired {
                reference_client: "base".into(),
                reference_server: "base".into(),
                reference_scenario: None,
                // Time ratios: a factor of 1.25 "times better" is a time ratio of 0.8.
                ratios: around(1.0 / factor),
                blocks: (0..20).map(|i| i / 5).collect(),
            });
            r
        };
        let base = paired_run("b", 1.0, 1.25);
        let slower_machine = paired_run("c", 1.2, 1.25);
        let rows = judge(&base, &slower_machine, 0.05).0;
        assert!(rows[0].by_factor);
        assert_eq!(rows[0].verdict, Verdict::Same, "ratio {}", rows[0].ratio);
        let regressed = paired_run("c", 1.0, 1.25 * 0.9);
        let rows = judge(&base, &regressed, 0.05).0;
        assert_eq!(
            rows[0].verdict,
            Verdict::Regression,
            "ratio {}",
            rows[0].ratio
        );
        // Unpaired, the slower machine would have read as a regression.
        let (plain_b, plain_c) = (
            run("b", Metric::ClientCpuNs, around(100.0)),
            run("c", Metric::ClientCpuNs, around(120.0)),
        );
        assert_eq!(
            judge(&plain_b, &plain_c, 0.05).0[0].verdict,
            Verdict::Regression
        );
    }

    #[test]
    fn thresholds_parse() {
        assert_eq!(parse_threshold("5%").unwrap(), 0.05);
        assert_eq!(parse_threshold("0.1").unwrap(), 0.001);
        assert!(parse_threshold("x").is_err());
        assert!(parse_threshold("150%").is_err());
    }
}
