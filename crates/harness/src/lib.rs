//! The contracts TLS library adapters implement and what drives them: the adapter traits
//! (`TlsLibrary`, `EndpointFactory`, `TlsEndpoint`), the in-memory transport, the run-time
//! certificates, the negotiated-parameter check every handshake passes, and the pair that
//! steps a client and a server against each other with each side's calls metered.

pub mod aead;
pub mod certs;
pub mod endpoint;
pub mod floor;
pub mod memio;
pub mod negotiated;
pub mod pair;
pub mod quic;
pub mod quic_endpoint;
pub mod quic_stream;
pub mod tcp;
pub mod uncounted;
pub mod witness;
