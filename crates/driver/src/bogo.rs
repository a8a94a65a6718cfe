//! The BoGo shim: BoringSSL's TLS test runner (`ssl/test/runner`) starts it once per test with
//! flags that say how to configure the stack and what to check, and the shim connects back to
//! the runner, plays its side over TCP through any [`TlsLibrary`], echoes data, and exits 0 when
//! every check held. A flag this shim cannot honour exits at once with status 89, which the
//! runner counts as "unimplemented", never as passed; so every flag not in [`parse`] is refused,
//! and a flag is only listed once the adapters honour it for every library.

use std::fs;
use std::io::Write;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::wire::{self, Received, Wire};
use tlsmatrix_harness::certs::CertSet;
use tlsmatrix_harness::endpoint::{EndpointConfig, OpenPolicy, TlsEndpoint, TlsLibrary};
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::SERVER_NAME;
use tlsmatrix_model::scenario::{Aead, Chain, Group, Resumption, SigAlg, Version};
use tlsmatrix_model::side::Side;

/// The runner's exit status for a shim that does not implement what a test asks.
pub const EXIT_UNIMPLEMENTED: u8 = 89;

/// How long one connection may take; the runner's own idle timeout (15 s) is shorter, so the
/// runner kills a shim that waits before this bites. It bounds a shim started by hand.
const CONNECTION_LIMIT: Duration = Duration::from_secs(30);

/// How long the end of a connection waits for the runner to close its side.
const DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// The runner reads echoes 512 bytes at a time from BoringSSL's shim; reading as little
/// makes records arrive split across reads, as the runner's tests expect.
const READ_SIZE: usize = 512;

/// What the runner asked, from the flags this shim honours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShimFlags {
    pub port: u16,
    pub shim_id: u64,
    pub ipv6: bool,
    pub server: bool,
    pub key_file: Option<String>,
    pub cert_file: Option<String>,
    /// Taken and ignored: no chain is verified (see `OpenPolicy`).
    pub trust_cert: Option<String>,
    pub verify_peer: bool,
    pub require_client_cert: bool,
    /// Connections after the first, each resuming the one before.
    pub resume_count: u32,
    pub expect_session_miss: bool,
    /// Client: protocols offered, in ALPN's wire form (length-prefixed).
    pub advertise_alpn: Option<Vec<u8>>,
    /// Server: the one protocol accepted.
    pub select_alpn: Option<String>,
    pub expect_alpn: Option<String>,
    /// Group code points, most preferred first; empty for the library's defaults.
    pub curves: Vec<u16>,
    pub expect_curve_id: Option<u16>,
    pub min_version: Option<u16>,
    pub max_version: Option<u16>,
    pub expect_version: Option<u16>,
    pub host_name: Option<String>,
    pub expect_server_name: Option<String>,
    pub shim_writes_first: bool,
    pub check_close_notify: bool,
    pub key_update: bool,
}

/// One invocation's request.
#[derive(Debug, PartialEq, Eq)]
pub enum Invocation {
    /// `-is-handshaker-supported`: the runner asks before making its `-Hints` tests; BoGo's
    /// split-handshake feature exists only in BoringSSL, so the answer is "No".
    HandshakerQuery,
    Test(Box<ShimFlags>),
}

/// Why a test cannot run here: the flag and, where it helps, the reason.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("unimplemented: {0}")]
pub struct Unimplemented(pub String);

const TLS12: u16 = 0x0303;
const TLS13: u16 = 0x0304;

