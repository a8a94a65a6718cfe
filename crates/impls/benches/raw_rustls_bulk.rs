//! Does the harness cost rustls anything in bulk? A minimal hand-written rustls loop (as
//! rustls-bench moves records: write a 16 KiB write, hand all its TLS bytes to the peer,
//! then read the plaintext out) against the same transfer through tlsmatrix's adapter and
//! pair driver, same configuration, interleaved sample by sample. Sending and receiving are
//! timed apart, as both tools time them.
//!
//! Run: `cargo bench -p tlsmatrix-impls --bench raw_rustls_bulk` (or `make bench`).

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod raw;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, ServerConfig, ServerConnection};
use tlsmatrix_harness::certs;
use tlsmatrix_harness::pair;
use tlsmatrix_model::scenario::SigAlg;
use tlsmatrix_model::side::Side;
use tlsmatrix_model::stats;

const SCENARIO: &str = "bulk-tls13-aes-128-gcm-16k";
const WRITE: usize = 16 * 1024;
const SAMPLES: usize = 30;
const SAMPLE_TIME: Duration = Duration::from_millis(100);

/// Moves every TLS byte `from` has written to `to`, and lets `to` process it.
fn pass(from: &mut rustls::Connection, to: &mut rustls::Connection, buf: &mut Vec<u8>) {
    buf.clear();
    while from.wants_write() {
        from.write_tls(buf).unwrap();
    }
    let mut rd = &buf[..];
    while !rd.is_empty() {
        to.read_tls(&mut rd).unwrap();
        to.process_new_packets().unwrap();
    }
}

struct Raw {
    c: rustls::Connection,
    s: rustls::Connection,
    buf: Vec<u8>,
}

impl Raw {
    fn new(client: &Arc<ClientConfig>, server: &Arc<ServerConfig>) -> Raw {
        let name = ServerName::try_from("localhost").unwrap();
        let mut c: rustls::Connection = ClientConnection::new(client.clone(), name).unwrap().into();
        let mut s: rustls::Connection = ServerConnection::new(server.clone()).unwrap().into();
        let mut buf = Vec::with_capacity(64 * 1024);
        while c.is_handshaking() || s.is_handshaking() {
            pass(&mut c, &mut s, &mut buf);
            pass(&mut s, &mut c, &mut buf);
        }
        Raw { c, s, buf }
    }

    /// One write client to server: (send ns, receive ns).
    fn write(&mut self, payload: &[u8], sink: &mut [u8]) -> (u64, u64) {
        let t = Instant::now();
        self.c.writer().write_all(payload).unwrap();
        self.buf.clear();
        while self.c.wants_write() {
            self.c.write_tls(&mut self.buf).unwrap();
        }
        let send = t.elapsed().as_nanos() as u64;
        let t = Instant::now();
        let mut rd = &self.buf[..];
        let mut got = 0;
        // As rustls-bench's transfer: every byte in, then one process_new_packets.
        while !rd.is_empty() {
            self.s.read_tls(&mut rd).unwrap();
        }
        self.s.process_new_packets().unwrap();
        while got < payload.len() {
            got += self.s.reader().read(&mut sink[got..]).unwrap();
        }
        (send, t.elapsed().as_nanos() as u64)
    }
}

/// A buffer of `len` bytes that starts 2 KiB into a page, as the harness places its own
/// (`workload::APP_BUFFER_PAGE_OFFSET`): a copy between two buffers a few bytes apart modulo
/// 4 KiB runs several times slower on this CPU (docs/findings.md), so where the allocator
/// happens to put them would decide the figure.
struct MidPage {
    store: Vec<u8>,
    at: usize,
    len: usize,
}

impl MidPage {
    fn new(len: usize, fill: u8) -> MidPage {
        let store = vec![fill; len + 8192];
        let at = (2048 + 4096 - store.as_ptr() as usize % 4096) % 4096;
        MidPage { store, at, len }
    }
    fn get(&mut self) -> &mut [u8] {
        &mut self.store[self.at..self.at + self.len]
    }
}

fn main() {
    let dir = std::env::temp_dir().join("tlsmatrix-bench-certs");
    let set = certs::load_or_generate(&dir, SigAlg::EcdsaP256).unwrap();
    let (rc, rs) = raw::configs(&set);
    let mut raw = Raw::new(&rc, &rs);

    let (params, cf, sf) = raw::harness(SCENARIO, set);
    let mut p = pair::handshake(cf.as_ref(), sf.as_ref(), &params).unwrap();

    let mut payload_buf = MidPage::new(WRITE, 0x5a);
    let payload: &[u8] = payload_buf.get();
    let mut sink_buf = MidPage::new(WRITE, 0);
    let sink = sink_buf.get();
    let mut raw_once = || raw.write(payload, sink);
    let mut harness_sink_buf = MidPage::new(WRITE, 0);
    let harness_sink = harness_sink_buf.get();
    let mut harness_once = || {
        let t = p
            .transfer(Side::Client, WRITE, WRITE, payload, harness_sink, |_| {})
            .unwrap();
        (t.send_ns, t.recv_ns)
    };
    let t = Instant::now();
    let mut n = 0u32;
    while t.elapsed() < Duration::from_millis(300) {
        raw_once();
        harness_once();
        n += 1;
    }
    let batch = ((f64::from(n) * SAMPLE_TIME.as_secs_f64() / 0.3) as u32).max(1);
    let mb_per_s = |ns: u64| (f64::from(batch) * WRITE as f64 / 1e6) / (ns as f64 / 1e9);
    let (mut rs_, mut rr, mut hs, mut hr) = (vec![], vec![], vec![], vec![]);
    for _ in 0..SAMPLES {
        let (mut s, mut r) = (0, 0);
        for _ in 0..batch {
            let (a, b) = raw_once();
            s += a;
            r += b;
        }
        rs_.push(mb_per_s(s));
        rr.push(mb_per_s(r));
        let (mut s, mut r) = (0, 0);
        for _ in 0..batch {
            let (a, b) = harness_once();
            s += a;
            r += b;
        }
        hs.push(mb_per_s(s));
        hr.push(mb_per_s(r));
    }
    let med = |v: &[f64]| stats::summarize(v).unwrap().median;
    let ratio = |a: &[f64], b: &[f64]| {
        let q: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
        stats::summarize(&q).unwrap()
    };
    println!("{SCENARIO}, rustls-aws-lc, {SAMPLES} samples of {batch} writes of {WRITE} bytes");
    println!(
        "  raw loop:  send {:>6.0} MB/s, receive {:>6.0} MB/s (receive/send {:.2})",
        med(&rs_),
        med(&rr),
        med(&rr) / med(&rs_)
    );
    println!(
        "  tlsmatrix: send {:>6.0} MB/s, receive {:>6.0} MB/s (receive/send {:.2})",
        med(&hs),
        med(&hr),
        med(&hr) / med(&hs)
    );
    let s = ratio(&hs, &rs_);
    let r = ratio(&hr, &rr);
    println!(
        "  tlsmatrix / raw: send {:.3} ({:.3}-{:.3}), receive {:.3} ({:.3}-{:.3})",
        s.median, s.ci_low, s.ci_high, r.median, r.ci_low, r.ci_high
    );
}
