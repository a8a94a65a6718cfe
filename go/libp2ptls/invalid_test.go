package libp2ptls

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"strings"
	"testing"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
)

// badCert describes a certificate the spec forbids.
type badCert struct {
	notAfter  time.Time         // zero: an hour from now
	exts      []pkix.Extension  // extensions, the libp2p one included or not
	issuerKey *ecdsa.PrivateKey // signs the certificate; nil: its own key
	extra     [][]byte          // certificates sent after it
	tlsKey    *ecdsa.PrivateKey // signs the handshake; nil: the certificate's key
}

func newP256(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// identity builds the offender's Identity. certKey is the key the
// certificate names; exts may depend on it, hence the callback.
func (b badCert) identity(t testing.TB, certKey *ecdsa.PrivateKey) *Identity {
	t.Helper()
	notAfter := b.notAfter
	if notAfter.IsZero() {
		notAfter = time.Now().Add(time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber:    big.NewInt(1),
		NotBefore:       time.Now().Add(-2 * time.Hour),
		NotAfter:        notAfter,
		ExtraExtensions: b.exts,
	}
	issuer := b.issuerKey
	if issuer == nil {
		issuer = certKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, certKey.Public(), issuer)
	if err != nil {
		t.Fatal(err)
	}
	id, err := newIdentityFromParts(append([][]byte{der}, b.extra...), certKey)
	if err != nil {
		t.Fatal(err)
	}
	if b.tlsKey != nil {
		// crypto/tls signs with whatever key it is given; OpenSSL refuses a
		// key that does not match the certificate, so it gets one that
		// claims the certificate's public key but holds another secret.
		id.signer = b.tlsKey
		id.keyDER = mismatchedKeyDER(t, b.tlsKey, certKey)
	}
	return id
}

// mismatchedKeyDER encodes secret's private scalar with public's point, as
// an RFC 5915 ECPrivateKey.
func mismatchedKeyDER(t testing.TB, secret, public *ecdsa.PrivateKey) []byte {
	t.Helper()
	type ecPrivateKey struct {
		Version    int
		PrivateKey []byte
		Curve      asn1.ObjectIdentifier `asn1:"optional,explicit,tag:0"`
		PublicKey  asn1.BitString        `asn1:"optional,explicit,tag:1"`
	}
	der, err := x509.MarshalECPrivateKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	var k ecPrivateKey
	if _, err := asn1.Unmarshal(der, &k); err != nil {
		t.Fatal(err)
	}
	pub, err := public.PublicKey.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	k.PublicKey = asn1.BitString{Bytes: pub, BitLength: 8 * len(pub)}
	if der, err = asn1.Marshal(k); err != nil {
		t.Fatal(err)
	}
	return der
}

func libp2pExt(t testing.TB, host ic.PrivKey, certKey *ecdsa.PrivateKey) pkix.Extension {
	t.Helper()
	ext, err := SignedKeyExtension(host, certKey.Public(), false)
	if err != nil {
		t.Fatal(err)
	}
	return ext
}

func rawExt(t testing.TB, pubKey, sig []byte) pkix.Extension {
	t.Helper()
	v, err := asn1.Marshal(signedKey{PubKey: pubKey, Signature: sig})
	if err != nil {
		t.Fatal(err)
	}
	return pkix.Extension{Id: extensionOID, Value: v}
}

type invalidCase struct {
	name string
	// make returns the offender's identity for host key host.
	make func(t testing.TB, host ic.PrivKey) *Identity
	// verifierErr is text the verifying side's error must contain.
	verifierErr []string
	// alert is what the offender must receive.
	alert uint8
}

func invalidCases() []invalidCase {
	secp := func(t testing.TB) ic.PrivKey { return hostKey(t, ic.Secp256k1, 5) }
	return []invalidCase{
		{
			name: "key-mismatch",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				k := newP256(t)
				return badCert{exts: []pkix.Extension{libp2pExt(t, host, k)}, tlsKey: newP256(t)}.identity(t, k)
			},
			verifierErr: []string{"signature"},
			alert:       AlertDecryptError,
		},
		{
			name: "two-certificates",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				k := newP256(t)
				second := badCert{exts: []pkix.Extension{libp2pExt(t, host, k)}}.identity(t, k).chain[0]
				return badCert{exts: []pkix.Extension{libp2pExt(t, host, k)}, extra: [][]byte{second}}.identity(t, k)
			},
			verifierErr: []string{"expected exactly one certificate, got 2"},
			alert:       AlertBadCertificate,
		},
		{
			name: "expired",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				k := newP256(t)
				return badCert{exts: []pkix.Extension{libp2pExt(t, host, k)}, notAfter: time.Now().Add(-time.Minute)}.identity(t, k)
			},
			verifierErr: []string{"certificate is not valid now"},
			alert:       AlertBadCertificate,
		},
		{
			name:        "missing-extension",
			make:        func(t testing.TB, host ic.PrivKey) *Identity { return badCert{}.identity(t, newP256(t)) },
			verifierErr: []string{"lacks the libp2p public key extension"},
			alert:       AlertBadCertificate,
		},
		{
			name: "unparseable-extension",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				return badCert{exts: []pkix.Extension{{Id: extensionOID, Value: []byte("foobar")}}}.identity(t, newP256(t))
			},
			verifierErr: []string{"unparseable libp2p extension"},
			alert:       AlertBadCertificate,
		},
		{
			name: "unparseable-protobuf",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				return badCert{exts: []pkix.Extension{rawExt(t, []byte("foobar"), nil)}}.identity(t, newP256(t))
			},
			verifierErr: []string{"unparseable host public key"},
			alert:       AlertBadCertificate,
		},
		{
			name: "malformed-signature",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				pub, _ := ic.MarshalPublicKey(secp(t).GetPublic())
				return badCert{exts: []pkix.Extension{rawExt(t, pub, []byte("foobar"))}}.identity(t, newP256(t))
			},
			verifierErr: []string{"malformed host key signature", "host key signature does not match"},
			alert:       AlertBadCertificate,
		},
		{
			name: "invalid-signature",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				k := secp(t)
				pub, _ := ic.MarshalPublicKey(k.GetPublic())
				sig, err := k.Sign([]byte("foobar"))
				if err != nil {
					t.Fatal(err)
				}
				return badCert{exts: []pkix.Extension{rawExt(t, pub, sig)}}.identity(t, newP256(t))
			},
			verifierErr: []string{"host key signature does not match the certificate key"},
			alert:       AlertBadCertificate,
		},
		{
			name: "unknown-critical-extension",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				k := newP256(t)
				unknown := pkix.Extension{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1}, Critical: true, Value: []byte{5, 0}}
				return badCert{exts: []pkix.Extension{libp2pExt(t, host, k), unknown}}.identity(t, k)
			},
			verifierErr: []string{"unknown critical extension 1.3.6.1.4.1.99999.1"},
			alert:       AlertBadCertificate,
		},
		{
			name: "wrong-self-signature",
			make: func(t testing.TB, host ic.PrivKey) *Identity {
				k := newP256(t)
				return badCert{exts: []pkix.Extension{libp2pExt(t, host, k)}, issuerKey: newP256(t)}.identity(t, k)
			},
			verifierErr: []string{"self-signature is invalid"},
			alert:       AlertBadCertificate,
		},
	}
}

