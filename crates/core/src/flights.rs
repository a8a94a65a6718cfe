//! What a handshake costs on the wire, read from the in-memory transport's byte streams: the
//! flights each side sends, how big they are, and which flight of the peer each one had to
//! wait for. No library reports any of this; the bytes do. The network model
//! (`crate::netmodel`) turns a trace into time under a given RTT, bandwidth and window.
//!
//! A flight is what one side writes without reading anything new from its peer in between.
//! The flight it waits for is the peer's flight holding the last byte the side had read when
//! it wrote: that is the causal link, whatever order the pair driver stepped the two sides in
//! (a TLS 1.3 server's tickets do not delay the client's request, which never read them).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::endpoint::{EndpointFactory, Side};
use crate::memio::{MemIo, Probe};
use crate::pair::{self, Meter, Pair, PairError};
use crate::scenario::{ConnParams, Resumption, Version};

/// Application bytes the client sends once its handshake is done (a small request) and the
/// server answers with (a small response); time to first byte is the response's arrival.
pub const REQUEST_BYTES: usize = 100;
pub const RESPONSE_BYTES: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sender {
    Client,
    Server,
}

impl Sender {
    fn of(side: Side) -> Sender {
        match side {
            Side::Client => Sender::Client,
            Side::Server => Sender::Server,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flight {
    pub from: Sender,
    pub bytes: u64,
    /// Index (in the trace) of the peer flight this one waited for; none for a first flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits_for: Option<usize>,
    /// Time the sender spent in its calls since its previous flight, up to the one that wrote
    /// this: the CPU on the path before the flight can leave.
    pub cpu_ns: u64,
}

/// One connection's flights from the ClientHello to the response, with where the handshake
/// ended and where each side finished.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    pub flights: Vec<Flight>,
    /// The first this many flights are the handshake's (both sides finished, tickets a server
    /// writes while finishing included); the rest carry the request and the response.
    pub handshake_flights: usize,
    /// The peer flight whose arrival let each side finish its handshake (may send data).
    pub client_finished_after: Option<usize>,
    pub server_finished_after: Option<usize>,
    /// The flights carrying the request and the response.
    pub request: usize,
    pub response: usize,
    /// The client's time reading the response.
    pub tail_ns: u64,
}

/// The deterministic figures of a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WireFigures {
    pub client_bytes: u64,
    pub server_bytes: u64,
    pub client_flights: usize,
    pub server_flights: usize,
    pub client_hello_bytes: u64,
    pub largest_flight_bytes: u64,
    /// Round trips (from the client's first byte) until each side may send application data.
    pub client_ready_rtts: f64,
    pub server_ready_rtts: f64,
}

impl Trace {
    /// Arrival of each flight in round trips, when a flight leaves the moment the one it waits
    /// for arrives and each crossing takes half a round trip: the protocol's own latency.
    pub fn arrivals_in_rtts(&self) -> Vec<f64> {
        let mut arrival = Vec::with_capacity(self.flights.len());
        for f in &self.flights {
            let depart = f.waits_for.map_or(0.0, |w| arrival[w]);
            arrival.push(depart + 0.5);
        }
        arrival
    }

