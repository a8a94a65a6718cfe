//! The `peer` subcommand: one side of an interop case, TLS over TCP or QUIC over UDP.

use super::*;

#[derive(clap::Args)]
pub(crate) struct PeerArgs {
    /// `server` or `client`.
    #[arg(value_parser = ["server", "client"])]
    role: String,
    /// The impl to run, e.g. rustls-aws-lc.
    #[arg(long = "impl")]
    imp: String,
    /// The interop case, e.g. tls13, or quic-handshake for QUIC over UDP (`tlsmatrix
    /// interop --list-cases` shows them).
    #[arg(long, default_value = "tls13")]
    case: String,
    /// QUIC over UDP with ALPN hq-interop: the quic-handshake case unless --case names
    /// another QUIC case.
    #[arg(long)]
    quic: bool,
    /// Server: the address to listen on (port 0: the OS picks; the line `listening ADDR` says which).
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: String,
    /// Client: the server's address.
    #[arg(long)]
    connect: Option<String>,
    /// Folder of cached test certificates (generated there if missing).
    #[arg(long)]
    certs: PathBuf,
    /// Client: what the server echoes, `same` or `reversed-lines` (openssl s_server -rev).
    #[arg(long, default_value = "same", value_parser = interop::Echo::parse)]
    echo: interop::Echo,
    /// Seconds the whole case may take before the peer gives up with "timed out"; with
    /// --connections or --respond http, each connection's limit from its accept.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// Server: serve this many connections, one after another, each with the case's
    /// configuration (0: until killed), for tools such as tlsfuzzer or `openssl s_time`. A
    /// connection that fails is reported on its own line and the next is served; waiting
    /// for a client has no limit.
    #[arg(long, value_name = "N")]
    connections: Option<usize>,
    /// Server: `echo` (the interop protocol) or `http` (answer one HTTP/1.1 request with a
    /// short text naming what was negotiated, then close).
    #[arg(long, default_value = "echo", value_parser = wire::Respond::parse)]
    respond: wire::Respond,
    /// The library's own defaults instead of the case's pinned version, suite, group and
    /// scheme: TLS 1.2 and 1.3, every suite, group and signature scheme it enables by
    /// default, with a certificate of this kind (rsa-2048, rsa-3072, ecdsa-p256, ecdsa-p384,
    /// ed25519; a client trusts its CA). A server also keeps tickets and a session cache, for
    /// outside test tools, which offer what they like (tlsfuzzer, testssl.sh, `openssl
    /// s_time`); a client shows what the library offers (`tlsmatrix interop` reads its
    /// ClientHello).
    #[arg(long, value_name = "CERT", value_parser = parse_sig)]
    defaults: Option<SigAlg>,
}

/// A certificate kind, as scenario ids spell it.
fn parse_sig(s: &str) -> Result<SigAlg, String> {
    SigAlg::named(s)
}

