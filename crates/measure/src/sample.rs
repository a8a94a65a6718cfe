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

/// A metric's value in a sample; 0 where the sample lacks it.
pub fn value_of(sample: &Sample, m: Metric) -> f64 {
    sample.iter().find(|(x, _)| *x == m).map_or(0.0, |v| v.1)
}

/// `runs` samples of `first` and `second` in turns, the order alternating from run to run so
/// neither always goes first; each run gives one sample of both samplers' figures and what
/// `join` makes of the two (a ratio of figures taken milliseconds apart).
pub fn in_turns(
    first: &mut dyn Sampler,
    second: &mut dyn Sampler,
    runs: usize,
    join: impl Fn(&Sample, &Sample) -> Sample,
    mut on_sample: impl FnMut(Sample),
) -> anyhow::Result<()> {
    for i in 0..runs {
        let (a, b) = if i % 2 == 0 {
            let a = first.sample()?;
            (a, second.sample()?)
        } else {
            let b = second.sample()?;
            (first.sample()?, b)
        };
        let mut values = a.clone();
        values.extend(b.iter().copied());
        values.extend(join(&a, &b));
        on_sample(values);
    }
    Ok(())
}
