//! The `openssl` command-line tool from the system: `s_server -rev` and `s_client`.

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

pub const OPENSSL_TOOL: &str = "openssl-tool";

#[derive(Debug)]
struct OpensslTool;

pub(super) fn discover() -> Option<Peer> {
    let v = reported_version(Command::new("openssl").arg("version"))?;
    Some(Peer::new(
        OPENSSL_TOOL,
        format!("{v} (s_server/s_client)"),
        OpensslTool,
    ))
}

impl Program for OpensslTool {
    fn library_server(&self) -> Option<&'static str> {
        Some("openssl s_server")
    }

    /// `s_server` with nothing but the certificate: the library's and the system's defaults
    /// (openssl.cnf), HTTP-less, serving until killed. Its stdin must stay open: at the end
    /// of its input it stops serving.
    fn defaults_server(&self, _who: &Who, sig: SigAlg, certs: &Path) -> Result<ServerPlan, String> {
        let dir = cert_dir(certs, sig);
        let mut cmd = Command::new("openssl");
        cmd.args(["s_server", "-accept", "127.0.0.1:0", "-cert"])
            .arg(dir.join(cert_files::CHAIN))
            .arg("-key")
            .arg(dir.join(cert_files::KEY));
        Ok(ServerPlan {
            cmd,
            ready: Ready::Line("ACCEPT "),
            echo: Echo::Same,
            persistent: true,
        })
    }

    /// `s_client` with nothing but the CA: the library's and the system's defaults.
    fn defaults_client(
        &self,
        _who: &Who,
        sig: SigAlg,
        certs: &Path,
        addr: &str,
    ) -> Result<Command, String> {
        let mut cmd = Command::new("openssl");
        cmd.args([
            "s_client",
            "-connect",
            addr,
            "-servername",
            "localhost",
            "-CAfile",
        ])
        .arg(cert_dir(certs, sig).join(cert_files::CA));
        Ok(cmd)
    }

    fn has_post_quantum(&self, version: &str) -> bool {
        codes::version_at_least(version, &[3, 5])
    }

    fn refuses(&self, case: &Case, side: Side) -> Result<(), String> {
        match side {
            Side::Client if case.key_update => Err("s_client sends a KeyUpdate only on its interactive 'K' command, which is off so that payload lines are not read as commands".into()),
            Side::Client if case.client.resumption.is_resumed() => Err("s_client resumes only across two processes (-sess_out, then -sess_in) or with -reconnect, whose status lines mix into the echoed data; the harness runs one client process per cell".into()),
            Side::Server if case.sni.is_some() => Err("the tool's server does not report which SNI it received, so the case cannot be checked".into()),
            Side::Server if case.expect == Expect::Truncation => Err("openssl s_server always answers close_notify; it cannot drop a connection without it".into()),
            _ => Ok(()),
        }
    }

    fn server(&self, _who: &Who, case: &Case, certs: &Path) -> std::io::Result<ServerPlan> {
        let o = &case.server;
        let dir = cert_dir(certs, o.sig);
        let mut cmd = Command::new("openssl");
        cmd.args(["s_server", "-accept", "127.0.0.1:0", "-rev"])
            .args(["-naccept", &case.connections().to_string()])
            .arg("-cert")
            .arg(dir.join(cert_files::CHAIN))
            .arg("-key")
            .arg(dir.join(cert_files::KEY))
            .args(offer_flags(o));
        if o.resumption == Resumption::SessionId {
            // Tickets off, so the session cache serves the resumption.
            cmd.arg("-no_ticket");
        }
        if case.require_client_cert {
            // -Verify (capital): a client certificate is required, not just asked for.
            cmd.args(["-Verify", "1", "-CAfile"])
                .arg(dir.join(cert_files::CA));
        }
        Ok(ServerPlan {
            cmd,
            ready: Ready::Line("ACCEPT "),
            echo: Echo::ReversedLines,
            persistent: false,
        })
    }

    fn client(&self, _who: &Who, case: &Case, certs: &Path, to: &Server) -> ClientPlan {
        let o = &case.client;
        let dir = cert_dir(certs, o.sig);
        let mut cmd = Command::new("openssl");
        // -quiet prints only application data; -no_ign_eof makes the end of stdin end the
        // connection with close_notify.
        cmd.args([
            "s_client",
            "-connect",
            to.addr,
            "-quiet",
            "-no_ign_eof",
            "-nocommands",
        ])
        .args(["-servername", "localhost", "-verify_hostname", "localhost"])
        .args(["-verify_return_error", "-CAfile"])
        .arg(dir.join(cert_files::CA))
        .args(offer_flags(o));
        if case.client_cert {
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
}

/// The tool's flags for exactly this offer.
fn offer_flags(o: &Offer) -> Vec<String> {
    let name = |g: Group| {
        codes::openssl_group_name(codes::group_code(g)).expect("OpenSSL names every group")
    };
    let mut groups: Vec<&str> = o.groups().into_iter().map(name).collect();
    let mut args = Vec::new();
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
                groups.push(name(curve));
            }
        }
    }
    let mut flags = vec!["-groups".to_string(), groups.join(":")];
    flags.extend(args);
    if !o.alpn.is_empty() {
        flags.extend(["-alpn".to_string(), o.alpn.join(",")]);
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsmatrix_model::interop::case;

    #[test]
    fn flags_pin_the_offer() {
        let a = offer_flags(&case("tls12").unwrap().client);
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
        let b = offer_flags(&case("tls13-chacha20-poly1305").unwrap().server);
        assert!(b.contains(&"TLS_CHACHA20_POLY1305_SHA256".to_string()));
    }
}
