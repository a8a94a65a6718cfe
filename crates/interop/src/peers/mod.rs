//! Who can take part in an interop cell and how each is started. Each kind of peer program is
//! one file behind [`Program`]: the impls inside driver binaries (`driver.rs`), the `openssl`
//! and GnuTLS command-line tools, Go's crypto/tls peer, and the libp2p peers. A peer says which
//! cases it cannot run, with the reason, instead of failing them.

mod driver;
mod gnutls_tool;
pub mod go_crypto_tls;
mod libp2p;
mod openssl_tool;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use tlsmatrix_model::interop::{Case, Echo, Family};
use tlsmatrix_model::scenario::SigAlg;
use tlsmatrix_model::side::Side;
use tlsmatrix_registry::registry::Registry;

pub use gnutls_tool::GNUTLS_TOOL;
pub use go_crypto_tls::GO_CRYPTO_TLS;
pub use openssl_tool::OPENSSL_TOOL;

/// What one kind of peer program does in a cell. The checks every peer shares (the case's
/// family, a post-quantum group) are made before `refuses` is asked.
pub trait Program: std::fmt::Debug + Send + Sync {
    /// Whether it takes part in the cases of `family`.
    fn takes(&self, family: Family) -> bool {
        family == Family::Tls
    }

    /// Whether this version of it has post-quantum TLS (the ML-KEM groups and ML-DSA).
    fn has_post_quantum(&self, _version: &str) -> bool {
        true
    }

    /// `Err(reason)` when it cannot play `side` of `case`.
    fn refuses(&self, case: &Case, side: Side) -> Result<(), String>;

    /// How to start it as the case's server.
    fn server(&self, who: &Who, case: &Case, certs: &Path) -> std::io::Result<ServerPlan>;

    /// How to start it as the case's client of the server at `to`.
    fn client(&self, who: &Who, case: &Case, certs: &Path, to: &Server) -> ClientPlan;

    /// How to start it as a server of its library's defaults (every version, suite, group and
    /// scheme the library enables by default) with a certificate of kind `sig`, serving every
    /// client until killed; `Err(reason)` when it has no such server.
    fn defaults_server(
        &self,
        _who: &Who,
        _sig: SigAlg,
        _certs: &Path,
    ) -> Result<ServerPlan, String> {
        Err("it has no server of its library's defaults".into())
    }

    /// How to start it as a client of its library's defaults (every version, suite, group
    /// and scheme it offers by default; it trusts the CA of certificates of kind `sig`) of
    /// the server at `addr`; `Err(reason)` when it has none. Its ClientHello is what the
    /// library offers a server it has never met.
    fn defaults_client(
        &self,
        _who: &Who,
        _sig: SigAlg,
        _certs: &Path,
        _addr: &str,
    ) -> Result<Command, String> {
        Err("it has no client of its library's defaults".into())
    }

    /// The server command when it is a library's own command-line tool (e.g. `openssl
    /// s_server`): the reference a scan of that library's defaults peer is compared with.
    fn library_server(&self) -> Option<&'static str> {
        None
    }
}

/// The peer a plan is made for, and the cell's limit.
pub struct Who<'a> {
    pub name: &'a str,
    pub timeout_s: u64,
}

/// The server a client is started against.
pub struct Server<'a> {
    pub addr: &'a str,
    /// The peer id a libp2p server announced.
    pub peer_id: Option<&'a str>,
    /// What the server sends back for the client's bytes.
    pub echo: Echo,
}

#[derive(Debug, Clone)]
pub struct Peer {
    pub name: String,
    pub version: String,
    pub program: Arc<dyn Program>,
}

/// How the harness learns that a started server is ready, and where.
pub enum Ready {
    /// The first stdout line starting with this prefix; the address follows it.
    Line(&'static str),
    /// The server process listens on a TCP port, read from /proc (for a tool told to take
    /// port 0 that cannot say which port it got).
    ListeningPort,
}

pub struct ServerPlan {
    pub cmd: Command,
    pub ready: Ready,
    /// What this server sends back for the client's bytes.
    pub echo: Echo,
    /// Serves on after the connection (a tool without a one-connection mode); the client
    /// alone then says when the cell is over.
    pub persistent: bool,
}

pub struct ClientPlan {
    pub cmd: Command,
    /// A tool client carries stdin to the server and prints what comes back: the harness
    /// then writes the payload and checks the echo itself.
    pub fed: bool,
    /// Text a tool client must print for the cell to pass, for what only it can see (that it
    /// resumed).
    pub must_print: Option<&'static str>,
}

impl ServerPlan {
    /// A server of ours: prints `listening ADDR ...`, echoes the bytes, serves the case's
    /// connections and exits.
    fn echoing(cmd: Command) -> ServerPlan {
        ServerPlan {
            cmd,
            ready: Ready::Line("listening "),
            echo: Echo::Same,
            persistent: false,
        }
    }

