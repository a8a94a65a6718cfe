//! An impl inside a tlsmatrix driver binary (`tlsmatrix-driver peer`): it runs every case its
//! library can, checks the echo itself, and can send a KeyUpdate on request.

use std::path::Path;

use tlsmatrix_model::interop::Case;
use tlsmatrix_model::scenario::SigAlg;
use tlsmatrix_model::side::Side;
use tlsmatrix_registry::registry::{Driver, Registry};

use super::{ClientPlan, Peer, Program, Server, ServerPlan, Who, GO_CRYPTO_TLS};

#[derive(Debug)]
struct InDriver(Driver);

pub(super) fn discover(reg: &Registry) -> Vec<Peer> {
    reg.defaults()
        // Go's in-memory driver measures; over TCP crypto/tls is the Go peer.
        .filter(|e| e.name != GO_CRYPTO_TLS)
        .map(|e| {
            Peer::new(
                e.name.clone(),
                e.version.clone(),
                InDriver(e.driver().clone()),
            )
        })
        .collect()
}

impl Program for InDriver {
    fn refuses(&self, _case: &Case, _side: Side) -> Result<(), String> {
        // What the library cannot do, the driver refuses itself with its reason.
        Ok(())
    }

    fn server(&self, who: &Who, case: &Case, certs: &Path) -> std::io::Result<ServerPlan> {
        let mut cmd = self.0.command();
        cmd.args(["peer", "server", "--impl", who.name, "--case", case.id])
            .args(["--listen", "127.0.0.1:0"])
            .args(["--timeout", &who.timeout_s.to_string()])
            .arg("--certs")
            .arg(certs);
        Ok(ServerPlan::echoing(cmd))
    }

    fn client(&self, who: &Who, case: &Case, certs: &Path, to: &Server) -> ClientPlan {
        let mut cmd = self.0.command();
        cmd.args(["peer", "client", "--impl", who.name, "--case", case.id])
            .args(["--connect", to.addr])
            .args(["--timeout", &who.timeout_s.to_string()])
            .args(["--echo", to.echo.as_str()])
            .arg("--certs")
            .arg(certs);
        ClientPlan::checked_by_itself(cmd)
    }

    fn defaults_server(&self, who: &Who, sig: SigAlg, certs: &Path) -> Result<ServerPlan, String> {
        let mut cmd = self.0.command();
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
        let mut cmd = self.0.command();
        cmd.args(["peer", "client", "--impl", who.name])
            .args(["--defaults", sig.as_str(), "--connect", addr])
            .args(["--timeout", &who.timeout_s.to_string()])
            .arg("--certs")
            .arg(certs);
        Ok(cmd)
    }
}
