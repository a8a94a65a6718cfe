//! What a sampler hands back: one sample's figures by metric. Its own module because every
//! kind of work (handshakes, bulk, a library's AEAD alone) and the paired scheduler share it.

use tlsmatrix_model::record::Metric;

/// One sample: a value per metric.
pub type Sample = Vec<(Metric, f64)>;

/// Something that produces one short sample at a time, so that several can be interleaved
/// (see [`crate::paired`]): set up and warmed when built, then asked for samples.
pub trait Sampler {
    fn sample(&mut self) -> anyhow::Result<Sample>;
}