    /// A defaults server of ours: prints `listening ADDR`, serves every client until killed.
    fn until_killed(cmd: Command) -> ServerPlan {
        ServerPlan {
            persistent: true,
            ..ServerPlan::echoing(cmd)
        }
    }
}

impl ClientPlan {
    fn checked_by_itself(cmd: Command) -> ClientPlan {
        ClientPlan {
            cmd,
            fed: false,
            must_print: None,
        }
    }
}

/// Every peer this machine has, in the order cells list them: the built impls, then the
/// tools and peer binaries found.
pub fn discover(reg: &Registry) -> Vec<Peer> {
    let dir = tlsmatrix_registry::registry::driver_dir().ok();
    let mut peers = driver::discover(reg);
    peers.extend(openssl_tool::discover());
    if let Some(dir) = &dir {
        peers.extend(go_crypto_tls::discover(dir));
        peers.extend(libp2p::discover(dir));
    }
    peers.extend(gnutls_tool::discover());
    peers
}

impl Peer {
    fn new(name: impl Into<String>, version: String, program: impl Program + 'static) -> Peer {
        Peer {
            name: name.into(),
            version,
            program: Arc::new(program),
        }
    }

    /// Whether this peer takes part in the cases of `family` at all.
    pub fn takes(&self, family: Family) -> bool {
        self.program.takes(family)
    }

    /// `Err(reason)` when this peer cannot play `side` of `case`.
    pub fn supports(&self, case: &Case, side: Side) -> Result<(), String> {
        if !self.takes(case.family) {
            return Err(match case.family {
                Family::Libp2p => "not a libp2p peer".into(),
                Family::Tls => "a libp2p peer runs only the libp2p cases".into(),
                Family::Quic => "not a QUIC peer: it runs TLS over TCP only".into(),
            });
        }
        let offer = match side {
            Side::Client => &case.client,
            Side::Server => &case.server,
        };
        if let Some(g) = offer.groups().into_iter().find(|g| g.is_post_quantum()) {
            if !self.program.has_post_quantum(&self.version) {
                return Err(format!("{} has no {g}", self.version));
            }
        }
        if offer.sig.is_mldsa() && !self.program.has_post_quantum(&self.version) {
            return Err(format!("{} has no {}", self.version, offer.sig));
        }
        self.program.refuses(case, side)
    }

    pub fn server(&self, case: &Case, certs: &Path, timeout_s: u64) -> std::io::Result<ServerPlan> {
        self.program.server(&self.who(timeout_s), case, certs)
    }

    pub fn client(&self, case: &Case, certs: &Path, to: &Server, timeout_s: u64) -> ClientPlan {
        self.program.client(&self.who(timeout_s), case, certs, to)
    }

    /// A server of its library's defaults with a certificate of kind `sig`, until killed.
    pub fn defaults_server(
        &self,
        sig: SigAlg,
        certs: &Path,
        timeout_s: u64,
    ) -> Result<ServerPlan, String> {
        self.program
            .defaults_server(&self.who(timeout_s), sig, certs)
    }

    /// A client of its library's defaults, of the server at `addr`.
    pub fn defaults_client(
        &self,
        sig: SigAlg,
        certs: &Path,
        addr: &str,
        timeout_s: u64,
    ) -> Result<Command, String> {
        self.program
            .defaults_client(&self.who(timeout_s), sig, certs, addr)
    }

    pub fn library_server(&self) -> Option<&'static str> {
        self.program.library_server()
    }

    fn who(&self, timeout_s: u64) -> Who<'_> {
        Who {
            name: &self.name,
            timeout_s,
        }
    }
}

/// What a peer's version command prints, trimmed; `None` if it is missing or fails.
fn reported_version(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The certificates of a signature algorithm, in the folder `certs` was written to.
fn cert_dir(certs: &Path, sig: SigAlg) -> PathBuf {
    certs.join(sig.as_str())
}
