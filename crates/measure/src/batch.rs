//! A batch of one operation sized to a sample's target time after a warm-up: what the
//! measures that time an operation many times over (setup costs, teardowns) share.

use std::time::{Duration, Instant};

/// How many operations make one batch.
pub struct Batch {
    pub n: u32,
}

impl Batch {
    /// Runs `op` for `warmup` (at least once), then sizes a batch to take about `target`.
    pub fn warm(
        warmup: Duration,
        target: Duration,
        mut op: impl FnMut() -> anyhow::Result<()>,
    ) -> anyhow::Result<Batch> {
        let started = Instant::now();
        let mut done = 0u32;
        while done == 0 || started.elapsed() < warmup {
            op()?;
            done += 1;
        }
        let each = started.elapsed().as_secs_f64() / f64::from(done);
        let n = (target.as_secs_f64() / each.max(1e-9)).clamp(1.0, 1e6) as u32;
        Ok(Batch { n })
    }

    /// Nanoseconds per operation over one batch.
    pub fn time(&self, mut op: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
        let started = Instant::now();
        for _ in 0..self.n {
            op()?;
        }
        Ok(started.elapsed().as_nanos() as f64 / f64::from(self.n))
    }
}
