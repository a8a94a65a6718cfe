//! Time to first application byte over a network, modelled from a connection's flights
//! (`tlsmatrix_measure::flights` over TCP, `tlsmatrix_measure::quic` for QUIC's datagrams)
//! and the CPU each side spent before each flight. A flight leaves when the
//! peer flight it waits for has arrived and its sender has done its work; it arrives half a
//! round trip later, plus its serialization at the link's bandwidth, plus a round trip for
//! every time it overflows the sender's congestion window (TCP slow start: the window starts
//! at `initcwnd` segments and grows by a segment per segment acknowledged). The connection
//! starts with TCP's own round trip (SYN, SYN-ACK) unless `tcp_handshake` is off.

use crate::trace::Sender;
use crate::trace::Trace;

/// Maximum segment size of a 1,500-byte Ethernet path with TCP timestamps off.
pub const MSS: u32 = 1460;

/// Linux's (and RFC 6928's) initial congestion window, in segments.
pub const INITCWND: u32 = 10;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conditions {
    /// Round-trip time in seconds.
    pub rtt_s: f64,
    /// Bits per second in each direction; `None` for no limit.
    pub bandwidth_bps: Option<f64>,
    /// Initial congestion window in segments of `mss` bytes.
    pub initcwnd: u32,
    pub mss: u32,
    /// Count TCP's handshake (one round trip before the client's first byte can leave).
    pub tcp_handshake: bool,
}

impl Conditions {
    pub fn at_rtt(rtt_s: f64) -> Conditions {
        Conditions {
            rtt_s,
            bandwidth_bps: None,
            initcwnd: INITCWND,
            mss: MSS,
            tcp_handshake: true,
        }
    }
}

/// The default network conditions the report models: same rack, same continent, across the
/// world.
pub const DEFAULT_RTTS_MS: [f64; 3] = [0.2, 30.0, 150.0];

/// The round trips the QUIC delay-proxy check times the model at, in milliseconds.
pub const QUIC_CHECK_RTTS_MS: [f64; 2] = [20.0, 100.0];

/// A QUIC sender's initial congestion window with 1,200-byte datagrams (RFC 9002 §7.2:
/// ten datagrams, at most max(14,720, two datagrams) bytes).
pub const QUIC_INITIAL_WINDOW: u64 = 12_000;

/// The least time a download of `bytes` can take over a new QUIC connection at `rtt_s` with
/// nothing lost and no pacing: one round trip for the handshake (the request leaves with the
/// client's Finished), then slow start from `initial_window` bytes, doubling each round
/// trip, the first answer bytes arriving a round trip after the request left.
pub fn slow_start_download_s(bytes: u64, rtt_s: f64, initial_window: u64) -> f64 {
    let mut rounds = 0u32;
    let mut sent = 0u64;
    let mut window = initial_window.max(1);
    while sent < bytes {
        sent += window;
        window = window.saturating_mul(2);
        rounds += 1;
    }
    f64::from(1 + rounds.max(1)) * rtt_s
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// From the client's connect to the arrival of the response, seconds.
    pub ttfb_s: f64,
    /// Round trips added because a flight overflowed the congestion window.
    pub window_stalls: u32,
    /// CPU on the path (both sides), seconds.
    pub cpu_s: f64,
}

/// Extra round trips needed to send `segments` with a window of `window` segments that
/// doubles every round trip (slow start), and the window's size afterwards.
fn slow_start(segments: u64, window: u64) -> u32 {
    let (mut left, mut w, mut rounds) = (segments, window.max(1), 0);
    while left > w {
        left -= w;
        w *= 2;
        rounds += 1;
    }
    rounds
}

