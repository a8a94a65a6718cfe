//! `tlsmatrix repeatability FILE...`: the same plan run several times (`make repeatability`);
//! how far each factor against the baseline moves between the runs, whether each run's
//! interval holds the runs' median, and where the A/A factors land. The targets are those a
//! user comparing two reruns needs: max/min of a factor within 1.03 for handshakes and 1.05
//! for bulk, intervals that hold the median for at least 90% of factors, A/A within 1 ± 0.02.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Result};
use tlsmatrix_model::record::{is_aa, Metric, Record};
use tlsmatrix_model::stats::{self, Factor};

use tlsmatrix_history::{read_jsonl, RunData};
use tlsmatrix_report::comparison::{FactorAcross, KindSpread, Repeatability, WeatherByRun};
use tlsmatrix_report::figures::{self, shown};

use crate::compare::Outcome;

/// Max/min of a factor across reruns that a comparison should stay within.
pub fn spread_target(scenario: &str) -> f64 {
    if scenario.starts_with("bulk-") {
        1.05
    } else {
        1.03
    }
}

/// Every paired factor of a run against its reference, keyed by (scenario, client, server,
/// metric), as times better.
fn factors(run: &RunData) -> BTreeMap<(String, String, String, Metric), Factor> {
    run.records
        .iter()
        .filter(|r| figures::in_tables(r.metric))
        .filter_map(|r: &Record| Some((r.key(), figures::paired_advantage(r)?)))
        .collect()
}

/// One factor across the runs.
struct Across {
    key: (String, String, String, Metric),
    values: Vec<Factor>,
}

impl Across {
    fn spread(&self) -> f64 {
        let max = self.values.iter().map(|f| f.ratio).fold(f64::MIN, f64::max);
        let min = self.values.iter().map(|f| f.ratio).fold(f64::MAX, f64::min);
        max / min
    }

    fn median(&self) -> f64 {
        stats::median(&self.values.iter().map(|f| f.ratio).collect::<Vec<_>>())
    }

    fn covered(&self) -> usize {
        let m = self.median();
        self.values
            .iter()
            .filter(|f| f.ci_low <= m && m <= f.ci_high)
            .count()
    }
}

/// The impl a factor is about: the side that is not the baseline (for the A/A copy and the
/// self pairs, the client).
fn about<'a>(client: &'a str, server: &'a str, baseline: &str) -> &'a str {
    if client == baseline {
        server
    } else {
        client
    }
}

