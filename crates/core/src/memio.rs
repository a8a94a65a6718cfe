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
}

impl ByteQueue {
    fn len(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 && self.pos * 2 >= self.buf.len() {
            // Reclaim the consumed front; the pair driver drains each write, so this is
            // almost always an empty queue being reset.
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    fn pop_into(&mut self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.len());
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
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
}