/// Models the trace's time to first byte under `cond`.
pub fn time_to_first_byte(trace: &Trace, cond: &Conditions) -> Estimate {
    let rtt = cond.rtt_s;
    let start = if cond.tcp_handshake { rtt } else { 0.0 };
    let dir = |s: Sender| match s {
        Sender::Client => 0,
        Sender::Server => 1,
    };
    let mut window = [u64::from(cond.initcwnd); 2];
    let mut link_free = [0.0f64; 2];
    // Each side works on one thing at a time: a flight's work starts when the flight it
    // waits for has arrived and the side has finished its previous one.
    let mut side_free = [start, 0.0f64];
    let mut arrival: Vec<f64> = Vec::with_capacity(trace.flights.len());
    let (mut stalls, mut cpu) = (0u32, 0.0f64);
    for f in &trace.flights {
        let d = dir(f.from);
        let cpu_s = f.cpu_ns as f64 * 1e-9;
        cpu += cpu_s;
        let ready = f.waits_for.map_or(start, |w| arrival[w]).max(side_free[d]) + cpu_s;
        side_free[d] = ready;
        let tx_start = ready.max(link_free[d]);
        let segments = f.bytes.div_ceil(u64::from(cond.mss.max(1)));
        let rounds = slow_start(segments, window[d]);
        window[d] += segments;
        stalls += rounds;
        let tx = cond
            .bandwidth_bps
            .map_or(0.0, |bps| f.bytes as f64 * 8.0 / bps);
        link_free[d] = tx_start + f64::from(rounds) * rtt + tx;
        arrival.push(link_free[d] + rtt / 2.0);
    }
    let tail = trace.tail_ns as f64 * 1e-9;
    Estimate {
        ttfb_s: arrival[trace.response] + tail,
        window_stalls: stalls,
        cpu_s: cpu + tail,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_mebibyte_over_quic_takes_eight_round_trips_of_slow_start_at_best() {
        // 12,000 bytes doubling: 7 rounds carry 1,524,000 >= 1 MiB, 6 carry only 756,000.
        let s = slow_start_download_s(1 << 20, 0.05, QUIC_INITIAL_WINDOW);
        assert!((s - 0.4).abs() < 1e-9, "{s}");
        assert!((slow_start_download_s(1000, 0.1, QUIC_INITIAL_WINDOW) - 0.2).abs() < 1e-9);
        assert!((slow_start_download_s(0, 0.1, QUIC_INITIAL_WINDOW) - 0.2).abs() < 1e-9);
    }

    use super::*;
    use crate::trace::Flight;

    fn trace(server_flight: u64, cpu_ns: u64) -> Trace {
        let f = |from, bytes, waits_for| Flight {
            from,
            bytes,
            waits_for,
            cpu_ns,
        };
        Trace {
            flights: vec![
                f(Sender::Client, 300, None),
                f(Sender::Server, server_flight, Some(0)),
                f(Sender::Client, 200, Some(1)),
                f(Sender::Server, 1000, Some(2)),
            ],
            handshake_flights: 3,
            client_finished_after: Some(1),
            server_finished_after: Some(2),
            request: 2,
            response: 3,
            tail_ns: 0,
        }
    }

    #[test]
    fn a_tls13_connection_takes_three_round_trips_with_tcp() {
        let e = time_to_first_byte(&trace(4000, 0), &Conditions::at_rtt(0.030));
        assert!((e.ttfb_s - 0.090).abs() < 1e-12, "{e:?}");
        assert_eq!(e.window_stalls, 0);
        let no_tcp = Conditions {
            tcp_handshake: false,
            ..Conditions::at_rtt(0.030)
        };
        assert!((time_to_first_byte(&trace(4000, 0), &no_tcp).ttfb_s - 0.060).abs() < 1e-12);
    }

    #[test]
    fn a_round_trip_is_added_exactly_when_a_flight_crosses_the_window() {
        let small = |initcwnd| Conditions {
            initcwnd,
            ..Conditions::at_rtt(0.030)
        };
        // 5,000 bytes are 4 segments of 1,460.
        let fits = time_to_first_byte(&trace(5000, 0), &small(4));
        let over = time_to_first_byte(&trace(5000, 0), &small(3));
        assert_eq!((fits.window_stalls, over.window_stalls), (0, 1));
        assert!((over.ttfb_s - fits.ttfb_s - 0.030).abs() < 1e-12);
        // 4 + 8 segments go in two rounds past the first window; 13 need a third.
        assert_eq!(slow_start(12, 4), 1);
        assert_eq!(slow_start(13, 4), 2);
    }

    #[test]
    fn cpu_and_bandwidth_add_to_the_path() {
        let cpu = time_to_first_byte(&trace(4000, 1_000_000), &Conditions::at_rtt(0.030));
        assert!((cpu.ttfb_s - 0.094).abs() < 1e-9, "{cpu:?}");
        assert!((cpu.cpu_s - 0.004).abs() < 1e-12);
        let slow_link = Conditions {
            bandwidth_bps: Some(1e6),
            ..Conditions::at_rtt(0.030)
        };
        // 300 + 4,000 + 200 + 1,000 bytes at 1 Mbit/s: 44 ms on the path.
        let e = time_to_first_byte(&trace(4000, 0), &slow_link);
        assert!((e.ttfb_s - 0.134).abs() < 1e-9, "{e:?}");
    }
}
