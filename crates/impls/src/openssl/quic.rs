//! OpenSSL's own QUIC stack (3.5 and later, client and server), driven as its non-blocking
//! API is driven: a client connection object per connection, and a server listener shared by
//! the connections it accepts. Each side talks through a datagram BIO pair (the library's end
//! and ours), so the datagrams cross in memory. The contexts are the TCP adapter's own for
//! the scenario (`OpensslLibrary::configure`), made with QUIC's methods.
//!
//! OpenSSL's listener sends a Retry to every new client by default (address validation); it
//! is turned off here (`SSL_LISTENER_FLAG_NO_VALIDATE`) so that every QUIC stack measures the
//! same handshake, as quinn's default server does it.

use std::os::raw::c_int;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use foreign_types::{ForeignType, ForeignTypeRef};
use openssl::ssl::{Ssl, SslContext, SslContextBuilder, SslMethod, SslRef};
use openssl_sys as ffi;
use tlsmatrix_harness::endpoint::EndpointConfig;
use tlsmatrix_harness::negotiated::Negotiated;
use tlsmatrix_harness::quic::{Datagrams, QuicEndpoint, QuicEndpointFactory, StreamRead};
use tlsmatrix_model::side::Side;

use super::{
    describe_stack, keep_session, negotiated_of, offer_kept_session, OpensslLibrary, SessionSlot,
};

extern "C" {
    fn BIO_ADDR_new() -> *mut ffi::BIO_ADDR;
    fn BIO_ADDR_rawmake(
        ap: *mut ffi::BIO_ADDR,
        family: c_int,
        addr: *const std::ffi::c_void,
        len: usize,
        port: u16,
    ) -> c_int;
    fn BIO_ADDR_free(ap: *mut ffi::BIO_ADDR);
    fn SSL_set1_initial_peer_addr(ssl: *mut ffi::SSL, addr: *const ffi::BIO_ADDR) -> c_int;
    fn OSSL_QUIC_server_method() -> *const ffi::SSL_METHOD;
    fn SSL_new_listener(ctx: *mut ffi::SSL_CTX, flags: u64) -> *mut ffi::SSL;
    fn SSL_listen(ssl: *mut ffi::SSL) -> c_int;
    fn SSL_accept_connection(ssl: *mut ffi::SSL, flags: u64) -> *mut ffi::SSL;
}

const SSL_LISTENER_FLAG_NO_VALIDATE: u64 = 1 << 1;
const BIO_CTRL_DGRAM_SET_CAPS: c_int = 87;
const BIO_C_GET_WRITE_GUARANTEE: c_int = 140;
const BIO_DGRAM_CAP_HANDLES_DST_ADDR: std::os::raw::c_long = 1 << 1;
const SSL_ACCEPT_CONNECTION_NO_BLOCK: u64 = 1;
const SSL_ACCEPT_STREAM_NO_BLOCK: u64 = 1;
/// No stream is made or taken up behind the application's back: the client opens the stream
/// (`SSL_new_stream`) and the server takes it up (`SSL_accept_stream`), as OpenSSL's own
/// multi-stream demos do.
const SSL_DEFAULT_STREAM_MODE_NONE: u32 = 0;
/// A bidirectional stream, for `SSL_new_stream`.
const SSL_STREAM_FLAG_BIDI: u64 = 0;
const SSL_CTRL_MODE: c_int = 33;
const SSL_MODE_ENABLE_PARTIAL_WRITE: std::os::raw::c_long = 1;

/// The largest datagram a read takes whole.
const MAX_DATAGRAM: usize = 65_536;

/// The most times one transmit lets the library write again after draining a full pair.
const MAX_RETICKS: usize = 256;

/// Ticks the library and drains what it wrote, again while the pair was too full for another
/// datagram: a UDP socket's send buffer takes a burst of hundreds of datagrams where the pair
/// takes a few, and the library stops writing at a full pair until its next tick. (Counting
/// the datagrams drained cannot tell: a full pair holds fewer when they are small.)
fn tick_and_drain(
    mut tick: impl FnMut() -> Result<()>,
    ours: &OurEnd,
    out: &mut Datagrams,
    buf: &mut Vec<u8>,
) -> Result<()> {
    for _ in 0..MAX_RETICKS {
        tick()?;
        let was_full = ours.full();
        ours.drain(out, buf);
        if !was_full {
            break;
        }
    }
    Ok(())
}

