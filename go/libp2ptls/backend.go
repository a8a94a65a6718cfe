package libp2ptls

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/libp2p/go-libp2p/core/sec"
)

// Backend names a TLS implementation under the transport.
type Backend string

const (
	// BackendStd is Go's crypto/tls.
	BackendStd Backend = "std"
	// BackendOpenSSL is a libssl through this module's cgo layer. It is
	// compiled in only with the openssl build tag (see OpenSSLCompiledIn).
	BackendOpenSSL Backend = "openssl"
)

// ErrOpenSSLNotCompiledIn is what choosing the OpenSSL backend returns in a
// binary built without it.
var ErrOpenSSLNotCompiledIn = errors.New("libp2ptls: the OpenSSL backend is not compiled into this binary; " +
	"build with -tags openssl and CGO_ENABLED=1 (needs the libssl headers, Debian: libssl-dev)")

// Backends lists the backends this binary has, the default first: std
// always, openssl when built with the openssl tag.
var Backends = compiledBackends()

func compiledBackends() []Backend {
	if OpenSSLCompiledIn {
		return []Backend{BackendStd, BackendOpenSSL}
	}
	return []Backend{BackendStd}
}

// ParseBackend turns a name from a flag or a config file into a Backend. It
// knows every backend, also one this binary was built without: choosing that
// one fails when the transport is made, saying how to build it in.
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(s); b {
	case BackendStd, BackendOpenSSL:
		return b, nil
	}
	return "", fmt.Errorf("unknown backend %q (valid: std, openssl)", s)
}

// DetailedConn is a connection this transport secured: a libp2p
// sec.SecureConn that also reports what its handshake negotiated. Every
// connection SecureInbound and SecureOutbound return is one:
//
//	details := c.(libp2ptls.DetailedConn).Details()
type DetailedConn interface {
	sec.SecureConn
	Details() Details
}

// Details is what a handshake negotiated, as IANA code points.
type Details struct {
	Backend       Backend
	Version       uint16 // always tls.VersionTLS13
	CipherSuite   uint16
	Group         tls.CurveID
	PeerSignature tls.SignatureScheme // the peer's CertificateVerify scheme; 0 if the backend cannot tell
	ALPN          string
	// Library is the TLS library that ran the handshake, as it reports
	// itself at run time: "Go crypto/tls go1.26.8", "OpenSSL 3.6.3 9 Jun
	// 2026", "BoringSSL (boring-sys 5.4.0)".
	Library string
}

// handshakeSpec is everything libp2p-specific a backend needs for one
// handshake; the backend knows nothing else about libp2p.
type handshakeSpec struct {
	server bool
	// protos is the ALPN list: muxer ids in preference order, then "libp2p".
	// A server picks the client's most preferred protocol it also lists.
	protos []string
	// verify checks the peer's certificates as received, inside the handshake.
	verify func(rawCerts [][]byte) error
}

// tlsBackend runs TLS 1.3 handshakes with mutual authentication, no SNI,
// no resumption, and the local Identity's certificate.
type tlsBackend interface {
	handshake(ctx context.Context, insecure net.Conn, spec handshakeSpec) (tlsConn, error)
}

// tlsConn is an established connection.
type tlsConn interface {
	net.Conn
	details() Details
}

// backendSettings are the knobs both backends honour.
type backendSettings struct {
	// groups pins the key-exchange groups, in preference order; nil keeps
	// the backend's default.
	groups []tls.CurveID
}

func newBackend(b Backend, id *Identity, protos []string, s backendSettings) (tlsBackend, error) {
	switch b {
	case BackendStd:
		return newStdBackend(id, s), nil
	case BackendOpenSSL:
		return newOpenSSLBackend(id, protos, s)
	default:
		return nil, fmt.Errorf("unknown backend %q", b)
	}
}
