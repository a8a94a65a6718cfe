package libp2ptls

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"strings"
	"testing"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
)

// The fuzz targets feed peer-controlled bytes to the libp2p check. `make
// test` runs each for a few seconds; `make fuzz-go` runs them longer.
// Whatever the input: no panic, and a refusal says why.

// checkOutcome holds PeerKeyFromChain to its contract for one input, and
// the cache in front of it to the same answer.
func checkOutcome(t *testing.T, chain [][]byte, now time.Time) {
	key, err := PeerKeyFromChain(chain, now)
	if err == nil && key == nil {
		t.Fatal("accepted without a key")
	}
	if err != nil && (key != nil || len(strings.TrimSpace(err.Error())) < 10) {
		t.Fatalf("a refusal must name its reason and return no key: %q", err)
	}
	cached, cerr := newVerifiedCerts(4).peerKey(chain, now)
	if (err == nil) != (cerr == nil) || (err != nil && err.Error() != cerr.Error()) {
		t.Fatalf("the cache disagrees: %v / %v", err, cerr)
	}
	if key != nil && !key.Equals(cached) {
		t.Fatal("the cache returned another key")
	}
}

// FuzzPeerKeyFromChain: whole certificates, as a peer sends them; extra
// non-empty makes a two-certificate chain.
func FuzzPeerKeyFromChain(f *testing.F) {
	now := time.Now()
	valid, err := NewIdentity(hostKey(f, ic.Ed25519, 0))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid.chain[0], []byte(nil))
	for _, tc := range invalidCases() {
		chain := tc.make(f, hostKey(f, ic.Ed25519, 1)).chain
		var extra []byte
		if len(chain) > 1 {
			extra = chain[1]
		}
		f.Add(chain[0], extra)
	}
	f.Fuzz(func(t *testing.T, der, extra []byte) {
		chain := [][]byte{der}
		if len(extra) > 0 {
			chain = append(chain, extra)
		}
		checkOutcome(t, chain, now)
	})
}

// FuzzSignedKeyExtension: the libp2p extension's value inside a certificate
// that is otherwise sound and properly self-signed, so the fuzzer reaches
// the SignedKey, protobuf and host-key parsing behind the signature check.
func FuzzSignedKeyExtension(f *testing.F) {
	now := time.Now()
	certKey := newP256(f)
	for _, host := range []ic.PrivKey{
		hostKey(f, ic.Ed25519, 0), hostKey(f, ic.Secp256k1, 0), hostKey(f, ic.ECDSA, 0), hostKey(f, ic.RSA, 0),
	} {
		f.Add(libp2pExt(f, host, certKey).Value)
	}
	f.Add(rawExt(f, []byte("foobar"), nil).Value)
	f.Add([]byte{})
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(time.Hour),
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		tc := *tmpl
		tc.ExtraExtensions = []pkix.Extension{{Id: extensionOID, Value: value}}
		der, err := x509.CreateCertificate(rand.Reader, &tc, &tc, certKey.Public(), certKey)
		if err != nil {
			t.Skip("x509 will not encode this extension")
		}
		checkOutcome(t, [][]byte{der}, now)
	})
}
