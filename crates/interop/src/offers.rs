//! What each TLS client offers on its library's defaults: each defaults client is started
//! against a listener of ours that reads its ClientHello and answers with a fatal
//! handshake_failure alert, so nothing past the first flight is needed of either side.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tlsmatrix_harness::tcp;
use tlsmatrix_history::offers::{ClientOffer, Offers, SCHEMA};
use tlsmatrix_model::client_hello::{self, Reading};
use tlsmatrix_model::interop::Family;
use tlsmatrix_model::scenario::SigAlg;

use crate::peers::Peer;
use crate::process::{start, Running};

/// The certificate kind the defaults clients trust (they never get as far as checking it).
pub const CERT: SigAlg = SigAlg::EcdsaP256;
/// A fatal handshake_failure alert in a TLS 1.2-versioned record, as a server that refuses
/// the ClientHello sends it.
const REFUSAL: [u8; 7] = [21, 3, 3, 0, 2, 2, 40];

/// Reads every TLS peer's defaults ClientHello, one peer at a time, each within `limit`.
pub fn read_all(peers: &[Peer], certs: &Path, run_id: &str, limit: Duration) -> Offers {
    let clients = peers
        .iter()
        .filter(|p| p.takes(Family::Tls))
        .map(|p| {
            let (offer, reason) = match read_one(p, certs, limit) {
                Ok(o) => (Some(o), String::new()),
                Err(e) => (None, format!("{e:#}")),
            };
            ClientOffer {
                client: p.name.clone(),
                version: p.version.clone(),
                offer,
                reason,
            }
        })
        .collect();
    Offers {
        schema: SCHEMA.into(),
        run_id: run_id.into(),
        clients,
    }
}

fn read_one(peer: &Peer, certs: &Path, limit: Duration) -> Result<client_hello::HelloOffer> {
    let listener = TcpListener::bind("127.0.0.1:0").context("cannot listen on 127.0.0.1")?;
    let addr = listener.local_addr()?.to_string();
    let cmd = peer
        .defaults_client(CERT, certs, &addr, limit.as_secs().max(1))
        .map_err(anyhow::Error::msg)?;
    // stdin stays open: a tool client ends its connection at the end of its input.
    let mut client = start(cmd, true).context("cannot start the client")?;
    let deadline = Instant::now() + limit;
    let read = accept(&listener, deadline, &mut client).and_then(|s| hello(s, deadline));
    client.kill();
    read.map_err(|e| {
        let said = client.text();
        match said.trim().lines().last() {
            Some(last) => anyhow::anyhow!("{e:#}; the client's last words: {last}"),
            None => e,
        }
    })
}

/// The client's connection; an error when it exits first or the deadline passes.
fn accept(listener: &TcpListener, deadline: Instant, client: &mut Running) -> Result<TcpStream> {
    let exited = || match client.child.try_wait() {
        Ok(Some(status)) => anyhow::bail!("the client exited ({status}) without connecting"),
        _ => Ok(()),
    };
    match tcp::accept_by(listener, deadline, exited)? {
        Some((s, _)) => Ok(s),
        None => anyhow::bail!("the client did not connect in time"),
    }
}

/// Reads until the ClientHello is whole, then refuses it.
fn hello(mut s: TcpStream, deadline: Instant) -> Result<client_hello::HelloOffer> {
    let mut stream = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let late = || anyhow::anyhow!("no whole ClientHello in time ({} bytes)", stream.len());
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(late());
        }
        s.set_read_timeout(Some(left))?;
        let n = match s.read(&mut buf) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(late())
            }
            Err(e) => return Err(e).context("reading the ClientHello"),
        };
        anyhow::ensure!(n > 0, "the client closed after {} bytes", stream.len());
        stream.extend_from_slice(&buf[..n]);
        match client_hello::read(&stream) {
            Reading::More => continue,
            Reading::Done(offer) => {
                let _ = s.write_all(&REFUSAL);
                return Ok(offer);
            }
            Reading::Malformed(why) => anyhow::bail!("not a ClientHello: {why}"),
        }
    }
}
