//! Waiting for a TCP client with a deadline: the poll both a peer's server and interop's
//! ClientHello reader run.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::Context;

/// How often the listener is asked again while no client has connected.
const POLL: Duration = Duration::from_millis(5);

/// The next connection on `listener` (left non-blocking; the stream is blocking), or `None`
/// once `deadline` has passed. Between polls `waiting` is asked whether to go on: its error
/// ends the wait (the client process has exited, say).
pub fn accept_by(
    listener: &TcpListener,
    deadline: Instant,
    mut waiting: impl FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Option<(TcpStream, SocketAddr)>> {
    listener.set_nonblocking(true)?;
    loop {
        match listener.accept() {
            Ok((s, from)) => {
                s.set_nonblocking(false)?;
                return Ok(Some((s, from)));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                waiting()?;
                if Instant::now() >= deadline {
                    return Ok(None);
                }
                std::thread::sleep(POLL);
            }
            Err(e) => return Err(e).context("accepting a connection"),
        }
    }
}
