package driver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync/atomic"

	"github.com/tlsmatrix/tlsmatrix/go/internal/memconn"
	"github.com/tlsmatrix/tlsmatrix/go/internal/scenario"
	"github.com/tlsmatrix/tlsmatrix/go/internal/tlsconf"
)

// implName is the one impl this driver holds.
const implName = "go-crypto-tls"

// implVersion matches what the interop peer (cmd/tlsmatrix-go-peer) reports.
func implVersion() string { return fmt.Sprintf("Go %s crypto/tls", runtime.Version()) }

// cell is one scenario's configuration for a crypto/tls client and server, and what each
// handshake must be held to.
type cell struct {
	sc     scenario.Scenario
	offer  tlsconf.Offer // the server's; the client's adds the HelloRetryRequest decoy
	client *tls.Config
	server *tls.Config
	signer *recordingSigner
	// counted, if set, is the side whose instructions the next handshakes count.
	counted *memconn.Side
}

// protocolRefusal says why no TLS version allows the scenario, in the words every driver
// uses (EndpointConfig::protocol_limits), or nil.
func protocolRefusal(sc scenario.Scenario) error {
	switch {
	case sc.Version == "tls12" && sc.PostQuantumGroup():
		return fmt.Errorf("%s is defined for TLS 1.3 only (the ML-KEM key-agreement drafts use TLS 1.3's key_share)", sc.Group)
	case sc.Version == "tls12" && sc.MLDSA():
		return fmt.Errorf("%s is defined for TLS 1.3 only (draft-ietf-tls-mldsa assigns it no TLS 1.2 use)", sc.Sig)
	}
	return nil
}

// refusal says why crypto/tls cannot run a scenario as named, or nil.
func refusal(sc scenario.Scenario, offer tlsconf.Offer) error {
	switch {
	case sc.Version == "tls13" && sc.Resumption == "session-id":
		return errors.New("TLS 1.3 has no session-id resumption; it resumes with tickets")
	case sc.Version == "tls12" && sc.HRR:
		return errors.New("TLS 1.2 has no HelloRetryRequest; a server picks from the groups offered")
	case sc.Resumption == "session-id":
		return errors.New("crypto/tls resumes TLS 1.2 with tickets only; it has no session-id cache")
	}
	return offer.Unpinnable()
}

// newCell builds the configurations, or says why the scenario cannot run (a refusal) or
// cannot be set up (an error).
func newCell(sc scenario.Scenario, certs string) (c *cell, refused, err error) {
	if r := protocolRefusal(sc); r != nil {
		return nil, r, nil
	}
	offer, err := tlsconf.ParseOffer(sc.Version, sc.AEAD, sc.Group, "", sc.Sig)
	var unsupported tlsconf.Unsupported
	if errors.As(err, &unsupported) {
		return nil, unsupported, nil
	}
	if err != nil {
		return nil, nil, err
	}
	clientOffer := offer
	if sc.HRR {
		if clientOffer.Prefer, err = tlsconf.ParseGroup(sc.HRRDecoy()); err != nil {
			return nil, nil, err
		}
	}
	if r := refusal(sc, clientOffer); r != nil {
		return nil, r, nil
	}
	dir := filepath.Join(certs, sc.Sig)
	if err := tlsconf.CheckFolder(dir); err != nil {
		return nil, nil, err
	}
	roots, err := tlsconf.LoadRoots(dir)
	if err != nil {
		return nil, nil, err
	}
	chain, err := tlsconf.LoadCert(dir, tlsconf.ChainFile(sc.Chain), tlsconf.KeyFile)
	if err != nil {
		return nil, nil, err
	}
	signer := &recordingSigner{Signer: chain.PrivateKey.(crypto.Signer)}
	chain.PrivateKey = signer
	chain.SupportedSignatureAlgorithms = []tls.SignatureScheme{offer.Scheme}

	c = &cell{sc: sc, offer: offer, signer: signer, client: clientOffer.Config(), server: offer.Config()}
	c.server.Certificates = []tls.Certificate{chain}
	c.client.RootCAs = roots
	c.client.ServerName = "localhost"
	if sc.MTLS {
		mine, err := tlsconf.LoadCert(dir, tlsconf.ClientFile, tlsconf.ClientKeyFile)
		if err != nil {
			return nil, nil, err
		}
		mine.SupportedSignatureAlgorithms = []tls.SignatureScheme{offer.Scheme}
		c.client.Certificates = []tls.Certificate{mine}
		c.server.ClientAuth = tls.RequireAndVerifyClientCert
		c.server.ClientCAs = roots
	}
	if sc.Resumed() {
		// One ticket per connection (crypto/tls sends one): a client uses one per resumption.
		c.client.ClientSessionCache = tls.NewLRUClientSessionCache(8)
	} else {
		// A full-handshake scenario issues nothing: tickets cost the server time.
		c.server.SessionTicketsDisabled = true
	}
	return c, nil, nil
}

