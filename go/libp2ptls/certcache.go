package libp2ptls

import (
	"sync"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
)

// DefaultVerifiedCerts is how many verified peer certificates a transport
// remembers unless WithVerifiedCertCache says otherwise.
const DefaultVerifiedCerts = 256

// verifiedCerts remembers certificates that passed PeerKeyFromChain, keyed
// by their exact DER bytes. Every check PeerKeyFromChain makes except the
// validity period depends on those bytes alone, so a peer that presents the
// same certificate again (go-libp2p hosts make one per run) skips the two
// signature verifications, about 30% of a crypto/tls handshake. The validity
// period and the expected peer id are still checked on every handshake.
type verifiedCerts struct {
	mu      sync.Mutex
	limit   int
	entries map[string]verifiedCert
}

type verifiedCert struct {
	key                 ic.PubKey
	notBefore, notAfter time.Time
}

// newVerifiedCerts makes a cache of at most limit certificates; limit 0
// turns it off.
func newVerifiedCerts(limit int) *verifiedCerts {
	return &verifiedCerts{limit: limit, entries: make(map[string]verifiedCert)}
}

// peerKey is PeerKeyFromChain with the cache in front of it.
func (v *verifiedCerts) peerKey(rawCerts [][]byte, now time.Time) (ic.PubKey, error) {
	if v.limit == 0 || len(rawCerts) != 1 {
		return PeerKeyFromChain(rawCerts, now)
	}
	v.mu.Lock()
	hit, ok := v.entries[string(rawCerts[0])]
	v.mu.Unlock()
	if ok {
		if err := checkValidity(hit.notBefore, hit.notAfter, now); err != nil {
			return nil, err
		}
		return hit.key, nil
	}
	key, cert, err := checkChain(rawCerts, now)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.entries) >= v.limit {
		// Drop one entry, whichever the map yields first (a random one):
		// the cache stays bounded whatever peers present.
		for k := range v.entries {
			delete(v.entries, k)
			break
		}
	}
	v.entries[string(rawCerts[0])] = verifiedCert{key, cert.NotBefore, cert.NotAfter}
	return key, nil
}

func (v *verifiedCerts) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.entries)
}
