//! ngtcp2 on GnuTLS: the QUIC stack curl and nghttp2's HTTP/3 use, from Debian's packages
//! (`libngtcp2-dev`, `libngtcp2-crypto-gnutls-dev`), with GnuTLS under it through ngtcp2's
//! GnuTLS crypto layer. ngtcp2 is sans-I/O and is driven as its examples drive it: a client
//! connection made with its first flight ready, a server connection made from the client's
//! first Initial (`ngtcp2_accept`, no Retry, as every stack here is measured), datagrams in
//! through `ngtcp2_conn_read_pkt` and out through `ngtcp2_conn_write_pkt`. Its C structs stay
//! in `csrc/ngtcp2_glue.c`; the GnuTLS session is the TCP adapter's own for the scenario
//! (`GnutlsFactory::session`), so the QUIC handshake negotiates what the TCP one does and is
//! read back the same way.

use std::ffi::{c_char, c_int, c_long, CStr};
use std::ptr;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use tlsmatrix_harness::endpoint::EndpointConfig;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_harness::quic::{Datagrams, QuicEndpoint, QuicEndpointFactory, StreamRead};
use tlsmatrix_model::scenario::Resumption;
use tlsmatrix_model::side::Side;

use super::{alpn_of, ffi, negotiated_of, GnutlsFactory, GnutlsLibrary, Session, SessionSlot};

/// The glue's answer to a first datagram of a version ngtcp2 does not speak.
const VERSION_NEGOTIATION: c_int = 1;
/// ngtcp2's `NGTCP2_MAX_UDP_PAYLOAD_SIZE`-sized buffer: more than any datagram it writes
/// during a handshake.
const MAX_DATAGRAM: usize = 1452;
/// RFC 9001 §8.4: no middlebox-compatibility ChangeCipherSpec inside QUIC.
const QUIC_PRIORITY_TAIL: &str = ":%DISABLE_TLS13_COMPAT_MODE";

#[repr(C)]
struct Glue {
    _private: [u8; 0],
}

#[link(name = "ngtcp2")]
#[link(name = "ngtcp2_crypto_gnutls")]
extern "C" {
    fn tm_ngtcp2_client_new(out: *mut *mut Glue, session: ffi::session) -> c_int;
    fn tm_ngtcp2_server_new(
        out: *mut *mut Glue,
        session: ffi::session,
        pkt: *const u8,
        len: usize,
    ) -> c_int;
    fn tm_ngtcp2_read(c: *mut Glue, pkt: *const u8, len: usize) -> c_int;
    fn tm_ngtcp2_write(c: *mut Glue, dest: *mut u8, cap: usize) -> c_long;
    fn tm_ngtcp2_handshake_completed(c: *const Glue) -> c_int;
    fn tm_ngtcp2_stream_write(c: *mut Glue, data: *const u8, len: usize, fin: c_int) -> c_long;
    fn tm_ngtcp2_stream_read(c: *mut Glue, buf: *mut u8, cap: usize, fin: *mut c_int) -> c_long;
    fn tm_ngtcp2_timeout(c: *mut Glue) -> i64;
    fn tm_ngtcp2_peer_close(
        c: *const Glue,
        code: *mut u64,
        reason: *mut *const u8,
        len: *mut usize,
    ) -> c_int;
    fn tm_ngtcp2_tls_alert(c: *const Glue) -> c_int;
    fn tm_ngtcp2_strerror(rv: c_int) -> *const c_char;
    fn tm_ngtcp2_version() -> *const c_char;
    fn tm_ngtcp2_free(c: *mut Glue);
}

fn static_text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: ngtcp2 returns static, NUL-terminated strings.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn error_text(rv: c_int) -> String {
    // SAFETY: ngtcp2_strerror takes any code.
    static_text(unsafe { tm_ngtcp2_strerror(rv) })
}

