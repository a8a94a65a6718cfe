//! `tlsmatrix compare`'s result as data, and its drawing for the terminal. The runner judges
//! (`tlsmatrix_runner::compare`); this only renders what it found.

use tlsmatrix_model::record::Record;

use crate::figures::{self, shown, with_interval};
use crate::text_table::Table;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    /// Worse beyond the threshold, and significant.
    Regression,
    /// The intervals overlap.
    Same,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Regression => "REGRESSION",
            Verdict::Same => "same",
        }
    }
}

/// One matched figure: the candidate over the base, as shown (so a rate stays a rate).
#[derive(Debug, Clone)]
pub struct Row<'a> {
    pub base: &'a Record,
    pub cand: &'a Record,
    /// Candidate / base of the shown figures, or of the factors against the reference when
    /// `by_factor`.
    pub ratio: f64,
    pub verdict: Verdict,
    /// Judged on the paired factors against the baseline (times better), not the figures.
    pub by_factor: bool,
}

/// Two runs' figures, matched and judged.
#[derive(Debug, Clone)]
pub struct FigureComparison<'a> {
    pub base_id: String,
    pub cand_id: String,
    pub threshold: f64,
    pub rows: Vec<Row<'a>>,
    /// Figures found in one run only.
    pub only_base: usize,
    pub only_cand: usize,
    /// (library, base version, candidate version) where the two ran different versions.
    pub versions: Vec<(String, String, String)>,
    /// Each run's memory weather, where it measured one: ("base" or "candidate", its words).
    pub weather: Vec<(&'static str, String)>,
}

impl FigureComparison<'_> {
    pub fn count(&self, v: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == v).count()
    }

    /// Whether no figure regressed.
    pub fn passed(&self) -> bool {
        self.count(Verdict::Regression) == 0
    }

    /// The table and the lines around it, as the terminal shows them.
    pub fn render(&self) -> String {
        let mut t = Table::new(
            &[
                "scenario",
                "client",
                "server",
                "figure",
                "base",
                "candidate",
                "cand/base",
                "verdict",
            ],
            4,
        );
        for r in &self.rows {
            t.row(vec![
                r.base.scenario.clone(),
                r.base.client.clone(),
                r.base.server.clone(),
                shown(r.base.metric).title.into(),
                with_interval(&figures::summary(r.base)),
                with_interval(&figures::summary(r.cand)),
                if r.by_factor {
                    format!("{:.3}x of factor", r.ratio)
                } else {
                    format!("{:.3}x", r.ratio)
                },
                r.verdict.text().into(),
            ]);
        }
        let mut out = format!(
            "base {} vs candidate {}: threshold {:.2}% (a regression is worse by more than that, with the 95% intervals apart; where both runs paired a figure with the baseline, its factor against the baseline is compared, which drift between the runs does not move)\n",
            self.base_id,
            self.cand_id,
            self.threshold * 100.0
        );
        out.push_str(&t.render());
        for (name, b, c) in &self.versions {
            out.push_str(&format!(
                "note: {name} ran {b} in the base and {c} in the candidate\n"
            ));
        }
        if self.only_base + self.only_cand > 0 {
            out.push_str(&format!(
                "unmatched: {} figures only in the base, {} only in the candidate\n",
                self.only_base, self.only_cand
            ));
        }
        for (which, words) in &self.weather {
            out.push_str(&format!("{which} {words}\n"));
        }
        out.push_str(&format!(
            "{} figures: {} better, {} same, {} worse within the threshold, {} regressions\n",
            self.rows.len(),
            self.count(Verdict::Better),
            self.count(Verdict::Same),
            self.count(Verdict::Worse),
            self.count(Verdict::Regression)
        ));
        out
    }
}

/// Two conformance runs compared test by test.
#[derive(Debug, Clone)]
pub struct ConformanceComparison {
    pub base_id: String,
    pub cand_id: String,
    /// Per impl of the candidate: tests passed in the base, in the candidate, and newly failing.
    pub impls: Vec<(String, usize, usize, usize)>,
    /// (impl, test, the first line of its reason) of each test failing only in the candidate.
    pub newly_failing: Vec<(String, String, String)>,
}

impl ConformanceComparison {
    pub fn passed(&self) -> bool {
        self.newly_failing.is_empty()
    }

    pub fn render(&self) -> String {
        let mut t = Table::new(
            &[
                "impl",
                "passed (base)",
                "passed (candidate)",
                "newly failing",
            ],
            1,
        );
        for (imp, b, c, n) in &self.impls {
            t.row(vec![
                imp.clone(),
                b.to_string(),
                c.to_string(),
                n.to_string(),
            ]);
        }
        let mut out = format!(
            "conformance: base {} vs candidate {}\n",
            self.base_id, self.cand_id
        );
        out.push_str(&t.render());
        for (imp, test, why) in &self.newly_failing {
            out.push_str(&format!("newly failing: {imp} {test}: {why}\n"));
        }
        out
    }
}

