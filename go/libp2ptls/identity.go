package libp2ptls

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math/big"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
)

// extensionOID is the libp2p Public Key Extension, 1.3.6.1.4.1.53594.1.1
// (IANA private enterprise number 53594, allocated to libp2p).
var extensionOID = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 53594, 1, 1}

// signaturePrefix is what the host key signs, followed by the certificate's
// SubjectPublicKeyInfo.
const signaturePrefix = "libp2p-tls-handshake:"

// certValidity is how long our certificates are valid; the spec leaves it
// open and peers only use them for one handshake.
const certValidity = 100 * 365 * 24 * time.Hour

// signedKey is the extension's value.
type signedKey struct {
	PubKey    []byte // the host public key, libp2p protobuf encoding
	Signature []byte
}

// Identity is the certificate and TLS key a peer presents. The certificate
// key is a fresh ECDSA P-256 key; the libp2p host key only signs it.
type Identity struct {
	chain  [][]byte      // DER, leaf first; exactly one unless a test says otherwise
	signer crypto.Signer // the TLS key, for crypto/tls
	keyDER []byte        // the same key as PKCS#8, for OpenSSL
}

// IdentityOption changes how NewIdentity builds the certificate.
type IdentityOption func(*identityConfig)

type identityConfig struct {
	template          *x509.Certificate
	criticalExtension bool
}

// WithCertTemplate uses tmpl for the certificate instead of the default
// (random serial numbers, valid from an hour ago for 100 years).
func WithCertTemplate(tmpl *x509.Certificate) IdentityOption {
	return func(c *identityConfig) { c.template = tmpl }
}

// WithCriticalExtension marks the libp2p extension critical, which the spec
// allows and every peer must accept.
func WithCriticalExtension() IdentityOption {
	return func(c *identityConfig) { c.criticalExtension = true }
}

// NewIdentity makes a certificate that binds a fresh TLS key to hostKey.
func NewIdentity(hostKey ic.PrivKey, opts ...IdentityOption) (*Identity, error) {
	var cfg identityConfig
	for _, o := range opts {
		o(&cfg)
	}
	tmpl := cfg.template
	if tmpl == nil {
		var err error
		if tmpl, err = defaultTemplate(); err != nil {
			return nil, err
		}
	}
	certKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ext, err := SignedKeyExtension(hostKey, certKey.Public(), cfg.criticalExtension)
	if err != nil {
		return nil, err
	}
	t := *tmpl
	t.ExtraExtensions = append(append([]pkix.Extension(nil), tmpl.ExtraExtensions...), ext)
	der, err := x509.CreateCertificate(rand.Reader, &t, &t, certKey.Public(), certKey)
	if err != nil {
		return nil, fmt.Errorf("creating the certificate: %w", err)
	}
	return newIdentityFromParts([][]byte{der}, certKey)
}

// newIdentityFromParts pairs a chain with its key; tests use it to present
// certificates the spec forbids.
func newIdentityFromParts(chain [][]byte, key crypto.Signer) (*Identity, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding the certificate key: %w", err)
	}
	return &Identity{chain: chain, signer: key, keyDER: keyDER}, nil
}

// SignedKeyExtension signs certKey's SubjectPublicKeyInfo with the host key
// and returns the libp2p extension that carries the result.
func SignedKeyExtension(hostKey ic.PrivKey, certKey crypto.PublicKey, critical bool) (pkix.Extension, error) {
	pub, err := ic.MarshalPublicKey(hostKey.GetPublic())
	if err != nil {
		return pkix.Extension{}, err
	}
	spki, err := x509.MarshalPKIXPublicKey(certKey)
	if err != nil {
		return pkix.Extension{}, err
	}
	sig, err := hostKey.Sign(append([]byte(signaturePrefix), spki...))
	if err != nil {
		return pkix.Extension{}, err
	}
	value, err := asn1.Marshal(signedKey{PubKey: pub, Signature: sig})
	if err != nil {
		return pkix.Extension{}, err
	}
	return pkix.Extension{Id: extensionOID, Critical: critical, Value: value}, nil
}

func defaultTemplate() (*x509.Certificate, error) {
	limit := big.NewInt(1 << 62)
	serial, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, err
	}
	subject, err := rand.Int(rand.Reader, limit)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		NotBefore:    now.Add(-time.Hour), // tolerate clock skew between peers
		NotAfter:     now.Add(certValidity),
		// RFC 5280 wants a non-empty issuer; a self-signed certificate's
		// issuer is its subject.
		Subject: pkix.Name{SerialNumber: subject.String()},
	}, nil
}
