//! The memory weather a run's passes met (`tlsmatrix_measure::memprobe`): read on a lane's core
//! before the first pass and after each one, while no driver runs, so the probe neither
//! disturbs a sample nor is disturbed by one. A block's weather is the mean of its pass's two
//! readings, and every record carries the weather of its blocks.

use std::collections::BTreeMap;

use tlsmatrix_measure::memprobe::MemoryProbe;
use tlsmatrix_model::record::{BlockWeather, Record};
use tlsmatrix_model::weather::Weather;
use tlsmatrix_registry::registry::pin_this_thread;

pub struct PassWeather {
    probe: MemoryProbe,
    core: usize,
    /// One reading before the first pass, then one after each.
    readings: Vec<Weather>,
    /// The first block of each pass.
    first_blocks: Vec<u32>,
}

impl PassWeather {
    /// Builds the probe for `core`'s last-level cache and takes the first reading; `Err`
    /// says why the run goes without (sysfs lists no cache).
    pub fn start(core: usize) -> Result<PassWeather, String> {
        let mut w = PassWeather {
            probe: MemoryProbe::for_cpu(core)?,
            core,
            readings: Vec::new(),
            first_blocks: Vec::new(),
        };
        w.read();
        Ok(w)
    }

    fn read(&mut self) {
        self.readings.push(read_on(&self.probe, self.core));
    }

    /// A pass whose first block is `first_block` starts.
    pub fn pass_starts(&mut self, first_block: u32) {
        self.first_blocks.push(first_block);
    }

    /// The pass that started last has ended.
    pub fn pass_ends(&mut self) {
        self.read();
    }

    /// Each block's weather, from the first block of every pass to the next pass's first.
    pub fn of_blocks(&self, blocks: u32) -> BTreeMap<u32, Weather> {
        let mut out = BTreeMap::new();
        for (pass, &first) in self.first_blocks.iter().enumerate() {
            let end = self.first_blocks.get(pass + 1).copied().unwrap_or(blocks);
            let (Some(&before), Some(&after)) =
                (self.readings.get(pass), self.readings.get(pass + 1))
            else {
                continue;
            };
            for b in first..end {
                out.insert(b, Weather::between(before, after));
            }
        }
        out
    }
}

/// One reading of `probe` from a thread pinned to `core`, where the drivers sample.
pub fn read_on(probe: &MemoryProbe, core: usize) -> Weather {
    std::thread::scope(|s| {
        s.spawn(move || {
            // Unpinned, the reading would come from whichever core the thread landed on; it
            // still measures the shared cache and memory, so a refusal is not fatal.
            let _ = pin_this_thread(core);
            probe.read()
        })
        .join()
        .expect("the memory probe does not panic")
    })
}

/// Gives each record the weather of the blocks its samples came from.
pub fn attach(records: &mut [Record], weather: &BTreeMap<u32, Weather>) {
    for r in records {
        let mut blocks = r.blocks.clone();
        blocks.sort_unstable();
        blocks.dedup();
        r.weather = blocks
            .iter()
            .filter_map(|b| {
                weather.get(b).map(|&w| BlockWeather {
                    block: *b,
                    weather: w,
                })
            })
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(x: f64) -> Weather {
        Weather {
            cache_ns: x,
            memory_ns: 10.0 * x,
        }
    }

    #[test]
    fn blocks_take_the_mean_of_their_passs_two_readings() {
        let mut pw = PassWeather::start(0).expect("this machine lists its caches");
        pw.readings = vec![w(10.0)];
        pw.pass_starts(0);
        pw.readings.push(w(20.0));
        pw.pass_starts(3);
        pw.readings.push(w(40.0));
        let by_block = pw.of_blocks(5);
        assert_eq!(by_block.len(), 5);
        assert_eq!(by_block[&0], w(15.0));
        assert_eq!(by_block[&2], w(15.0));
        assert_eq!(by_block[&3], w(30.0));
        assert_eq!(by_block[&4], w(30.0));
        // A real reading is a time per load.
        pw.pass_ends();
        let last = *pw.readings.last().unwrap();
        assert!(last.cache_ns > 0.0 && last.memory_ns > 0.0, "{last:?}");

        let mut r = tlsmatrix_model::record::Record::from_blocks(
            "r",
            "s",
            ("a", "1"),
            ("a", "1"),
            tlsmatrix_model::record::Metric::ClientCpuNs,
            vec![1.0, 2.0, 3.0, 4.0],
            vec![0, 0, 3, 3],
            Default::default(),
        )
        .unwrap();
        attach(std::slice::from_mut(&mut r), &by_block);
        let got: Vec<(u32, f64)> = r
            .weather
            .iter()
            .map(|b| (b.block, b.weather.cache_ns))
            .collect();
        assert_eq!(got, vec![(0, 15.0), (3, 30.0)]);
    }
}
