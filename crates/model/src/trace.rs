//! A traced handshake as data: each flight's sender, size, CPU and the flight it waited for,
//! and what follows from that alone (round trips, the figures the report prints). Recorded by
//! `tlsmatrix_measure::flights`, stored in result records, modelled by `crate::netmodel`.

use serde::{Deserialize, Serialize};

use crate::scenario::{ConnParams, Resumption, Version};
use crate::side::Side;

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
    pub fn of(side: Side) -> Sender {
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