/// The stack's name in `tlsmatrix list`.
pub(super) fn stack() -> String {
    "OpenSSL's own QUIC".into()
}

impl OpensslLibrary {
    /// `side`'s QUIC connections for `cfg`.
    pub(super) fn openssl_quic_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
    ) -> Result<Box<dyn QuicEndpointFactory>> {
        // SAFETY: the methods are static tables of the linked library.
        let method = unsafe {
            SslMethod::from_ptr(match side {
                Side::Client => ffi::OSSL_QUIC_client_method(),
                Side::Server => OSSL_QUIC_server_method(),
            })
        };
        let mut b = SslContextBuilder::new(method)?;
        let (session, _) = self.configure(&mut b, side, cfg)?;
        let ctx = b.build();
        match side {
            Side::Client => Ok(Box::new(ClientFactory {
                ctx,
                server_name: cfg.server_name.clone(),
                session,
            })),
            Side::Server => Ok(Box::new(ServerFactory {
                listener: Rc::new(Listener::new(&ctx)?),
            })),
        }
    }
}

/// The ends of a datagram BIO pair: the library's, handed to an SSL object, and ours.
fn dgram_pair() -> Result<(*mut ffi::BIO, *mut ffi::BIO)> {
    let (mut theirs, mut ours) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: two out-pointers; 0 takes the default buffer sizes.
    if unsafe { ffi::BIO_new_bio_dgram_pair(&mut theirs, 0, &mut ours, 0) } != 1 {
        return Err(describe_stack("making a datagram BIO pair"));
    }
    Ok((theirs, ours))
}

/// Our end of a pair, freed with it.
struct OurEnd(*mut ffi::BIO);

impl OurEnd {
    /// Hands the library one datagram. A full pair (a burst the library has not read yet)
    /// first lets the library read what waits, through `consume`, as an application reading
    /// its socket would.
    fn write(&self, datagram: &[u8], consume: impl Fn() -> Result<()>) -> Result<()> {
        let len = c_int::try_from(datagram.len()).map_err(|_| anyhow!("a datagram over 2 GiB"))?;
        for attempt in 0..2 {
            // SAFETY: our end of a live pair; one datagram of `len` bytes.
            let n = unsafe { ffi::BIO_write(self.0, datagram.as_ptr().cast(), len) };
            if n == len {
                return Ok(());
            }
            if attempt == 1 {
                bail!(
                    "the datagram BIO took {n} of {len} bytes after the library read what waited"
                );
            }
            consume()?;
        }
        unreachable!("two attempts")
    }

    /// Whether the library's writes toward us have no room left for a datagram of the
    /// pair's largest size: the pair reports the room in the buffer our end reads.
    fn full(&self) -> bool {
        // SAFETY: our end of a live pair; a query.
        unsafe { ffi::BIO_ctrl(self.0, BIO_C_GET_WRITE_GUARANTEE, 0, std::ptr::null_mut()) <= 0 }
    }

    /// Every datagram the library has written, in order.
    /// Returns how many there were.
    fn drain(&self, out: &mut Datagrams, buf: &mut Vec<u8>) -> usize {
        buf.resize(MAX_DATAGRAM, 0);
        let mut count = 0;
        loop {
            // SAFETY: our end of a live pair; reads one datagram into `buf`.
            let n =
                unsafe { ffi::BIO_read(self.0, buf.as_mut_ptr().cast(), MAX_DATAGRAM as c_int) };
            if n <= 0 {
                return count;
            }
            out.push(&buf[..n as usize]);
            count += 1;
        }
    }
}

impl Drop for OurEnd {
    fn drop(&mut self) {
        // SAFETY: our reference to the pair's end.
        unsafe { ffi::BIO_free_all(self.0) };
    }
}

/// Drives a connection object one step: its handshake, then the library's timers and
/// datagrams. `Ok(true)` once the handshake is done.
fn advance(ssl: &mut SslRef, done: bool) -> Result<bool> {
    let ptr = ssl.as_ptr();
    let mut done = done;
    if !done {
        // SAFETY: a live connection object in non-blocking mode.
        let r = unsafe { ffi::SSL_do_handshake(ptr) };
        if r == 1 {
            done = true;
        } else {
            // SAFETY: as above, with the call's result.
            let e = unsafe { ffi::SSL_get_error(ptr, r) };
            if e != ffi::SSL_ERROR_WANT_READ && e != ffi::SSL_ERROR_WANT_WRITE {
                return Err(describe_stack("the QUIC handshake failed"));
            }
        }
    }
    // SAFETY: as above.
    if unsafe { ffi::SSL_handle_events(ptr) } != 1 {
        return Err(describe_stack("handling the connection's events"));
    }
    Ok(done)
}