// copyFor gives one more client/server pair of configurations (a throughput thread's): own
// session cache, own signer record.
func (c *cell) copyFor() *cell {
	d := *c
	d.client, d.server = c.client.Clone(), c.server.Clone()
	if c.client.ClientSessionCache != nil {
		d.client.ClientSessionCache = tls.NewLRUClientSessionCache(8)
	}
	cert := c.server.Certificates[0]
	d.signer = &recordingSigner{Signer: c.signer.Signer}
	cert.PrivateKey = d.signer
	d.server.Certificates = []tls.Certificate{cert}
	return &d
}

// check holds both sides' views of one handshake to the scenario: what crypto/tls reports
// (version, suite, group, resumption, certificates received), the signature scheme the
// server's key was asked for, and the number of ClientHellos on the wire.
func (c *cell) check(client, server tls.ConnectionState, signed uint32, hellos int) error {
	resumed := c.sc.Resumed()
	for _, v := range []struct {
		side string
		st   tls.ConnectionState
	}{{"client", client}, {"server", server}} {
		if err := c.offer.Check(v.st, resumed); err != nil {
			return fmt.Errorf("%s: %w", v.side, err)
		}
		if v.st.CurveID == 0 && !(resumed && c.sc.Version == "tls12") {
			return fmt.Errorf("%s: crypto/tls reports no key exchange group", v.side)
		}
	}
	if want := 1 + btoi(c.sc.HRR); hellos != want {
		return fmt.Errorf("the client sent %d ClientHello(s), but the scenario asks for %d", hellos, want)
	}
	if resumed {
		if signed != 0 {
			return fmt.Errorf("the server signed with %s in a resumed handshake", tls.SignatureScheme(signed))
		}
		return nil
	}
	if tls.SignatureScheme(signed) != c.offer.Scheme {
		return fmt.Errorf("the server signed with %s, but the scenario asks for %s", tls.SignatureScheme(signed), c.offer.Scheme)
	}
	if n := len(client.PeerCertificates); n != c.sc.Chain {
		return fmt.Errorf("client: received %d certificates, but the scenario asks for %d", n, c.sc.Chain)
	}
	if n := len(server.PeerCertificates); n != btoi(c.sc.MTLS) {
		return fmt.Errorf("server: received %d certificates, but the scenario asks for %d", n, btoi(c.sc.MTLS))
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// recordingSigner is the server's key, noting the signature scheme of its last signature:
// crypto/tls reports the negotiated scheme nowhere, so it is read from what the key was
// asked to do.
type recordingSigner struct {
	crypto.Signer
	last atomic.Uint32
}

func (r *recordingSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	r.last.Store(uint32(schemeOf(r.Public(), opts)))
	return r.Signer.Sign(rand, digest, opts)
}

// take returns the scheme signed with since the last take (0 for none).
func (r *recordingSigner) take() uint32 { return r.last.Swap(0) }

func schemeOf(pub crypto.PublicKey, opts crypto.SignerOpts) tls.SignatureScheme {
	h := opts.HashFunc()
	switch pub.(type) {
	case *ecdsa.PublicKey:
		return map[crypto.Hash]tls.SignatureScheme{crypto.SHA256: tls.ECDSAWithP256AndSHA256,
			crypto.SHA384: tls.ECDSAWithP384AndSHA384, crypto.SHA512: tls.ECDSAWithP521AndSHA512}[h]
	case *rsa.PublicKey:
		if _, pss := opts.(*rsa.PSSOptions); pss {
			return map[crypto.Hash]tls.SignatureScheme{crypto.SHA256: tls.PSSWithSHA256,
				crypto.SHA384: tls.PSSWithSHA384, crypto.SHA512: tls.PSSWithSHA512}[h]
		}
		return map[crypto.Hash]tls.SignatureScheme{crypto.SHA256: tls.PKCS1WithSHA256,
			crypto.SHA384: tls.PKCS1WithSHA384, crypto.SHA512: tls.PKCS1WithSHA512}[h]
	case ed25519.PublicKey:
		return tls.Ed25519
	}
	return 0
}
