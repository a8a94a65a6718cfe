//go:build !openssl || !cgo

package libp2ptls

import "crypto/tls"

// OpenSSLCompiledIn reports whether this binary has the OpenSSL backend. It
// has not: it was built without the openssl tag or without cgo, so the
// module stays pure Go (CGO_ENABLED=0, cross-compiles, no libssl-dev).
const OpenSSLCompiledIn = false

func newOpenSSLBackend(*Identity, []string, backendSettings) (tlsBackend, error) {
	return nil, ErrOpenSSLNotCompiledIn
}

// OpenSSLHasMLKEM reports whether the OpenSSL backend offers X25519MLKEM768:
// never, without the backend.
func OpenSSLHasMLKEM() bool { return false }

// OpenSSLHasGroup reports whether the OpenSSL backend's libssl can offer a
// group: never, in a build without the backend.
func OpenSSLHasGroup(tls.CurveID) bool { return false }

// OpenSSLBuild is "" without the backend.
func OpenSSLBuild() string { return "" }

// OpenSSLVersion is "" without the backend.
func OpenSSLVersion() string { return "" }