/// ngtcp2's version as the linked library reports it.
pub(super) fn stack() -> String {
    // SAFETY: a static string.
    format!("ngtcp2 {}", static_text(unsafe { tm_ngtcp2_version() }))
}

impl GnutlsLibrary {
    /// `side`'s ngtcp2 connections for `cfg`.
    pub(super) fn ngtcp2_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
    ) -> Result<Box<dyn QuicEndpointFactory>> {
        Ok(Box::new(Ngtcp2Factory(self.gnutls_factory(
            side,
            cfg,
            QUIC_PRIORITY_TAIL,
        )?)))
    }
}

struct Ngtcp2Factory(GnutlsFactory);

impl QuicEndpointFactory for Ngtcp2Factory {
    fn endpoint(&self) -> Result<Box<dyn QuicEndpoint>> {
        let session = self.0.session(0)?;
        let mut glue = ptr::null_mut();
        if self.0.side == Side::Client {
            // SAFETY: out-pointer to a local; the session outlives the connection, which the
            // endpoint frees first.
            let rv = unsafe { tm_ngtcp2_client_new(&mut glue, session.0) };
            if rv != 0 {
                bail!("ngtcp2 could not start a connection: {}", error_text(rv));
            }
        }
        let factory = &self.0;
        Ok(Box::new(Ngtcp2Connection {
            glue,
            session,
            // What a socket send path reads from: the harness's, outside a heap count.
            buf: tlsmatrix_harness::uncounted::outside_count(|| vec![0u8; MAX_DATAGRAM]),
            ticket_due: factory.ticket_key.is_some(),
            slot: (factory.side == Side::Client && factory.resumption == Resumption::Ticket)
                .then(|| factory.session.clone()),
        }))
    }
}

/// One connection: the glue's, and the session under it. The glue is freed before the
/// session (`Drop`, then the fields).
struct Ngtcp2Connection {
    /// Null on a server until the client's first datagram.
    glue: *mut Glue,
    session: Session,
    buf: Vec<u8>,
    /// Server, when resuming: one TLS 1.3 ticket is still to be sent once the handshake is
    /// done (the TCP adapter's sessions do not send one by themselves).
    ticket_due: bool,
    /// Client, when resuming: where the newest session goes for the next connection.
    slot: Option<SessionSlot>,
}

impl Drop for Ngtcp2Connection {
    fn drop(&mut self) {
        if let Some(slot) = &self.slot {
            self.session.keep_in(slot);
        }
        // SAFETY: made by the glue, freed once; null is allowed.
        unsafe { tm_ngtcp2_free(self.glue) }
    }
}

impl Ngtcp2Connection {
    /// The reason a connection failed: ngtcp2's error, the TLS alert GnuTLS raised, and the
    /// peer's connection close if one came.
    fn failure(&self, rv: c_int) -> anyhow::Error {
        let mut why = format!("ngtcp2: {}", error_text(rv));
        // SAFETY: a live connection.
        let alert = unsafe { tm_ngtcp2_tls_alert(self.glue) };
        if alert != 0 {
            // SAFETY: GnuTLS returns a static name or null.
            let name = static_text(unsafe { ffi::gnutls_alert_get_name(alert) });
            why.push_str(&format!(" (TLS alert {alert}: {name})"));
        }
        if let Some(close) = self.peer_close() {
            why.push_str(&format!("; {close}"));
        }
        anyhow!(why)
    }

    fn peer_close(&self) -> Option<String> {
        let (mut code, mut reason, mut len) = (0u64, ptr::null(), 0usize);
        // SAFETY: a live connection; the reason points into it.
        if unsafe { tm_ngtcp2_peer_close(self.glue, &mut code, &mut reason, &mut len) } == 0 {
            return None;
        }
        let text = if reason.is_null() {
            String::new()
        } else {
            // SAFETY: `len` bytes the connection owns.
            String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(reason, len) }).into_owned()
        };
        Some(format!(
            "the peer closed the connection with error {code:#x} {text}"
        ))
    }
}