fn negotiated(ssl: &SslRef, side: Side) -> Negotiated {
    // A QUIC connection's SSL_version is QUIC's; its TLS version is its session's.
    // SAFETY: a live connection object; the session is borrowed, not kept.
    let version = unsafe {
        let session = ffi::SSL_get_session(ssl.as_ptr());
        (!session.is_null()).then(|| ffi::SSL_SESSION_get_protocol_version(session))
    };
    negotiated_of(ssl, side, version.and_then(|v| u16::try_from(v).ok()))
}

fn alpn(ssl: &SslRef) -> Option<Vec<u8>> {
    ssl.selected_alpn_protocol().map(<[u8]>::to_vec)
}

/// Lets the library read the datagrams waiting for it and run its timers.
fn tick(conn: &SslRef) -> Result<()> {
    // SAFETY: a live connection object.
    if unsafe { ffi::SSL_handle_events(conn.as_ptr()) } != 1 {
        return Err(describe_stack("handling the connection's events"));
    }
    Ok(())
}

/// Leaves stream making to the application (`SSL_DEFAULT_STREAM_MODE_NONE`).
fn no_default_stream(conn: &SslRef) -> Result<()> {
    // SAFETY: a live connection object.
    if unsafe { ffi::SSL_set_default_stream_mode(conn.as_ptr(), SSL_DEFAULT_STREAM_MODE_NONE) } != 1
    {
        return Err(describe_stack("turning the default stream off"));
    }
    Ok(())
}

/// How long until the connection's next timer, which `SSL_handle_events` runs.
fn event_timeout(conn: &SslRef) -> Option<Duration> {
    let mut tv = libc::timeval {
        tv_sec: 0,
        tv_usec: 0,
    };
    let mut infinite: c_int = 0;
    // SAFETY: a live connection object and two out-pointers.
    let ok = unsafe { ffi::SSL_get_event_timeout(conn.as_ptr(), &mut tv, &mut infinite) };
    (ok == 1 && infinite == 0).then(|| {
        Duration::from_secs(tv.tv_sec.max(0) as u64)
            + Duration::from_micros(tv.tv_usec.max(0) as u64)
    })
}

/// The connection's one stream, once opened (client) or taken up (server).
#[derive(Default)]
struct Stream {
    ssl: Option<Ssl>,
    peer_finished: bool,
}

impl Stream {
    /// The client's new stream, or the server's first incoming one; `None` while there is
    /// none yet.
    fn get(&mut self, conn: &SslRef, side: Side) -> Result<Option<&SslRef>> {
        if self.ssl.is_none() {
            // SAFETY: a live connection object; a stream object is ours to free.
            let ptr = unsafe {
                match side {
                    Side::Client => ffi::SSL_new_stream(conn.as_ptr(), SSL_STREAM_FLAG_BIDI),
                    Side::Server => {
                        let mut ptr =
                            ffi::SSL_accept_stream(conn.as_ptr(), SSL_ACCEPT_STREAM_NO_BLOCK);
                        if ptr.is_null() {
                            // The stream may be in datagrams the library has not read yet.
                            tick(conn)?;
                            ptr = ffi::SSL_accept_stream(conn.as_ptr(), SSL_ACCEPT_STREAM_NO_BLOCK);
                        }
                        ptr
                    }
                }
            };
            if ptr.is_null() {
                return match side {
                    Side::Client => Err(describe_stack("opening a stream")),
                    Side::Server => Ok(None),
                };
            }
            // SAFETY: as above; the stream object is non-blocking and may take part of a
            // write, as every other stack's stream does.
            unsafe {
                ffi::SSL_set_blocking_mode(ptr, 0);
                ffi::SSL_ctrl(
                    ptr,
                    SSL_CTRL_MODE,
                    SSL_MODE_ENABLE_PARTIAL_WRITE,
                    std::ptr::null_mut(),
                );
                self.ssl = Some(Ssl::from_ptr(ptr));
            }
        }
        Ok(self.ssl.as_deref())
    }

