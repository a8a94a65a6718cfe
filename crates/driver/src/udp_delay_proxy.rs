//! A userspace delay proxy for UDP on loopback: datagrams sent to its port go to one
//! upstream address on 127.0.0.0/8 after a one-way delay, and the upstream's datagrams go
//! back to the client that sent first, after the same delay, so a QUIC client and server see
//! a network's latency without netem. Datagrams keep their boundaries and their order; none
//! is dropped, and the bandwidth is loopback's.
//!
//! Each direction is two threads: a reader that stamps every datagram with the time it is
//! due, and a writer that waits for that time.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a reader looks whether the proxy is stopping.
const POLL: Duration = Duration::from_millis(20);

pub struct UdpDelayProxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

type Due = (Instant, Vec<u8>);

impl UdpDelayProxy {
    /// Binds 127.0.0.1 (a port the OS picks) and forwards to `upstream`, which must be on
    /// loopback, with `one_way` each way.
    pub fn start(upstream: SocketAddr, one_way: Duration) -> io::Result<UdpDelayProxy> {
        if !upstream.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the UDP delay proxy only forwards to loopback, not {upstream}"),
            ));
        }
        let front = UdpSocket::bind("127.0.0.1:0")?;
        let back = UdpSocket::bind("127.0.0.1:0")?;
        back.connect(upstream)?;
        for s in [&front, &back] {
            s.set_read_timeout(Some(POLL))?;
        }
        let addr = front.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
        let (to_up, up) = mpsc::channel::<Due>();
        let (to_down, down) = mpsc::channel::<Due>();
        let (front_w, back_w) = (front.try_clone()?, back.try_clone()?);
        let mut threads = Vec::new();
        {
            let (stop, client) = (stop.clone(), client.clone());
            threads.push(std::thread::spawn(move || {
                read_loop(&stop, one_way, &to_up, |buf| {
                    let (n, from) = front.recv_from(buf)?;
                    client
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(from);
                    Ok(n)
                })
            }));
        }
        {
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                read_loop(&stop, one_way, &to_down, |buf| back.recv(buf))
            }));
        }
        threads.push(std::thread::spawn(move || {
            write_loop(up, |d| back_w.send(d).map(drop))
        }));
        threads.push(std::thread::spawn(move || {
            write_loop(down, |d| {
                let to = *client.lock().unwrap_or_else(|e| e.into_inner());
                match to {
                    Some(to) => front_w.send_to(d, to).map(drop),
                    None => Ok(()),
                }
            })
        }));
        Ok(UdpDelayProxy {
            addr,
            stop,
            threads,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Reads datagrams until stopped, each sent on to the writer with its due time.
fn read_loop(
    stop: &AtomicBool,
    one_way: Duration,
    to: &mpsc::Sender<Due>,
    mut recv: impl FnMut(&mut [u8]) -> io::Result<usize>,
) {
    let mut buf = vec![0u8; 65_536];
    while !stop.load(Ordering::Relaxed) {
        match recv(&mut buf) {
            Ok(n) => {
                if to
                    .send((Instant::now() + one_way, buf[..n].to_vec()))
                    .is_err()
                {
                    return;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            // A peer gone (ICMP port unreachable) ends nothing: the other may still talk.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(_) => return,
        }
    }
}

/// Sends each datagram when it is due, until its reader is gone.
fn write_loop(from: mpsc::Receiver<Due>, mut send: impl FnMut(&[u8]) -> io::Result<()>) {
    for (due, d) in from {
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        // A peer gone is the peer's business; the datagram is lost as on a network.
        let _ = send(&d);
    }
}

impl Drop for UdpDelayProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_cross_both_ways_after_the_delay_in_order() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let proxy =
            UdpDelayProxy::start(server.local_addr().unwrap(), Duration::from_millis(15)).unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client.connect(proxy.addr()).unwrap();
        let start = Instant::now();
        for d in [&b"one"[..], b"two", b"three"] {
            client.send(d).unwrap();
        }
        let mut buf = [0u8; 16];
        let mut got = Vec::new();
        for _ in 0..3 {
            let (n, from) = server.recv_from(&mut buf).unwrap();
            got.push(buf[..n].to_vec());
            server.send_to(&buf[..n], from).unwrap();
        }
        assert!(start.elapsed() >= Duration::from_millis(15));
        assert_eq!(got, [b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]);
        let n = client.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"one");
        assert!(
            start.elapsed() >= Duration::from_millis(30),
            "{:?}",
            start.elapsed()
        );
        assert!(UdpDelayProxy::start("10.0.0.1:1".parse().unwrap(), Duration::ZERO).is_err());
    }
}