impl QuicEndpoint for Ngtcp2Connection {
    fn receive(&mut self, datagram: &[u8]) -> Result<()> {
        if self.glue.is_null() {
            // SAFETY: out-pointer to a local; the datagram is read during the call.
            let rv = unsafe {
                tm_ngtcp2_server_new(
                    &mut self.glue,
                    self.session.0,
                    datagram.as_ptr(),
                    datagram.len(),
                )
            };
            match rv {
                0 => {}
                VERSION_NEGOTIATION => bail!(
                    "the client's first datagram is of QUIC version {:#010x}",
                    u32::from_be_bytes(datagram[1..5].try_into().expect("four bytes"))
                ),
                _ => bail!(
                    "ngtcp2 refused the first datagram as an Initial: {}",
                    error_text(rv)
                ),
            }
        }
        // SAFETY: a live connection; the datagram is read during the call.
        let rv = unsafe { tm_ngtcp2_read(self.glue, datagram.as_ptr(), datagram.len()) };
        if rv != 0 {
            return Err(self.failure(rv));
        }
        Ok(())
    }

    fn transmit(&mut self, out: &mut Datagrams) -> Result<()> {
        if self.glue.is_null() {
            return Ok(());
        }
        if self.ticket_due && self.is_handshake_complete() {
            self.ticket_due = false;
            // SAFETY: a live session; GnuTLS hands the ticket to ngtcp2's crypto stream.
            let rv = unsafe { ffi::gnutls_session_ticket_send(self.session.0, 1, 0) };
            if rv < 0 {
                bail!("GnuTLS could not send a session ticket: error {rv}");
            }
        }
        loop {
            // SAFETY: a live connection writing into our buffer.
            let n = unsafe { tm_ngtcp2_write(self.glue, self.buf.as_mut_ptr(), self.buf.len()) };
            match n {
                0 => break,
                n if n > 0 => out.push(&self.buf[..n as usize]),
                rv => return Err(self.failure(rv as c_int)),
            }
        }
        if let Some(close) = self.peer_close() {
            bail!("ngtcp2: {close}");
        }
        Ok(())
    }

    fn timeout(&mut self) -> Option<Duration> {
        if self.glue.is_null() {
            return None;
        }
        // SAFETY: a live connection.
        let ns = unsafe { tm_ngtcp2_timeout(self.glue) };
        u64::try_from(ns).ok().map(Duration::from_nanos)
    }

    fn stream_write(&mut self, data: &[u8], fin: bool) -> Result<usize> {
        if self.glue.is_null() {
            return Ok(0);
        }
        // SAFETY: a live connection; the glue copies what it takes during the call.
        let n = unsafe {
            tm_ngtcp2_stream_write(self.glue, data.as_ptr(), data.len(), c_int::from(fin))
        };
        usize::try_from(n)
            .map_err(|_| anyhow!("ngtcp2: writing to the stream: {}", error_text(n as c_int)))
    }

    fn stream_read(&mut self, buf: &mut [u8]) -> Result<StreamRead> {
        if self.glue.is_null() {
            return Ok(StreamRead::default());
        }
        let mut fin: c_int = 0;
        // SAFETY: a live connection writing into `buf`.
        let n = unsafe { tm_ngtcp2_stream_read(self.glue, buf.as_mut_ptr(), buf.len(), &mut fin) };
        let bytes = usize::try_from(n)
            .map_err(|_| anyhow!("ngtcp2: reading the stream: {}", error_text(n as c_int)))?;
        Ok(StreamRead {
            bytes,
            fin: fin != 0,
        })
    }

    fn is_handshake_complete(&self) -> bool {
        // SAFETY: a live connection or null, which the glue answers 0 for.
        !self.glue.is_null() && unsafe { tm_ngtcp2_handshake_completed(self.glue) } != 0
    }

    fn negotiated(&self) -> Negotiated {
        negotiated_of(self.session.0)
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        alpn_of(self.session.0)
    }
}