/// Misses counted by the impl each factor is about (the side that is not the baseline), from
/// (client, server, missed) per factor: a stack whose factors all move shows as one entry.
/// Entries with a miss, most misses first.
fn misses_by_impl<'a>(
    factors: impl IntoIterator<Item = (&'a str, &'a str, bool)>,
    baseline: &str,
) -> Vec<(String, usize, usize)> {
    let mut by_impl: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (client, server, missed) in factors {
        let e = by_impl.entry(about(client, server, baseline)).or_default();
        e.0 += usize::from(missed);
        e.1 += 1;
    }
    let mut out: Vec<(String, usize, usize)> = by_impl
        .into_iter()
        .filter(|(_, (missed, _))| *missed > 0)
        .map(|(name, (missed, total))| (name.to_string(), missed, total))
        .collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

/// Per run, how far an impl's factors sat from their medians across the runs: the median of
/// `factor / median - 1` over the impl's factors (`picks` chooses them). A stack that moves as a
/// whole from run to run shows here as one shift per run, which can be read against that
/// run's weather.
fn shifts_by_run(across: &[&Across], runs: usize, picks: impl Fn(&Across) -> bool) -> Vec<f64> {
    (0..runs)
        .map(|i| {
            let offs: Vec<f64> = across
                .iter()
                .filter(|a| picks(a))
                .map(|a| a.values[i].ratio / a.median() - 1.0)
                .collect();
            stats::median(&offs)
        })
        .collect()
}

/// The runs' memory weather beside the shift of every impl with a miss: whether a stack's
/// run-to-run movement follows the machine's shared caches and memory.
fn weather_by_run(
    runs: &[RunData],
    factors: &[&Across],
    missed: &[String],
    baseline: &str,
) -> WeatherByRun {
    if missed.is_empty() {
        return WeatherByRun::NotNeeded;
    }
    let weather: Vec<Option<figures::MemoryWeather>> = runs
        .iter()
        .map(|r| figures::MemoryWeather::of(&r.records))
        .collect();
    if weather.iter().any(Option::is_none) {
        return WeatherByRun::NotProbed;
    }
    let weather: Vec<figures::MemoryWeather> = weather.into_iter().flatten().collect();
    let shifts: Vec<Vec<f64>> = missed
        .iter()
        .map(|name| {
            let is_about = |a: &Across| about(&a.key.1, &a.key.2, baseline) == name;
            shifts_by_run(factors, runs.len(), is_about)
        })
        .collect();
    let memory: Vec<f64> = weather.iter().map(|w| w.memory_ns.1).collect();
    let cache: Vec<f64> = weather.iter().map(|w| w.cache_ns.1).collect();
    WeatherByRun::Probed {
        impls: missed.to_vec(),
        runs: runs
            .iter()
            .zip(&weather)
            .enumerate()
            .map(|(i, (run, w))| {
                (
                    run.run_id.clone(),
                    w.cache_ns.1,
                    w.memory_ns.1,
                    shifts.iter().map(|s| s[i]).collect(),
                )
            })
            .collect(),
        correlations: missed
            .iter()
            .zip(&shifts)
            .map(|(name, s)| {
                (
                    name.clone(),
                    stats::pearson(s, &memory),
                    stats::pearson(s, &cache),
                )
            })
            .collect(),
    }
}

/// How far each factor moved between the runs in `files` (reruns of one plan), against the
/// targets.
pub fn repeatability(files: &[PathBuf]) -> Result<Outcome> {
    let mut runs: Vec<RunData> = Vec::new();
    for f in files {
        runs.extend(read_jsonl(f)?);
    }
    let found = summary(&runs)?;
    Ok(Outcome {
        text: found.render(),
        passed: found.passed(),
    })
}

/// The runs' shared factors, each kind's spread, the intervals' coverage, the A/A pairs and,
/// where a stack missed, the runs' weather.
pub fn summary(runs: &[RunData]) -> Result<Repeatability> {
    if runs.len() < 2 {
        bail!(
            "repeatability needs at least two runs of the same plan; {} given",
            runs.len()
        );
    }
    let per_run: Vec<_> = runs.iter().map(factors).collect();
    let mut across: Vec<Across> = Vec::new();
    for (key, _) in per_run[0].iter() {
        let values: Vec<Factor> = per_run.iter().filter_map(|f| f.get(key).copied()).collect();
        if values.len() == runs.len() {
            across.push(Across {
                key: key.clone(),
                values,
            });
        }
    }
    if across.is_empty() {
        bail!("the runs share no paired factor; were they made with the same plan by `tlsmatrix run`?");
    }
    let baseline = runs[0]
        .records
        .iter()
        .find_map(|r| r.paired.as_ref().map(|p| p.reference_client.clone()))
        .unwrap_or_default();
    let factors: Vec<&Across> = across.iter().filter(|a| !is_aa(&a.key.1)).collect();
    let (kinds, missed) = spread_by_kind(&factors, &baseline);
    let covered = factors
        .iter()
        .fold((0, 0), |(c, t), a| (c + a.covered(), t + a.values.len()));
    let aa: Vec<f64> = across
        .iter()
        .filter(|a| is_aa(&a.key.1))
        .flat_map(|a| a.values.iter().map(|f| f.ratio))
        .collect();
    let aa = (!aa.is_empty()).then(|| {
        let worst = aa.iter().copied().fold(1.0, |w: f64, f| {
            if (f - 1.0).abs() > (w - 1.0).abs() {
                f
            } else {
                w
            }
        });
        let within = aa.iter().filter(|f| (*f - 1.0).abs() <= 0.02).count();
        (within, aa.len(), worst)
    });
    Ok(Repeatability {
        run_ids: runs.iter().map(|r| r.run_id.clone()).collect(),
        factors: across.iter().map(factor_across).collect(),
        kinds,
        covered,
        aa,
        weather: weather_by_run(runs, &factors, &missed, &baseline),
    })
}

/// A factor across the runs as the table shows it: each run's value, max/min against its
/// target, and how many runs' intervals hold the median of the runs.
fn factor_across(a: &Across) -> FactorAcross {
    let (s, c, v, m) = &a.key;
    FactorAcross {
        scenario: s.clone(),
        client: c.clone(),
        server: v.clone(),
        figure: shown(*m).title.into(),
        factors: a.values.iter().map(|f| f.ratio).collect(),
        spread: a.spread(),
        target: if is_aa(c) { 1.02 } else { spread_target(s) },
        covered: a.covered(),
    }
}

/// Per kind of scenario (handshake, bulk), how many factors stay within the kind's spread
/// target across the runs, the worst, and the impls that missed; and every impl that missed.
fn spread_by_kind(factors: &[&Across], baseline: &str) -> (Vec<KindSpread>, Vec<String>) {
    let mut kinds = Vec::new();
    let mut missed: Vec<String> = Vec::new();
    for (kind, prefix) in [("handshake", "handshake-"), ("bulk", "bulk-")] {
        let of_kind: Vec<&&Across> = factors
            .iter()
            .filter(|a| a.key.0.starts_with(prefix))
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        let target = spread_target(prefix);
        let worst = of_kind
            .iter()
            .max_by(|a, b| a.spread().total_cmp(&b.spread()))
            .expect("not empty");
        let misses = misses_by_impl(
            of_kind
                .iter()
                .map(|a| (a.key.1.as_str(), a.key.2.as_str(), a.spread() > target)),
            baseline,
        );
        for (name, _, _) in &misses {
            if !missed.contains(name) {
                missed.push(name.clone());
            }
        }
        kinds.push(KindSpread {
            kind,
            within: of_kind.iter().filter(|a| a.spread() <= target).count(),
            total: of_kind.len(),
            target,
            worst: (
                worst.spread(),
                worst.key.0.clone(),
                worst.key.1.clone(),
                worst.key.2.clone(),
                shown(worst.key.3).title.into(),
            ),
            misses,
        });
    }
    (kinds, missed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn across(client: &str, ratios: &[f64]) -> Across {
        Across {
            key: (
                "s".into(),
                client.into(),
                client.into(),
                Metric::ClientCpuNs,
            ),
            values: ratios
                .iter()
                .map(|&ratio| Factor {
                    ratio,
                    ci_low: ratio,
                    ci_high: ratio,
                    significant: true,
                    paired: true,
                })
                .collect(),
        }
    }

    #[test]
    fn a_stack_that_moves_as_a_whole_shows_one_shift_per_run() {
        // Two factors of "go" both 10% low in run 2; "x" does not move.
        let a = across("go", &[0.5, 0.45, 0.5]);
        let b = across("go", &[0.4, 0.36, 0.4]);
        let c = across("x", &[1.0, 1.0, 1.2]);
        let all = [&a, &b, &c];
        let s = shifts_by_run(&all, 3, |f| f.key.1 == "go");
        assert!(
            (s[0] - 0.0).abs() < 1e-9 && (s[2] - 0.0).abs() < 1e-9,
            "{s:?}"
        );
        assert!((s[1] + 0.1).abs() < 1e-9, "{s:?}");
        // Against a memory latency highest in run 2, the shift correlates fully (negatively).
        let r = stats::pearson(&s, &[160.0, 190.0, 160.0]);
        assert!((r + 1.0).abs() < 1e-9, "{r}");
        assert_eq!(stats::pearson(&s, &[1.0, 1.0, 1.0]), 0.0);
    }

    #[test]
    fn misses_are_counted_by_the_impl_the_factor_is_about() {
        let base = "rustls-aws-lc";
        let factors = [
            ("go-crypto-tls", "go-crypto-tls", true),
            ("go-crypto-tls", "go-crypto-tls", false),
            ("openssl-3.0", base, true),
            (base, "openssl-3.0", false),
            ("openssl-3.0", "openssl-3.0", false),
            ("rustls-ring", base, false),
            ("go-crypto-tls", "go-crypto-tls", true),
        ];
        assert_eq!(
            misses_by_impl(factors, base),
            vec![
                ("go-crypto-tls".to_string(), 2, 3),
                ("openssl-3.0".to_string(), 1, 3)
            ]
        );
        assert!(misses_by_impl([("a", "a", false)], base).is_empty());
    }
}
