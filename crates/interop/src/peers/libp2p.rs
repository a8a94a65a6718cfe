//! The libp2p TLS security peers, which run only the libp2p cases: our Go transport with each
//! backend (`go/cmd/tlsmatrix-go-libp2p-peer`) and rust-libp2p's `libp2p-tls`
//! (`crates/libp2p-peer`). Both take the same command line.

use std::path::{Path, PathBuf};
use std::process::Command;

use tlsmatrix_model::interop::{Case, Family, LIBP2P_MESSAGE};
use tlsmatrix_model::side::Side;

use super::{reported_version, ClientPlan, Peer, Program, Server, ServerPlan, Who};

/// Each peer: its name, its binary beside the drivers, its `--backend` value.
const PEERS: &[(&str, &str, Option<&str>)] = &[
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

#[derive(Debug)]
struct Libp2p {
    bin: PathBuf,
    backend: Option<&'static str>,
}

pub(super) fn discover(driver_dir: &Path) -> Vec<Peer> {
    PEERS
        .iter()
        .filter_map(|&(name, binary, backend)| {
            let peer = Libp2p {
                bin: driver_dir.join(binary),
                backend,
            };
            let version = reported_version(&mut peer.command("version"))?;
            Some(Peer::new(name, version, peer))
        })
        .collect()
}

impl Libp2p {
    /// The peer's command for `role`, with `--backend B` when the peer has backends.
    fn command(&self, role: &str) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.arg(role)
            .args(self.backend.map(|b| ["--backend", b]).iter().flatten());
        cmd
    }
}

impl Program for Libp2p {
    fn takes(&self, family: Family) -> bool {
        family == Family::Libp2p
    }

    fn refuses(&self, _case: &Case, _side: Side) -> Result<(), String> {
        Ok(())
    }

    fn server(&self, who: &Who, _case: &Case, _certs: &Path) -> std::io::Result<ServerPlan> {
        let mut cmd = self.command("server");
        cmd.args(["--listen", "127.0.0.1:0", "--once"])
            .args(["--timeout", &format!("{}s", who.timeout_s)]);
        Ok(ServerPlan::echoing(cmd))
    }

    fn client(&self, who: &Who, case: &Case, _certs: &Path, to: &Server) -> ClientPlan {
        let mut cmd = self.command("client");
        cmd.args(["--connect", to.addr, "--message", LIBP2P_MESSAGE])
            .args(["--timeout", &format!("{}s", who.timeout_s)]);
        let dial = if case.wrong_peer_id {
            Some(STRANGER_PEER_ID)
        } else {
            to.peer_id
        };
        if let Some(id) = dial {
            cmd.args(["--peer", id]);
        }
        ClientPlan::checked_by_itself(cmd)
    }
}
