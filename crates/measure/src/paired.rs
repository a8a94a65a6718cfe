//! Paired sampling. The cells a factor compares (the baseline with itself, and an impl as
//! client, as server and with itself) run in one driver process and take turns: a round is
//! one short sample of each, and a factor is the median over rounds of each cell's sample
//! over the baseline's sample of the same round. A shared machine's speed changes from one
//! 20 ms to the next; two samples taken side by side in one round see the same speed, two
//! blocks taken one after the other do not.

use crate::sample::Sample;
use crate::sample::Sampler;

/// The position of each cell in round `round`: the cells rotate by one place every other
/// round and run backwards in odd rounds, so every cell takes every position, as often first
/// as last, and a drift within a round does not favour one cell.
pub fn order(cells: usize, round: usize) -> Vec<usize> {
    let shift = (round / 2) % cells.max(1);
    let mut o: Vec<usize> = (0..cells).map(|i| (i + shift) % cells).collect();
    if round % 2 == 1 {
        o.reverse();
    }
    o
}

/// Runs `rounds` rounds over the samplers, in [`order`]. A sampler that fails is reported
/// through `on_error` and left out of later rounds (its slot becomes `None`); the others go on.
pub fn run_rounds<'s>(
    samplers: &mut [Option<Box<dyn Sampler + 's>>],
    rounds: usize,
    mut on_sample: impl FnMut(usize, usize, Sample),
    mut on_error: impl FnMut(usize, anyhow::Error),
) {
    for round in 0..rounds {
        run_round(samplers, round, &mut on_sample, &mut on_error);
    }
}

/// Round `round` of [`run_rounds`] alone, for a driver that waits between rounds.
pub fn run_round<'s>(
    samplers: &mut [Option<Box<dyn Sampler + 's>>],
    round: usize,
    mut on_sample: impl FnMut(usize, usize, Sample),
    mut on_error: impl FnMut(usize, anyhow::Error),
) {
    for cell in order(samplers.len(), round) {
        let Some(s) = samplers[cell].as_mut() else {
            continue;
        };
        match s.sample() {
            Ok(values) => on_sample(cell, round, values),
            Err(e) => {
                samplers[cell] = None;
                on_error(cell, e);
            }
        }
    }
}

/// One value of a cell, tagged with where it was taken: the block (one driver process) and
/// the round inside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tagged {
    pub value: f64,
    pub block: u32,
    pub round: u32,
}

