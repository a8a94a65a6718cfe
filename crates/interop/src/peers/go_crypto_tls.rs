//! Go's crypto/tls over TCP, and quic-go on crypto/tls for the QUIC cases
//! (`go/cmd/tlsmatrix-go-peer`, built beside the drivers).

use std::path::{Path, PathBuf};
use std::process::Command;

use tlsmatrix_model::interop::{Case, Expect, Family, Offer};
use tlsmatrix_model::scenario::{Aead, Resumption, SigAlg, Version};
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
    fn takes(&self, family: Family) -> bool {
        matches!(family, Family::Tls | Family::Quic)
    }

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
        if case.family == Family::Quic {
            cmd.arg("-quic");
        }
        if case.expect == Expect::Truncation {
            cmd.arg("-drop");
        }
        Ok(ServerPlan::echoing(cmd))
    }

    fn client(&self, who: &Who, case: &Case, certs: &Path, to: &Server) -> ClientPlan {
        let mut cmd = Command::new(&self.0);
        cmd.args(["client", "-connect", to.addr]).args(offer_flags(
            case,
            &case.client,
            certs,
            who.timeout_s,
        ));
        if case.family == Family::Quic {
            // An hq-interop download of the case's bytes: nothing is echoed.
            cmd.arg("-quic");
            return ClientPlan::checked_by_itself(cmd);
        }
        cmd.args(["-write-size", &case.write_size.to_string()])
            .args(["-echo", to.echo.as_str()]);
        if case.expect == Expect::Truncation {
            cmd.arg("-expect-truncation");
        }
        ClientPlan::checked_by_itself(cmd)
    }

    fn defaults_server(&self, who: &Who, sig: SigAlg, certs: &Path) -> Result<ServerPlan, String> {
        let mut cmd = Command::new(&self.0);
        cmd.args(["server", "-listen", "127.0.0.1:0", "-connections", "0"])
            .args(defaults_flags(
                sig.as_str(),
                certs,
                &who.timeout_s.to_string(),
            ));
        Ok(ServerPlan::until_killed(cmd))
    }

    fn defaults_client(
        &self,
        who: &Who,
        sig: SigAlg,
        certs: &Path,
        addr: &str,
    ) -> Result<Command, String> {
        let mut cmd = Command::new(&self.0);
        cmd.args(["client", "-connect", addr]).args(defaults_flags(
            sig.as_str(),
            certs,
            &who.timeout_s.to_string(),
        ));
        Ok(cmd)
    }
}

/// The Go peer's flags for crypto/tls's own defaults with a certificate of kind `sig`.
fn defaults_flags(sig: &str, certs: &Path, timeout_s: &str) -> Vec<std::ffi::OsString> {
    vec![
        "-defaults".into(),
        "-sig".into(),
        sig.into(),
        "-certs".into(),
        certs.into(),
        "-timeout".into(),
        timeout_s.into(),
    ]
}

/// `tlsmatrix peer --impl go-crypto-tls ROLE ...`: the Go peer started as the driver's `peer`
/// command would be, its options turned into the Go peer's flags (a case's offer, or
/// `--defaults CERT` with `--connections` and `--respond` for outside tools).
pub fn by_hand(driver_dir: &Path, role: &str, rest: &[String]) -> Result<Command, String> {
    let mut opts = std::collections::BTreeMap::new();
    // --quic, as the drivers take it: the QUIC handshake case unless --case names another.
    let quic = rest.iter().any(|a| a == "--quic");
    let mut it = rest.iter().filter(|a| *a != "--quic");
    while let Some(name) = it.next() {
        let (name, value) = match name.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => (
                name.clone(),
                it.next()
                    .ok_or_else(|| format!("{name} needs a value"))?
                    .clone(),
            ),
        };
        opts.insert(name, value);
    }
    let take = |opts: &mut std::collections::BTreeMap<String, String>, n: &str| opts.remove(n);
    let certs = take(&mut opts, "--certs").ok_or("the Go peer needs --certs DIR")?;
    let timeout = take(&mut opts, "--timeout").unwrap_or_else(|| "10".into());
    let mut cmd = Command::new(driver_dir.join(BINARY));
    cmd.arg(role);
    if quic && (opts.contains_key("--defaults") || opts.contains_key("--connections")) {
        return Err("the Go peer's QUIC (quic-go) answers one hq-interop client with the case's offer; --defaults and --connections are for its TCP server".into());
    }
    if let Some(sig) = take(&mut opts, "--defaults") {
        cmd.args(defaults_flags(&sig, Path::new(&certs), &timeout));
        for (from, to) in [("--connections", "-connections"), ("--respond", "-respond")] {
            if let Some(v) = take(&mut opts, from) {
                cmd.args([to, &v]);
            }
        }
    } else {
        let default_case = if quic { "quic-handshake" } else { "tls13" };
        let case = tlsmatrix_model::interop::case(
            &take(&mut opts, "--case").unwrap_or_else(|| default_case.into()),
        )?;
        if quic && case.family != Family::Quic {
            return Err(format!(
                "--quic takes a QUIC case (quic-*), not {}",
                case.id
            ));
        }
        let offer = if role == "server" {
            &case.server
        } else {
            &case.client
        };
        let secs = timeout
            .parse()
            .map_err(|_| format!("--timeout {timeout} is not a number of seconds"))?;
        cmd.args(offer_flags(case, offer, Path::new(&certs), secs));
        if case.family == Family::Quic {
            cmd.arg("-quic");
        } else if role == "client" {
            cmd.args(["-write-size", &case.write_size.to_string()]);
        }
    }
    for (from, to) in [
        ("--listen", "-listen"),
        ("--connect", "-connect"),
        ("--echo", "-echo"),
    ] {
        if let Some(v) = take(&mut opts, from) {
            cmd.args([to, &v]);
        }
    }
    match opts.keys().next() {
        Some(unknown) => Err(format!(
            "the Go peer takes --case, --quic, --defaults, --listen, --connect, --echo, --timeout, --certs, --connections and --respond; not {unknown}"
        )),
        None => Ok(cmd),
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