/// Runs one side of an interop case; prints `ok: ...` or `error: ...` last.
pub(crate) fn peer(a: &PeerArgs) -> Result<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(a.timeout);
    let case = match (a.quic, a.case.as_str()) {
        (true, "tls13") => interop::case("quic-handshake"),
        _ => interop::case(&a.case),
    }
    .map_err(|e| anyhow!(e))?;
    if a.quic && case.family != interop::Family::Quic {
        bail!("--quic takes a QUIC case (quic-*), not {}", case.id);
    }
    let (side, offer) = match a.role.as_str() {
        "server" => (Side::Server, case.server),
        _ => (Side::Client, case.client),
    };
    let lib = find(&a.imp)?;
    if case.family == interop::Family::Quic {
        // A QUIC peer speaks hq-interop with the case's offer; a library's defaults and
        // other answers are TCP's alone here, and are refused rather than run over TCP.
        if a.defaults.is_some() || a.respond != wire::Respond::Echo {
            bail!(
                "--defaults and --respond are for TLS over TCP; a QUIC case ({}) answers hq-interop with the case's offer",
                case.id
            );
        }
    }
    if let Some(sig) = a.defaults {
        let factory = defaults_factory(lib.as_ref(), case, sig, side, &a.certs)?;
        return match side {
            Side::Server => serve_defaults(factory.as_ref(), case, a),
            Side::Client => {
                wire::client(factory.as_ref(), case, a.echo, connect_addr(a)?, deadline)
            }
        };
    }
    let certs = certs::load_or_generate(&a.certs, offer.sig)?;
    let mut cfg = EndpointConfig::for_params(&offer.params(), certs.into());
    // Both sides learn the client's first group: a server that must answer it with a
    // retry has to be configured not to accept it (s2n-tls picks a policy by that).
    cfg.client_first_group = case.client.first;
    cfg.alpn = offer.alpn.iter().map(|p| p.to_string()).collect();
    cfg.require_client_cert = case.require_client_cert;
    cfg.client_cert = case.client_cert;
    if case.family == interop::Family::Quic {
        return quic_peer(lib.as_ref(), &cfg, side, a, deadline, case);
    }
    cfg.protocol_limits()
        .and_then(|()| lib.supports(&cfg))
        .and_then(|()| match side {
            Side::Client if case.key_update => lib.sends_key_update(),
            _ => Ok(()),
        })
        .map_err(|r| anyhow!(Unsupported(r)))?;
    let factory = lib
        .factory(side, &cfg)
        .with_context(|| format!("{} cannot be configured as a {side}", lib.name()))?;
    match side {
        Side::Server => {
            let listener = std::net::TcpListener::bind(&a.listen)
                .with_context(|| format!("cannot listen on {}", a.listen))?;
            println!("listening {}", listener.local_addr()?);
            let _ = std::io::stdout().flush();
            if a.connections.is_none() && a.respond == wire::Respond::Echo {
                return wire::server(factory.as_ref(), case, listener, deadline);
            }
            serve_many(factory.as_ref(), case, &listener, a)
        }
        Side::Client => wire::client(factory.as_ref(), case, a.echo, connect_addr(a)?, deadline),
    }
}

/// QUIC clients one after another on one socket (`n`, or until killed for 0), each a line of
/// its own and `timeout` seconds from its first datagram, as `serve_many` serves TCP's.
fn serve_quic_clients(
    factory: &dyn tlsmatrix_harness::quic::QuicEndpointFactory,
    expect: &quic_wire::Expect,
    socket: &std::net::UdpSocket,
    n: usize,
    timeout: u64,
) -> Result<String> {
    let wait = quic_wire::FirstDatagram::Unbounded {
        limit: Duration::from_secs(timeout),
    };
    let (mut served, mut first_failure) = (0usize, None);
    while n == 0 || served < n {
        let far = std::time::Instant::now() + Duration::from_secs(timeout);
        match quic_wire::server(factory, expect, socket, far, wait) {
            Ok(line) => println!("connection {}: ok: {line}", served + 1),
            Err(e) => {
                println!("connection {}: error: {e:#}", served + 1);
                first_failure.get_or_insert_with(|| format!("connection {}: {e:#}", served + 1));
            }
        }
        let _ = std::io::stdout().flush();
        served += 1;
    }
    match first_failure {
        None => Ok(format!("served {served} QUIC connection(s)")),
        Some(first) => Err(anyhow!("a QUIC connection failed; the first: {first}")),
    }
}

/// One side of a QUIC case over UDP: the library's QUIC stack with the case's offer.
fn quic_peer(
    lib: &dyn TlsLibrary,
    cfg: &EndpointConfig,
    side: Side,
    a: &PeerArgs,
    deadline: std::time::Instant,
    case: &interop::Case,
) -> Result<String> {
    cfg.protocol_limits()
        .and_then(|()| lib.quic_supports(cfg))
        .map_err(|r| anyhow!(Unsupported(r)))?;
    let factory = lib
        .quic_factory(side, cfg)
        .with_context(|| format!("{} cannot be configured as a QUIC {side}", lib.name()))?;
    let expect = |n| quic_wire::Expect::of_connection(case, side, n);
    match side {
        Side::Server => {
            let socket = std::net::UdpSocket::bind(&a.listen)
                .with_context(|| format!("cannot bind UDP {}", a.listen))?;
            println!("listening {}", socket.local_addr()?);
            let _ = std::io::stdout().flush();
            if let Some(n) = a.connections {
                return serve_quic_clients(factory.as_ref(), &expect(0), &socket, n, a.timeout);
            }
            wire::each_connection(case, |n| {
                let wait = match n {
                    0 => quic_wire::FirstDatagram::ByDeadline,
                    _ => quic_wire::FirstDatagram::NextByDeadline,
                };
                quic_wire::server(factory.as_ref(), &expect(n), &socket, deadline, wait)
            })
        }
        Side::Client => {
            let (bytes, addr) = (case.bytes as u64, connect_addr(a)?);
            // The factory is kept across connections: the second resumes the first's ticket.
            wire::each_connection(case, |n| {
                quic_wire::client(factory.as_ref(), &expect(n), addr, bytes, deadline)
                    .map(|(line, _)| line)
            })
        }
    }
}

