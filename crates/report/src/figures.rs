//! How a metric is shown to people: its figures and factors as text. What a figure and a
//! factor are (the statistics, the pairs, the noise floor) is computed in
//! `tlsmatrix_analysis::factors`, re-exported here so that every table, chart and sentence
//! reads them from one place.

use tlsmatrix_model::stats::{Factor, Summary};

pub use tlsmatrix_analysis::factors::*;

/// One line for the terminal and the report's header.
pub trait Describe {
    fn describe(&self) -> String;
}

impl Describe for NoiseFloor {
    fn describe(&self) -> String {
        let (scenario, title, f) = &self.worst;
        format!(
            "noise floor ±{:.1}%: the baseline against a copy of itself (A/A, {} figures) lands at most {:.3}x from 1 ({title} in {scenario}, 95% CI {:.3}-{:.3}){}",
            self.floor * 100.0,
            self.figures,
            f.ratio,
            f.ci_low,
            f.ci_high,
            if self.noisy() {
                format!("; NOISY MACHINE: more than {:.0}% apart", NOISY_MACHINE * 100.0)
            } else {
                String::new()
            }
        )
    }
}

impl Describe for MemoryWeather {
    fn describe(&self) -> String {
        let (c, m) = (self.cache_ns, self.memory_ns);
        format!(
            "memory weather (ns a load, read between passes): {:.0}-{:.0} (median {:.0}) through half the last-level cache, {:.0}-{:.0} (median {:.0}) through four times it; on a shared host both move with other tenants, and so do stacks whose working set spills out of L2",
            c.0, c.2, c.1, m.0, m.2, m.1
        )
    }
}

/// "2.10x [2.05-2.14]", with `~` when not significant and `u` when unpaired (two blocks of
/// samples taken at different times, which a shared machine's drift can move).
pub fn factor_text(f: &Factor) -> String {
    format!(
        "{:.2}x [{:.2}-{:.2}]{}{}",
        f.ratio,
        f.ci_low,
        f.ci_high,
        if f.significant { "" } else { "~" },
        if f.paired { "" } else { "u" }
    )
}

/// 12345.6 -> "12,346"; values under 100 keep one decimal.
pub fn figure(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() < 100.0 {
        return format!("{v:.1}");
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// "4,231 ±1.2%", with `*` when the interval is wider than ±5%.
pub fn with_interval(s: &Summary) -> String {
    // A figure that is mostly zero (page faults, a share of a profile) has no relative width.
    if s.median == 0.0 {
        return if s.ci_high == 0.0 {
            "0".into()
        } else {
            format!("0 [0-{}]", figure(s.ci_high))
        };
    }
    format!(
        "{} ±{:.1}%{}",
        figure(s.median),
        s.relative_half_width() * 100.0,
        if s.is_noisy() { "*" } else { "" }
    )
}

/// Said beside instruction counts of `scenarios` where one is a handshake with an operation
/// of varying cost (ML-DSA signing), else nothing: the one count that is a mean rather than a
/// fixed figure.
pub fn varying_count_note<'a>(scenarios: impl IntoIterator<Item = &'a str>) -> &'static str {
    use tlsmatrix_model::scenario::{Kind, Scenario};
    let varies = |id: &str| {
        id.parse::<Scenario>().is_ok_and(|s| {
            s.kind() == Kind::Handshake && tlsmatrix_model::floor::min_handshakes(&s.params()) > 1
        })
    };
    if scenarios.into_iter().any(varies) {
        " An ML-DSA server's count is a mean over its sample's signatures, and ML-DSA signs in a loop that runs a varying number of times (rejection sampling, FIPS 204): unlike the other counts, it is not the same from one sample to the next."
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_with_thousands_separators() {
        assert_eq!(figure(1234567.4), "1,234,567");
        assert_eq!(figure(999.5), "1,000");
        assert_eq!(figure(12.34), "12.3");
        assert_eq!(figure(f64::NAN), "-");
    }

    #[test]
    fn memory_weather_says_each_probes_range_and_median() {
        let w = MemoryWeather {
            cache_ns: (14.0, 30.0, 120.0),
            memory_ns: (150.0, 160.0, 180.0),
            blocks: 3,
        };
        assert!(
            w.describe().contains("14-120 (median 30)"),
            "{}",
            w.describe()
        );
    }

    /// Only a full handshake that signs with ML-DSA gets the note.
    #[test]
    fn only_an_mldsa_signature_makes_a_count_vary() {
        let note = |ids: &[&str]| varying_count_note(ids.iter().copied());
        assert!(note(&["handshake-tls13-mldsa44-x25519-full"]).contains("ML-DSA"));
        assert_eq!(
            note(&["handshake-tls13-ecdsa-p256-x25519mlkem768-full"]),
            ""
        );
        assert_eq!(note(&["bulk-tls13-aes-128-gcm-16k", "not a scenario"]), "");
    }
}
