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
    /// From ratios of samples taken side by side ([`paired_factor`]), not from two separate
    /// sets of samples ([`factor`]).
    pub paired: bool,
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
        let mb = median_in_place(&mut rb);
        if mb != 0.0 {
            ratios.push(median_in_place(&mut ra) / mb);
        }
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((q * (ratios.len() - 1) as f64).round()) as usize];
    Some(Factor {
        ratio: sa.median / sb.median,
        ci_low: at(0.025),
        ci_high: at(0.975),
        significant: sa.ci_high < sb.ci_low || sb.ci_high < sa.ci_low,
        paired: false,
    })
}

fn resample_into(from: &[f64], into: &mut [f64], rng: &mut XorShift) {
    for slot in into.iter_mut() {
        *slot = from[rng.below(from.len())];
    }
}

/// The median of `v`, reordering it: a selection in linear time instead of a sort, since the
/// bootstraps take it 2,000 times per figure and the report's figures number in thousands.
fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    let (left, &mut upper, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        upper
    } else {
        let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    median_sorted(&v)
}

/// Pearson's r of two equally long series (0 when either is flat).
pub fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len().min(y.len()) as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
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
        medians.push(median_in_place(&mut resample));
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

/// Median and a two-level bootstrap interval for samples taken in blocks (a block is one
/// driver process: one stretch of the run, on one core). Each resample draws blocks with
/// replacement, then samples with replacement inside each drawn block, so the interval
/// widens with the differences between blocks: it says what a rerun would give, not only
/// how tightly one stretch of time agreed with itself. With one block (or none given) this
/// is [`summarize`].
pub fn summarize_blocked(samples: &[f64], blocks: &[u32]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    let groups = group_by_block(samples, blocks);
    if groups.len() < 2 {
        return summarize(samples);
    }
    let mut rng = XorShift(0xd1b5_4a32_d192_ed03);
    let mut medians = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut resample: Vec<f64> = Vec::with_capacity(samples.len() * 2);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        resample.clear();
        for _ in 0..groups.len() {
            let g = &groups[rng.below(groups.len())];
            for _ in 0..g.len() {
                resample.push(g[rng.below(g.len())]);
            }
        }
        medians.push(median_in_place(&mut resample));
    }
    medians.sort_by(f64::total_cmp);
    let at = |q: f64| medians[((q * (BOOTSTRAP_RESAMPLES - 1) as f64).round()) as usize];
    Some(Summary {
        median: median(samples),
        min: samples.iter().copied().fold(f64::INFINITY, f64::min),
        ci_low: at(0.025).min(median(samples)),
        ci_high: at(0.975).max(median(samples)),
    })
}

/// The samples of each block, in order of first appearance; every sample in one block when
/// `blocks` does not give one per sample.
fn group_by_block(samples: &[f64], blocks: &[u32]) -> Vec<Vec<f64>> {
    if blocks.len() != samples.len() {
        return vec![samples.to_vec()];
    }
    let mut ids: Vec<u32> = Vec::new();
    let mut groups: Vec<Vec<f64>> = Vec::new();
    for (&v, &b) in samples.iter().zip(blocks) {
        match ids.iter().position(|&id| id == b) {
            Some(i) => groups[i].push(v),
            None => {
                ids.push(b);
                groups.push(vec![v]);
            }
        }
    }
    groups
}

/// A factor from paired samples: `ratios[i]` is a sample of A over the sample of B taken
/// beside it in the same round. The factor is their median, its interval the two-level
/// bootstrap of [`summarize_blocked`]. `significant` says only that the interval excludes 1;
/// the caller also holds it against the run's noise floor ([`Factor::beyond`]).
pub fn paired_factor(ratios: &[f64], blocks: &[u32]) -> Option<Factor> {
    summarize_blocked(ratios, blocks).map(Factor::from_ratios)
}

impl Factor {
    /// The factor that a summary of per-round ratios ([`summarize_blocked`]) gives.
    pub fn from_ratios(s: Summary) -> Factor {
        Factor {
            ratio: s.median,
            ci_low: s.ci_low,
            ci_high: s.ci_high,
            significant: s.ci_low > 1.0 || s.ci_high < 1.0,
            paired: true,
        }
    }

    /// Half the interval's width relative to the factor: 0.012 for "±1.2%".
    pub fn relative_half_width(&self) -> f64 {
        if self.ratio == 0.0 {
            return f64::INFINITY;
        }
        (self.ci_high - self.ci_low) / 2.0 / self.ratio.abs()
    }

    /// The factor of B over A: the same comparison read the other way.
    pub fn inverted(self) -> Factor {
        Factor {
            ratio: 1.0 / self.ratio,
            ci_low: 1.0 / self.ci_high,
            ci_high: 1.0 / self.ci_low,
            ..self
        }
    }