func TestInvalidCertificates(t *testing.T) {
	forEachPair(t, func(t *testing.T, p pair) {
		ck, sk := hostKey(t, ic.Ed25519, 0), hostKey(t, ic.Ed25519, 1)
		for _, offender := range []string{"client", "server"} {
			for _, tc := range invalidCases() {
				t.Run(offender+"-sends-"+tc.name, func(t *testing.T) {
					var cid, sid *Identity
					if offender == "client" {
						cid = tc.make(t, ck)
					} else {
						sid = tc.make(t, sk)
					}
					if refusedAtSetUp(t, p, offender, tc.name, cid, sid, ck, sk) {
						return
					}
					client := transportFor(t, ck, p.client, nil, cid)
					server := transportFor(t, sk, p.server, nil, sid)
					cl, sv := handshakePair(t, context.Background(), client, server, "", "")
					verifierErr, offenderErr := cl.err, sv.err
					if offender == "client" {
						verifierErr, offenderErr = sv.err, cl.err
						// TLS 1.3: the client finishes first and learns of
						// the refusal on its first read.
						if offenderErr == nil {
							_, offenderErr = readWithin(cl.conn, make([]byte, 1))
						}
					}
					if verifierErr == nil {
						t.Fatal("the verifying side accepted the certificate")
					}
					if !containsAny(verifierErr.Error(), tc.verifierErr) {
						t.Fatalf("verifier: %q, want it to say %q", verifierErr, tc.verifierErr)
					}
					alert, ok := ReceivedAlert(offenderErr)
					if !ok && knownPlaintextAlert(p, offender, tc.name) {
						// See knownPlaintextAlert: the offender still fails.
						if offenderErr == nil || !strings.Contains(offenderErr.Error(), "bad record MAC") {
							t.Fatalf("offender: %v", offenderErr)
						}
						return
					}
					if !ok || alert != tc.alert {
						t.Fatalf("offender: %v, want alert %d", offenderErr, tc.alert)
					}
				})
			}
		}
	})
}

// knownPlaintextAlert: an OpenSSL client that fails while reading the
// server's first flight for a reason inside libssl (here: the server's
// CertificateVerify does not verify) sends its alert before it has switched
// to its handshake write key, so in the clear; crypto/tls, already reading
// with keys, reports a bad record MAC instead of the alert. Seen with 3.0.19,
// 3.6 and 4.0 alike. Refusals of the certificate itself are sealed by
// internal/ossl and are not affected.
func knownPlaintextAlert(p pair, offender, name string) bool {
	return p.client == BackendOpenSSL && p.server == BackendStd && offender == "server" &&
		name == "key-mismatch"
}

// refusedAtSetUp: BoringSSL and AWS-LC refuse to parse a private key whose
// public half does not match its secret (what key-mismatch builds, since
// OpenSSL would refuse a key that does not match the certificate), so on
// them the OpenSSL backend cannot be built to offend with key-mismatch.
// That refusal is asserted instead of the handshake.
func refusedAtSetUp(t *testing.T, p pair, offender, name string, cid, sid *Identity, ck, sk ic.PrivKey) bool {
	b, id, key := p.client, cid, ck
	if offender == "server" {
		b, id, key = p.server, sid, sk
	}
	if b != BackendOpenSSL || name != "key-mismatch" || (OpenSSLBuild() != "boringssl" && OpenSSLBuild() != "aws-lc") {
		return false
	}
	_, err := newTransport(ID, key, nil, id, options{backend: b, verifiedCerts: DefaultVerifiedCerts})
	if err == nil || !strings.Contains(err.Error(), "parsing our private key") {
		t.Fatalf("%s made a transport whose key does not match its certificate: %v", OpenSSLVersion(), err)
	}
	return true
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
