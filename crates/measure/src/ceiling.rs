//! Each library's own AEAD, apart from its TLS stack: the most a bulk transfer could reach
//! with that library's crypto (`--measure ceiling`). A bulk figure far below its own
//! ceiling is time spent outside the cipher (copies, allocation, record framing), which the
//! report then has to explain.

use std::time::{Duration, Instant};

use crate::sample::Sample;
use tlsmatrix_harness::aead::RecordAead;
use tlsmatrix_model::record::Metric;

/// Seals and opens records of `len` bytes, timing each; a sample is the application data
/// rate of each over about `target` of sealing. Every record is opened back and compared.
pub struct CeilingSampler {
    aead: Box<dyn RecordAead>,
    len: usize,
    records: u64,
    seq: u64,
    buf: Vec<u8>,
    /// Page-aligned scratch for the copy probes: a source page and destinations after it.
    copies: Vec<u8>,
}

/// Where a copy probe's destination lies past its source, modulo 4 KiB: 5, as rustls
/// copies a record's plaintext behind its 5-byte header into a page-aligned block; and half
/// a page, far from any aliasing.
const ALIASED: usize = 5;
const APART: usize = 2048 + 5;

impl CeilingSampler {
    pub fn warm(
        aead: Box<dyn RecordAead>,
        len: usize,
        warmup: Duration,
        target: Duration,
    ) -> anyhow::Result<CeilingSampler> {
        let mut s = CeilingSampler {
            aead,
            len,
            records: 1,
            seq: 0,
            buf: Vec::with_capacity(len + 64),
            copies: vec![0x33; 3 * len + 3 * 4096],
        };
        let start = Instant::now();
        let mut n = 0u64;
        let (mut seal, mut open) = (Duration::ZERO, Duration::ZERO);
        while n < 2 || start.elapsed() < warmup {
            s.round_trip(&mut seal, &mut open)?;
            n += 1;
        }
        let per = start.elapsed() / n as u32;
        s.records = (target.as_nanos() / per.as_nanos().max(1)).clamp(1, 1 << 20) as u64;
        Ok(s)
    }

    /// One record sealed and opened, each call timed into its total.
    fn round_trip(&mut self, seal: &mut Duration, open: &mut Duration) -> anyhow::Result<()> {
        let header = [23, 3, 3, (self.len >> 8) as u8, self.len as u8];
        self.buf.clear();
        self.buf.resize(self.len, 0x5a);
        let t = Instant::now();
        self.aead.seal(self.seq, &header, &mut self.buf)?;
        *seal += t.elapsed();
        anyhow::ensure!(
            self.buf.len() == self.len + 16 && self.buf[..16] != [0x5a; 16],
            "sealing {} bytes left {} bytes that do not look encrypted",
            self.len,
            self.buf.len()
        );
        let t = Instant::now();
        self.aead.open(self.seq, &header, &mut self.buf)?;
        *open += t.elapsed();
        anyhow::ensure!(
            self.buf.len() == self.len && self.buf.iter().all(|&b| b == 0x5a),
            "opening a sealed record did not give back what was sealed"
        );
        self.seq += 1;
        Ok(())
    }

    /// Copies one record's bytes from a page-aligned source to `distance` bytes past the
    /// next page boundary after it, `records` times, and returns the time.
    fn copy_probe(&mut self, distance: usize) -> Duration {
        let base = (4096 - self.copies.as_ptr() as usize % 4096) % 4096;
        let src = base;
        let dst = base + self.len.div_ceil(4096) * 4096 + distance;
        let t = Instant::now();
        for _ in 0..self.records {
            self.copies.copy_within(src..src + self.len, dst);
            std::hint::black_box(&self.copies);
        }
        t.elapsed()
    }

    pub fn sample(&mut self) -> anyhow::Result<Sample> {
        let (mut seal, mut open) = (Duration::ZERO, Duration::ZERO);
        for _ in 0..self.records {
            self.round_trip(&mut seal, &mut open)?;
        }
        let aliased = self.copy_probe(ALIASED);
        let apart = self.copy_probe(APART);
        // Application data only: the content type byte is the record layer's.
        let data = (self.len as f64) * self.records as f64;
        let rate = |d: Duration| data * 1e3 / d.as_nanos().max(1) as f64;
        Ok(vec![
            (Metric::SealMbPerS, rate(seal)),
            (Metric::OpenMbPerS, rate(open)),
            (Metric::CopyMbPerS, rate(apart)),
            (Metric::AliasedCopyMbPerS, rate(aliased)),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// XOR "encryption" with a tag of zeros: enough to test the sampler's bookkeeping.
    struct Toy;

    impl RecordAead for Toy {
        fn seal(&mut self, seq: u64, _: &[u8; 5], buf: &mut Vec<u8>) -> anyhow::Result<()> {
            buf.iter_mut().for_each(|b| *b ^= seq as u8 | 1);
            buf.extend_from_slice(&[0; 16]);
            Ok(())
        }
        fn open(&mut self, seq: u64, _: &[u8; 5], buf: &mut Vec<u8>) -> anyhow::Result<()> {
            buf.truncate(buf.len() - 16);
            buf.iter_mut().for_each(|b| *b ^= seq as u8 | 1);
            Ok(())
        }
    }

    #[test]
    fn a_ceiling_sample_is_a_rate_for_sealing_and_opening() {
        let ms = Duration::from_millis(2);
        let mut s = CeilingSampler::warm(Box::new(Toy), 16385, ms, ms).unwrap();
        let sample = s.sample().unwrap();
        assert_eq!(sample.len(), 4);
        assert!(sample.iter().all(|(_, v)| v.is_finite() && *v > 0.0));
    }

    #[test]
    fn an_aead_that_does_not_round_trip_fails_the_sample() {
        struct Broken;
        impl RecordAead for Broken {
            fn seal(&mut self, _: u64, _: &[u8; 5], buf: &mut Vec<u8>) -> anyhow::Result<()> {
                buf.iter_mut().for_each(|b| *b = !*b);
                buf.extend_from_slice(&[0; 16]);
                Ok(())
            }
            fn open(&mut self, _: u64, _: &[u8; 5], buf: &mut Vec<u8>) -> anyhow::Result<()> {
                buf.truncate(buf.len() - 16);
                Ok(())
            }
        }
        let ms = Duration::from_millis(1);
        assert!(CeilingSampler::warm(Box::new(Broken), 1025, ms, ms).is_err());
    }
}
