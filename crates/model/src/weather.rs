//! The machine's memory weather as a record carries it: what the pointer-chase probe
//! (`tlsmatrix_measure::memprobe`) read around a pass.

use serde::{Deserialize, Serialize};

/// What the two chases gave at one moment, in nanoseconds per load.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weather {
    /// Half the last-level cache: a few ns when the cache is ours, DRAM-like when others fill it.
    pub cache_ns: f64,
    /// Four times the last-level cache: main memory's latency under the host's load.
    pub memory_ns: f64,
}

impl Weather {
    /// The mean of two readings (a pass's weather from the probes before and after it).
    pub fn between(a: Weather, b: Weather) -> Weather {
        Weather {
            cache_ns: (a.cache_ns + b.cache_ns) / 2.0,
            memory_ns: (a.memory_ns + b.memory_ns) / 2.0,
        }
    }
}