    pub fn figures(&self) -> WireFigures {
        let hs = &self.flights[..self.handshake_flights];
        let sum = |from| hs.iter().filter(|f| f.from == from).map(|f| f.bytes).sum();
        let count = |from| hs.iter().filter(|f| f.from == from).count();
        let arrival = self.arrivals_in_rtts();
        let ready = |after: Option<usize>| after.map_or(0.0, |i| arrival[i]);
        WireFigures {
            client_bytes: sum(Sender::Client),
            server_bytes: sum(Sender::Server),
            client_flights: count(Sender::Client),
            server_flights: count(Sender::Server),
            client_hello_bytes: hs.first().map_or(0, |f| f.bytes),
            largest_flight_bytes: hs.iter().map(|f| f.bytes).max().unwrap_or(0),
            client_ready_rtts: ready(self.client_finished_after),
            server_ready_rtts: ready(self.server_finished_after),
        }
    }
}

/// Round trips the protocol allows before each side may send application data. The client
/// waits for one flight of the server in TLS 1.3 and in an abbreviated TLS 1.2 handshake, two
/// in a full TLS 1.2 one; the server finishes on reading the client's Finished, half a round
/// trip after the client's first Finished-bearing flight leaves (1.5 either way, as TLS 1.2's
/// full handshake has the server finish first). A HelloRetryRequest adds one to both.
pub fn expected_ready_rtts(params: &ConnParams) -> (f64, f64) {
    let retry = if params.extras.hrr { 1.0 } else { 0.0 };
    let client = match (params.version, params.resumption) {
        (Version::Tls12, Resumption::Full) => 2.0,
        _ => 1.0,
    };
    (client + retry, 1.5 + retry)
}

#[derive(Debug, thiserror::Error)]
#[error("the {side} could send application data after {got} round trips where the protocol allows {allowed} (flights: {flights})")]
pub struct RoundTripError {
    pub side: Side,
    pub got: f64,
    pub allowed: f64,
    pub flights: String,
}

/// Checks that both sides were ready exactly when the protocol says.
pub fn check_round_trips(params: &ConnParams, trace: &Trace) -> Result<(), RoundTripError> {
    let f = trace.figures();
    let (client, server) = expected_ready_rtts(params);
    for (side, got, allowed) in [
        (Side::Client, f.client_ready_rtts, client),
        (Side::Server, f.server_ready_rtts, server),
    ] {
        if got != allowed {
            return Err(RoundTripError {
                side,
                got,
                allowed,
                flights: describe(&trace.flights),
            });
        }
    }
    Ok(())
}

/// `C 300, S 1200 <0, ...`: each flight's sender, size and the flight it waited for.
pub fn describe(flights: &[Flight]) -> String {
    flights
        .iter()
        .map(|f| {
            let who = if f.from == Sender::Client { 'C' } else { 'S' };
            match f.waits_for {
                Some(w) => format!("{who} {} <{w}", f.bytes),
                None => format!("{who} {}", f.bytes),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

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
            if self.read_at[s] == read {
                *end = written;
                self.flights[i].bytes += new;
                self.flights[i].cpu_ns += cpu_ns;
                return;
            }
        }
        let waits_for = self.last_read_flight(side);
        self.read_at[s] = read;
        self.ends[s].push((written, self.flights.len()));
        self.flights.push(Flight {
            from: Sender::of(side),
            bytes: new,
            waits_for,
            cpu_ns,
        });
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

/// The trace whose flights have the median CPU of `traces` (flight by flight), when all have
/// the same shape; sizes are the first trace's. `None` when the shapes differ.
pub fn median_trace(traces: &[Trace]) -> Option<Trace> {
    let first = traces.first()?;
    let shape = |t: &Trace| -> Vec<(Sender, Option<usize>)> {
        t.flights.iter().map(|f| (f.from, f.waits_for)).collect()
    };
    if traces.iter().any(|t| shape(t) != shape(first)) {
        return None;
    }
    let median = |values: Vec<u64>| {
        let v: Vec<f64> = values.into_iter().map(|x| x as f64).collect();
        crate::stats::median(&v) as u64
    };
    let mut out = first.clone();
    for (i, f) in out.flights.iter_mut().enumerate() {
        f.cpu_ns = median(traces.iter().map(|t| t.flights[i].cpu_ns).collect());
    }
    out.tail_ns = median(traces.iter().map(|t| t.tail_ns).collect());
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            .parse::<crate::scenario::Scenario>()
            .unwrap()
            .params();
        assert!(check_round_trips(&params, &tls13()).is_ok());
        let mut slow = tls13();
        slow.client_finished_after = Some(3);
        let e = check_round_trips(&params, &slow).unwrap_err();
        assert_eq!((e.side, e.got, e.allowed), (Side::Client, 2.0, 1.0));
    }
}
