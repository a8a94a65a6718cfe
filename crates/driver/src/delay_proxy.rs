//! A userspace delay proxy on loopback: it accepts TCP connections, connects each to one
//! upstream address on 127.0.0.0/8, and forwards bytes in both directions after a one-way
//! delay and at a capped bandwidth, so a real client and server see a network's latency
//! without netem. It cannot delay TCP's own handshake (the kernel completes the client's
//! connect at once), and it does not model a congestion window: loopback's window is large.
//!
//! Each direction is two threads: a reader that stamps every chunk with the time it may be
//! delivered, and a writer that waits for that time. A chunk is due when it has crossed the
//! link (after the chunks before it, at the bandwidth) plus the one-way delay.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One direction of the emulated path.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub one_way: Duration,
    /// Bits per second; `None` for no limit.
    pub bandwidth_bps: Option<f64>,
}

impl Link {
    /// A symmetric path of round-trip time `rtt`.
    pub fn for_rtt(rtt: Duration, bandwidth_bps: Option<f64>) -> Link {
        Link {
            one_way: rtt / 2,
            bandwidth_bps,
        }
    }

    fn transmission(&self, bytes: usize) -> Duration {
        self.bandwidth_bps.map_or(Duration::ZERO, |bps| {
            Duration::from_secs_f64(bytes as f64 * 8.0 / bps)
        })
    }
}

pub struct DelayProxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl DelayProxy {
    /// Listens on 127.0.0.1 (a port the OS picks) and forwards every connection to
    /// `upstream`, which must be on loopback.
    pub fn start(upstream: SocketAddr, link: Link) -> io::Result<DelayProxy> {
        if !upstream.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the delay proxy only forwards to loopback, not {upstream}"),
            ));
        }
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let acceptor = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopping.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(client) = conn else { continue };
                // A connection that cannot reach upstream is closed; the client sees that.
                if let Ok(server) = TcpStream::connect(upstream) {
                    let _ = forward(client, server, link);
                }
            }
        });
        Ok(DelayProxy {
            addr,
            stop,
            acceptor: Some(acceptor),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the acceptor so it sees the flag; connections already open end with their
        // peers (their threads are detached).
        let _ = TcpStream::connect(self.addr);
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

fn forward(a: TcpStream, b: TcpStream, link: Link) -> io::Result<()> {
    for s in [&a, &b] {
        s.set_nodelay(true)?;
    }
    pipe(a.try_clone()?, b.try_clone()?, link);
    pipe(b, a, link);
    Ok(())
}

/// Bytes from `from` reach `to` after the link's delay; end of stream is passed on the same way.
fn pipe(mut from: TcpStream, mut to: TcpStream, link: Link) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut link_free = Instant::now();
        loop {
            let n = from.read(&mut buf).unwrap_or(0);
            let now = Instant::now();
            link_free = link_free.max(now) + link.transmission(n);
            if tx
                .send((link_free + link.one_way, buf[..n].to_vec()))
                .is_err()
                || n == 0
            {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        for (due, bytes) in rx {
            wait_until(due);
            if bytes.is_empty() {
                let _ = to.shutdown(Shutdown::Write);
                break;
            }
            if to.write_all(&bytes).is_err() {
                let _ = to.shutdown(Shutdown::Both);
                break;
            }
        }
    });
}

/// Sleeps to within 250 µs of `due`, then yields until it: sleep alone overshoots by up to a
/// scheduler tick, which would be half a same-rack round trip.
fn wait_until(due: Instant) {
    const SPIN: Duration = Duration::from_micros(250);
    let now = Instant::now();
    if due > now + SPIN {
        std::thread::sleep(due - now - SPIN);
    }
    while Instant::now() < due {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo_server() -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let mut s = s.unwrap();
                s.set_nodelay(true).unwrap();
                let mut buf = [0u8; 4096];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || s.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        });
        addr
    }

    fn round_trip(addr: SocketAddr, bytes: usize) -> Duration {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        let start = Instant::now();
        s.write_all(&vec![7u8; bytes]).unwrap();
        let mut got = 0;
        let mut buf = vec![0u8; bytes];
        while got < bytes {
            got += s.read(&mut buf[got..]).unwrap();
        }
        start.elapsed()
    }

    #[test]
    fn the_proxy_adds_the_asked_delay_and_bandwidth() {
        let upstream = echo_server();
        let rtt = Duration::from_millis(40);
        let proxy = DelayProxy::start(upstream, Link::for_rtt(rtt, None)).unwrap();
        let t = round_trip(proxy.addr(), 100);
        // At least the delay, and not twice it; the slack is what a busy 2-core machine adds
        // to two hops through the proxy's threads (10 ms was once exceeded by 0.2 ms while
        // a build ran beside the test).
        assert!(t >= rtt && t < rtt + rtt / 2, "{t:?}");
        // 100,000 bytes at 8 Mbit/s take 100 ms each way on top of the delay.
        let capped = Link::for_rtt(rtt, Some(8e6));
        let proxy = DelayProxy::start(upstream, capped).unwrap();
        let t = round_trip(proxy.addr(), 100_000);
        let want = rtt + Duration::from_millis(100);
        assert!(t >= want && t < want + Duration::from_millis(110), "{t:?}");
    }

    #[test]
    fn only_loopback_is_a_target() {
        let far: SocketAddr = "192.0.2.1:443".parse().unwrap();
        let link = Link::for_rtt(Duration::from_millis(1), None);
        assert!(DelayProxy::start(far, link).is_err());
    }
}
