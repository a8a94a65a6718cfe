//! Records the locked versions of libp2p-tls and rustls, which `version` prints.

include!("../../build-support/locked_versions.rs");

fn main() {
    stamp_locked_versions(&["libp2p-tls", "rustls"]);
}
