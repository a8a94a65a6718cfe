//! How a metric is shown to people: its title, the figure derived from a sample (per-side
//! nanoseconds per handshake become handshakes per second), and which direction is better.
//! Every table, chart and sentence goes through here, so they all agree.

use tlsmatrix_core::record::{Metric, Record};
use tlsmatrix_core::stats::{self, Factor, Summary};

#[derive(Debug, Clone, Copy)]
pub struct Shown {
    pub title: &'static str,
    pub unit: &'static str,
    /// From the recorded sample to the figure shown.
    pub value: fn(f64) -> f64,
    pub higher_is_better: bool,
}

fn per_second(ns: f64) -> f64 {
    1e9 / ns
}

fn same(v: f64) -> f64 {
    v
}

fn kib(bytes: f64) -> f64 {
    bytes / 1024.0
}

pub fn shown(m: Metric) -> Shown {
    let (title, unit, value): (&str, &str, fn(f64) -> f64) = match m {
        Metric::ClientCpuNs => ("client hs/s", "handshakes/s", per_second),
        Metric::ServerCpuNs => ("server hs/s", "handshakes/s", per_second),
        Metric::HandshakesPerS => ("pair hs/s", "handshakes/s", same),
        Metric::SendMbPerS => ("send MB/s", "MB/s", same),
        Metric::RecvMbPerS => ("recv MB/s", "MB/s", same),
        Metric::NsPerOp => ("ns/op", "ns", same),
        Metric::BytesPerOp => ("B/op", "bytes", same),
        Metric::AllocsPerOp => ("allocs/op", "allocs", same),
        Metric::ClientInstructions => ("client instr/hs", "instructions", same),
        Metric::ServerInstructions => ("server instr/hs", "instructions", same),
        Metric::SendInstrPerMib => ("send instr/MiB", "instructions/MiB", same),
        Metric::RecvInstrPerMib => ("recv instr/MiB", "instructions/MiB", same),
        Metric::ClientHeapBytes => ("client KiB/conn", "KiB", kib),
        Metric::ServerHeapBytes => ("server KiB/conn", "KiB", kib),
        Metric::ClientHeapBytesAfterIo => ("client KiB after I/O", "KiB", kib),
        Metric::ServerHeapBytesAfterIo => ("server KiB after I/O", "KiB", kib),
        Metric::ThroughputPerS => ("hs/s all threads", "handshakes/s", same),
        Metric::ServerCapacityPerS => ("server-only hs/s", "handshakes/s", same),
    };
    // Per-handshake time is shown as its inverse, a rate, so it points the other way.
    let inverted = matches!(m, Metric::ClientCpuNs | Metric::ServerCpuNs);
    Shown {
        title,
        unit,
        value,
        higher_is_better: m.higher_is_better() != inverted,
    }
}

/// The pair rate is the sum of the two sides the tables already show.
pub fn in_tables(m: Metric) -> bool {
    m != Metric::HandshakesPerS
}

/// The shown figures of a record's samples.
pub fn values(r: &Record) -> Vec<f64> {
    let f = shown(r.metric).value;
    r.samples.iter().map(|&v| f(v)).collect()
}

/// The statistics of the shown figures.
pub fn summary(r: &Record) -> Summary {
    stats::summarize(&values(r)).unwrap_or(r.summary())
}

/// How many times better `r` is than `base` (same metric): above 1 is better whichever way
/// the metric points, with the interval and significance of that ratio.
pub fn advantage(r: &Record, base: &Record) -> Option<Factor> {
    let (v, b) = (values(r), values(base));
    if shown(r.metric).higher_is_better {
        stats::factor(&v, &b)
    } else {
        stats::factor(&b, &v)
    }
}

/// "2.10x", or "1.02x~" when the intervals overlap (not significant).
pub fn factor_text(f: &Factor) -> String {
    format!("{:.2}x{}", f.ratio, if f.significant { "" } else { "~" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_cost_is_shown_as_a_rate_and_counts_lower_is_better() {
        let s = shown(Metric::ClientCpuNs);
        assert!(s.higher_is_better);
        assert_eq!((s.value)(1e6), 1000.0);
        assert!(!shown(Metric::ServerInstructions).higher_is_better);
        assert!(shown(Metric::SendMbPerS).higher_is_better);
        assert!(!shown(Metric::NsPerOp).higher_is_better);
    }
}