/// Each of `cell`'s values over the `reference` value of the same block and round, with its
/// block; values without a partner are left out.
pub fn ratios(cell: &[Tagged], reference: &[Tagged]) -> Vec<(f64, u32)> {
    cell.iter()
        .filter_map(|c| {
            reference
                .iter()
                .find(|r| r.block == c.block && r.round == c.round)
                .filter(|r| r.value != 0.0)
                .map(|r| (c.value / r.value, c.block))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};
    use tlsmatrix_model::record::Metric;
    use tlsmatrix_model::stats;

    #[test]
    fn every_cell_takes_every_position_equally_often() {
        let n = 4;
        let mut first = vec![0; n];
        let mut last = vec![0; n];
        for r in 0..(2 * n) {
            let o = order(n, r);
            let mut sorted = o.clone();
            sorted.sort();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            first[o[0]] += 1;
            last[o[n - 1]] += 1;
        }
        assert!(first.iter().all(|&c| c == 2), "{first:?}");
        assert!(last.iter().all(|&c| c == 2), "{last:?}");
        assert_eq!(order(1, 5), vec![0]);
    }

    #[test]
    fn ratios_match_block_and_round() {
        let t = |value, block, round| Tagged {
            value,
            block,
            round,
        };
        let cell = [t(6.0, 0, 0), t(9.0, 0, 1), t(4.0, 1, 0), t(5.0, 1, 3)];
        let reference = [t(3.0, 0, 0), t(3.0, 0, 1), t(2.0, 1, 0)];
        assert_eq!(ratios(&cell, &reference), [(2.0, 0), (3.0, 0), (2.0, 1)]);
    }

    /// A workload on a machine whose speed halves in alternating 200 ms windows. Each sample
    /// takes `SAMPLE` of real time (it sleeps: the test exercises the schedule and the
    /// statistics, not this machine) and reports `cost` times the slowdown in force.
    struct Modulated {
        cost: f64,
        epoch: Instant,
    }

    const SAMPLE: Duration = Duration::from_millis(10);
    const WINDOW_MS: u128 = 200;

    impl Sampler for Modulated {
        fn sample(&mut self) -> anyhow::Result<Sample> {
            let mid = self.epoch.elapsed() + SAMPLE / 2;
            std::thread::sleep(SAMPLE);
            let slow = if (mid.as_millis() / WINDOW_MS) % 2 == 1 {
                2.0
            } else {
                1.0
            };
            Ok(vec![(Metric::ClientCpuNs, self.cost * slow)])
        }
    }

    fn values(samples: &[Sample]) -> Vec<f64> {
        samples.iter().map(|s| s[0].1).collect()
    }

    /// The known ratio 1.5 between two workloads survives the modulation when they are
    /// sampled in turns, and does not when each is sampled in a block of its own.
    #[test]
    fn paired_factors_hold_through_a_modulated_machine_and_blocks_do_not() {
        const ROUNDS: usize = 60;
        let epoch = Instant::now();
        let mut samplers: Vec<Option<Box<dyn Sampler>>> = vec![
            Some(Box::new(Modulated { cost: 1.0, epoch })),
            Some(Box::new(Modulated { cost: 1.5, epoch })),
        ];
        let mut got: Vec<Vec<Tagged>> = vec![Vec::new(), Vec::new()];
        run_rounds(
            &mut samplers,
            ROUNDS,
            |cell, round, s| {
                got[cell].push(Tagged {
                    value: s[0].1,
                    block: 0,
                    round: round as u32,
                })
            },
            |_, e| panic!("{e}"),
        );
        let r = ratios(&got[1], &got[0]);
        let (rs, bs): (Vec<f64>, Vec<u32>) = r.into_iter().unzip();
        let paired = stats::paired_factor(&rs, &bs).unwrap();
        assert!(
            (paired.ratio / 1.5 - 1.0).abs() < 0.03,
            "paired factor {paired:?}"
        );

        // The same work, one block after the other, with the second block starting half a
        // window later: each block's median sees a different mix of fast and slow windows.
        let mut a = Modulated { cost: 1.0, epoch };
        let mut b = Modulated { cost: 1.5, epoch };
        let start = epoch.elapsed().as_millis();
        let next_fast = (start / (2 * WINDOW_MS) + 1) * 2 * WINDOW_MS;
        std::thread::sleep(Duration::from_millis((next_fast - start) as u64));
        let block = |s: &mut Modulated, n: usize| -> Vec<Sample> {
            (0..n).map(|_| s.sample().unwrap()).collect()
        };
        // 15 samples of 10 ms from the start of a fast window: all fast (sleeps may run
        // long, so not a full window); then B, which starts near its end: mostly slow.
        let va = values(&block(&mut a, 15));
        let vb = values(&block(&mut b, 15));
        let sequential = stats::median(&vb) / stats::median(&va);
        assert!(
            (sequential / 1.5 - 1.0).abs() > 0.03,
            "block-sequential factor {sequential} should miss 1.5"
        );
    }

    #[test]
    fn a_failing_sampler_leaves_the_others_running() {
        struct Fails;
        impl Sampler for Fails {
            fn sample(&mut self) -> anyhow::Result<Sample> {
                anyhow::bail!("broken")
            }
        }
        struct Counts(u32);
        impl Sampler for Counts {
            fn sample(&mut self) -> anyhow::Result<Sample> {
                self.0 += 1;
                Ok(vec![(Metric::ClientCpuNs, f64::from(self.0))])
            }
        }
        let mut samplers: Vec<Option<Box<dyn Sampler>>> =
            vec![Some(Box::new(Counts(0))), Some(Box::new(Fails))];
        let (mut ok, mut errors) = (0, Vec::new());
        run_rounds(
            &mut samplers,
            5,
            |_, _, _| ok += 1,
            |c, e| errors.push((c, e.to_string())),
        );
        assert_eq!(ok, 5);
        assert_eq!(errors, [(1, "broken".to_string())]);
    }
}
