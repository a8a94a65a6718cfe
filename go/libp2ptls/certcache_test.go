package libp2ptls

import (
	"context"
	"strings"
	"testing"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
)

func chainOf(t testing.TB, key ic.PrivKey) [][]byte {
	t.Helper()
	id, err := NewIdentity(key)
	if err != nil {
		t.Fatal(err)
	}
	return id.chain
}

func TestVerifiedCertsRemembersOnlyWhatPassed(t *testing.T) {
	v := newVerifiedCerts(8)
	host := hostKey(t, ic.Ed25519, 0)
	chain := chainOf(t, host)
	now := time.Now()
	for i := range 3 {
		key, err := v.peerKey(chain, now)
		if err != nil {
			t.Fatalf("presentation %d: %v", i, err)
		}
		if !key.Equals(host.GetPublic()) {
			t.Fatalf("presentation %d: the key is not the host's", i)
		}
	}
	if n := v.len(); n != 1 {
		t.Fatalf("%d entries after one certificate presented three times, want 1", n)
	}

	for _, tc := range invalidCases() {
		bad := tc.make(t, hostKey(t, ic.Ed25519, 1)).chain
		want, wantErr := PeerKeyFromChain(bad, now)
		for i := range 2 {
			_, err := v.peerKey(bad, now)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("%s, presentation %d: %v; uncached: %v %v", tc.name, i, err, want, wantErr)
			}
		}
	}
	// key-mismatch is refused by the handshake's CertificateVerify, not by
	// the certificate, which is sound and may be remembered.
	if n := v.len(); n != 2 {
		t.Fatalf("%d entries: a certificate that failed a check was remembered", n)
	}

	// One flipped byte in the signature is another certificate: checked, refused.
	flipped := append([]byte(nil), chain[0]...)
	flipped[len(flipped)-3] ^= 0x01
	if _, err := v.peerKey([][]byte{flipped}, now); err == nil {
		t.Fatal("a certificate one byte away from a remembered one was accepted")
	}
}

func TestVerifiedCertsChecksTheValidityPeriodEveryTime(t *testing.T) {
	v := newVerifiedCerts(8)
	chain := chainOf(t, hostKey(t, ic.Ed25519, 0))
	if _, err := v.peerKey(chain, time.Now()); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(certValidity + 2*time.Hour)
	if _, err := v.peerKey(chain, later); err == nil || !strings.Contains(err.Error(), "not valid now") {
		t.Fatalf("a remembered certificate past its NotAfter: %v, want 'not valid now'", err)
	}
	earlier := time.Now().Add(-3 * time.Hour)
	if _, err := v.peerKey(chain, earlier); err == nil || !strings.Contains(err.Error(), "not valid now") {
		t.Fatalf("a remembered certificate before its NotBefore: %v, want 'not valid now'", err)
	}
}

func TestVerifiedCertsStaysBounded(t *testing.T) {
	v := newVerifiedCerts(3)
	now := time.Now()
	for i := range 10 {
		host := hostKey(t, ic.Ed25519, 10+i)
		key, err := v.peerKey(chainOf(t, host), now)
		if err != nil {
			t.Fatal(err)
		}
		if !key.Equals(host.GetPublic()) {
			t.Fatalf("certificate %d: another host's key", i)
		}
		if n := v.len(); n > 3 {
			t.Fatalf("%d entries with a limit of 3", n)
		}
	}
	off := newVerifiedCerts(0)
	if _, err := off.peerKey(chainOf(t, hostKey(t, ic.Ed25519, 0)), now); err != nil {
		t.Fatal(err)
	}
	if n := off.len(); n != 0 {
		t.Fatalf("a disabled cache holds %d entries", n)
	}
}

// A remembered certificate still goes through the per-connection checks:
// the peer id the dialer expects, and on both backends.
func TestRepeatedHandshakesUseTheCacheAndStillCheckThePeer(t *testing.T) {
	forEachPair(t, func(t *testing.T, p pair) {
		ck, sk, third := hostKey(t, ic.Ed25519, 0), hostKey(t, ic.Ed25519, 1), hostKey(t, ic.Ed25519, 2)
		client := transportFor(t, ck, p.client, nil, nil)
		server := transportFor(t, sk, p.server, nil, nil)
		for i := range 3 {
			cl, sv := handshakePair(t, context.Background(), client, server, peerOf(t, sk), peerOf(t, ck))
			if cl.err != nil || sv.err != nil {
				t.Fatalf("handshake %d: client %v, server %v", i, cl.err, sv.err)
			}
			if cl.conn.RemotePeer() != peerOf(t, sk) || sv.conn.RemotePeer() != peerOf(t, ck) {
				t.Fatalf("handshake %d: wrong remote peers", i)
			}
		}
		if client.verified.len() != 1 || server.verified.len() != 1 {
			t.Fatalf("entries: client %d, server %d, want 1 each", client.verified.len(), server.verified.len())
		}
		cl, _ := handshakePair(t, context.Background(), client, server, peerOf(t, third), "")
		if cl.err == nil {
			t.Fatal("a remembered certificate of the wrong peer was accepted")
		}
	})
}

func TestWithVerifiedCertCacheRefusesNegative(t *testing.T) {
	if _, err := New(ID, hostKey(t, ic.Ed25519, 0), nil, WithVerifiedCertCache(-1)); err == nil {
		t.Fatal("a negative cache size was accepted")
	}
}