fn connect_addr(a: &PeerArgs) -> Result<std::net::SocketAddr> {
    let addr = a
        .connect
        .as_deref()
        .context("a client needs --connect ADDR")?;
    addr.parse()
        .with_context(|| format!("--connect {addr} is not an address like 127.0.0.1:4433"))
}

/// `--defaults CERT`: the library's open configuration (as the BoGo shim runs it, see
/// `OpenPolicy`) with a certificate of that kind (a client trusts its CA): TLS 1.2 and 1.3 and
/// no group, suite or scheme set, so the library offers and accepts what it does by default.
fn defaults_factory(
    lib: &dyn TlsLibrary,
    case: &interop::Case,
    sig: SigAlg,
    side: Side,
    certs_dir: &std::path::Path,
) -> Result<Box<dyn EndpointFactory>> {
    let certs = certs::load_or_generate(certs_dir, sig)?;
    let params = ConnParams {
        sig,
        ..case.server.params()
    };
    let mut cfg = EndpointConfig::for_params(&params, certs.into());
    cfg.groups = Vec::new();
    cfg.resumption = Resumption::Ticket;
    cfg.open = Some(OpenPolicy {
        min_version: Version::Tls12,
        max_version: Version::Tls13,
        request_client_cert: false,
        sni: None,
        every_tls12_suite: false,
        middlebox_compat: false,
        extras: OpenExtras::default(),
    });
    lib.supports(&cfg).map_err(|r| anyhow!(Unsupported(r)))?;
    lib.factory(side, &cfg)
        .with_context(|| format!("{} cannot run its defaults as a {side}", lib.name()))
}

/// `peer server --defaults CERT`: serving as `--connections` says.
fn serve_defaults(
    factory: &dyn EndpointFactory,
    case: &interop::Case,
    a: &PeerArgs,
) -> Result<String> {
    let listener = std::net::TcpListener::bind(&a.listen)
        .with_context(|| format!("cannot listen on {}", a.listen))?;
    println!("listening {}", listener.local_addr()?);
    let _ = std::io::stdout().flush();
    serve_many(factory, case, &listener, a)
}

/// `peer server --connections N` / `--respond http`: a line per connection, then how many
/// failed.
fn serve_many(
    factory: &dyn EndpointFactory,
    case: &interop::Case,
    listener: &std::net::TcpListener,
    a: &PeerArgs,
) -> Result<String> {
    // No --connections (only --respond http): one; 0: until killed.
    let limit = match a.connections {
        None => Some(1),
        Some(0) => None,
        n => n,
    };
    let (mut served, mut failed, mut first_failure) = (0usize, 0usize, None);
    wire::serve_many(
        factory,
        case,
        a.defaults.is_none(),
        listener,
        limit,
        a.respond,
        Duration::from_secs(a.timeout),
        |n, r| {
            served += 1;
            match r {
                Ok(s) => println!("connection {}: ok: {s}", n + 1),
                Err(e) => {
                    failed += 1;
                    println!("connection {}: error: {e:#}", n + 1);
                    first_failure.get_or_insert_with(|| format!("connection {}: {e:#}", n + 1));
                }
            }
            let _ = std::io::stdout().flush();
        },
    )?;
    match first_failure {
        None => Ok(format!("served {served} connection(s)")),
        Some(first) => Err(anyhow!(
            "{failed} of {} connection(s) failed; the first: {first}",
            limit.unwrap_or(served)
        )),
    }
}