/// One paired factor across reruns of a plan (`tlsmatrix repeatability`).
#[derive(Debug, Clone)]
pub struct FactorAcross {
    pub scenario: String,
    pub client: String,
    pub server: String,
    /// The figure's title as tables show it.
    pub figure: String,
    /// Each run's factor, in run order.
    pub factors: Vec<f64>,
    pub spread: f64,
    /// The max/min the factor should stay within.
    pub target: f64,
    /// How many runs' intervals hold the median of the runs.
    pub covered: usize,
}

/// Per kind of scenario (handshake, bulk): factors within the kind's spread target, the
/// worst, and the impls whose factors missed.
#[derive(Debug, Clone)]
pub struct KindSpread {
    pub kind: &'static str,
    pub within: usize,
    pub total: usize,
    pub target: f64,
    /// The worst factor's spread and its (scenario, client, server, figure).
    pub worst: (f64, String, String, String, String),
    /// (impl, factors missed, factors), most misses first.
    pub misses: Vec<(String, usize, usize)>,
}

/// The runs' memory weather beside the shift of each impl with a miss.
#[derive(Debug, Clone)]
pub enum WeatherByRun {
    /// No impl missed: nothing to explain.
    NotNeeded,
    /// A run had no probe.
    NotProbed,
    Probed {
        /// The impls with a miss, as the columns' order.
        impls: Vec<String>,
        /// (run id, cache ns, memory ns, each impl's shift).
        runs: Vec<(String, f64, f64, Vec<f64>)>,
        /// (impl, r against memory latency, r against the cache probe).
        correlations: Vec<(String, f64, f64)>,
    },
}

/// How far each factor moved between reruns of one plan, against the targets.
#[derive(Debug, Clone)]
pub struct Repeatability {
    pub run_ids: Vec<String>,
    pub factors: Vec<FactorAcross>,
    pub kinds: Vec<KindSpread>,
    /// Run factors whose interval holds the median of the runs, of all (A/A pairs aside).
    pub covered: (usize, usize),
    /// A/A factors within 1 ± 0.02, of all, and the furthest; `None` without an A/A pair.
    pub aa: Option<(usize, usize, f64)>,
    pub weather: WeatherByRun,
}

/// The share of run intervals that must hold the median of the runs.
pub const COVERAGE_TARGET: f64 = 0.9;

impl Repeatability {
    pub fn coverage(&self) -> f64 {
        self.covered.0 as f64 / self.covered.1.max(1) as f64
    }

    /// Whether every target is met.
    pub fn passed(&self) -> bool {
        self.kinds.iter().all(|k| k.within == k.total)
            && self.coverage() >= COVERAGE_TARGET
            && self.aa.is_none_or(|(within, total, _)| within == total)
    }

