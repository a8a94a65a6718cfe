//! What both raw-loop benches share: the minimal rustls configuration they compare the
//! harness with (TLS 1.3 AES-128-GCM, X25519, the run's test CA, no resumption, no
//! tickets), and the same scenario set up through the harness's rustls-aws-lc adapter.

use std::sync::Arc;

use rustls::client::{Resumption, WebPkiServerVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use tlsmatrix_harness::certs;
use tlsmatrix_harness::endpoint::{EndpointConfig, EndpointFactory};
use tlsmatrix_model::scenario::{ConnParams, Scenario};
use tlsmatrix_model::side::Side;

pub fn configs(set: &certs::CertSet) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let base = rustls::crypto::aws_lc_rs::default_provider();
    let provider = Arc::new(rustls::crypto::CryptoProvider {
        cipher_suites: vec![rustls::crypto::aws_lc_rs::cipher_suite::TLS13_AES_128_GCM_SHA256],
        kx_groups: vec![rustls::crypto::aws_lc_rs::kx_group::X25519],
        ..base
    });
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(set.ca_pem.as_bytes()).unwrap())
        .unwrap();
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .unwrap();
    let mut client = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_webpki_verifier(verifier)
        .with_no_client_auth();
    client.resumption = Resumption::disabled();
    let chain: Vec<_> = CertificateDer::pem_slice_iter(
        set.chain_pem(tlsmatrix_model::scenario::Chain::One)
            .as_bytes(),
    )
    .collect::<Result<_, _>>()
    .unwrap();
    let key = PrivateKeyDer::from_pem_slice(set.key_pem.as_bytes()).unwrap();
    let mut server = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
    server.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
    server.send_tls13_tickets = 0;
    (Arc::new(client), Arc::new(server))
}

/// The scenario through tlsmatrix: its parameters and the adapter's client and server
/// factories.
pub fn harness(
    scenario: &str,
    set: certs::CertSet,
) -> (
    ConnParams,
    Box<dyn EndpointFactory>,
    Box<dyn EndpointFactory>,
) {
    let scenario: Scenario = scenario.parse().unwrap();
    let lib = tlsmatrix_impls::library("rustls-aws-lc").unwrap();
    let cfg = EndpointConfig::for_scenario(&scenario, Arc::new(set));
    let cf = lib.factory(Side::Client, &cfg).unwrap();
    let sf = lib.factory(Side::Server, &cfg).unwrap();
    (scenario.params(), cf, sf)
}
