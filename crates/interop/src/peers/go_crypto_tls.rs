//! Go's crypto/tls over TCP (`go/cmd/tlsmatrix-go-peer`, built beside the drivers).

use std::path::{Path, PathBuf};
use std::process::Command;

use tlsmatrix_model::interop::{Case, Expect, Offer};
use tlsmatrix_model::scenario::{Aead, Resumption, Version};
use tlsmatrix_model::side::Side;

use super::{reported_version, ClientPlan, Peer, Program, Server, ServerPlan, Who};

pub const GO_CRYPTO_TLS: &str = "go-crypto-tls";
const BINARY: &str = "tlsmatrix-go-peer";

#[derive(Debug)]
struct GoCryptoTls(PathBuf);

pub(super) fn discover(driver_dir: &Path) -> Option<Peer> {
    let bin = driver_dir.join(BINARY);
    let version = reported_version(Command::new(&bin).arg("version"))?;
    Some(Peer::new(GO_CRYPTO_TLS, version, GoCryptoTls(bin)))
}

impl Program for GoCryptoTls {
    fn refuses(&self, case: &Case, side: Side) -> Result<(), String> {
        if side == Side::Client && case.key_update {
            return Err(
                "crypto/tls has no API to send a KeyUpdate; it only answers the peer's".into(),
            );
        }
        if case.offer(side).resumption == Resumption::SessionId {
            return Err(
                "crypto/tls resumes with tickets only; it keeps no session-id cache".into(),
            );
        }
        if side == Side::Server
            && case.server.version == Version::Tls13
            && case.server.aead != Aead::Aes128Gcm
        {
            return Err("a crypto/tls server chooses the TLS 1.3 suite itself (AES-128-GCM first on AES hardware); an application cannot pin it".into());
        }
        Ok(())
    }

    fn server(&self, who: &Who, case: &Case, certs: &Path) -> std::io::Result<ServerPlan> {
        let mut cmd = Command::new(&self.0);
        cmd.args(["server", "-listen", "127.0.0.1:0"])
            .args(offer_flags(case, &case.server, certs, who.timeout_s));
        if case.expect == Expect::Truncation {
            cmd.arg("-drop");
        }
        Ok(ServerPlan::echoing(cmd))
    }

    fn client(&self, who: &Who, case: &Case, certs: &Path, to: &Server) -> ClientPlan {
        let mut cmd = Command::new(&self.0);
        cmd.args(["client", "-connect", to.addr])
            .args(offer_flags(case, &case.client, certs, who.timeout_s))
            .args(["-write-size", &case.write_size.to_string()])
            .args(["-echo", to.echo.as_str()]);
        if case.expect == Expect::Truncation {
            cmd.arg("-expect-truncation");
        }
        ClientPlan::checked_by_itself(cmd)
    }
}

/// The Go peer's flags for an offer and the case's size.
fn offer_flags(case: &Case, o: &Offer, certs: &Path, timeout_s: u64) -> Vec<String> {
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
    for (flag, value) in [
        ("-version", o.version.as_str().to_string()),
        ("-cipher", o.aead.as_str().to_string()),
        ("-group", o.group.as_str().to_string()),
        ("-sig", o.sig.as_str().to_string()),
        ("-certs", certs.display().to_string()),
        ("-bytes", case.bytes.to_string()),
        ("-timeout", timeout_s.to_string()),
    ] {
        args.extend([flag.to_string(), value]);
    }
    args
}
