//! Median, minimum and a bootstrap confidence interval of the median. Timings on a shared
//! machine have outliers in one direction (preemption), so the median is the summary and
//! the bootstrap makes no assumption about the shape of the distribution.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// An interval wider than this share of the median, either side, marks a result noisy.
pub const NOISY_HALF_WIDTH: f64 = 0.05;

impl Summary {
    /// Half the interval's width relative to the median: 0.012 for "±1.2%".
    pub fn relative_half_width(&self) -> f64 {
        if self.median == 0.0 {
            return f64::INFINITY;
        }
        (self.ci_high - self.ci_low) / 2.0 / self.median.abs()
    }

    /// The interval is wider than ±5% of the median (what the "±x%" of a figure shows).
    pub fn is_noisy(&self) -> bool {
        self.relative_half_width() > NOISY_HALF_WIDTH
    }
}

/// A over B with its uncertainty: the ratio of the medians, a bootstrap 95% interval of that
/// ratio, and whether the two medians' own intervals are apart (the test a reader can see).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Factor {
    pub ratio: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub significant: bool,
}

/// Compares two sets of samples; `None` if either is empty or B's median is zero.
pub fn factor(a: &[f64], b: &[f64]) -> Option<Factor> {
    let (sa, sb) = (summarize(a)?, summarize(b)?);
    if sb.median == 0.0 {
        return None;
    }
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        resample_into(a, &mut ra, &mut rng);
        resample_into(b, &mut rb, &mut rng);
        let mb = median_sorted(&rb);
        if mb != 0.0 {
            ratios.push(median_sorted(&ra) / mb);
        }
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((q * (ratios.len() - 1) as f64).round()) as usize];
    Some(Factor {
        ratio: sa.median / sb.median,
        ci_low: at(0.025),
        ci_high: at(0.975),
        significant: sa.ci_high < sb.ci_low || sb.ci_high < sa.ci_low,
    })
}

fn resample_into(from: &[f64], into: &mut [f64], rng: &mut XorShift) {
    for slot in into.iter_mut() {
        *slot = from[rng.below(from.len())];
    }
    into.sort_by(f64::total_cmp);
}

pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    median_sorted(&v)
}

fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Summarises samples; `None` for an empty slice. The interval is the 2.5th-97.5th
/// percentile of medians of resamples; the generator has a fixed seed so a summary of the same
/// samples is the same every time.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let med = median(samples);
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let n = samples.len();
    let mut medians = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut resample = vec![0.0; n];
    for _ in 0..BOOTSTRAP_RESAMPLES {
        resample_into(samples, &mut resample, &mut rng);
        medians.push(median_sorted(&resample));
    }
    medians.sort_by(f64::total_cmp);
    let at = |q: f64| medians[((q * (BOOTSTRAP_RESAMPLES - 1) as f64).round()) as usize];
    Some(Summary {
        median: med,
        min,
        ci_low: at(0.025),
        ci_high: at(0.975),
    })
}

struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    }

    #[test]
    fn interval_brackets_the_median_and_is_deterministic() {
        let samples: Vec<f64> = (0..30).map(|i| 100.0 + (i * 7 % 11) as f64).collect();
        let s = summarize(&samples).unwrap();
        assert!(s.ci_low <= s.median && s.median <= s.ci_high, "{s:?}");
        assert!(s.ci_high - s.ci_low < 10.0, "{s:?}");
        assert_eq!(s.min, 100.0);
        assert_eq!(summarize(&samples), Some(s));
    }

    #[test]
    fn noisy_means_wider_than_five_percent_of_the_median() {
        let s = |lo, hi| Summary {
            median: 100.0,
            min: lo,
            ci_low: lo,
            ci_high: hi,
        };
        assert!(!s(96.0, 104.0).is_noisy());
        assert!(!s(95.0, 104.0).is_noisy());
        assert!(s(94.0, 106.5).is_noisy());
        assert!(s(89.0, 100.0).is_noisy());
        assert!((s(98.0, 102.0).relative_half_width() - 0.02).abs() < 1e-12);
    }

    #[test]
    fn factor_brackets_the_ratio_and_tells_apart_from_overlapping() {
        let a: Vec<f64> = (0..30).map(|i| 200.0 + (i % 5) as f64).collect();
        let b: Vec<f64> = (0..30).map(|i| 100.0 + (i % 5) as f64).collect();
        let f = factor(&a, &b).unwrap();
        assert!((f.ratio - 202.0 / 102.0).abs() < 1e-9, "{f:?}");
        assert!(f.ci_low <= f.ratio && f.ratio <= f.ci_high, "{f:?}");
        assert!(f.significant);
        let c: Vec<f64> = (0..30).map(|i| 100.0 + (i % 7) as f64).collect();
        let g = factor(&c, &b).unwrap();
        assert!(!g.significant, "{g:?}");
        assert!(g.ci_low <= 1.0 && 1.0 <= g.ci_high, "{g:?}");
        assert!(factor(&[], &b).is_none());
        assert!(factor(&a, &[0.0]).is_none());
    }

    #[test]
    fn one_sample_has_a_zero_width_interval_and_none_has_no_summary() {
        let s = summarize(&[5.0]).unwrap();
        assert_eq!((s.ci_low, s.median, s.ci_high), (5.0, 5.0, 5.0));
        assert!(summarize(&[]).is_none());
    }
}
