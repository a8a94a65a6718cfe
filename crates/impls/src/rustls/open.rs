//! rustls as an application would configure it, for the BoGo shim: the provider's default
//! suites and schemes, the versions and groups the runner names, and certificates checked
//! the way BoringSSL's shim checks them (a chain to the runner's root, no host name), or
//! not at all when the runner does not ask.

use std::sync::atomic::AtomicU16;
use std::sync::Arc;

use anyhow::{anyhow, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error, ServerConfig, SignatureScheme,
    SupportedProtocolVersion,
};
use tlsmatrix_core::codes;
use tlsmatrix_core::endpoint::{EndpointConfig, EndpointFactory, OpenPolicy, Side};
use tlsmatrix_core::scenario::Resumption as ResumptionMode;

use super::{
    client_resumption, pem_pair, protocol_versions, roots, ClientFactory, RecordingVerifier,
    RustlsLibrary, ServerFactory,
};

impl RustlsLibrary {
    /// The provider whole, its key exchange cut to the runner's groups if it named any.
    pub(super) fn open_provider(&self, cfg: &EndpointConfig) -> Result<CryptoProvider, String> {
        let mut provider = (self.provider)();
        if !cfg.groups.is_empty() {
            let mut kx = Vec::new();
            for g in &cfg.groups {
                let code = codes::group_code(*g);
                let found = provider
                    .kx_groups
                    .iter()
                    .find(|k| u16::from(k.name()) == code)
                    .ok_or_else(|| format!("{} has no key exchange group {g}", self.name))?;
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
                let inner: Arc<dyn ServerCertVerifier> = if open.verify_peer {
                    Arc::new(AnyHostName(
                        WebPkiServerVerifier::builder_with_provider(roots(cfg)?, provider.clone())
                            .build()?,
                    ))
                } else {
                    Arc::new(AnyCertificate(provider.signature_verification_algorithms))
                };
                let verifier = Arc::new(RecordingVerifier {
                    inner,
                    offered: None,
                    last_scheme: AtomicU16::new(0),
                });
                let builder = ClientConfig::builder_with_provider(provider)
                    .with_protocol_versions(&versions)?
                    .dangerous()
                    .with_custom_certificate_verifier(verifier.clone());
                let mut config = if cfg.client_cert {
                    let (chain, key) =
                        pem_pair(&cfg.certs.client_chain_pem, &cfg.certs.client_key_pem)?;
                    builder.with_client_auth_cert(chain, key)?
                } else {
                    builder.with_no_client_auth()
                };
                config.resumption = client_resumption(ResumptionMode::Ticket);
                config.alpn_protocols = cfg.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
                // An IP address as the name makes rustls send no SNI.
                let server_name = match &open.sni {
                    Some(name) => ServerName::try_from(name.clone())?,
                    None => ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()),
                };
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
                let builder = if open.verify_peer {
                    let b = WebPkiClientVerifier::builder_with_provider(roots(cfg)?, provider);
                    let b = if cfg.require_client_cert {
                        b
                    } else {
                        b.allow_unauthenticated()
                    };
                    builder.with_client_cert_verifier(b.build()?)
                } else {
                    builder.with_no_client_auth()
                };
                let mut config = builder.with_single_cert(chain, key)?;
                self.server_resumption(&mut config, ResumptionMode::Ticket)?;
                config.alpn_protocols = cfg.alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
                Ok(Box::new(ServerFactory {
                    config: Arc::new(config),
                }))
            }
        }
    }
}

/// webpki's verdict on the chain, whatever name the certificate carries: the runner's
/// certificates are not issued for any name the shim is told.
#[derive(Debug)]
struct AnyHostName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
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