    /// This factor over another taken against the same reference (A/R over B/R is A/B), for
    /// two impls that were each paired with the reference but not with each other. The two
    /// factors come from separate samples, so their relative errors add in quadrature, each
    /// side of the interval apart.
    pub fn over(self, other: Factor) -> Factor {
        let ratio = self.ratio / other.ratio;
        let down = (self.ratio / self.ci_low)
            .ln()
            .hypot((other.ci_high / other.ratio).ln());
        let up = (self.ci_high / self.ratio)
            .ln()
            .hypot((other.ratio / other.ci_low).ln());
        let (ci_low, ci_high) = (ratio / down.exp(), ratio * up.exp());
        Factor {
            ratio,
            ci_low,
            ci_high,
            significant: ci_low > 1.0 || ci_high < 1.0,
            paired: self.paired && other.paired,
        }
    }

    /// Significant, and further from 1 than the noise floor (0.01 for ±1%).
    pub fn beyond(self, floor: f64) -> Factor {
        Factor {
            significant: self.significant && (self.ratio - 1.0).abs() > floor,
            ..self
        }
    }
}

/// A small fast generator for resampling (and shuffling), seeded for reproducible output.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn below(&mut self, n: usize) -> usize {
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
    fn selection_gives_the_median_a_sort_gives() {
        let mut rng = XorShift(7);
        for n in 1..40 {
            // Ties too: values from a small range.
            let v: Vec<f64> = (0..n).map(|_| rng.below(9) as f64 * 0.5).collect();
            let mut sorted = v.clone();
            sorted.sort_by(f64::total_cmp);
            let mut scratch = v.clone();
            assert_eq!(
                median_in_place(&mut scratch),
                median_sorted(&sorted),
                "{v:?}"
            );
        }
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
    fn blocked_intervals_widen_with_differences_between_blocks() {
        // Three blocks that agree inside themselves but not with each other.
        let mut samples = Vec::new();
        let mut blocks = Vec::new();
        for (b, level) in [(0u32, 100.0), (1, 110.0), (2, 90.0)] {
            for i in 0..20 {
                samples.push(level + (i % 3) as f64 * 0.1);
                blocks.push(b);
            }
        }
        let flat = summarize(&samples).unwrap();
        let blocked = summarize_blocked(&samples, &blocks).unwrap();
        assert_eq!(flat.median, blocked.median);
        assert!(
            blocked.ci_high - blocked.ci_low > 3.0 * (flat.ci_high - flat.ci_low),
            "flat {flat:?} blocked {blocked:?}"
        );
        assert!(
            blocked.ci_low <= 91.0 && blocked.ci_high >= 109.0,
            "{blocked:?}"
        );
        // One block, or no block ids: the plain bootstrap.
        assert_eq!(summarize_blocked(&samples, &[]), summarize(&samples));
        assert_eq!(
            summarize_blocked(&samples, &vec![7; 60]),
            summarize(&samples)
        );
    }

    #[test]
    fn paired_factors_are_the_median_ratio_and_the_floor_decides_significance() {
        let ratios: Vec<f64> = (0..40).map(|i| 1.10 + (i % 5) as f64 * 0.002).collect();
        let blocks: Vec<u32> = (0..40).map(|i| i / 10).collect();
        let f = paired_factor(&ratios, &blocks).unwrap();
        assert!((f.ratio - 1.104).abs() < 1e-9, "{f:?}");
        assert!(f.significant && f.ci_low > 1.09, "{f:?}");
        assert!(f.beyond(0.05).significant);
        assert!(!f.beyond(0.2).significant);
        let inv = f.inverted();
        assert!((inv.ratio * f.ratio - 1.0).abs() < 1e-12 && inv.ci_low < inv.ci_high);
        let near: Vec<f64> = (0..40).map(|i| 0.99 + (i % 5) as f64 * 0.005).collect();
        assert!(!paired_factor(&near, &blocks).unwrap().significant);
    }

    #[test]
    fn one_sample_has_a_zero_width_interval_and_none_has_no_summary() {
        let s = summarize(&[5.0]).unwrap();
        assert_eq!((s.ci_low, s.median, s.ci_high), (5.0, 5.0, 5.0));
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn a_factor_over_another_divides_and_widens_its_interval() {
        let f = |ratio: f64, lo: f64, hi: f64| Factor {
            ratio,
            ci_low: lo,
            ci_high: hi,
            significant: true,
            paired: true,
        };
        let q = f(2.0, 1.9, 2.1).over(f(1.0, 0.95, 1.05));
        assert!((q.ratio - 2.0).abs() < 1e-12);
        // Each side 5% wide in both: about 7% after.
        assert!(q.ci_low < 1.9 && q.ci_low > 1.85, "{q:?}");
        assert!(q.ci_high > 2.1 && q.ci_high < 2.16, "{q:?}");
        assert!(q.significant);
        let same = f(1.0, 0.97, 1.03).over(f(1.01, 0.99, 1.03));
        assert!(!same.significant, "{same:?}");
    }
}
