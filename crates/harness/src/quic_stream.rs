//! What runs on a QUIC connection's stream once the handshake is done: one side's part of an
//! exchange, played a turn at a time between the datagrams it receives and those it sends,
//! so the same part runs over in-memory datagrams (`crate::quic::exchange_metered`) and over
//! a UDP socket (the driver's `quic_wire`).
//!
//! The parts: bulk bytes one way ([`SendBytes`], [`ReceiveBytes`]), and the QUIC interop
//! runner's hq-interop request and answer ([`HqClient`], [`HqServer`]): the client asks
//! `GET /N` and the server answers N bytes, then ends the stream.

use anyhow::{bail, Result};

use crate::quic_endpoint::QuicEndpoint;

/// One side's part of a stream exchange.
pub trait StreamPart {
    /// Writes and reads what it can on the endpoint's stream now; `true` once its part is
    /// done (everything written was taken, everything expected was read).
    fn turn(&mut self, ep: &mut dyn QuicEndpoint) -> Result<bool>;
}

/// `total` bytes of `payload` repeated, written as the stack takes them, and the stream's
/// end with the last of them when `fin`.
pub struct SendBytes<P: AsRef<[u8]>> {
    payload: P,
    total: u64,
    fin: bool,
    sent: u64,
    /// The write that took the last bytes (or, for none, the end alone) was made.
    ended: bool,
}

impl<P: AsRef<[u8]>> SendBytes<P> {
    pub fn new(payload: P, total: u64, fin: bool) -> Self {
        assert!(!payload.as_ref().is_empty(), "a payload to repeat");
        SendBytes {
            payload,
            total,
            fin,
            sent: 0,
            ended: false,
        }
    }
}

impl<P: AsRef<[u8]>> StreamPart for SendBytes<P> {
    fn turn(&mut self, ep: &mut dyn QuicEndpoint) -> Result<bool> {
        let payload = self.payload.as_ref();
        while !self.ended {
            let at = (self.sent % payload.len() as u64) as usize;
            let n = ((payload.len() - at) as u64).min(self.total - self.sent) as usize;
            let last = self.sent + n as u64 == self.total;
            let taken = ep.stream_write(&payload[at..at + n], self.fin && last)?;
            self.sent += taken as u64;
            // An empty write with the end is taken whole once the stream exists.
            self.ended = last && taken == n;
            if taken < n || n == 0 {
                break;
            }
        }
        Ok(self.ended)
    }
}

/// `total` bytes read through `sink`, each read handed to `on_recv` with its offset in the
/// stream (an error from it fails the part), and the peer's end of the stream after them
/// when `fin`.
pub struct ReceiveBytes<S: AsMut<[u8]>, F: FnMut(u64, &[u8]) -> Result<()>> {
    sink: S,
    total: u64,
    fin: bool,
    got: u64,
    finished: bool,
    on_recv: F,
}

impl<S: AsMut<[u8]>, F: FnMut(u64, &[u8]) -> Result<()>> ReceiveBytes<S, F> {
    pub fn new(mut sink: S, total: u64, fin: bool, on_recv: F) -> Self {
        assert!(!sink.as_mut().is_empty(), "somewhere to read into");
        ReceiveBytes {
            sink,
            total,
            fin,
            got: 0,
            finished: false,
            on_recv,
        }
    }

    /// Bytes read so far.
    pub fn received(&self) -> u64 {
        self.got
    }
}

impl<S: AsMut<[u8]>, F: FnMut(u64, &[u8]) -> Result<()>> StreamPart for ReceiveBytes<S, F> {
    fn turn(&mut self, ep: &mut dyn QuicEndpoint) -> Result<bool> {
        let sink = self.sink.as_mut();
        loop {
            let r = ep.stream_read(sink)?;
            if self.got + r.bytes as u64 > self.total {
                bail!(
                    "the stream carried more than the {} bytes expected",
                    self.total
                );
            }
            (self.on_recv)(self.got, &sink[..r.bytes])?;
            self.got += r.bytes as u64;
            if r.fin {
                if self.got < self.total {
                    bail!(
                        "the stream ended after {} of {} bytes",
                        self.got,
                        self.total
                    );
                }
                self.finished = true;
            }
            if r.bytes == 0 || r.fin {
                break;
            }
        }
        Ok(self.got == self.total && (!self.fin || self.finished))
    }
}

/// The longest hq-interop request line a server reads ("GET /" and a path).
pub const MAX_REQUEST: usize = 1024;
/// The largest answer a `/N` request may ask for: 1 GiB.
pub const MAX_ANSWER: u64 = 1 << 30;

/// The hq-interop request for `n` bytes.
pub fn hq_request(n: u64) -> Vec<u8> {
    format!("GET /{n}\r\n").into_bytes()
}

/// The byte at `offset` of every answer: a pattern a reader can check without the sender.
pub fn answer_byte(offset: u64) -> u8 {
    (offset % 251) as u8
}

