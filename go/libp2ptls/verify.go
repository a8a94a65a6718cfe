package libp2ptls

import (
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
)

// PeerKeyFromChain checks a peer's certificates, DER as received, against
// the libp2p TLS spec and returns the host key they authenticate. Both
// backends call it from inside the handshake, so a refusal sends an alert.
func PeerKeyFromChain(rawCerts [][]byte, now time.Time) (ic.PubKey, error) {
	key, _, err := checkChain(rawCerts, now)
	return key, err
}

// checkValidity refuses a certificate outside its validity period.
func checkValidity(notBefore, notAfter, now time.Time) error {
	if now.Before(notBefore) || now.After(notAfter) {
		return fmt.Errorf("certificate is not valid now: valid from %s to %s",
			notBefore.UTC().Format(time.RFC3339), notAfter.UTC().Format(time.RFC3339))
	}
	return nil
}

// checkChain is PeerKeyFromChain; it also returns the parsed certificate,
// whose validity period is all a cached result needs checking again.
func checkChain(rawCerts [][]byte, now time.Time) (ic.PubKey, *x509.Certificate, error) {
	if len(rawCerts) != 1 {
		return nil, nil, fmt.Errorf("expected exactly one certificate, got %d", len(rawCerts))
	}
	cert, err := x509.ParseCertificate(rawCerts[0])
	if err != nil {
		return nil, nil, fmt.Errorf("unparseable certificate: %w", err)
	}
	if err := checkValidity(cert.NotBefore, cert.NotAfter, now); err != nil {
		return nil, nil, err
	}
	// go-libp2p's own transport skips this check (x509's Verify trusts a
	// leaf that is in its roots without checking any signature); the
	// handshake's CertificateVerify already proves the key, but a peer
	// must not be able to send a certificate its key never signed.
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		return nil, nil, fmt.Errorf("certificate self-signature is invalid: %w", err)
	}
	var value []byte
	found := false
	for _, ext := range cert.Extensions {
		if ext.Id.Equal(extensionOID) {
			if found {
				return nil, nil, errors.New("certificate has the libp2p extension twice")
			}
			value, found = ext.Value, true
		}
	}
	if !found {
		return nil, nil, errors.New("certificate lacks the libp2p public key extension")
	}
	for _, oid := range cert.UnhandledCriticalExtensions {
		if !oid.Equal(extensionOID) {
			return nil, nil, fmt.Errorf("certificate has an unknown critical extension %s", oid)
		}
	}
	var sk signedKey
	rest, err := asn1.Unmarshal(value, &sk)
	if err != nil {
		return nil, nil, fmt.Errorf("unparseable libp2p extension: %w", err)
	}
	if len(rest) != 0 {
		return nil, nil, errors.New("unparseable libp2p extension: trailing data")
	}
	hostKey, err := ic.UnmarshalPublicKey(sk.PubKey)
	if err != nil {
		return nil, nil, fmt.Errorf("unparseable host public key: %w", err)
	}
	ok, err := hostKey.Verify(append([]byte(signaturePrefix), cert.RawSubjectPublicKeyInfo...), sk.Signature)
	if err != nil {
		return nil, nil, fmt.Errorf("malformed host key signature: %w", err)
	}
	if !ok {
		return nil, nil, errors.New("host key signature does not match the certificate key")
	}
	return hostKey, cert, nil
}

// peerCheck verifies one handshake's peer and remembers its key.
type peerCheck struct {
	expected peer.ID // empty: accept any peer
	verified *verifiedCerts
	key      ic.PubKey
}

func (p *peerCheck) verify(rawCerts [][]byte) error {
	key, err := p.verified.peerKey(rawCerts, time.Now())
	if err != nil {
		return err
	}
	if p.expected != "" && !p.expected.MatchesPublicKey(key) {
		actual, err := peer.IDFromPublicKey(key)
		if err != nil {
			actual = peer.ID(fmt.Sprintf("(undeterminable: %v)", err))
		}
		return sec.ErrPeerIDMismatch{Expected: p.expected, Actual: actual}
	}
	p.key = key
	return nil
}
