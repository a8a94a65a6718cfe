//go:build openssl

package libp2ptls

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tlsmatrix/tlsmatrix/go/internal/ossl"
)

// Every hybrid group crypto/tls offers is negotiated on every backend pair whose libssl
// has it, offered first with its classical curve after it as crypto/tls does; a libssl
// without it is refused when the transport is made, with the library's version.
func TestEveryHybridGroupOnEveryBackendPair(t *testing.T) {
	for _, g := range []struct {
		id      tls.CurveID
		twin    tls.CurveID
		openssl string
	}{
		{tls.X25519MLKEM768, tls.X25519, "X25519MLKEM768"},
		{tls.SecP256r1MLKEM768, tls.CurveP256, "SecP256r1MLKEM768"},
		{tls.SecP384r1MLKEM1024, tls.CurveP384, "SecP384r1MLKEM1024"},
	} {
		t.Run(g.openssl, func(t *testing.T) {
			has := ossl.GroupsSupported(g.openssl)
			forEachPair(t, func(t *testing.T, p pair) {
				mk := func(b Backend, n int) (*Transport, peer.ID, error) {
					key := hostKey(t, ic.Ed25519, n)
					id, _ := peer.IDFromPrivateKey(key)
					tr, err := New(ID, key, nil, WithBackend(b), WithGroups(g.id, g.twin))
					return tr, id, err
				}
				client, _, cerr := mk(p.client, 0)
				server, serverID, serr := mk(p.server, 1)
				if !has && (p.client == BackendOpenSSL || p.server == BackendOpenSSL) {
					for _, err := range []error{cerr, serr} {
						if err != nil && !strings.Contains(err.Error(), "has no group "+g.openssl) {
							t.Fatalf("refused with %v", err)
						}
					}
					if cerr == nil && serr == nil {
						t.Fatal("a libssl without the group was accepted")
					}
					return
				}
				if cerr != nil || serr != nil {
					t.Fatalf("client: %v, server: %v", cerr, serr)
				}
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				cl, sv := handshakePair(t, ctx, client, server, serverID, "")
				if cl.err != nil || sv.err != nil {
					t.Fatalf("client: %v, server: %v", cl.err, sv.err)
				}
				for _, c := range []result{cl, sv} {
					if got := detailsOf(t, c.conn).Group; got != g.id {
						t.Fatalf("negotiated %v, want %v", got, g.id)
					}
				}
			})
		})
	}
}