    fn write(&mut self, conn: &SslRef, side: Side, data: &[u8], fin: bool) -> Result<usize> {
        let Some(stream) = self.get(conn, side)? else {
            return Ok(0);
        };
        let mut taken = 0usize;
        if !data.is_empty() {
            // SAFETY: a live stream object; `data` is read during the call.
            let ok = unsafe {
                ffi::SSL_write_ex(
                    stream.as_ptr(),
                    data.as_ptr().cast(),
                    data.len(),
                    &mut taken,
                )
            };
            if ok != 1 {
                // SAFETY: as above, with the call's result.
                let e = unsafe { ffi::SSL_get_error(stream.as_ptr(), 0) };
                if e != ffi::SSL_ERROR_WANT_WRITE && e != ffi::SSL_ERROR_WANT_READ {
                    return Err(describe_stack("writing to the stream"));
                }
                taken = 0;
            }
        }
        // SAFETY: a live stream object.
        if fin
            && taken == data.len()
            && unsafe { ffi::SSL_stream_conclude(stream.as_ptr(), 0) } != 1
        {
            return Err(describe_stack("ending the stream"));
        }
        Ok(taken)
    }

    fn read(&mut self, conn: &SslRef, side: Side, buf: &mut [u8]) -> Result<StreamRead> {
        if self.peer_finished {
            return Ok(StreamRead {
                bytes: 0,
                fin: true,
            });
        }
        let Some(stream) = self.get(conn, side)? else {
            return Ok(StreamRead::default());
        };
        let mut got = StreamRead::default();
        let mut ticked = false;
        while got.bytes < buf.len() {
            let mut n = 0usize;
            let rest = &mut buf[got.bytes..];
            // SAFETY: a live stream object reading into `rest`.
            let ok = unsafe {
                ffi::SSL_read_ex(
                    stream.as_ptr(),
                    rest.as_mut_ptr().cast(),
                    rest.len(),
                    &mut n,
                )
            };
            if ok == 1 {
                got.bytes += n;
                if n == 0 {
                    break;
                }
                continue;
            }
            // SAFETY: as above, with the call's result.
            match unsafe { ffi::SSL_get_error(stream.as_ptr(), 0) } {
                // Data may be in datagrams the library has not read yet.
                ffi::SSL_ERROR_WANT_READ if got.bytes == 0 && !ticked => {
                    tick(conn)?;
                    ticked = true;
                    continue;
                }
                ffi::SSL_ERROR_WANT_READ => {}
                ffi::SSL_ERROR_ZERO_RETURN => got.fin = true,
                _ => return Err(describe_stack("reading the stream")),
            }
            break;
        }
        self.peer_finished = got.fin;
        Ok(got)
    }
}

struct ClientFactory {
    ctx: SslContext,
    server_name: String,
    /// When resuming: the newest session a connection received, which the next offers.
    session: Option<SessionSlot>,
}

impl QuicEndpointFactory for ClientFactory {
    fn endpoint(&self) -> Result<Box<dyn QuicEndpoint>> {
        let mut ssl = Ssl::new(&self.ctx)?;
        ssl.set_hostname(&self.server_name)?;
        offer_kept_session(self.session.as_ref(), &mut ssl)?;
        // The pair stands in for the client's UDP socket: its buffers are no heap of
        // OpenSSL's, so a heap count leaves them out.
        let (theirs, ours) = tlsmatrix_harness::uncounted::outside_count(dgram_pair)?;
        let ours = OurEnd(ours);
        // SAFETY: a fresh connection object; it takes the one reference to its end of the
        // pair.
        unsafe {
            ffi::SSL_set_bio(ssl.as_ptr(), theirs, theirs);
            if ffi::SSL_set_blocking_mode(ssl.as_ptr(), 0) != 1 {
                return Err(describe_stack("making the QUIC client non-blocking"));
            }
            ffi::SSL_set_connect_state(ssl.as_ptr());
        }
        set_peer_address(&ssl, &ours)?;
        no_default_stream(&ssl)?;
        Ok(Box::new(ClientConnection {
            ssl,
            ours,
            session: self.session.clone(),
            done: false,
            stream: Stream::default(),
            // Where datagrams are drained to: the harness's, outside a heap count.
            buf: tlsmatrix_harness::uncounted::outside_count(|| vec![0u8; MAX_DATAGRAM]),
        }))
    }
}