/// Reads the runner's flags. Anything this shim does not honour is `Unimplemented`.
pub fn parse(args: &[String]) -> Result<Invocation, Unimplemented> {
    let mut f = ShimFlags::default();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .ok_or_else(|| Unimplemented(format!("{flag} without a value")))
        };
        let number = |v: String| -> Result<u64, Unimplemented> {
            v.parse()
                .map_err(|_| Unimplemented(format!("{flag} {v}: not a number")))
        };
        match flag.as_str() {
            "-is-handshaker-supported" => return Ok(Invocation::HandshakerQuery),
            "-port" => f.port = number(value()?)? as u16,
            "-shim-id" => f.shim_id = number(value()?)?,
            "-ipv6" => f.ipv6 = true,
            "-server" => f.server = true,
            "-key-file" => f.key_file = Some(value()?),
            "-cert-file" => f.cert_file = Some(value()?),
            "-trust-cert" => f.trust_cert = Some(value()?),
            "-verify-peer" => f.verify_peer = true,
            "-require-any-client-certificate" => f.require_client_cert = true,
            "-resume-count" => f.resume_count = number(value()?)? as u32,
            "-expect-session-miss" => f.expect_session_miss = true,
            "-advertise-alpn" => f.advertise_alpn = Some(value()?.into_bytes()),
            "-select-alpn" => f.select_alpn = Some(value()?),
            "-expect-alpn" => f.expect_alpn = Some(value()?),
            "-curves" => f.curves.push(number(value()?)? as u16),
            "-expect-curve-id" => f.expect_curve_id = Some(number(value()?)? as u16),
            "-min-version" => f.min_version = Some(number(value()?)? as u16),
            "-max-version" => f.max_version = Some(number(value()?)? as u16),
            "-expect-version" => f.expect_version = Some(number(value()?)? as u16),
            "-host-name" => f.host_name = Some(value()?),
            "-expect-server-name" => f.expect_server_name = Some(value()?),
            "-shim-writes-first" => f.shim_writes_first = true,
            "-check-close-notify" => f.check_close_notify = true,
            "-key-update" => f.key_update = true,
            // Non-blocking I/O and a handshake driven by the first read or write: the wire
            // below always works that way, so these ask nothing more of it.
            "-async" | "-implicit-handshake" => {}
            other => return Err(Unimplemented(other.to_string())),
        }
    }
    if f.port == 0 {
        return Err(Unimplemented("no -port: not started by the runner".into()));
    }
    Ok(Invocation::Test(Box::new(f)))
}

fn version_of(code: u16, flag: &str) -> Result<Version, Unimplemented> {
    match code {
        TLS12 => Ok(Version::Tls12),
        TLS13 => Ok(Version::Tls13),
        // tlsmatrix configures every library for TLS 1.2 and 1.3 only.
        c => Err(Unimplemented(format!(
            "{flag} {c:#06x}: only TLS 1.2 and 1.3 are configured"
        ))),
    }
}

fn group_of(code: u16) -> Result<Group, Unimplemented> {
    Group::ALL
        .iter()
        .copied()
        .find(|g| codes::group_code(*g) == code)
        .ok_or_else(|| Unimplemented(format!("-curves {code}: no adapter names that group")))
}

fn read_pem(path: &Option<String>) -> Result<String> {
    match path {
        Some(p) => fs::read_to_string(p).with_context(|| format!("cannot read {p}")),
        None => Ok(String::new()),
    }
}

/// ALPN's wire form split into protocol names.
fn alpn_names(mut wire: &[u8]) -> Result<Vec<String>, Unimplemented> {
    let mut out = Vec::new();
    while let Some((&n, rest)) = wire.split_first() {
        let n = usize::from(n);
        if rest.len() < n || n == 0 {
            return Err(Unimplemented("-advertise-alpn: malformed list".into()));
        }
        out.push(String::from_utf8_lossy(&rest[..n]).into_owned());
        wire = &rest[n..];
    }
    Ok(out)
}

impl ShimFlags {
    /// The endpoint configuration the flags describe. `Err(Unimplemented)` for a request the
    /// adapters cannot express; other errors (an unreadable file) fail the test.
    pub fn config(&self) -> Result<EndpointConfig> {
        let min = self
            .min_version
            .map_or(Ok(Version::Tls12), |c| version_of(c, "-min-version"))?;
        let max = self
            .max_version
            .map_or(Ok(Version::Tls13), |c| version_of(c, "-max-version"))?;
        let groups = self
            .curves
            .iter()
            .map(|c| group_of(*c))
            .collect::<Result<Vec<_>, _>>()?;
        let alpn = match (self.server, &self.advertise_alpn, &self.select_alpn) {
            (false, Some(wire), _) => alpn_names(wire)?,
            (true, _, Some(p)) => vec![p.clone()],
            _ => Vec::new(),
        };
        let key_pem = read_pem(&self.key_file)?;
        // No chain is verified (see `OpenPolicy`), so -trust-cert is not read: the runner
        // passes an empty path for credentials without a root.
        let certs = CertSet::from_pems(String::new(), read_pem(&self.cert_file)?, key_pem.clone());
        if self.server && key_pem.is_empty() {
            bail!("a server test without -key-file");
        }
        Ok(EndpointConfig {
            version: max,
            // Ignored with `open` set; present because pinned configurations need them.
            aead: Aead::Aes128Gcm,
            sig: SigAlg::EcdsaP256,
            groups,
            client_first_group: None,
            resumption: Resumption::Ticket,
            certs: Arc::new(certs),
            server_name: self.host_name.clone().unwrap_or(SERVER_NAME.into()),
            alpn,
            // BoringSSL's shim: -verify-peer asks for a certificate and overrides
            // -require-any-client-certificate, which alone makes one mandatory.
            require_client_cert: self.server && self.require_client_cert && !self.verify_peer,
            client_cert: !self.server && !key_pem.is_empty(),
            chain: Chain::One,
            open: Some(OpenPolicy {
                min_version: min,
                max_version: max,
                request_client_cert: self.server && (self.verify_peer || self.require_client_cert),
                sni: self.host_name.clone(),
                every_tls12_suite: true,
                middlebox_compat: true,
            }),
        })
    }

