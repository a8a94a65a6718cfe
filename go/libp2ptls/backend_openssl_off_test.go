//go:build !openssl || !cgo

package libp2ptls

import (
	"errors"
	"slices"
	"testing"

	ic "github.com/libp2p/go-libp2p/core/crypto"
)

// Built without the openssl tag, the transport is pure Go: it has the std
// backend only, and asking for OpenSSL fails when the transport is made,
// with an error that says how to build it in.
func TestOpenSSLBackendNotCompiledIn(t *testing.T) {
	if !slices.Equal(Backends, []Backend{BackendStd}) {
		t.Fatalf("Backends = %v, want [std] alone", Backends)
	}
	b, err := ParseBackend("openssl")
	if err != nil || b != BackendOpenSSL {
		t.Fatalf(`ParseBackend("openssl") = %q, %v; want the backend, refused only when used`, b, err)
	}
	_, err = New(ID, hostKey(t, ic.Ed25519, 0), nil, WithBackend(BackendOpenSSL))
	if !errors.Is(err, ErrOpenSSLNotCompiledIn) {
		t.Fatalf("New with the OpenSSL backend: %v, want ErrOpenSSLNotCompiledIn", err)
	}
	if OpenSSLHasMLKEM() || OpenSSLVersion() != "" || OpenSSLBuild() != "" {
		t.Fatal("a build without the OpenSSL backend reports a libssl")
	}
}
