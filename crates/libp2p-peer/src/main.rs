//! rust-libp2p's TLS security handshake as an interop peer, speaking the same command line as
//! the Go transport's `libp2p-tls-peer`, so `tlsmatrix interop` can run either against the
//! other in both directions.
//!
//! The rustls configurations, the certificate with the peer id extension, and the verifier
//! that checks it all come from the `libp2p-tls` crate (`make_server_config`,
//! `make_client_config`, `certificate::parse`): this peer only moves bytes. It drives rustls
//! over a blocking socket instead of the crate's async upgrade, which does the same two calls
//! (accept or connect, then read the one peer certificate) on a futures executor.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use libp2p_identity::{Keypair, PeerId};
use rustls::pki_types::ServerName;
use rustls::{ClientConnection, Connection, ServerConnection};

/// What the Go peer prints as its backend, so matrices name both the same way.
const BACKEND: &str = "rust-libp2p-tls";

#[derive(Parser)]
#[command(
    name = "tlsmatrix-libp2p-peer",
    about = "One end of a libp2p TLS connection over TCP, using rust-libp2p's libp2p-tls crate"
)]
struct Cli {
    #[command(subcommand)]
    role: Role,
}

#[derive(Subcommand)]
enum Role {
    /// Listen, complete the libp2p TLS handshake with each client, echo until it closes.
    Server {
        /// Address to listen on, e.g. 127.0.0.1:0 (port 0: the OS picks one; the line
        /// `listening ADDR peer ID backend rust-libp2p-tls` says which).
        #[arg(long)]
        listen: SocketAddr,
        /// Exit after the first connection: 0 if it went well, 1 otherwise.
        #[arg(long)]
        once: bool,
        /// Limit for the handshake and for each read, e.g. 10s.
        #[arg(long, default_value = "10s", value_parser = parse_duration)]
        timeout: Duration,
    },
    /// Connect, complete the handshake, send the message and check its echo.
    Client {
        /// The server's address.
        #[arg(long)]
        connect: SocketAddr,
        /// The server's peer id; the handshake fails for any other. Default: accept any.
        #[arg(long)]
        peer: Option<String>,
        /// What to send (and expect back).
        #[arg(long, default_value = "ping")]
        message: String,
        /// Limit for the handshake and for each read, e.g. 10s.
        #[arg(long, default_value = "10s", value_parser = parse_duration)]
        timeout: Duration,
    },
    /// Print the libp2p-tls and rustls versions this peer was built with.
    Version,
}

