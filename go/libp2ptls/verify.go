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
	if len(rawCerts) != 1 {
		return nil, fmt.Errorf("expected exactly one certificate, got %d", len(rawCerts))
	}
	cert, err := x509.ParseCertificate(rawCerts[0])
	if err != nil {
		return nil, fmt.Errorf("unparseable certificate: %w", err)
	}
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return nil, fmt.Errorf("certificate is not valid now: valid from %s to %s",
			cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339))
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		return nil, fmt.Errorf("certificate self-signature is invalid: %w", err)
	}
	var value []byte
	found := false
	for _, ext := range cert.Extensions {
		if ext.Id.Equal(extensionOID) {
			if found {
				return nil, errors.New("certificate has the libp2p extension twice")
			}
			value, found = ext.Value, true
		}
	}
	if !found {
		return nil, errors.New("certificate lacks the libp2p public key extension")
	}
	for _, oid := range cert.UnhandledCriticalExtensions {
		if !oid.Equal(extensionOID) {
			return nil, fmt.Errorf("certificate has an unknown critical extension %s", oid)
		}
	}
	var sk signedKey
	rest, err := asn1.Unmarshal(value, &sk)
	if err != nil {
		return nil, fmt.Errorf("unparseable libp2p extension: %w", err)
	}
	if len(rest) != 0 {
		return nil, errors.New("unparseable libp2p extension: trailing data")
	}
	hostKey, err := ic.UnmarshalPublicKey(sk.PubKey)
	if err != nil {
		return nil, fmt.Errorf("unparseable host public key: %w", err)
	}
	ok, err := hostKey.Verify(append([]byte(signaturePrefix), cert.RawSubjectPublicKeyInfo...), sk.Signature)
	if err != nil {
		return nil, fmt.Errorf("malformed host key signature: %w", err)
	}
	if !ok {
		return nil, errors.New("host key signature does not match the certificate key")
	}
	return hostKey, nil
}

// peerCheck verifies one handshake's peer and remembers its key.
type peerCheck struct {
	expected peer.ID // empty: accept any peer
	key      ic.PubKey
}

func (p *peerCheck) verify(rawCerts [][]byte) error {
	key, err := PeerKeyFromChain(rawCerts, time.Now())
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