    pub fn render(&self) -> String {
        let mut t = Table::new(
            &[
                "scenario",
                "client",
                "server",
                "figure",
                "factors",
                "max/min",
                "CI holds median",
            ],
            4,
        );
        for f in &self.factors {
            t.row(vec![
                f.scenario.clone(),
                f.client.clone(),
                f.server.clone(),
                f.figure.clone(),
                f.factors
                    .iter()
                    .map(|v| format!("{v:.3}"))
                    .collect::<Vec<_>>()
                    .join(" "),
                format!(
                    "{:.3}{}",
                    f.spread,
                    if f.spread > f.target { " !" } else { "" }
                ),
                format!("{}/{}", f.covered, f.factors.len()),
            ]);
        }
        let mut out = format!("{} runs: {}\n", self.run_ids.len(), self.run_ids.join(", "));
        out.push_str(&t.render());
        for k in &self.kinds {
            let (spread, s, c, v, fig) = &k.worst;
            out.push_str(&format!(
                "{}: {} of {} factors within max/min {:.2} across the runs; worst {spread:.3} ({s} {c} -> {v}, {fig})\n",
                k.kind, k.within, k.total, k.target
            ));
            if !k.misses.is_empty() {
                out.push_str(&format!(
                    "  misses by impl: {}\n",
                    k.misses
                        .iter()
                        .map(|(name, missed, total)| format!("{name} {missed} of {total}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        let (covered, total) = self.covered;
        out.push_str(&format!(
            "intervals: {covered} of {total} run factors ({:.0}%) have a 95% interval holding the median of the runs (target {:.0}%)\n",
            self.coverage() * 100.0,
            COVERAGE_TARGET * 100.0
        ));
        if let Some((within, total, worst)) = self.aa {
            out.push_str(&format!(
                "A/A: {within} of {total} A/A factors within 1 ± 0.02; furthest {worst:.3}\n"
            ));
        }
        out.push_str(&self.render_weather());
        out.push_str(if self.passed() {
            "all targets met\n"
        } else {
            "TARGETS MISSED (marked !)\n"
        });
        out
    }

    fn render_weather(&self) -> String {
        let (impls, runs, correlations) = match &self.weather {
            WeatherByRun::NotNeeded => return String::new(),
            WeatherByRun::NotProbed => {
                return "memory weather: not probed in every run (runs from before the probe, or unpaired)\n".into()
            }
            WeatherByRun::Probed {
                impls,
                runs,
                correlations,
            } => (impls, runs, correlations),
        };
        let mut head = vec!["run", "cache ns", "memory ns"];
        let titles: Vec<String> = impls.iter().map(|n| format!("{n} shift")).collect();
        head.extend(titles.iter().map(String::as_str));
        let mut t = Table::new(&head, 1);
        for (id, cache, memory, shifts) in runs {
            let mut row = vec![id.clone(), format!("{cache:.0}"), format!("{memory:.0}")];
            row.extend(shifts.iter().map(|s| format!("{:+.1}%", s * 100.0)));
            t.row(row);
        }
        let mut out = "\nmemory weather by run (medians over each run's passes) and how far each stack with a miss sat from its factors' medians:\n".to_string();
        out.push_str(&t.render());
        for (name, memory, cache) in correlations {
            out.push_str(&format!(
                "  {name}: shift against the runs' memory latency r = {memory:+.2}, against the cache probe r = {cache:+.2} ({} runs)\n",
                runs.len()
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::record::{Env, Metric};

    fn rec(v: f64) -> Record {
        Record::from_samples(
            "r",
            "handshake-tls13-ecdsa-p256-x25519-full",
            ("a", "1"),
            ("a", "1"),
            Metric::ClientCpuNs,
            vec![v; 5],
            Env::default(),
        )
        .unwrap()
    }

    #[test]
    fn the_table_counts_each_verdict_and_names_what_differs() {
        let (b, c) = (rec(100.0), rec(120.0));
        let cmp = FigureComparison {
            base_id: "b1".into(),
            cand_id: "c1".into(),
            threshold: 0.05,
            rows: vec![Row {
                base: &b,
                cand: &c,
                ratio: 0.833,
                verdict: Verdict::Regression,
                by_factor: false,
            }],
            only_base: 2,
            only_cand: 0,
            versions: vec![("openssl".into(), "3.0.17".into(), "3.0.18".into())],
            weather: Vec::new(),
        };
        assert!(!cmp.passed());
        let text = cmp.render();
        assert!(
            text.starts_with("base b1 vs candidate c1: threshold 5.00%"),
            "{text}"
        );
        assert!(
            text.contains("REGRESSION") && text.contains("0.833x"),
            "{text}"
        );
        assert!(text.contains("note: openssl ran 3.0.17 in the base and 3.0.18"));
        assert!(text.contains("unmatched: 2 figures only in the base"));
        assert!(text.ends_with(
            "1 figures: 0 better, 0 same, 0 worse within the threshold, 1 regressions\n"
        ));
        let conf = ConformanceComparison {
            base_id: "b".into(),
            cand_id: "c".into(),
            impls: vec![("rustls-ring".into(), 10, 9, 1)],
            newly_failing: vec![(
                "rustls-ring".into(),
                "Basic-Client".into(),
                "timeout".into(),
            )],
        };
        assert!(!conf.passed());
        assert!(conf
            .render()
            .contains("newly failing: rustls-ring Basic-Client: timeout"));
    }

    #[test]
    fn repeatability_names_the_worst_factor_and_misses_a_target_when_a_factor_moves() {
        let moved = FactorAcross {
            scenario: "handshake-x".into(),
            client: "go-crypto-tls".into(),
            server: "go-crypto-tls".into(),
            figure: "client hs/s".into(),
            factors: vec![0.5, 0.55],
            spread: 1.1,
            target: 1.03,
            covered: 1,
        };
        let r = Repeatability {
            run_ids: vec!["r1".into(), "r2".into()],
            factors: vec![moved],
            kinds: vec![KindSpread {
                kind: "handshake",
                within: 0,
                total: 1,
                target: 1.03,
                worst: (
                    1.1,
                    "handshake-x".into(),
                    "go-crypto-tls".into(),
                    "go-crypto-tls".into(),
                    "client hs/s".into(),
                ),
                misses: vec![("go-crypto-tls".into(), 1, 1)],
            }],
            covered: (1, 2),
            aa: Some((1, 1, 1.004)),
            weather: WeatherByRun::NotProbed,
        };
        assert!(!r.passed());
        let text = r.render();
        assert!(text.starts_with("2 runs: r1, r2\n"), "{text}");
        assert!(text.contains("1.100 !"), "{text}");
        assert!(
            text.contains("handshake: 0 of 1 factors within max/min 1.03"),
            "{text}"
        );
        assert!(text.contains("misses by impl: go-crypto-tls 1 of 1"));
        assert!(text.contains("intervals: 1 of 2 run factors (50%)"));
        assert!(text.contains("memory weather: not probed"));
        assert!(text.ends_with("TARGETS MISSED (marked !)\n"));
    }
}