/// Gives a client a peer address, as OpenSSL's own tests do for a datagram pair: the pair
/// carries no addresses, and OpenSSL keys the address-validation tokens a server sends
/// (NEW_TOKEN) by the peer's address; without one it cannot store a token and drops the whole
/// packet that carried it, HANDSHAKE_DONE and all (quic-go's server sends both in one), so the
/// client never confirms its handshake and stops granting stream credit. Each connection gets
/// a port of its own (127.0.0.1, a counter), so that no token is presented again: every
/// connection meets its server anew, as every measure here means it to.
fn set_peer_address(ssl: &Ssl, ours: &OurEnd) -> Result<()> {
    static NEXT_PORT: AtomicU32 = AtomicU32::new(0);
    // Our end takes the datagrams OpenSSL addresses to that peer (it reads their bytes only).
    // SAFETY: our live end of the pair; a control that sets a flag.
    if unsafe {
        ffi::BIO_ctrl(
            ours.0,
            BIO_CTRL_DGRAM_SET_CAPS,
            BIO_DGRAM_CAP_HANDLES_DST_ADDR,
            std::ptr::null_mut(),
        )
    } != 1
    {
        return Err(describe_stack("letting the datagram pair carry addresses"));
    }
    let port = (NEXT_PORT.fetch_add(1, Ordering::Relaxed) % 65_535 + 1) as u16;
    let loopback = [127u8, 0, 0, 1];
    // SAFETY: a fresh address, filled from a 4-byte IPv4 address in network order, copied
    // by the connection and freed here.
    unsafe {
        let addr = BIO_ADDR_new();
        if addr.is_null() {
            return Err(describe_stack("making a peer address"));
        }
        let ok = BIO_ADDR_rawmake(
            addr,
            libc::AF_INET,
            loopback.as_ptr().cast(),
            4,
            port.to_be(),
        ) == 1
            && SSL_set1_initial_peer_addr(ssl.as_ptr(), addr) == 1;
        BIO_ADDR_free(addr);
        if !ok {
            return Err(describe_stack("giving the QUIC client a peer address"));
        }
    }
    Ok(())
}

struct ClientConnection {
    /// Dropped before the connection (fields drop in order).
    stream: Stream,
    ssl: Ssl,
    ours: OurEnd,
    session: Option<SessionSlot>,
    done: bool,
    buf: Vec<u8>,
}

impl Drop for ClientConnection {
    /// Keeps the newest session the connection received (the server's ticket, which the
    /// client cache mode made its session) for the next connection, as the TLS adapter's
    /// endpoints do when they end.
    fn drop(&mut self) {
        keep_session(self.session.as_ref(), &self.ssl);
    }
}

impl QuicEndpoint for ClientConnection {
    fn receive(&mut self, datagram: &[u8]) -> Result<()> {
        let ssl = &self.ssl;
        self.ours.write(datagram, || tick(ssl))
    }

    fn transmit(&mut self, out: &mut Datagrams) -> Result<()> {
        let (ssl, done) = (&mut self.ssl, &mut self.done);
        tick_and_drain(
            || {
                *done = advance(ssl, *done)?;
                Ok(())
            },
            &self.ours,
            out,
            &mut self.buf,
        )
    }

    fn timeout(&mut self) -> Option<Duration> {
        event_timeout(&self.ssl)
    }

    fn stream_write(&mut self, data: &[u8], fin: bool) -> Result<usize> {
        self.stream.write(&self.ssl, Side::Client, data, fin)
    }

    fn stream_read(&mut self, buf: &mut [u8]) -> Result<StreamRead> {
        self.stream.read(&self.ssl, Side::Client, buf)
    }

    fn is_handshake_complete(&self) -> bool {
        self.done
    }

    fn negotiated(&self) -> Negotiated {
        negotiated(&self.ssl, Side::Client)
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        alpn(&self.ssl)
    }
}

/// A server's listener and our end of its datagram pair, shared by its connections.
struct Listener {
    ssl: Ssl,
    ours: OurEnd,
}

impl Listener {
    fn new(ctx: &SslContext) -> Result<Self> {
        // SAFETY: a live context; the listener is owned by the `Ssl` it is wrapped in.
        let ssl = unsafe {
            let ptr = SSL_new_listener(ctx.as_ptr(), SSL_LISTENER_FLAG_NO_VALIDATE);
            if ptr.is_null() {
                return Err(describe_stack("making the QUIC listener"));
            }
            Ssl::from_ptr(ptr)
        };
        let (theirs, ours) = dgram_pair()?;
        // SAFETY: the listener takes the one reference to its end of the pair.
        unsafe {
            ffi::SSL_set_bio(ssl.as_ptr(), theirs, theirs);
            if ffi::SSL_set_blocking_mode(ssl.as_ptr(), 0) != 1 || SSL_listen(ssl.as_ptr()) != 1 {
                return Err(describe_stack("starting the QUIC listener"));
            }
        }
        Ok(Listener {
            ssl,
            ours: OurEnd(ours),
        })
    }