/// The number an hq-interop request line asks for (`GET /N`, ended by CRLF or the
/// stream's end), or the reason it is not one.
pub fn parse_hq_request(line: &[u8]) -> Result<u64> {
    let text = std::str::from_utf8(line)
        .map_err(|_| anyhow::anyhow!("the request is not UTF-8"))?
        .trim_end_matches(['\r', '\n']);
    let Some(path) = text.strip_prefix("GET /") else {
        bail!("the request {text:?} is not GET /N");
    };
    let n: u64 = path
        .parse()
        .map_err(|_| anyhow::anyhow!("the path /{path} is not a number of bytes"))?;
    if n > MAX_ANSWER {
        bail!("/{n} asks for more than {MAX_ANSWER} bytes");
    }
    Ok(n)
}

/// An hq-interop client: asks for `/N`, reads the answer to the stream's end, and checks
/// that it is N bytes of the answer pattern.
pub struct HqClient {
    request: SendBytes<Vec<u8>>,
    answer: ReceiveBytes<Vec<u8>, AnswerCheck>,
    /// When a turn first read answer bytes, and when a turn read the answer's end.
    first_byte_at: Option<std::time::Instant>,
    done_at: Option<std::time::Instant>,
}

/// What the client checks each read of the answer with: [`check_answer`].
type AnswerCheck = fn(u64, &[u8]) -> Result<()>;

/// Fails at the first byte of `bytes`, read at `offset`, that is not the answer pattern's.
fn check_answer(offset: u64, bytes: &[u8]) -> Result<()> {
    match (offset..).zip(bytes).find(|&(at, &b)| b != answer_byte(at)) {
        Some((at, b)) => bail!("answer byte {at} is {b:#04x}, not the pattern's"),
        None => Ok(()),
    }
}

impl HqClient {
    pub fn new(n: u64) -> Self {
        let request = hq_request(n);
        let len = request.len() as u64;
        HqClient {
            request: SendBytes::new(request, len, true),
            answer: ReceiveBytes::new(vec![0; 64 * 1024], n, true, check_answer),
            first_byte_at: None,
            done_at: None,
        }
    }

    /// Answer bytes read so far.
    pub fn received(&self) -> u64 {
        self.answer.received()
    }

    /// When the answer's first byte was read (for an empty answer: its end), and when its
    /// end was.
    pub fn times(&self) -> (Option<std::time::Instant>, Option<std::time::Instant>) {
        (self.first_byte_at.or(self.done_at), self.done_at)
    }
}

impl StreamPart for HqClient {
    fn turn(&mut self, ep: &mut dyn QuicEndpoint) -> Result<bool> {
        let asked = self.request.turn(ep)?;
        if self.done_at.is_some() {
            return Ok(asked);
        }
        let done = self.answer.turn(ep)?;
        let now = std::time::Instant::now();
        if self.received() > 0 {
            self.first_byte_at.get_or_insert(now);
        }
        if done {
            self.done_at = Some(now);
        }
        Ok(asked && done)
    }
}

/// An hq-interop server: reads one `GET /N` request to the stream's end, then answers N
/// bytes of the answer pattern and ends the stream.
#[derive(Default)]
pub struct HqServer {
    request: Vec<u8>,
    answer: Option<SendBytes<Vec<u8>>>,
}

/// The answer pattern's period repeated to about 64 KiB, so a write of it continues the
/// pattern wherever the last one stopped.
fn answer_payload() -> Vec<u8> {
    (0..251 * 261).map(answer_byte).collect()
}

impl HqServer {
    /// The bytes the request asked for, once read whole.
    pub fn asked(&self) -> Option<u64> {
        self.answer.as_ref().map(|a| a.total)
    }
}

impl StreamPart for HqServer {
    fn turn(&mut self, ep: &mut dyn QuicEndpoint) -> Result<bool> {
        let mut chunk = [0u8; 256];
        while self.answer.is_none() {
            let r = ep.stream_read(&mut chunk)?;
            self.request.extend_from_slice(&chunk[..r.bytes]);
            if self.request.len() > MAX_REQUEST {
                bail!("the request ran past {MAX_REQUEST} bytes without ending");
            }
            if r.fin {
                let n = parse_hq_request(&self.request)?;
                self.answer = Some(SendBytes::new(answer_payload(), n, true));
            } else if r.bytes == 0 {
                return Ok(false);
            }
        }
        self.answer.as_mut().expect("made above").turn(ep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_parse_and_bad_ones_are_named() {
        assert_eq!(parse_hq_request(b"GET /1048576\r\n").unwrap(), 1 << 20);
        assert_eq!(parse_hq_request(&hq_request(7)).unwrap(), 7);
        assert_eq!(parse_hq_request(b"GET /0").unwrap(), 0);
        for (bad, why) in [
            (&b"POST /1\r\n"[..], "not GET /N"),
            (b"GET /index.html\r\n", "not a number"),
            (b"GET /99999999999\r\n", "more than"),
            (b"\xff\xfe", "not UTF-8"),
        ] {
            let err = parse_hq_request(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
    }

    #[test]
    fn the_answer_pattern_is_not_a_multiple_of_common_sizes() {
        assert_ne!(answer_byte(0), answer_byte(256));
        assert_ne!(answer_byte(0), answer_byte(4096));
        assert_eq!(answer_byte(0), answer_byte(251));
    }
}