    fn side(&self) -> Side {
        if self.server {
            Side::Server
        } else {
            Side::Client
        }
    }
}

/// What one test run ended with: the exit status the runner reads.
pub fn run(lib: &dyn TlsLibrary, flags: &ShimFlags) -> Result<()> {
    let cfg = flags.config()?;
    if let Err(reason) = lib.supports(&cfg) {
        return Err(Unimplemented(reason).into());
    }
    let factory = lib.factory(flags.side(), &cfg)?;
    for n in 0..=flags.resume_count {
        let tcp = connect_back(flags)?;
        let deadline = Instant::now() + CONNECTION_LIMIT;
        let (mut wire, mut ep) = wire::connect(factory.as_ref(), tcp, deadline)?;
        let result = wire
            .handshake(ep.as_mut())
            .with_context(|| format!("connection {} handshake", n + 1))
            .and_then(|()| check(flags, ep.as_ref(), n > 0))
            .and_then(|()| exchange(flags, &mut wire, ep.as_mut()));
        if result.is_err() {
            // The alert the library queued while failing goes out before the stream ends.
            let _ = wire.flush();
        }
        wire.drain(DRAIN_LIMIT);
        result?;
    }
    Ok(())
}

/// Connects to the runner and says which test this process serves.
fn connect_back(flags: &ShimFlags) -> Result<TcpStream> {
    let addr = if flags.ipv6 {
        SocketAddr::from((Ipv6Addr::LOCALHOST, flags.port))
    } else {
        SocketAddr::from((Ipv4Addr::LOCALHOST, flags.port))
    };
    let mut tcp = TcpStream::connect_timeout(&addr, CONNECTION_LIMIT)
        .with_context(|| format!("cannot connect to the runner at {addr}"))?;
    tcp.write_all(&flags.shim_id.to_le_bytes())?;
    Ok(tcp)
}

/// The checks BoringSSL's shim makes after a handshake, for the flags honoured here.
fn check(flags: &ShimFlags, ep: &dyn TlsEndpoint, resumed_expected: bool) -> Result<()> {
    let got = ep.negotiated();
    if let Some(want) = flags.expect_version {
        if got.version != Some(want) {
            bail!("want version {want:04x}, got {:04x?}", got.version);
        }
    }
    if let Some(want) = flags.expect_curve_id {
        if got.group != Some(want) {
            bail!("want group {want}, got {:?}", got.group);
        }
    }
    let expect_resume = resumed_expected && !flags.expect_session_miss;
    match got.resumed {
        Some(r) if r != expect_resume => {
            bail!(
                "session unexpectedly was{} reused",
                if r { "" } else { " not" }
            )
        }
        None if resumed_expected => bail!("the library cannot tell whether it resumed"),
        _ => {}
    }
    let alpn = ep.alpn().map(|p| String::from_utf8_lossy(&p).into_owned());
    if let Some(want) = &flags.expect_alpn {
        if alpn.as_ref() != Some(want) {
            bail!("want ALPN {want:?}, got {alpn:?}");
        }
    }
    if let Some(want) = &flags.expect_server_name {
        if ep.sni().as_ref() != Some(want) {
            bail!("want server name {want:?}, got {:?}", ep.sni());
        }
    }
    Ok(())
}

/// The data phase: optionally write "hello" first, then echo every read back with each byte
/// flipped, until the runner ends the stream; close as BoringSSL's shim does.
fn exchange(flags: &ShimFlags, wire: &mut Wire, ep: &mut dyn TlsEndpoint) -> Result<()> {
    if flags.shim_writes_first {
        wire.send(ep, b"hello")?;
    }
    let mut buf = [0u8; READ_SIZE];
    let clean = loop {
        match wire.recv(ep, &mut buf)? {
            Received::Data(n) => {
                if flags.key_update {
                    wire.key_update(ep)?;
                }
                let flipped: Vec<u8> = buf[..n].iter().map(|b| b ^ 0xff).collect();
                wire.send(ep, &flipped)?;
            }
            Received::Closed => break true,
            Received::Eof => break false,
        }
    };
    if flags.check_close_notify {
        if !clean {
            bail!("the runner's stream ended without close_notify");
        }
        wire.send_close(ep)?;
    }
    Ok(())
}
