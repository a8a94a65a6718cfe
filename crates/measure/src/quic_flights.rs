//! One QUIC connection's flights for the network model (`tlsmatrix_model::netmodel`), read
//! from the datagrams the pair moved: each side's step that sent anything is a flight that
//! waited for the peer's flight before it, carrying the CPU of that step (and of the
//! connection's creation, for a side's first). The handshake's flights run up to the server
//! flight that let the client finish; the client's next flight carries its request with its
//! last handshake packets, and the server's next its response, as an HTTP/3 or hq-interop
//! client sends its request with its Finished. The handshake's later flights (the server's
//! HANDSHAKE_DONE, acknowledgements) travel beside the request and do not delay it.

use std::time::Instant;

use tlsmatrix_harness::pair::Meter;
use tlsmatrix_harness::quic::{self, Datagrams, QuicEndpointFactory, QuicError};
use tlsmatrix_model::netmodel::{self, Conditions};
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;
use tlsmatrix_model::trace::{Flight, Sender, Trace, REQUEST_BYTES, RESPONSE_BYTES};

/// The time of each metered call, in order.
#[derive(Default)]
struct StepTimes(Vec<u64>);

impl Meter for StepTimes {
    fn on<R>(&mut self, _side: Side, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        self.0.push(start.elapsed().as_nanos() as u64);
        r
    }
}

/// What one side's step sent, and whether the client was done after it.
struct Step {
    side: Side,
    bytes: u64,
    client_done: bool,
}

/// One checked QUIC handshake between `client` and `server`, as a trace.
pub fn trace(
    client: &dyn QuicEndpointFactory,
    server: &dyn QuicEndpointFactory,
    params: &ConnParams,
) -> Result<Trace, QuicError> {
    let mut times = StepTimes::default();
    let mut steps = Vec::new();
    let mut buffers: [Datagrams; 2] = Default::default();
    quic::handshake_observed(
        &mut times,
        client,
        server,
        params,
        &mut buffers,
        |side, sent, client_done| {
            steps.push(Step {
                side,
                bytes: sent.total_bytes() as u64,
                client_done,
            })
        },
    )?;
    Ok(from_steps(&times.0, &steps))
}

/// The trace of `steps`, whose CPU is `times` (two creations, then one per step).
fn from_steps(times: &[u64], steps: &[Step]) -> Trace {
    // CPU a side spent since its last flight: its connection's creation first.
    let mut pending = [times[0], times[1]];
    let mut flights: Vec<Flight> = Vec::new();
    let mut last = [None::<usize>; 2];
    let mut finished = None;
    for (k, (step, &ns)) in steps.iter().zip(&times[2..]).enumerate() {
        let i = step.side.index();
        pending[i] += ns;
        if step.side == Side::Client && step.client_done {
            // The client finished on the server's last flight; this step's packets go with
            // its request.
            finished = Some((k, last[Side::Server.index()], step.bytes, pending[i]));
            break;
        }
        if step.bytes > 0 {
            flights.push(Flight {
                from: Sender::of(step.side),
                bytes: step.bytes,
                waits_for: last[1 - i],
                cpu_ns: std::mem::take(&mut pending[i]),
            });
            last[i] = Some(flights.len() - 1);
        }
    }
    let (k, ready_after, finished_bytes, finish_ns) =
        finished.expect("a completed handshake has a client that finished");
    let ready_after = ready_after.expect("the client finished on a server flight");
    let handshake_flights = flights.len();
    flights.push(Flight {
        from: Sender::Client,
        bytes: finished_bytes + REQUEST_BYTES as u64,
        waits_for: Some(ready_after),
        cpu_ns: finish_ns,
    });
    let request = flights.len() - 1;
    // The server's step after it (each round's second) read the client's Finished with the
    // request; its time goes with the response.
    let server_next = times.get(2 + k + 1).copied().unwrap_or(0);
    flights.push(Flight {
        from: Sender::Server,
        bytes: RESPONSE_BYTES as u64,
        waits_for: Some(request),
        cpu_ns: pending[Side::Server.index()] + server_next,
    });
    Trace {
        flights,
        handshake_flights,
        client_finished_after: Some(ready_after),
        server_finished_after: Some(request),
        request,
        response: request + 1,
        tail_ns: 0,
    }
}

/// The round trips the network model is asked for beside TCP, in milliseconds: a nearby
/// region and across the world.
pub const MODEL_RTTS_MS: [f64; 2] = [20.0, 100.0];

/// The modelled time from the first packet to the response's first byte, in milliseconds:
/// for QUIC no TCP handshake comes first; for TCP (`tcp` true) it does.
pub fn modelled_ttfb_ms(trace: &Trace, rtt_ms: f64, tcp: bool) -> f64 {
    let cond = Conditions {
        tcp_handshake: tcp,
        ..Conditions::at_rtt(rtt_ms / 1e3)
    };
    netmodel::time_to_first_byte(trace, &cond).ttfb_s * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(side: Side, bytes: u64, client_done: bool) -> Step {
        Step {
            side,
            bytes,
            client_done,
        }
    }

    #[test]
    fn a_one_round_trip_handshake_gives_the_request_after_the_server_flight() {
        // Creations, then client Initial, server flight, client Finished, server ack.
        let times = [10, 20, 100, 200, 30, 40];
        let steps = [
            step(Side::Client, 1200, false),
            step(Side::Server, 2400, false),
            step(Side::Client, 90, true),
            step(Side::Server, 40, true),
        ];
        let t = from_steps(&times, &steps);
        assert_eq!(t.flights.len(), 4);
        assert_eq!(t.handshake_flights, 2);
        assert_eq!((t.request, t.response), (2, 3));
        assert_eq!(t.flights[0].cpu_ns, 110);
        assert_eq!(t.flights[1].cpu_ns, 220);
        assert_eq!(t.flights[2].bytes, 90 + REQUEST_BYTES as u64);
        assert_eq!(t.flights[2].waits_for, Some(1));
        assert_eq!(t.flights[3].cpu_ns, 40);
        // QUIC: one round trip of handshake and one for the request, no TCP handshake.
        let at = modelled_ttfb_ms(&Trace { ..t.clone() }, 20.0, false);
        assert!((at - 40.0).abs() < 0.01, "{at}");
        let over_tcp = modelled_ttfb_ms(&t, 20.0, true);
        assert!((over_tcp - at - 20.0).abs() < 1e-6, "{over_tcp}");
    }

    #[test]
    fn a_flight_the_amplification_limit_held_back_adds_a_round_trip() {
        let times = [0, 0, 0, 0, 0, 0, 0, 0];
        let steps = [
            step(Side::Client, 1200, false),
            step(Side::Server, 3600, false),
            step(Side::Client, 50, false),
            step(Side::Server, 6000, false),
            step(Side::Client, 90, true),
            step(Side::Server, 40, true),
        ];
        let t = from_steps(&times, &steps);
        assert_eq!(t.handshake_flights, 4);
        assert_eq!(t.flights[t.request].waits_for, Some(3));
        assert!((modelled_ttfb_ms(&t, 100.0, false) - 300.0).abs() < 1e-6);
    }
}
