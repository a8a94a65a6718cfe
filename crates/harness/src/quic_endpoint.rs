//! The contract a QUIC stack's adapter implements (RFC 9001): one side of a connection fed
//! datagrams and asked for its own, the factory that holds a side's endpoint, and the
//! buffer datagrams travel in. The pair that drives two of them is `crate::quic`.

use std::time::Duration;

use anyhow::Result;

use crate::negotiated::Negotiated;

/// QUIC version 1 (RFC 9000), the one every measured handshake must use.
pub const QUIC_V1: u32 = 1;

/// The ALPN protocol QUIC measurements offer: the QUIC interop runner's, which every stack's
/// test servers speak. RFC 9001 §8.1 requires ALPN in QUIC.
pub const ALPN: &str = "hq-interop";

/// The smallest datagram a client may carry its Initial in (RFC 9000 §14.1).
pub const MIN_INITIAL_DATAGRAM: usize = 1200;

/// Datagrams one side sends in a step, kept in one buffer so a step allocates nothing once
/// warm.
#[derive(Debug, Default, Clone)]
pub struct Datagrams {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Datagrams {
    /// Appends one datagram.
    pub fn push(&mut self, datagram: &[u8]) {
        self.bytes.extend_from_slice(datagram);
        self.ends.push(self.bytes.len());
    }

    /// Appends `batch` cut into datagrams of `segment` bytes (the last may be shorter), as a
    /// stack hands over several datagrams at once for segmentation offload.
    pub fn push_segments(&mut self, batch: &[u8], segment: Option<usize>) {
        match segment {
            Some(n) if n > 0 => batch.chunks(n).for_each(|d| self.push(d)),
            _ => self.push(batch),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.bytes[a..b])
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }

    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }
}

/// The stream application data crosses: the client's first bidirectional stream (RFC 9000
/// §2.1), which the client opens with its first write and the server takes up when its
/// first bytes arrive, as an hq-interop request and its answer do.
pub const STREAM_ID: u64 = 0;

/// What one read from the stream gave: bytes, and whether the peer's end of the stream has
/// been reached (every byte before it read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamRead {
    pub bytes: usize,
    pub fin: bool,
}

/// One side of a QUIC connection, fed datagrams and asked for its own.
pub trait QuicEndpoint {
    /// Takes one datagram from the peer.
    fn receive(&mut self, datagram: &[u8]) -> Result<()>;
    /// Appends every datagram this side has to send now, after running the timers that
    /// have fired.
    fn transmit(&mut self, out: &mut Datagrams) -> Result<()>;
    /// How long until the connection's next timer (loss detection, pacing, delayed
    /// acknowledgement) fires; `None` when none is set.
    fn timeout(&mut self) -> Option<Duration>;
    /// Queues as much of `data` on [`STREAM_ID`] as the stack takes now (its flow control
    /// and send buffer allow), and the stream's end when `fin` and all of `data` was taken;
    /// returns the bytes taken. A server takes nothing before the client opened the stream.
    fn stream_write(&mut self, data: &[u8], fin: bool) -> Result<usize>;
    /// Reads what has arrived on [`STREAM_ID`] into `buf`.
    fn stream_read(&mut self, buf: &mut [u8]) -> Result<StreamRead>;
    fn is_handshake_complete(&self) -> bool;
    /// What this side's TLS session believes was negotiated.
    fn negotiated(&self) -> Negotiated;
    /// The ALPN protocol agreed on, if any.
    fn alpn(&self) -> Option<Vec<u8>>;
}

/// Holds one side's QUIC and TLS configuration (and, as a real endpoint does, the state it
/// shares among its connections) and makes connections from it.
pub trait QuicEndpointFactory {
    /// A client's connection, with its first flight ready to transmit, or a server's,
    /// waiting for one.
    fn endpoint(&self) -> Result<Box<dyn QuicEndpoint>>;
}

/// A client's and a server's factories.
pub type QuicFactories = (Box<dyn QuicEndpointFactory>, Box<dyn QuicEndpointFactory>);
