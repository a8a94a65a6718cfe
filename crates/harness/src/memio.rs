//! The in-memory transport: two byte queues between a client and a server in one thread.
//! No sockets, no copies beyond the queue itself, so a timing is the TLS stack's work alone.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::rc::Rc;

/// A byte queue that always hands out its unread bytes as one contiguous slice. A ring
/// buffer (`VecDeque`) would split them where it wraps, and how often a receiver then has to
/// read would depend on the sender's write pattern, not on the receiver's library.
#[derive(Default)]
struct ByteQueue {
    buf: Vec<u8>,
    /// Start of the unread bytes.
    pos: usize,
    hellos: HelloScan,
    /// Bytes ever written into and read out of the queue: where a flight ends, and how much
    /// of the peer's stream a side had read when it wrote (see `flights`).
    written: u64,
    read: u64,
    /// Reserved up front (a memory measurement's queues): never grown by `reset`.
    fixed: bool,
}

/// Counts the ClientHello messages written into a queue from the TLS record headers alone,
/// so the pair driver can tell whether a handshake went through a HelloRetryRequest (two
/// ClientHellos) whatever the libraries report. A record counts when it is a handshake
/// record whose body is exactly one ClientHello: type 1 with a length of the body less its
/// 4-byte header, then the legacy version 3.1-3.3 that every ClientHello since TLS 1.0
/// starts with. An encrypted TLS 1.2 Finished (a handshake record of random-looking bytes)
/// passes that test by chance about once in 2^46; on the type and length alone it was once
/// in 2^32, and one of the main job's few million TLS 1.2 handshakes once did.
/// Scanning stops at the first application-data record: no ClientHello can follow it in a
/// handshake, and bulk transfers then pay one branch per write, not a parse per record.
#[derive(Default)]
struct HelloScan {
    /// The record header (5 bytes) and the first 6 bytes of its body (the handshake header
    /// and a ClientHello's version), as far as seen.
    prefix: [u8; 11],
    have: usize,
    /// Body bytes of the current record still to pass over.
    skip: usize,
    count: usize,
    /// An application-data record has been seen: the handshake's hellos are all counted.
    done: bool,
}

impl HelloScan {
    const HEADER: usize = 5;
    const BODY_PREFIX: usize = 6;

    fn body_len(&self) -> usize {
        usize::from(u16::from_be_bytes([self.prefix[3], self.prefix[4]]))
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.done {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len());
                self.skip -= n;
                bytes = &bytes[n..];
                continue;
            }
            let want = if self.have < Self::HEADER {
                Self::HEADER
            } else {
                Self::HEADER + self.body_len().min(Self::BODY_PREFIX)
            };
            let n = (want - self.have).min(bytes.len());
            self.prefix[self.have..self.have + n].copy_from_slice(&bytes[..n]);
            self.have += n;
            bytes = &bytes[n..];
            if self.have == Self::HEADER && self.body_len() > 0 {
                continue; // now read the body's first bytes
            }
            if self.have == want {
                self.record_prefix_complete();
            }
        }
    }

    fn record_prefix_complete(&mut self) {
        const HANDSHAKE: u8 = 22;
        const APPLICATION_DATA: u8 = 23;
        const CLIENT_HELLO: u8 = 1;
        let body = self.body_len();
        let p = &self.prefix;
        self.done = p[0] == APPLICATION_DATA;
        if p[0] == HANDSHAKE && body >= Self::BODY_PREFIX && p[5] == CLIENT_HELLO {
            let message = usize::from(p[6]) << 16 | usize::from(p[7]) << 8 | usize::from(p[8]);
            let legacy_version = p[9] == 3 && (1..=3).contains(&p[10]);
            if message == body - 4 && legacy_version {
                self.count += 1;
            }
        }
        self.skip = body - body.min(Self::BODY_PREFIX);
        self.have = 0;
    }
}