    /// The listener's timers and datagrams.
    fn handle_events(&self) -> Result<()> {
        // SAFETY: a live listener.
        if unsafe { ffi::SSL_handle_events(self.ssl.as_ptr()) } != 1 {
            return Err(describe_stack("handling the listener's events"));
        }
        Ok(())
    }
}

struct ServerFactory {
    listener: Rc<Listener>,
}

impl QuicEndpointFactory for ServerFactory {
    fn endpoint(&self) -> Result<Box<dyn QuicEndpoint>> {
        Ok(Box::new(ServerConnection {
            stream: Stream::default(),
            listener: self.listener.clone(),
            conn: None,
            done: false,
            // Where datagrams are drained to: the harness's, outside a heap count.
            buf: tlsmatrix_harness::uncounted::outside_count(|| vec![0u8; MAX_DATAGRAM]),
        }))
    }
}

/// A connection the listener accepts from the client's first datagrams.
struct ServerConnection {
    /// Dropped before the connection.
    stream: Stream,
    listener: Rc<Listener>,
    conn: Option<Ssl>,
    done: bool,
    buf: Vec<u8>,
}

impl ServerConnection {
    /// The listener's events, the connection accepted once it arrives, and its own.
    fn tick(&mut self) -> Result<()> {
        self.listener.handle_events()?;
        if self.conn.is_none() {
            // SAFETY: a live listener; an accepted connection is ours to free.
            let ptr = unsafe {
                SSL_accept_connection(self.listener.ssl.as_ptr(), SSL_ACCEPT_CONNECTION_NO_BLOCK)
            };
            if !ptr.is_null() {
                // SAFETY: as above.
                let conn = unsafe { Ssl::from_ptr(ptr) };
                no_default_stream(&conn)?;
                self.conn = Some(conn);
            }
        }
        if let Some(conn) = &mut self.conn {
            self.done = advance(conn, self.done)?;
        }
        Ok(())
    }
}

impl QuicEndpoint for ServerConnection {
    fn receive(&mut self, datagram: &[u8]) -> Result<()> {
        self.listener
            .ours
            .write(datagram, || self.listener.handle_events())
    }

    fn transmit(&mut self, out: &mut Datagrams) -> Result<()> {
        let listener = self.listener.clone();
        let mut buf = std::mem::take(&mut self.buf);
        let r = tick_and_drain(|| self.tick(), &listener.ours, out, &mut buf);
        self.buf = buf;
        r
    }

    fn timeout(&mut self) -> Option<Duration> {
        let listener = event_timeout(&self.listener.ssl);
        let conn = self.conn.as_deref().and_then(event_timeout);
        listener.into_iter().chain(conn).min()
    }
    fn stream_write(&mut self, data: &[u8], fin: bool) -> Result<usize> {
        match &self.conn {
            Some(conn) => self.stream.write(conn, Side::Server, data, fin),
            None => Ok(0),
        }
    }

    fn stream_read(&mut self, buf: &mut [u8]) -> Result<StreamRead> {
        match &self.conn {
            Some(conn) => self.stream.read(conn, Side::Server, buf),
            None => Ok(StreamRead::default()),
        }
    }

    fn is_handshake_complete(&self) -> bool {
        self.done
    }

    fn negotiated(&self) -> Negotiated {
        self.conn
            .as_ref()
            .map_or_else(Negotiated::default, |c| negotiated(c, Side::Server))
    }

    fn alpn(&self) -> Option<Vec<u8>> {
        alpn(self.conn.as_ref()?)
    }
}

impl Drop for ServerConnection {
    /// Frees the connection, then discards what the listener sends for it on the way out
    /// (its close), which no next connection may receive.
    fn drop(&mut self) {
        self.stream = Stream::default();
        self.conn = None;
        let _ = self.listener.handle_events();
        let mut discard = Datagrams::default();
        self.listener.ours.drain(&mut discard, &mut self.buf);
    }
}
