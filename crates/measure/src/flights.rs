//! What a handshake costs on the wire, read from the in-memory transport's byte streams: the
//! flights each side sends, how big they are, and which flight of the peer each one had to
//! wait for. No library reports any of this; the bytes do. The trace's types are in
//! `tlsmatrix_model::trace`; the network model (`tlsmatrix_report::netmodel`) turns a trace into time under a
//! given RTT, bandwidth and window.
//!
//! A flight is what one side writes without reading anything new from its peer in between.
//! The flight it waits for is the peer's flight holding the last byte the side had read when
//! it wrote: that is the causal link, whatever order the pair driver stepped the two sides in
//! (a TLS 1.3 server's tickets do not delay the client's request, which never read them).

use std::time::Instant;

use tlsmatrix_harness::endpoint::EndpointFactory;
use tlsmatrix_harness::memio::{MemIo, Probe};
use tlsmatrix_harness::pair::{self, Meter, Pair, PairError};
use tlsmatrix_model::scenario::ConnParams;
use tlsmatrix_model::side::Side;
use tlsmatrix_model::trace::{Flight, Sender, Trace, REQUEST_BYTES, RESPONSE_BYTES};

/// A [`Meter`] that turns every call's writes into flights (see the module comment) and
/// times each side's calls to charge them to the flight they lead to.
pub struct FlightRecorder {
    /// The client's view of the transport: what each side has written and read.
    probe: Probe,
    flights: Vec<Flight>,
    /// Bytes of each side's stream already assigned to flights.
    assigned: [u64; 2],
    /// Each side's flights as (end offset in its stream, index in `flights`).
    ends: [Vec<(u64, usize)>; 2],
    /// How much of its peer's stream each side had read when its latest flight began.
    read_at: [u64; 2],
    pending_ns: [u64; 2],
    finished_after: [Option<Option<usize>>; 2],
    /// The next write of each side starts a flight of its own even with nothing new read:
    /// set at the handshake's end, so application data never joins a handshake flight.
    sealed: [bool; 2],
}

impl FlightRecorder {
    /// Records the transport `probe` was taken from, at its client end (take the probe before
    /// handing that `MemIo` to an endpoint).
    pub fn new(probe: Probe) -> Self {
        FlightRecorder {
            probe,
            flights: Vec::new(),
            assigned: [0; 2],
            ends: [Vec::new(), Vec::new()],
            read_at: [0; 2],
            pending_ns: [0; 2],
            finished_after: [None; 2],
            sealed: [false; 2],
        }
    }

    fn written(&self, side: Side) -> u64 {
        match side {
            Side::Client => self.probe.bytes_written(),
            Side::Server => self.probe.peer_bytes_written(),
        }
    }

    fn read(&self, side: Side) -> u64 {
        match side {
            Side::Client => self.probe.bytes_read(),
            Side::Server => self.probe.peer_bytes_read(),
        }
    }

    /// The peer flight holding the last byte `side` has read.
    fn last_read_flight(&self, side: Side) -> Option<usize> {
        let read = self.read(side);
        if read == 0 {
            return None;
        }
        self.ends[side.peer().index()]
            .iter()
            .find(|(end, _)| *end >= read)
            .map(|&(_, i)| i)
    }

    fn note_writes(&mut self, side: Side) {
        let s = side.index();
        let written = self.written(side);
        let new = written - self.assigned[s];
        if new == 0 {
            return;
        }
        self.assigned[s] = written;
        let read = self.read(side);
        let cpu_ns = std::mem::take(&mut self.pending_ns[s]);
        // Bytes written with nothing new read since the side's last flight leave with it.
        if let Some(&mut (ref mut end, i)) = self.ends[s].last_mut() {
            if self.read_at[s] == read && !self.sealed[s] {
                *end = written;
                self.flights[i].bytes += new;
                self.flights[i].cpu_ns += cpu_ns;
                return;
            }
        }
        let waits_for = self.last_read_flight(side);
        self.read_at[s] = read;
        self.sealed[s] = false;
        self.ends[s].push((written, self.flights.len()));
        self.flights.push(Flight {
            from: Sender::of(side),
            bytes: new,
            waits_for,
            cpu_ns,
        });
    }

    /// Ends both sides' current flights: what they write next is counted apart (a TLS 1.3
    /// client writes its request in the same breath as its Finished, and the request is not
    /// handshake bytes).
    fn seal_flights(&mut self) {
        self.sealed = [true; 2];
    }

    /// The flight `side` wrote last.
    fn latest(&self, side: Side) -> Option<usize> {
        self.ends[side.index()].last().map(|&(_, i)| i)
    }
}

impl Meter for FlightRecorder {
    fn on<R>(&mut self, side: Side, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let r = f();
        self.pending_ns[side.index()] += start.elapsed().as_nanos() as u64;
        self.note_writes(side);
        r
    }