impl ByteQueue {
    fn len(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the queue and, once it has carried bulk data, starts the next bytes in the
    /// middle of a page: the copy out of this queue stands for a socket read, and where it
    /// reads from must not depend on the allocator. glibc's memcpy is many times slower a few
    /// bytes past its source modulo 4 KiB, and a queue holding exactly one record in a
    /// page-aligned block (mimalloc) put OpenSSL's read of each record body 3 bytes behind it:
    /// its receive rate fell to a third (see `workload::APP_BUFFER_PAGE_OFFSET`).
    fn reset(&mut self) {
        const MIDDLE: usize = 2048;
        const RECORD: usize = 17 * 1024;
        const BULK: u64 = 64 * 1024;
        self.buf.clear();
        self.pos = 0;
        // Handshakes never get here (no allocation inside their timed calls), nor do memory
        // samples' reserved queues (their storage must not grow).
        if self.written < BULK || self.fixed {
            return;
        }
        if self.buf.capacity() < 4096 + RECORD {
            self.buf.reserve(4096 + RECORD);
        }
        let start = (MIDDLE + 4096 - self.buf.as_ptr() as usize % 4096) % 4096;
        self.buf.resize(start, 0);
        self.pos = start;
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.is_empty() {
            self.reset();
        } else if self.pos > 0 && self.pos * 2 >= self.buf.len() {
            // Reclaim the consumed front; the pair driver drains each write, so this is
            // almost always an empty queue being reset.
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
        self.written += bytes.len() as u64;
        self.hellos.feed(bytes);
    }

    fn pop_into(&mut self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.len());
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        self.read += n as u64;
        if self.pos == self.buf.len() {
            self.reset();
        }
        n
    }
}

type Queue = Rc<RefCell<ByteQueue>>;

/// One endpoint's view: it reads from `inbound` and writes to `outbound`.
pub struct MemIo {
    inbound: Queue,
    outbound: Queue,
}

impl MemIo {
    /// A connected pair: what the first writes, the second reads, and the reverse.
    pub fn pair() -> (MemIo, MemIo) {
        MemIo::pair_reserved(0)
    }

    /// A pair whose two queues hold `bytes` each before they need to grow, so that a memory
    /// measurement can allocate the harness's buffers before it starts counting.
    pub fn pair_reserved(bytes: usize) -> (MemIo, MemIo) {
        let queue = || {
            Rc::new(RefCell::new(ByteQueue {
                buf: Vec::with_capacity(bytes),
                pos: 0,
                hellos: HelloScan::default(),
                written: 0,
                read: 0,
                fixed: bytes > 0,
            }))
        };
        let (a, b): (Queue, Queue) = (queue(), queue());
        (
            MemIo {
                inbound: a.clone(),
                outbound: b.clone(),
            },
            MemIo {
                inbound: b,
                outbound: a,
            },
        )
    }

    /// A handle that reports how much the two queues have allocated, after the `MemIo`
    /// itself has been handed to an endpoint.
    pub fn probe(&self) -> Probe {
        Probe {
            queues: [self.inbound.clone(), self.outbound.clone()],
        }
    }

    pub fn has_input(&self) -> bool {
        !self.inbound.borrow().is_empty()
    }

    pub fn pending_input(&self) -> usize {
        self.inbound.borrow().len()
    }
}

/// See [`MemIo::probe`].
pub struct Probe {
    queues: [Queue; 2],
}

impl Probe {
    /// The harness's own heap for this connection: what both queues have allocated.
    pub fn capacity(&self) -> usize {
        self.queues.iter().map(|q| q.borrow().buf.capacity()).sum()
    }

    /// How many ClientHello messages the endpoint has written (see [`HelloScan`]).
    pub fn hellos_written(&self) -> usize {
        self.queues[1].borrow().hellos.count
    }

    /// Bytes the endpoint has written so far.
    pub fn bytes_written(&self) -> u64 {
        self.queues[1].borrow().written
    }

    /// Bytes of its peer's stream the endpoint has read so far.
    pub fn bytes_read(&self) -> u64 {
        self.queues[0].borrow().read
    }

    /// Bytes the peer has written so far.
    pub fn peer_bytes_written(&self) -> u64 {
        self.queues[0].borrow().written
    }

