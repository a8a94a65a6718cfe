//! GnuTLS's command-line tools from the system: `gnutls-serv --echo` and `gnutls-cli`.

use std::path::Path;
use std::process::Command;

use tlsmatrix_model::cert_files;
use tlsmatrix_model::codes;
use tlsmatrix_model::interop::{Case, Echo, Expect, Offer};
use tlsmatrix_model::scenario::{Aead, Group, Resumption, SigAlg, Version};
use tlsmatrix_model::side::Side;

use super::{
    cert_dir, reported_version, ClientPlan, Peer, Program, Ready, Server, ServerPlan, Who,
};

pub const GNUTLS_TOOL: &str = "gnutls-tool";
/// The most a gnutls-cli client is asked to carry (see `refuses`).
const CLI_MAX_BYTES: usize = 1 << 20;

#[derive(Debug)]
struct GnutlsTool;

pub(super) fn discover() -> Option<Peer> {
    let v = reported_version(Command::new("gnutls-cli").arg("--version"))?;
    let version = format!(
        "GnuTLS {} (gnutls-serv/gnutls-cli)",
        v.split_whitespace().nth(1).unwrap_or("?")
    );
    Some(Peer::new(GNUTLS_TOOL, version, GnutlsTool))
}

impl Program for GnutlsTool {
    fn library_server(&self) -> Option<&'static str> {
        Some("gnutls-serv")
    }

    /// `gnutls-serv` on GnuTLS's NORMAL priorities, told only what tlsmatrix's peer does
    /// differently from the tool's own defaults: no version below TLS 1.2, no client
    /// certificate asked for, and echo rather than HTTP.
    fn defaults_server(&self, _who: &Who, sig: SigAlg, certs: &Path) -> Result<ServerPlan, String> {
        let mut cmd = serv(&cert_dir(certs, sig));
        cmd.arg("--disable-client-cert")
            .arg("--priority=NORMAL:-VERS-TLS1.0:-VERS-TLS1.1");
        Ok(ServerPlan {
            cmd,
            ready: Ready::ListeningPort,
            echo: Echo::Same,
            persistent: true,
        })
    }

    /// `gnutls-cli` with no priority string: the library's and the system's defaults.
    fn defaults_client(
        &self,
        _who: &Who,
        sig: SigAlg,
        certs: &Path,
        addr: &str,
    ) -> Result<Command, String> {
        let (host, port) = addr.rsplit_once(':').unwrap_or((addr, "443"));
        let mut cmd = Command::new("gnutls-cli");
        cmd.args(["--logfile=/dev/stderr", "--port", port, host])
            .args(["--sni-hostname", "localhost"])
            .arg(format!(
                "--x509cafile={}",
                cert_dir(certs, sig).join(cert_files::CA).display()
            ));
        Ok(cmd)
    }

    fn has_post_quantum(&self, version: &str) -> bool {
        codes::version_at_least(version, &[3, 8, 9])
    }

    fn refuses(&self, case: &Case, side: Side) -> Result<(), String> {
        match side {
            Side::Client if case.key_update => Err("gnutls-cli has no way to send a KeyUpdate on request".into()),
            Side::Server if case.sni.is_some() => Err("the tool's server does not report which SNI it received, so the case cannot be checked".into()),
            Side::Client if case.bytes > CLI_MAX_BYTES => Err(format!(
                "gnutls-cli forwards stdin at about 1.3 MB/s (1 MiB took 0.76 s here), so {} MiB does not fit a cell's time limit; gnutls-serv takes this case as the server",
                case.bytes >> 20
            )),
            Side::Server if case.expect == Expect::Truncation => Err("gnutls-serv always answers close_notify; it cannot drop a connection without it".into()),
            _ => Ok(()),
        }
    }

    fn server(&self, _who: &Who, case: &Case, certs: &Path) -> std::io::Result<ServerPlan> {
        let o = &case.server;
        let dir = cert_dir(certs, o.sig);
        let mut cmd = serv(&dir);
        cmd.arg(format!("--priority={}", priority(o)))
            .args(alpn_flags(o, Side::Server));
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
        Ok(ServerPlan {
            cmd,
            ready: Ready::ListeningPort,
            echo: Echo::Same,
            persistent: true,
        })
    }

    fn client(&self, _who: &Who, case: &Case, certs: &Path, to: &Server) -> ClientPlan {
        let o = &case.client;
        let dir = cert_dir(certs, o.sig);
        let (host, port) = to.addr.rsplit_once(':').unwrap_or((to.addr, "443"));
        let mut cmd = Command::new("gnutls-cli");
        // Status goes to stderr, so stdout carries only the echoed data.
        cmd.args(["--logfile=/dev/stderr", "--port", port, host])
            // The host is an address, which is never sent as SNI; send the name.
            .args(["--sni-hostname", "localhost"])
            .args(["--verify-hostname", "localhost"])
            .arg(format!(
                "--x509cafile={}",
                dir.join(cert_files::CA).display()
            ))
            .arg(format!("--priority={}", priority(o)))
            .args(alpn_flags(o, Side::Client));
        if case.client_cert {
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

/// `gnutls-serv` echoing on a port the OS picks (the harness reads which from /proc: it has
/// no option to bind one address, so it listens on every interface while it runs), with the
/// certificate and key in `dir`.
fn serv(dir: &Path) -> Command {
    let mut cmd = Command::new("gnutls-serv");
    cmd.args(["--echo", "-p", "0"])
        .arg(format!(
            "--x509certfile={}",
            dir.join(cert_files::CHAIN).display()
        ))
        .arg(format!(
            "--x509keyfile={}",
            dir.join(cert_files::KEY).display()
        ));
    cmd
}

/// A GnuTLS priority string allowing exactly this offer.
fn priority(o: &Offer) -> String {
    let group = |g: Group| match g {
        Group::X25519 => "GROUP-X25519",
        Group::P256 => "GROUP-SECP256R1",
        Group::P384 => "GROUP-SECP384R1",
        Group::X25519Mlkem768 => "GROUP-X25519-MLKEM768",
        Group::Secp256r1Mlkem768 => "GROUP-SECP256R1-MLKEM768",
        Group::Secp384r1Mlkem1024 => "GROUP-SECP384R1-MLKEM1024",
        // GnuTLS names no pure ML-KEM group; the peer refuses post-quantum offers anyway.
        Group::Mlkem512 | Group::Mlkem768 | Group::Mlkem1024 => "GROUP-INVALID",
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

/// gnutls-serv/gnutls-cli flags for the offer's ALPN; a server refuses a mismatch.
fn alpn_flags(o: &Offer, side: Side) -> Vec<String> {
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
    fn the_priority_string_allows_exactly_the_offer() {
        let p = priority(&case("tls12").unwrap().client);
        assert!(
            p.contains("+VERS-TLS1.2") && p.contains("+AES-128-GCM"),
            "{p}"
        );
        assert!(p.ends_with(":-KX-ALL:+ECDHE-ECDSA"), "{p}");
    }
}