    fn finished(&mut self, side: Side) {
        let s = side.index();
        if self.finished_after[s].is_none() {
            self.finished_after[s] = Some(self.last_read_flight(side));
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(transparent)]
    Pair(#[from] PairError),
    #[error("{0} never finished its handshake in the trace")]
    Unfinished(Side),
    #[error("the {0} wrote nothing for its application data")]
    NoData(Side),
}

/// One connection, traced: a handshake, the request, the response. A resumption scenario
/// needs a session from an earlier connection (`pair::prime` once); the client reads the
/// response after the server's tickets, so each traced connection leaves the next a session.
pub fn trace(
    client: &dyn EndpointFactory,
    server: &dyn EndpointFactory,
    params: &ConnParams,
) -> Result<Trace, TraceError> {
    let io = MemIo::pair();
    let mut rec = FlightRecorder::new(io.0.probe());
    let (c, s) = pair::handshake_over(&mut rec, client, server, params, io)?;
    let handshake_flights = rec.flights.len();
    rec.seal_flights();
    let mut pair = Pair {
        client: c,
        server: s,
        client_ns: 0,
        server_ns: 0,
    };
    let written_before = rec.written(Side::Client);
    let payload = vec![0x61u8; RESPONSE_BYTES.max(REQUEST_BYTES)];
    let mut sink = vec![0u8; RESPONSE_BYTES.max(REQUEST_BYTES)];
    pair.transfer_metered(
        &mut rec,
        Side::Client,
        REQUEST_BYTES,
        REQUEST_BYTES,
        &payload,
        &mut sink,
        |_| {},
    )?;
    if rec.written(Side::Client) == written_before {
        return Err(TraceError::NoData(Side::Client));
    }
    let request = rec.latest(Side::Client).expect("the client has written");
    // The server's reading of the request is charged to its response.
    pair.transfer_metered(
        &mut rec,
        Side::Server,
        RESPONSE_BYTES,
        RESPONSE_BYTES,
        &payload,
        &mut sink,
        |_| {},
    )?;
    let response = rec
        .latest(Side::Server)
        .filter(|&i| i >= handshake_flights)
        .ok_or(TraceError::NoData(Side::Server))?;
    let finished =
        |side: Side| rec.finished_after[side.index()].ok_or(TraceError::Unfinished(side));
    let (client_finished_after, server_finished_after) =
        (finished(Side::Client)?, finished(Side::Server)?);
    Ok(Trace {
        tail_ns: rec.pending_ns[Side::Client.index()],
        flights: rec.flights,
        handshake_flights,
        client_finished_after,
        server_finished_after,
        request,
        response,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::trace::*;

    fn flight(from: Sender, bytes: u64, waits_for: Option<usize>) -> Flight {
        Flight {
            from,
            bytes,
            waits_for,
            cpu_ns: 0,
        }
    }

    /// A TLS 1.3 full handshake as the recorder sees it: the tickets wait for the client's
    /// Finished, the request leaves with it, the response waits for the request.
    fn tls13() -> Trace {
        Trace {
            flights: vec![
                flight(Sender::Client, 250, None),
                flight(Sender::Server, 900, Some(0)),
                flight(Sender::Client, 180, Some(1)),
                flight(Sender::Server, 250, Some(2)),
                flight(Sender::Server, 1022, Some(2)),
            ],
            handshake_flights: 4,
            client_finished_after: Some(1),
            server_finished_after: Some(2),
            request: 2,
            response: 4,
            tail_ns: 0,
        }
    }

    #[test]
    fn figures_count_each_direction_and_the_round_trips() {
        let f = tls13().figures();
        assert_eq!((f.client_bytes, f.server_bytes), (430, 1150));
        assert_eq!((f.client_flights, f.server_flights), (2, 2));
        assert_eq!((f.client_hello_bytes, f.largest_flight_bytes), (250, 900));
        assert_eq!((f.client_ready_rtts, f.server_ready_rtts), (1.0, 1.5));
        assert_eq!(
            describe(&tls13().flights[..2]),
            "C 250, S 900 <0".to_string()
        );
    }

    #[test]
    fn the_round_trip_check_fails_a_handshake_slower_than_its_protocol() {
        let params = "handshake-tls13-ecdsa-p256-x25519-full"
            .parse::<tlsmatrix_model::scenario::Scenario>()
            .unwrap()
            .params();
        assert!(check_round_trips(&params, &tls13()).is_ok());
        let mut slow = tls13();
        slow.client_finished_after = Some(3);
        let e = check_round_trips(&params, &slow).unwrap_err();
        assert_eq!((e.side, e.got, e.allowed), (Side::Client, 2.0, 1.0));
    }
}