    /// Bytes of the endpoint's stream the peer has read so far.
    pub fn peer_bytes_read(&self) -> u64 {
        self.queues[1].borrow().read
    }
}

impl Read for MemIo {
    /// Never returns 0 for an empty queue, which TLS libraries read as end of stream: an
    /// empty queue means "not yet", i.e. `WouldBlock`.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut q = self.inbound.borrow_mut();
        if q.is_empty() && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(q.pop_into(buf))
    }
}

impl Write for MemIo {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.outbound.borrow_mut().push(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_cross_in_both_directions_and_empty_means_would_block() {
        let (mut a, mut b) = MemIo::pair();
        a.write_all(b"hello").unwrap();
        assert!(b.has_input() && !a.has_input());
        let mut buf = [0u8; 8];
        assert_eq!(b.read(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..5], b"hello");
        assert_eq!(
            b.read(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        b.write_all(b"back").unwrap();
        assert_eq!(a.pending_input(), 4);
    }

    /// A record: type, version 0x0303, length, body.
    fn record(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![kind, 3, 3];
        r.extend_from_slice(&(body.len() as u16).to_be_bytes());
        r.extend_from_slice(body);
        r
    }

    fn client_hello(len: usize) -> Vec<u8> {
        let mut m = vec![1, 0, (len >> 8) as u8, len as u8, 3, 3];
        m.resize(4 + len, 0xab);
        record(22, &m)
    }

    #[test]
    fn client_hellos_are_counted_however_the_bytes_are_split() {
        let mut stream = client_hello(300);
        stream.extend(record(20, &[1])); // change_cipher_spec
        stream.extend(client_hello(1200));
        // Encrypted records: a TLS 1.2 Finished whose first byte happens to be 1 but whose
        // "length" does not fit, an empty alert, and application data.
        stream.extend(record(22, &[1, 0, 0, 9, 9, 9, 9, 9]));
        // One whose type and length do fit by chance, but whose next bytes are no version.
        stream.extend(record(22, &[1, 0, 0, 6, 0x9c, 0x41, 7, 7, 7, 7]));
        stream.extend(record(21, &[]));
        stream.extend(record(23, &[1, 0, 0, 4, 9, 9, 9, 9]));
        // After application data no ClientHello is a handshake's: this one is not counted.
        stream.extend(client_hello(40));
        for chunk in [1, 2, 3, 7, 100, stream.len()] {
            let (mut a, _b) = MemIo::pair();
            let probe = a.probe();
            for piece in stream.chunks(chunk) {
                a.write_all(piece).unwrap();
            }
            assert_eq!(probe.hellos_written(), 2, "chunks of {chunk}");
        }
    }

    #[test]
    fn partial_reads_keep_order_across_interleaved_writes() {
        let (mut a, mut b) = MemIo::pair();
        let mut got = Vec::new();
        let mut buf = [0u8; 3];
        for chunk in [&b"abcdefg"[..], b"hij", b"klmnopqrstu"] {
            a.write_all(chunk).unwrap();
            let n = b.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        while let Ok(n) = b.read(&mut buf) {
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, b"abcdefghijklmnopqrstu");
        assert!(!b.has_input());
    }

    /// A queue that has carried bulk data takes each next record in the middle of a page,
    /// whatever the allocator gave it; a handshake's queue and a reserved one never move.
    #[test]
    fn bulk_records_start_mid_page_and_reserved_queues_never_grow() {
        use std::io::{Read, Write};
        let (mut a, mut b) = MemIo::pair();
        let record = vec![7u8; 16 * 1024 + 22];
        let mut out = vec![0u8; record.len()];
        for _ in 0..8 {
            a.write_all(&record).unwrap();
            let q = b.inbound.borrow();
            let at = (q.buf.as_ptr() as usize + q.pos) % 4096;
            let bulk = q.written > 64 * 1024 + record.len() as u64;
            drop(q);
            if bulk {
                assert_eq!(at, 2048);
            }
            b.read_exact(&mut out).unwrap();
            assert_eq!(out, record);
        }
        let (mut a, mut b) = MemIo::pair_reserved(20 * 1024);
        let probe = a.probe();
        let before = probe.capacity();
        for _ in 0..8 {
            a.write_all(&record).unwrap();
            b.read_exact(&mut out).unwrap();
        }
        assert_eq!(probe.capacity(), before);
    }
}