/// `10s`, `1500ms` or a bare number of seconds, as the Go peer's flag takes them.
fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("'{s}' is not a duration (e.g. 10s, 1500ms)");
    let (num, scale) = if let Some(ms) = s.strip_suffix("ms") {
        (ms, 1e-3)
    } else {
        (s.strip_suffix('s').unwrap_or(s), 1.0)
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    if !(v.is_finite() && v > 0.0) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(v * scale))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.role {
        Role::Server {
            listen,
            once,
            timeout,
        } => server(listen, once, timeout),
        Role::Client {
            connect,
            peer,
            message,
            timeout,
        } => client(connect, peer.as_deref(), &message, timeout),
        Role::Version => {
            println!(
                "libp2p-tls {} (rustls {})",
                env!("TLSMATRIX_VERSION_LIBP2P_TLS"),
                env!("TLSMATRIX_VERSION_RUSTLS")
            );
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn identity() -> (Keypair, PeerId) {
    let key = Keypair::generate_ed25519();
    let id = key.public().to_peer_id();
    (key, id)
}

fn server(listen: SocketAddr, once: bool, timeout: Duration) -> Result<()> {
    let (key, me) = identity();
    let mut config = libp2p_tls::make_server_config(&key)?;
    // The crate logs session keys when SSLKEYLOGFILE is set; an interop run never should.
    config.key_log = Arc::new(rustls::NoKeyLog);
    let config = Arc::new(config);
    let listener =
        TcpListener::bind(listen).with_context(|| format!("cannot listen on {listen}"))?;
    println!(
        "listening {} peer {me} backend {BACKEND}",
        listener.local_addr()?
    );
    loop {
        let (tcp, from) = listener.accept()?;
        let conn = ServerConnection::new(config.clone())?.into();
        let result = Session::new(conn, tcp, timeout).and_then(serve);
        if let Err(e) = &result {
            eprintln!("connection from {from} failed: {e:#}");
        }
        if once {
            return result;
        }
    }
}

fn serve(mut s: Session) -> Result<()> {
    let remote = s.handshake()?;
    println!("secured remote {remote}");
    let mut buf = [0u8; 32 * 1024];
    let mut echoed = 0;
    loop {
        match s.recv(&mut buf).context("reading")? {
            0 => break, // close_notify
            n => {
                s.send(&buf[..n])?;
                echoed += n;
            }
        }
    }
    s.close()?;
    println!(
        "ok: remote {remote} verified; {}; echoed {echoed} bytes",
        s.details()
    );
    Ok(())
}

fn client(addr: SocketAddr, expect: Option<&str>, message: &str, timeout: Duration) -> Result<()> {
    let want = expect
        .map(|s| {
            s.parse::<PeerId>()
                .map_err(|e| anyhow!("--peer {s:?} is not a peer id: {e}"))
        })
        .transpose()?;
    let (key, me) = identity();
    println!("peer {me} backend {BACKEND}");
    let mut config = libp2p_tls::make_client_config(&key, want)?;
    config.key_log = Arc::new(rustls::NoKeyLog);
    // The libp2p TLS spec: a client sends no SNI. The crate's upgrade names the unspecified
    // address for that, which rustls never sends as SNI.
    let name = ServerName::IpAddress(Ipv4Addr::UNSPECIFIED.into());
    let conn = ClientConnection::new(Arc::new(config), name)?.into();
    let tcp = TcpStream::connect_timeout(&addr, timeout)
        .with_context(|| format!("cannot connect to {addr}"))?;
    let mut s = Session::new(conn, tcp, timeout)?;
    let remote = s.handshake()?;
    println!("secured remote {remote}");
    s.send(message.as_bytes()).context("sending")?;
    let mut echo = Vec::new();
    let mut buf = [0u8; 32 * 1024];
    while echo.len() < message.len() {
        // In TLS 1.3 a server that refuses our certificate says so only now.
        match s.recv(&mut buf).context("reading the echo")? {
            0 => bail!(
                "the server closed after {} of {} echoed bytes",
                echo.len(),
                message.len()
            ),
            n => echo.extend_from_slice(&buf[..n]),
        }
    }
    if echo != message.as_bytes() {
        bail!("the echo differs from what was sent");
    }
    s.close()?;
    println!(
        "ok: remote {remote} verified; {}; echo {} bytes",
        s.details(),
        echo.len()
    );
    Ok(())
}

/// A rustls connection over a blocking socket whose reads time out.
struct Session {
    conn: Connection,
    sock: TcpStream,
}

impl Session {
    fn new(conn: Connection, sock: TcpStream, timeout: Duration) -> Result<Session> {
        sock.set_read_timeout(Some(timeout))?;
        sock.set_write_timeout(Some(timeout))?;
        Ok(Session { conn, sock })
    }

    /// Completes the handshake and returns the peer id the one peer certificate carries
    /// (the crate's verifier has checked it, its signature, and any expected id).
    fn handshake(&mut self) -> Result<PeerId> {
        while self.conn.is_handshaking() {
            if let Err(e) = self.conn.complete_io(&mut self.sock) {
                // An alert rustls queued while failing still goes out.
                let _ = self.flush();
                return Err(io_failure(e)).context("the handshake failed");
            }
        }
        let certs = self
            .conn
            .peer_certificates()
            .context("the peer sent no certificate")?;
        let [cert] = certs else {
            bail!(
                "the peer sent {} certificates; libp2p allows exactly one",
                certs.len()
            );
        };
        Ok(libp2p_tls::certificate::parse(cert)?.peer_id())
    }

    fn flush(&mut self) -> Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.sock).map_err(io_failure)?;
        }
        Ok(())
    }

    fn send(&mut self, data: &[u8]) -> Result<()> {
        self.conn.writer().write_all(data)?;
        self.flush()
    }

    /// Plaintext into `buf`; 0 once the peer's close_notify has arrived.
    fn recv(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(io_failure(e)),
            }
            if self.conn.read_tls(&mut self.sock).map_err(io_failure)? == 0 {
                bail!("the peer closed the connection without close_notify");
            }
            if let Err(e) = self.conn.process_new_packets() {
                let _ = self.flush();
                bail!("{e}");
            }
        }
    }

    fn close(&mut self) -> Result<()> {
        self.conn.send_close_notify();
        self.flush()
    }

    fn details(&self) -> String {
        let c = &self.conn;
        let show = |v: Option<String>| v.unwrap_or_else(|| "?".into());
        format!(
            "{} {} {}",
            show(c.protocol_version().map(|v| format!("{v:?}"))),
            show(
                c.negotiated_cipher_suite()
                    .map(|s| format!("{:?}", s.suite()))
            ),
            show(
                c.negotiated_key_exchange_group()
                    .map(|g| format!("{:?}", g.name()))
            ),
        )
    }
}

fn io_failure(e: std::io::Error) -> anyhow::Error {
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => anyhow!("timed out: the peer went quiet"),
        ErrorKind::UnexpectedEof => anyhow!("the peer closed the connection"),
        // rustls errors (alerts received or sent) arrive as InvalidData with the cause inside.
        _ => anyhow!(e),
    }
}
