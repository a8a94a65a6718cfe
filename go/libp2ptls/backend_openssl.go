//go:build openssl && cgo

package libp2ptls

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"

	"github.com/tlsmatrix/tlsmatrix/go/internal/ossl"
)

// OpenSSLCompiledIn reports whether this binary has the OpenSSL backend.
const OpenSSLCompiledIn = true

// opensslBackend is a libssl through internal/ossl. Its two
// contexts are built once per transport, so a handshake parses nothing of
// our own.
type opensslBackend struct {
	client, server *ossl.Context
}

// defaultSuites mirrors crypto/tls's TLS 1.3 preference on machines with
// AES instructions, so the two backends agree on what they negotiate.
const defaultSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

// defaultGroups is crypto/tls's default order, less what the libssl lacks:
// OpenSSL before 3.5 has no ML-KEM, and then the offer starts at X25519.
func defaultGroups() []string {
	if OpenSSLHasMLKEM() {
		return []string{"X25519MLKEM768", "X25519", "P-256", "P-384"}
	}
	return []string{"X25519", "P-256", "P-384"}
}

// offerGroups is the libssl's groups string for a preference list. The
// client sends key shares as crypto/tls does: for the first group and, when
// that one is post-quantum, for the first classical group after it too, so
// that a server that has no ML-KEM answers without a HelloRetryRequest.
// BoringSSL and AWS-LC do this by themselves; OpenSSL 3.5+ sends the first group's share
// only unless the list marks each share with '*'.
func offerGroups(names []string) string {
	if ossl.BoringAPI() || len(names) < 2 || !pqGroups[names[0]] {
		return strings.Join(names, ":")
	}
	marked := slices.Clone(names)
	marked[0] = "*" + marked[0]
	for i, n := range marked[1:] {
		if !pqGroups[n] {
			marked[i+1] = "*" + n
			break
		}
	}
	return strings.Join(marked, ":")
}

// pqGroups are the post-quantum (hybrid) groups the backend knows: the three
// crypto/tls offers.
var pqGroups = map[string]bool{
	"X25519MLKEM768":     true,
	"SecP256r1MLKEM768":  true,
	"SecP384r1MLKEM1024": true,
}

// OpenSSLHasMLKEM reports whether the OpenSSL backend's libssl offers
// X25519MLKEM768, asked of the library itself (once; the answer is kept).
func OpenSSLHasMLKEM() bool { return OpenSSLHasGroup(tls.X25519MLKEM768) }

// OpenSSLHasGroup reports whether the OpenSSL backend's libssl can offer group
// (BoringSSL, say, has X25519MLKEM768 but neither of the other two hybrids),
// asked of the library once per group the backend knows.
func OpenSSLHasGroup(group tls.CurveID) bool { return libsslGroups()[group] }

// libsslGroups asks the library once: each question makes a scratch context,
// which a benchmark that makes transports per peer would otherwise count.
var libsslGroups = sync.OnceValue(func() map[tls.CurveID]bool {
	has := make(map[tls.CurveID]bool, len(opensslGroupNames))
	for g, name := range opensslGroupNames {
		has[g] = ossl.GroupsSupported(name)
	}
	return has
})

var opensslGroupNames = map[tls.CurveID]string{
	tls.X25519:             "X25519",
	tls.CurveP256:          "P-256",
	tls.CurveP384:          "P-384",
	tls.CurveP521:          "P-521",
	tls.X25519MLKEM768:     "X25519MLKEM768",
	tls.SecP256r1MLKEM768:  "SecP256r1MLKEM768",
	tls.SecP384r1MLKEM1024: "SecP384r1MLKEM1024",
}

func newOpenSSLBackend(id *Identity, protos []string, s backendSettings) (*opensslBackend, error) {
	if err := ossl.CheckBuild(); err != nil {
		return nil, err
	}
	groups := defaultGroups()
	if len(s.groups) > 0 {
		groups = make([]string, len(s.groups))
		for i, g := range s.groups {
			name, ok := opensslGroupNames[g]
			if !ok {
				return nil, fmt.Errorf("openssl backend: unsupported group %v", g)
			}
			if !ossl.GroupsSupported(name) {
				return nil, fmt.Errorf("openssl backend: %s has no group %s", ossl.Version(), name)
			}
			groups[i] = name
		}
	}
	cfg := ossl.Config{
		Chain:        id.chain,
		Key:          id.keyDER,
		Groups:       offerGroups(groups),
		Ciphersuites: defaultSuites,
		ALPN:         protos,
		MinVersion:   tls.VersionTLS13,
		MaxVersion:   tls.VersionTLS13,
	}
	client, err := ossl.NewContext(cfg)
	if err != nil {
		return nil, fmt.Errorf("openssl backend (%s): %w", ossl.Version(), err)
	}
	cfg.Server = true
	server, err := ossl.NewContext(cfg)
	if err != nil {
		return nil, fmt.Errorf("openssl backend (%s): %w", ossl.Version(), err)
	}
	return &opensslBackend{client: client, server: server}, nil
}

func (b *opensslBackend) handshake(ctx context.Context, insecure net.Conn, spec handshakeSpec) (tlsConn, error) {
	x := b.client
	if spec.server {
		x = b.server
	}
	// The ALPN list is fixed per transport and was given to the contexts.
	c, err := x.Wrap(insecure, spec.verify)
	if err != nil {
		return nil, err
	}
	if err := c.Handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return opensslConn{c}, nil
}

type opensslConn struct{ *ossl.Conn }

func (c opensslConn) details() Details {
	st := c.State()
	return Details{
		Backend:       BackendOpenSSL,
		Version:       st.Version,
		CipherSuite:   st.CipherSuite,
		Group:         tls.CurveID(st.Group),
		PeerSignature: tls.SignatureScheme(st.PeerSignature),
		ALPN:          st.ALPN,
		Library:       ossl.Version(),
	}
}

// OpenSSLBuild is the vendored library this binary was built against (an
// OpenSSL release such as "3.6", "boringssl" or "aws-lc"), or "" for the system
// libssl.
func OpenSSLBuild() string { return ossl.BuiltFor }

// OpenSSLVersion is the libssl version the OpenSSL backend runs with.
func OpenSSLVersion() string { return ossl.Version() }
