//! rustls as an application would configure it, for the BoGo shim: the provider's default
//! suites and schemes, the versions and groups the runner names, and peer certificates taken
//! as BoringSSL's shim takes them (any chain; the handshake signature still checked).

use std::sync::Arc;

use anyhow::{anyhow, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{
    verify_tls12_signature, verify_tls13_signature, CryptoProvider, WebPkiSupportedAlgorithms,
};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::ServerSessionMemoryCache;
use rustls::{
    DigitallySignedStruct, DistinguishedName, Error, ServerConfig, SignatureScheme,
    SupportedProtocolVersion,
};
use tlsmatrix_harness::endpoint::{EndpointConfig, EndpointFactory, OpenPolicy};
use tlsmatrix_model::codes;
use tlsmatrix_model::scenario::Resumption as ResumptionMode;
use tlsmatrix_model::side::Side;

use super::{
    client_config, pem_pair, protocol_versions, ClientFactory, RustlsLibrary, ServerFactory,
    SESSION_CACHE_SIZE,
};

impl RustlsLibrary {
    /// The provider whole, its key exchange cut to the runner's groups if it named any.
    pub(super) fn open_provider(&self, cfg: &EndpointConfig) -> Result<CryptoProvider, String> {
        let mut provider = (self.provider)();
        let mut wanted: Vec<u16> = cfg.groups.iter().map(|g| codes::group_code(*g)).collect();
        if let Some(open) = &cfg.open {
            wanted.extend(&open.extras.group_codes);
        }
        if !wanted.is_empty() {
            let mut kx = Vec::new();
            for code in wanted {
                let found = provider
                    .kx_groups
                    .iter()
                    .find(|k| u16::from(k.name()) == code)
                    .ok_or_else(|| {
                        format!(
                            "{} has no key exchange group {}",
                            self.name,
                            codes::group_name(code)
                        )
                    })?;
                kx.push(*found);
            }
            provider.kx_groups = kx;
        }
        Ok(provider)
    }

    pub(super) fn open_factory(
        &self,
        side: Side,
        cfg: &EndpointConfig,
        open: &OpenPolicy,
    ) -> Result<Box<dyn EndpointFactory>> {
        let provider = Arc::new(self.open_provider(cfg).map_err(|e| anyhow!(e))?);
        let versions: Vec<&'static SupportedProtocolVersion> = open
            .versions()
            .into_iter()
            .map(|v| protocol_versions(v)[0])
            .collect();
        match side {
            Side::Client => {
                // An IP address as the name makes rustls send no SNI.
                let server_name = match &open.sni {
                    Some(name) => ServerName::try_from(name.clone())?,
                    None => ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()),
                };
                let (config, verifier) = client_config(
                    provider.clone(),
                    &versions,
                    Arc::new(AnyCertificate(provider.signature_verification_algorithms)),
                    None,
                    cfg,
                )?;
                Ok(Box::new(ClientFactory {
                    config: Arc::new(config),
                    server_name,
                    verifier,
                }))
            }
            Side::Server => {
                let (chain, key) = pem_pair(cfg.server_chain_pem(), &cfg.certs.key_pem)?;
                let builder = ServerConfig::builder_with_provider(provider.clone())
                    .with_protocol_versions(&versions)?;
                let builder = if open.request_client_cert {
                    builder.with_client_cert_verifier(Arc::new(AnyClientCertificate {
                        algorithms: provider.signature_verification_algorithms,
                        mandatory: cfg.require_client_cert,
                    }))
                } else {
                    builder.with_no_client_auth()
                };
                let mut config = builder.with_single_cert(chain, key)?;
                self.server_resumption(&mut config, ResumptionMode::Ticket)?;
                // Session ids as well as tickets, as BoringSSL's server resumes by default.
                config.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE_SIZE);
                config.alpn_protocols = cfg.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
                Ok(Box::new(ServerFactory {
                    config: Arc::new(config),
                }))
            }
        }
    }
}

/// Any server certificate, as BoringSSL's shim takes one without `-verify-peer`; the
/// handshake signature is still checked against the certificate's key.
#[derive(Debug)]
struct AnyCertificate(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// Any client certificate, as BoringSSL's shim takes one; its signature over the handshake
/// is still checked.
#[derive(Debug)]
struct AnyClientCertificate {
    algorithms: WebPkiSupportedAlgorithms,
    mandatory: bool,
}

impl ClientCertVerifier for AnyClientCertificate {
    fn client_auth_mandatory(&self) -> bool {
        self.mandatory
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
