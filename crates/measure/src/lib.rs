//! What tlsmatrix measures with the harness: workloads (handshakes, bulk, memory,
//! throughput, wire traces), paired sampling, and the meters around each side's calls (the
//! clock, heap through the malloc wrapper, OS counters, callgrind, perf profiles), plus each
//! library's own AEAD ceiling and the memory-weather probe.

pub mod batch;
pub mod call_graph;
pub mod callgrind;
pub mod ceiling;
pub mod contention;
pub mod counters;
pub mod flights;
pub mod floor;
pub mod heap;
pub mod memprobe;
pub mod paired;
pub mod profile;
pub mod quic;
pub mod quic_bulk;
pub mod quic_flights;
pub mod quic_instructions;
pub mod quic_memory;
pub mod sample;
pub mod setup;
pub mod split;
pub mod workload;
