//! Who can take part in an interop cell and how each is started: the impls inside driver
//! binaries (`tlsmatrix-driver peer`), and the `openssl s_server`/`s_client` tools from the
//! system. A peer says which cases it cannot run, with the reason, instead of failing them.

use std::path::{Path, PathBuf};
use std::process::Command;
use tlsmatrix_model::cert_files;

use tlsmatrix_model::codes;
use tlsmatrix_model::interop::{Case, Echo, Expect, Family, Offer, LIBP2P_MESSAGE};
use tlsmatrix_model::scenario::{Aead, Group, Resumption, SigAlg, Version};
use tlsmatrix_model::side::Side;

use tlsmatrix_drivers::registry::Registry;

#[derive(Debug, Clone)]
pub enum Kind {
    /// An impl in a tlsmatrix driver binary.
    Driver(tlsmatrix_drivers::registry::Driver),
    /// The `openssl` command-line tool.
    OpensslTool,
    /// GnuTLS's `gnutls-serv` and `gnutls-cli`.
    GnutlsTool,
    /// Go's crypto/tls (`go/cmd/tls-peer`, built beside the drivers as `tlsmatrix-go-peer`).
    GoCryptoTls(PathBuf),
    /// A libp2p TLS security peer: our Go transport with one backend
    /// (`go/cmd/libp2p-tls-peer`), or rust-libp2p's `libp2p-tls` (`crates/libp2p-peer`). Both
    /// take the same command line.
    Libp2p {
        bin: PathBuf,
        backend: Option<&'static str>,
    },
}

#[derive(Debug, Clone)]
pub struct Peer {
    pub name: String,
    pub version: String,
    pub kind: Kind,
}

pub const OPENSSL_TOOL: &str = "openssl-tool";
pub const GNUTLS_TOOL: &str = "gnutls-tool";
pub const GO_CRYPTO_TLS: &str = "go-crypto-tls";
const GO_PEER_BINARY: &str = "tlsmatrix-go-peer";
/// The libp2p peers: name, binary beside the drivers, `--backend` value.
const LIBP2P_PEERS: &[(&str, &str, Option<&str>)] = &[
    ("go-libp2p-std", "tlsmatrix-go-libp2p-peer", Some("std")),
    (
        "go-libp2p-openssl",
        "tlsmatrix-go-libp2p-peer",
        Some("openssl"),
    ),
    ("rust-libp2p-tls", "tlsmatrix-libp2p-peer", None),
];
/// A well-formed Ed25519 peer id that no peer in a run has (keys are fresh each run).
const STRANGER_PEER_ID: &str = "12D3KooWMvBk98HVq6EQyhKG6dy3ZBa4Lb5xHfuE5bnX6uiSaqTB";
/// The most a gnutls-cli client is asked to carry (see `supports`).
const GNUTLS_CLI_MAX_BYTES: usize = 1 << 20;

