//go:build openssl && cgo

package libp2ptls

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	ic "github.com/libp2p/go-libp2p/core/crypto"

	"github.com/tlsmatrix/tlsmatrix/go/internal/ossl"
)

// The OpenSSL backend runs the library it was built for. `make go-test`
// names it in TLSMATRIX_EXPECT_OPENSSL for each build it tests: the system
// libssl's release line, then each vendored one.
func TestOpenSSLIsTheLibraryBuiltFor(t *testing.T) {
	want := os.Getenv("TLSMATRIX_EXPECT_OPENSSL")
	if want == "" {
		t.Skip("TLSMATRIX_EXPECT_OPENSSL is not set (make go-test sets it)")
	}
	prefix := map[string]string{"boringssl": "BoringSSL (", "aws-lc": "AWS-LC "}[want]
	if prefix == "" {
		prefix = "OpenSSL " + want + "."
	}
	if got := OpenSSLVersion(); !strings.HasPrefix(got, prefix) {
		t.Fatalf("the OpenSSL backend runs %q, want %s", got, prefix)
	}
	if b := OpenSSLBuild(); b != "" && b != want {
		t.Fatalf("built for %q, expected %q", b, want)
	}
	// ML-KEM came with OpenSSL 3.5; BoringSSL and AWS-LC have it. The backend must see it
	// exactly where it exists, or the default-group tests prove nothing.
	var major, minor int
	fmt.Sscanf(want, "%d.%d", &major, &minor)
	hasMLKEM := want == "boringssl" || want == "aws-lc" || major > 3 || (major == 3 && minor >= 5)
	if OpenSSLHasMLKEM() != hasMLKEM {
		t.Fatalf("%s: OpenSSLHasMLKEM() = %v, want %v", OpenSSLVersion(), OpenSSLHasMLKEM(), hasMLKEM)
	}
	// Each connection names the library that ran it, on both backends.
	for _, b := range []Backend{BackendOpenSSL, BackendStd} {
		client := transportFor(t, hostKey(t, ic.ECDSA, 1), b, nil, nil)
		server := transportFor(t, hostKey(t, ic.ECDSA, 2), b, nil, nil)
		cl, sv := handshakePair(t, context.Background(), client, server, server.localPeer, client.localPeer)
		if cl.err != nil || sv.err != nil {
			t.Fatalf("%v: %v / %v", b, cl.err, sv.err)
		}
		wantLib := OpenSSLVersion()
		if b == BackendStd {
			wantLib = "Go crypto/tls " + runtime.Version()
		}
		for _, c := range []result{cl, sv} {
			if got := detailsOf(t, c.conn).Library; got != wantLib {
				t.Fatalf("%v: Details().Library = %q, want %q", b, got, wantLib)
			}
		}
	}
}

// A binary built for one release that finds another at run time refuses to
// make an OpenSSL transport rather than measure the wrong library.
func TestABuildForAnotherOpenSSLRefusesToRun(t *testing.T) {
	saved := ossl.BuiltFor
	ossl.BuiltFor = "9.9"
	defer func() { ossl.BuiltFor = saved }()
	_, err := New(ID, hostKey(t, ic.Ed25519, 0), nil, WithBackend(BackendOpenSSL))
	if err == nil || !strings.Contains(err.Error(), "built for OpenSSL 9.9") {
		t.Fatalf("a build for OpenSSL 9.9 made a transport on %s: %v", OpenSSLVersion(), err)
	}
}
