//! Whether a server resumes TLS 1.3 sessions, checked with `openssl s_client` so that the
//! ticket has time to arrive.
//!
//! testssl.sh decides its two resumption checks by a race: its `s_client` quits as soon as
//! its stdin ends, and a TLS 1.3 server sends its ticket after the handshake, so the ticket
//! reaches the client only sometimes (19 of 30 connections to `openssl s_server` here kept
//! no session). Here the first client's stdin stays open until the session is written.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::process::{start, Running};

/// The scanner's findings this check replaces.
pub const RACED: [&str; 2] = ["sessionresumption_ticket", "sessionresumption_ID"];

/// How long a client may take, and how long the first waits for its ticket.
const LIMIT: Duration = Duration::from_secs(5);

/// Whether the server at `addr` resumes a TLS 1.3 session by ticket or, with `by_id`, by
/// its own session cache (`-no_ticket`, testssl.sh's "ID" check). The session is kept in
/// `dir`.
pub fn resumes(addr: &str, by_id: bool, dir: &Path) -> bool {
    let session = dir.join(format!("session-{}-{by_id}.pem", addr.replace(':', "-")));
    let _ = std::fs::remove_file(&session);
    let client = |keep: &str| -> Option<Running> {
        let mut c = Command::new("openssl");
        c.args(["s_client", "-connect", addr, "-tls1_3", keep])
            .arg(&session);
        if by_id {
            c.arg("-no_ticket");
        }
        start(c, true).ok()
    };
    let written = || std::fs::metadata(&session).is_ok_and(|m| m.len() > 0);
    let Some(mut first) = client("-sess_out") else {
        return false;
    };
    let until = Instant::now() + LIMIT;
    while !written() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(first.child.stdin.take());
    if first.wait_until(Instant::now() + LIMIT).is_none() {
        first.kill();
    }
    if !written() {
        return false;
    }
    let Some(mut second) = client("-sess_in") else {
        return false;
    };
    drop(second.child.stdin.take());
    if second.wait_until(Instant::now() + LIMIT).is_none() {
        second.kill();
        return false;
    }
    second.text().lines().any(|l| l.starts_with("Reused"))
}