/// How the harness learns that a started server is ready, and where.
pub enum Ready {
    /// The first stdout line starting with this prefix; the address follows it.
    Line(&'static str),
    /// A connection to this address succeeds (for a tool whose output is buffered).
    Connectable(String),
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

/// Every peer this machine has: the built impls, then the tools found on PATH.
pub fn discover(reg: &Registry) -> Vec<Peer> {
    let mut peers: Vec<Peer> = reg
        .defaults()
        // Go's in-memory driver measures; over TCP crypto/tls is the Go peer below.
        .filter(|e| e.name != GO_CRYPTO_TLS)
        .map(|e| Peer {
            name: e.name.clone(),
            version: e.version.clone(),
            kind: Kind::Driver(e.driver().clone()),
        })
        .collect();
    if let Some(v) = reported_version(Command::new("openssl").arg("version")) {
        peers.push(Peer {
            name: OPENSSL_TOOL.into(),
            version: format!("{v} (s_server/s_client)"),
            kind: Kind::OpensslTool,
        });
    }
    if let Ok(dir) = tlsmatrix_drivers::registry::driver_dir() {
        let bin = dir.join(GO_PEER_BINARY);
        if let Some(version) = reported_version(Command::new(&bin).arg("version")) {
            peers.push(Peer {
                name: GO_CRYPTO_TLS.into(),
                version,
                kind: Kind::GoCryptoTls(bin),
            });
        }
        for &(name, binary, backend) in LIBP2P_PEERS {
            let bin = dir.join(binary);
            if let Some(version) = reported_version(&mut libp2p_command(&bin, backend, "version")) {
                peers.push(Peer {
                    name: name.into(),
                    version,
                    kind: Kind::Libp2p { bin, backend },
                });
            }
        }
    }
    if let Some(v) = reported_version(Command::new("gnutls-cli").arg("--version")) {
        peers.push(Peer {
            name: GNUTLS_TOOL.into(),
            version: format!(
                "GnuTLS {} (gnutls-serv/gnutls-cli)",
                v.split_whitespace().nth(1).unwrap_or("?")
            ),
            kind: Kind::GnutlsTool,
        });
    }
    peers
}

/// What a peer's version command prints, trimmed; `None` if it is missing or fails.
fn reported_version(cmd: &mut Command) -> Option<String> {
    let out = cmd.output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A libp2p peer's command for `role`, with `--backend B` when the peer has backends.
fn libp2p_command(bin: &Path, backend: Option<&str>, role: &str) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg(role)
        .args(backend.map(|b| ["--backend", b]).iter().flatten());
    cmd
}

/// A port the OS has just handed out, for a tool that cannot be told to pick one itself. It
/// is free again when this returns; the tiny window before the tool binds it is the price.
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn cert_dir(certs: &Path, sig: SigAlg) -> PathBuf {
    certs.join(sig.as_str())
}

impl Peer {
    /// The cases this peer takes part in at all.
    pub fn family(&self) -> Family {
        match self.kind {
            Kind::Libp2p { .. } => Family::Libp2p,
            _ => Family::Tls,
        }
    }

    /// `Err(reason)` when this peer cannot play `side` of `case`.
    pub fn supports(&self, case: &Case, side: Side) -> Result<(), String> {
        if self.family() != case.family {
            return Err(match case.family {
                Family::Libp2p => "not a libp2p peer".into(),
                Family::Tls => "a libp2p peer runs only the libp2p cases".into(),
            });
        }
        let offer = match side {
            Side::Client => &case.client,
            Side::Server => &case.server,
        };
        if offer.groups().contains(&Group::X25519Mlkem768) {
            let has = match self.kind {
                Kind::OpensslTool => codes::version_at_least(&self.version, &[3, 5]),
                Kind::GnutlsTool => codes::version_at_least(&self.version, &[3, 8, 9]),
                Kind::Driver(_) | Kind::GoCryptoTls(_) | Kind::Libp2p { .. } => true,
            };
            if !has {
                return Err(format!("{} has no X25519MLKEM768", self.version));
            }
        }
        if side == Side::Client && case.key_update {
            match self.kind {
                Kind::Driver(_) => {}
                Kind::OpensslTool => return Err("s_client sends a KeyUpdate only on its interactive 'K' command, which is off so that payload lines are not read as commands".into()),
                Kind::GnutlsTool => return Err("gnutls-cli has no way to send a KeyUpdate on request".into()),
                Kind::GoCryptoTls(_) => return Err("crypto/tls has no API to send a KeyUpdate; it only answers the peer's".into()),
                Kind::Libp2p { .. } => unreachable!("checked by family above"),
            }
        }
        if offer.resumption == Resumption::SessionId && matches!(self.kind, Kind::GoCryptoTls(_)) {
            return Err(
                "crypto/tls resumes with tickets only; it keeps no session-id cache".into(),
            );
        }
        if side == Side::Client
            && offer.resumption.is_resumed()
            && matches!(self.kind, Kind::OpensslTool)
        {
            return Err("s_client resumes only across two processes (-sess_out, then -sess_in) or with -reconnect, whose status lines mix into the echoed data; the harness runs one client process per cell".into());
        }
        if side == Side::Server
            && case.sni.is_some()
            && matches!(self.kind, Kind::OpensslTool | Kind::GnutlsTool)
        {
            return Err("the tool's server does not report which SNI it received, so the case cannot be checked".into());
        }
        match (&self.kind, side, case.expect) {
            (Kind::OpensslTool, Side::Server, Expect::Truncation) => Err(
                "openssl s_server always answers close_notify; it cannot drop a connection without it"
                    .into(),
            ),
            (Kind::GnutlsTool, Side::Client, _) if case.bytes > GNUTLS_CLI_MAX_BYTES => Err(format!(
                "gnutls-cli forwards stdin at about 1.3 MB/s (1 MiB took 0.76 s here), so {} MiB does not fit a cell's time limit; gnutls-serv takes this case as the server",
                case.bytes >> 20
            )),
            (Kind::GoCryptoTls(_), Side::Server, _)
                if case.server.version == Version::Tls13 && case.server.aead != Aead::Aes128Gcm =>
            {
                Err("a crypto/tls server chooses the TLS 1.3 suite itself (AES-128-GCM first on AES hardware); an application cannot pin it".into())
            }
            (Kind::GnutlsTool, Side::Server, Expect::Truncation) => Err(
                "gnutls-serv always answers close_notify; it cannot drop a connection without it"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    pub fn server(&self, case: &Case, certs: &Path, timeout_s: u64) -> std::io::Result<ServerPlan> {
        Ok(match &self.kind {
            Kind::Driver(driver) => {
                let mut cmd = driver.command();
                cmd.args(["peer", "server", "--impl", &self.name, "--case", case.id])
                    .args([
                        "--listen",
                        "127.0.0.1:0",
                        "--timeout",
                        &timeout_s.to_string(),
                    ])
                    .arg("--certs")
                    .arg(certs);
                ServerPlan::echoing(cmd)
            }
            Kind::OpensslTool => {
                let o = &case.server;
                let dir = cert_dir(certs, o.sig);
                let mut cmd = Command::new("openssl");
                cmd.args(["s_server", "-accept", "127.0.0.1:0", "-rev"])
                    .args(["-naccept", &case.connections().to_string()])
                    .arg("-cert")
                    .arg(dir.join(cert_files::CHAIN))
                    .arg("-key")
                    .arg(dir.join(cert_files::KEY))
                    .args(openssl_offer(o));
                if o.resumption == Resumption::SessionId {
                    // Tickets off, so the session cache serves the resumption.
                    cmd.arg("-no_ticket");
                }
                if case.require_client_cert {
                    // -Verify (capital): a client certificate is required, not just asked for.
                    cmd.args(["-Verify", "1", "-CAfile"])
                        .arg(dir.join(cert_files::CA));
                }
                ServerPlan {
                    cmd,
                    ready: Ready::Line("ACCEPT "),
                    echo: Echo::ReversedLines,
                    persistent: false,
                }
            }
            Kind::GoCryptoTls(bin) => {
                let mut cmd = Command::new(bin);
                cmd.args(["server", "-listen", "127.0.0.1:0"])
                    .args(go_offer(case, &case.server, certs, timeout_s));
                if case.expect == Expect::Truncation {
                    cmd.arg("-drop");
                }
                ServerPlan::echoing(cmd)
            }
            Kind::Libp2p { bin, backend } => {
                let mut cmd = libp2p_command(bin, *backend, "server");
                cmd.args(["--listen", "127.0.0.1:0", "--once"])
                    .args(["--timeout", &format!("{timeout_s}s")]);
                ServerPlan::echoing(cmd)
            }
            Kind::GnutlsTool => {
                let o = &case.server;
                let dir = cert_dir(certs, o.sig);
                let port = free_port()?;
                let mut cmd = Command::new("gnutls-serv");
                cmd.args(["--echo", "-p", &port.to_string()])
                    .arg(format!(
                        "--x509certfile={}",
                        dir.join(cert_files::CHAIN).display()
                    ))
                    .arg(format!(
                        "--x509keyfile={}",
                        dir.join(cert_files::KEY).display()
                    ))
                    .arg(format!("--priority={}", gnutls_priority(o)))
                    .args(gnutls_alpn(o, Side::Server));
                if o.resumption == Resumption::SessionId {
                    cmd.arg("--noticket");
                }
                if case.require_client_cert {
                    cmd.args(["--require-client-cert", "--verify-client-cert"])
                        .arg(format!(
                            "--x509cafile={}",
                            dir.join(cert_files::CA).display()
                        ));
                }
                ServerPlan {
                    cmd,
                    ready: Ready::Connectable(format!("127.0.0.1:{port}")),
                    echo: Echo::Same,
                    persistent: true,
                }
            }
        })
    }

    /// `server_id` is the peer id a libp2p server announced.
    pub fn client(
        &self,
        case: &Case,
        certs: &Path,
        addr: &str,
        server_id: Option<&str>,
        echo: Echo,
        timeout_s: u64,
    ) -> ClientPlan {
        match &self.kind {
            Kind::Libp2p { bin, backend } => {
                let mut cmd = libp2p_command(bin, *backend, "client");
                cmd.args(["--connect", addr, "--message", LIBP2P_MESSAGE])
                    .args(["--timeout", &format!("{timeout_s}s")]);
                let dial = if case.wrong_peer_id {
                    Some(STRANGER_PEER_ID)
                } else {
                    server_id
                };
                if let Some(id) = dial {
                    cmd.args(["--peer", id]);
                }
                ClientPlan::checked_by_itself(cmd)
            }
            Kind::Driver(driver) => {
                let mut cmd = driver.command();
                cmd.args(["peer", "client", "--impl", &self.name, "--case", case.id])
                    .args(["--connect", addr, "--timeout", &timeout_s.to_string()])
                    .args([
                        "--echo",
                        match echo {
                            Echo::Same => "same",
                            Echo::ReversedLines => "reversed-lines",
                        },
                    ])
                    .arg("--certs")
                    .arg(certs);
                ClientPlan::checked_by_itself(cmd)
            }
            Kind::OpensslTool => {
                let o = &case.client;
                let mut cmd = Command::new("openssl");
                // -quiet prints only application data; -no_ign_eof makes the end of stdin
                // end the connection with close_notify.
                cmd.args([
                    "s_client",
                    "-connect",
                    addr,
                    "-quiet",
                    "-no_ign_eof",
                    "-nocommands",
                ])
                .args(["-servername", "localhost", "-verify_hostname", "localhost"])
                .args(["-verify_return_error", "-CAfile"])
                .arg(cert_dir(certs, o.sig).join(cert_files::CA))
                .args(openssl_offer(o));
                if case.client_cert {
                    let dir = cert_dir(certs, o.sig);
                    cmd.arg("-cert")
                        .arg(dir.join(cert_files::CLIENT_CHAIN))
                        .arg("-key")
                        .arg(dir.join(cert_files::CLIENT_KEY));
                }
                ClientPlan {
                    cmd,
                    fed: true,
                    must_print: None,
                }
            }
            Kind::GoCryptoTls(bin) => {
                let mut cmd = Command::new(bin);
                cmd.args(["client", "-connect", addr])
                    .args(go_offer(case, &case.client, certs, timeout_s))
                    .args(["-write-size", &case.write_size.to_string()])
                    .args([
                        "-echo",
                        match echo {
                            Echo::Same => "same",
                            Echo::ReversedLines => "reversed-lines",
                        },
                    ]);
                if case.expect == Expect::Truncation {
                    cmd.arg("-expect-truncation");
                }
                ClientPlan::checked_by_itself(cmd)
            }
            Kind::GnutlsTool => {
                let o = &case.client;
                let (host, port) = addr.rsplit_once(':').unwrap_or((addr, "443"));
                let mut cmd = Command::new("gnutls-cli");
                // Status goes to stderr, so stdout carries only the echoed data.
                cmd.args(["--logfile=/dev/stderr", "--port", port, host])
                    // The host is an address, which is never sent as SNI; send the name.
                    .args(["--sni-hostname", "localhost"])
                    .args(["--verify-hostname", "localhost"])
                    .arg(format!(
                        "--x509cafile={}",
                        cert_dir(certs, o.sig).join(cert_files::CA).display()
                    ))
                    .arg(format!("--priority={}", gnutls_priority(o)))
                    .args(gnutls_alpn(o, Side::Client));
                if case.client_cert {
                    let dir = cert_dir(certs, o.sig);
                    cmd.arg(format!(
                        "--x509certfile={}",
                        dir.join(cert_files::CLIENT_CHAIN).display()
                    ))
                    .arg(format!(
                        "--x509keyfile={}",
                        dir.join(cert_files::CLIENT_KEY).display()
                    ));
                }
                let mut must_print = None;
                if o.resumption.is_resumed() {
                    // Connects, disconnects, resumes, then carries the data.
                    cmd.arg("--resume");
                    if o.version == Version::Tls13 {
                        // The ticket arrives after the handshake; wait for it.
                        cmd.arg("--waitresumption");
                    }
                    must_print = Some("This is a resumed session");
                }
                ClientPlan {
                    cmd,
                    fed: true,
                    must_print,
                }
            }
        }
    }
}

/// The Go peer's flags for an offer and the case's size.
fn go_offer(case: &Case, o: &Offer, certs: &Path, timeout_s: u64) -> Vec<String> {
    let bytes = case.bytes;
    let mut args: Vec<String> = o
        .first
        .map(|g| vec!["-prefer".to_string(), g.as_str().to_string()])
        .unwrap_or_default();
    if !o.alpn.is_empty() {
        args.extend(["-alpn".to_string(), o.alpn.join(",")]);
    }
    if let Some(want) = case.alpn {
        args.extend(["-expect-alpn".to_string(), want.to_string()]);
    }
    if let Some(want) = case.sni {
        args.extend(["-expect-sni".to_string(), want.to_string()]);
    }
    if case.require_client_cert {
        args.push("-require-client-cert".into());
    }
    if case.client_cert {
        args.push("-client-cert".into());
    }
    if o.resumption == Resumption::Ticket {
        args.push("-resume".into());
    }
    args.extend(
        [
            ("-version", o.version.as_str().to_string()),
            ("-cipher", o.aead.as_str().to_string()),
            ("-group", o.group.as_str().to_string()),
            ("-sig", o.sig.as_str().to_string()),
            ("-certs", certs.display().to_string()),
            ("-bytes", bytes.to_string()),
            ("-timeout", timeout_s.to_string()),
        ]
        .into_iter()
        .flat_map(|(k, v)| [k.to_string(), v]),
    );
    args
}

/// A GnuTLS priority string allowing exactly this offer.
fn gnutls_priority(o: &Offer) -> String {
    let group = |g: Group| match g {
        Group::X25519 => "GROUP-X25519",
        Group::P256 => "GROUP-SECP256R1",
        Group::P384 => "GROUP-SECP384R1",
        Group::X25519Mlkem768 => "GROUP-X25519-MLKEM768",
    };
    let cipher = match o.aead {
        Aead::Aes128Gcm => "AES-128-GCM",
        Aead::Aes256Gcm => "AES-256-GCM",
        Aead::Chacha20Poly1305 => "CHACHA20-POLY1305",
    };
    let groups: Vec<String> = o
        .groups()
        .into_iter()
        .map(|g| format!("+{}", group(g)))
        .collect();
    let mut p = format!(
        "NORMAL:-VERS-ALL:+VERS-{}:-CIPHER-ALL:+{cipher}:-GROUP-ALL:{}",
        match o.version {
            Version::Tls13 => "TLS1.3",
            Version::Tls12 => "TLS1.2",
        },
        groups.join(":")
    );
    if o.version == Version::Tls12 {
        if let Some(curve) = o.sig.ecdsa_curve().filter(|c| *c != o.group) {
            p.push_str(&format!(":+{}", group(curve)));
        }
        p.push_str(if o.sig.is_rsa() {
            ":-KX-ALL:+ECDHE-RSA"
        } else {
            ":-KX-ALL:+ECDHE-ECDSA"
        });
    }
    p
}

/// The openssl tool's flags for exactly this offer.
fn openssl_offer(o: &Offer) -> Vec<String> {
    let name = |g: Group| match g {
        Group::X25519 => "X25519",
        Group::P256 => "P-256",
        Group::P384 => "P-384",
        Group::X25519Mlkem768 => "X25519MLKEM768",
    };
    let group = o
        .groups()
        .into_iter()
        .map(name)
        .collect::<Vec<_>>()
        .join(":");
    let mut args = vec!["-groups".to_string(), group.clone()];
    match o.version {
        Version::Tls13 => {
            let suite = match o.aead {
                Aead::Aes128Gcm => "TLS_AES_128_GCM_SHA256",
                Aead::Aes256Gcm => "TLS_AES_256_GCM_SHA384",
                Aead::Chacha20Poly1305 => "TLS_CHACHA20_POLY1305_SHA256",
            };
            args.extend(["-tls1_3".into(), "-ciphersuites".into(), suite.into()]);
        }
        Version::Tls12 => {
            let kx = if o.sig.is_rsa() {
                "ECDHE-RSA"
            } else {
                "ECDHE-ECDSA"
            };
            let aead = match o.aead {
                Aead::Aes128Gcm => "AES128-GCM-SHA256",
                Aead::Aes256Gcm => "AES256-GCM-SHA384",
                Aead::Chacha20Poly1305 => "CHACHA20-POLY1305",
            };
            args.extend(["-tls1_2".into(), "-cipher".into(), format!("{kx}-{aead}")]);
            // In TLS 1.2 the groups list also names the certificate curves accepted.
            if let Some(curve) = o.sig.ecdsa_curve().filter(|c| *c != o.group) {
                args[1] = format!(
                    "{group}:{}",
                    if curve == Group::P256 {
                        "P-256"
                    } else {
                        "P-384"
                    }
                );
            }
        }
    }
    if !o.alpn.is_empty() {
        args.extend(["-alpn".to_string(), o.alpn.join(",")]);
    }
    args
}

/// gnutls-serv/gnutls-cli flags for the offer's ALPN; a server refuses a mismatch.
fn gnutls_alpn(o: &Offer, side: Side) -> Vec<String> {
    let mut args: Vec<String> = o.alpn.iter().map(|p| format!("--alpn={p}")).collect();
    if side == Side::Server && !o.alpn.is_empty() {
        args.push("--alpn-fatal".into());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::interop::case;

    #[test]
    fn openssl_flags_pin_the_offer() {
        let a = openssl_offer(&case("tls12").unwrap().client);
        assert_eq!(
            a,
            [
                "-groups",
                "X25519:P-256",
                "-tls1_2",
                "-cipher",
                "ECDHE-ECDSA-AES128-GCM-SHA256"
            ]
        );
        let b = openssl_offer(&case("tls13-chacha20-poly1305").unwrap().server);
        assert!(b.contains(&"TLS_CHACHA20_POLY1305_SHA256".to_string()));
    }
}
