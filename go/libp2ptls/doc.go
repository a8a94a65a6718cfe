// Package libp2ptls is the libp2p TLS 1.3 security transport
// (https://github.com/libp2p/specs/blob/master/tls/tls.md) with a choice of
// TLS implementation: Go's crypto/tls or a libssl (OpenSSL, BoringSSL or AWS-LC).
//
// Everything libp2p-specific — the certificate carrying the signed host key,
// its verification, peer-ID checks and muxer negotiation in ALPN — is
// written once here; a backend only runs a TLS 1.3 handshake with a callback
// for the peer's certificates. It is a drop-in replacement for go-libp2p's
// p2p/security/tls and interoperates with it:
//
//	libp2p.Security(libp2ptls.ID, libp2ptls.New)
//
// # Backends and build tags
//
// The package is pure Go by default: it builds with CGO_ENABLED=0, cross
// compiles, and needs no C headers. The default backend, BackendStd, is
// crypto/tls.
//
// The OpenSSL backend is compiled in with the openssl build tag and cgo:
//
//	go build -tags openssl ./...   # needs libssl-dev (pkg-config libssl)
//
// and chosen per transport:
//
//	libp2p.Security(libp2ptls.ID, libp2ptls.Constructor(libp2ptls.WithBackend(libp2ptls.BackendOpenSSL)))
//
// In a binary built without it, that transport's constructor returns
// ErrOpenSSLNotCompiledIn; OpenSSLCompiledIn and Backends say what a binary
// has.
//
// # What the transport refuses
//
// Anything below TLS 1.3, a chain of other than one certificate, a
// certificate whose libp2p extension is missing, malformed or signed by
// another key, an expired certificate, and a peer ID other than the one
// dialled. Each refusal sends the peer a TLS alert (bad_certificate for
// certificates) from either backend.
package libp2ptls
