//! An impl inside a tlsmatrix driver binary (`tlsmatrix-driver peer`): it runs every case its
//! library can, checks the echo itself, and can send a KeyUpdate on request.

use std::path::Path;

use tlsmatrix_model::interop::{Case, Family};
use tlsmatrix_model::measure::Measure;
use tlsmatrix_model::scenario::SigAlg;
use tlsmatrix_model::side::Side;
use tlsmatrix_registry::registry::{Driver, Registry};

use super::{ClientPlan, Peer, Program, Server, ServerPlan, Who, GO_CRYPTO_TLS};

#[derive(Debug)]
struct InDriver {
    driver: Driver,
    /// Its QUIC stack, or why it has none (the driver's own words, from `info`).
    quic: Result<String, String>,
}

pub(super) fn discover(reg: &Registry) -> Vec<Peer> {
    reg.defaults()
        // Go's in-memory driver measures; over TCP crypto/tls is the Go peer.
        .filter(|e| e.name != GO_CRYPTO_TLS)
        .map(|e| {
            let quic = e.quic.clone().ok_or_else(|| {
                let why = e.refusal(Measure::Quic).unwrap_or_default();
                why.strip_prefix(&format!("{}: ", e.name))
                    .unwrap_or(&why)
                    .to_string()
            });
            Peer::new(
                e.name.clone(),
                e.version.clone(),
                InDriver {
                    driver: e.driver().clone(),
                    quic,
                },
            )
        })
        .collect()
}

impl Program for InDriver {
    fn takes(&self, family: Family) -> bool {
        matches!(family, Family::Tls | Family::Quic)
    }

    fn refuses(&self, case: &Case, _side: Side) -> Result<(), String> {
        // An impl without a QUIC stack is refused here, without a process; what the library
        // cannot do otherwise, the driver refuses itself with its reason.
        match (case.family, &self.quic) {
            (Family::Quic, Err(why)) => Err(why.clone()),
            _ => Ok(()),
        }
    }

    fn server(&self, who: &Who, case: &Case, certs: &Path) -> std::io::Result<ServerPlan> {
        let mut cmd = self.driver.command();
        cmd.args(["peer", "server", "--impl", who.name, "--case", case.id])
            .args(["--listen", "127.0.0.1:0"])
            .args(["--timeout", &who.timeout_s.to_string()])
            .arg("--certs")
            .arg(certs);
        Ok(ServerPlan::echoing(cmd))
    }

    fn client(&self, who: &Who, case: &Case, certs: &Path, to: &Server) -> ClientPlan {
        let mut cmd = self.driver.command();
        cmd.args(["peer", "client", "--impl", who.name, "--case", case.id])
            .args(["--connect", to.addr])
            .args(["--timeout", &who.timeout_s.to_string()])
            .args(["--echo", to.echo.as_str()])
            .arg("--certs")
            .arg(certs);
        ClientPlan::checked_by_itself(cmd)
    }

    fn defaults_server(&self, who: &Who, sig: SigAlg, certs: &Path) -> Result<ServerPlan, String> {
        let mut cmd = self.driver.command();
        cmd.args([
            "peer",
            "server",
            "--impl",
            who.name,
            "--defaults",
            sig.as_str(),
        ])
        .args(["--listen", "127.0.0.1:0", "--connections", "0"])
        .args(["--timeout", &who.timeout_s.to_string()])
        .arg("--certs")
        .arg(certs);
        Ok(ServerPlan::until_killed(cmd))
    }

    fn defaults_client(
        &self,
        who: &Who,
        sig: SigAlg,
        certs: &Path,
        addr: &str,
    ) -> Result<std::process::Command, String> {
        let mut cmd = self.driver.command();
        cmd.args(["peer", "client", "--impl", who.name])
            .args(["--defaults", sig.as_str(), "--connect", addr])
            .args(["--timeout", &who.timeout_s.to_string()])
            .arg("--certs")
            .arg(certs);
        Ok(cmd)
    }
}
