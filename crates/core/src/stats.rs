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
        for slot in resample.iter_mut() {
            *slot = samples[rng.below(n)];
        }
        resample.sort_by(f64::total_cmp);
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
    fn one_sample_has_a_zero_width_interval_and_none_has_no_summary() {
        let s = summarize(&[5.0]).unwrap();
        assert_eq!((s.ci_low, s.median, s.ci_high), (5.0, 5.0, 5.0));
        assert!(summarize(&[]).is_none());
    }
}
