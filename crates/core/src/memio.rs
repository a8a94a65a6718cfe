//! The in-memory transport: two byte queues between a client and a server in one thread.
//! No sockets, no copies beyond the queue itself, so a timing is the TLS stack's work alone.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::rc::Rc;

type Queue = Rc<RefCell<VecDeque<u8>>>;

/// One endpoint's view: it reads from `inbound` and writes to `outbound`.
pub struct MemIo {
    inbound: Queue,
    outbound: Queue,
}

impl MemIo {
    /// A connected pair: what the first writes, the second reads, and the reverse.
    pub fn pair() -> (MemIo, MemIo) {
        let a: Queue = Rc::default();
        let b: Queue = Rc::default();
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

    pub fn has_input(&self) -> bool {
        !self.inbound.borrow().is_empty()
    }

    pub fn pending_input(&self) -> usize {
        self.inbound.borrow().len()
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
        q.read(buf)
    }
}

impl Write for MemIo {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.outbound.borrow_mut().extend(buf);
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
}
