// Package tlsconf turns a tlsmatrix offer (version, cipher, group, certificate key) into a
// crypto/tls configuration that pins each of them, loads the run's test certificates, and
// checks a connection's state against the offer. The interop peer (cmd/tlsmatrix-go-peer) and the
// in-memory driver (cmd/tlsmatrix-driver-go) share it, so both pin and check alike.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Offer is what one side offers; every field is pinned in Config.
type Offer struct {
	Version uint16
	Suite   uint16
	Group   tls.CurveID
	// A group offered first, with the client's only key share, that the server does not
	// accept (the HelloRetryRequest case).
	Prefer tls.CurveID
	// The one signature scheme the certificate's key signs with (PinScheme).
	Scheme tls.SignatureScheme
	// TLS 1.2 only: an ECDSA certificate's curve, which supported_groups must also list
	// (RFC 8422, 5.1; OpenSSL enforces it). The key exchange is still checked to use Group.
	CertCurve  tls.CurveID
	ALPN       []string
	ExpectALPN string
	ExpectSNI  string
}

var groupIDs = map[string]tls.CurveID{
	"x25519":             tls.X25519,
	"p256":               tls.CurveP256,
	"p384":               tls.CurveP384,
	"x25519mlkem768":     tls.X25519MLKEM768,
	"secp256r1mlkem768":  tls.SecP256r1MLKEM768,
	"secp384r1mlkem1024": tls.SecP384r1MLKEM1024,
}

// Names tlsmatrix gives that crypto/tls has no group for, with why.
var groupsMissing = map[string]string{
	"mlkem512":  "crypto/tls has no pure ML-KEM groups (it offers ML-KEM only in the three hybrids)",
	"mlkem768":  "crypto/tls has no pure ML-KEM groups (it offers ML-KEM only in the three hybrids)",
	"mlkem1024": "crypto/tls has no pure ML-KEM groups (it offers ML-KEM only in the three hybrids)",
}

// Unsupported is a combination crypto/tls cannot make; a driver reports it as unsupported,
// not as a failure.
type Unsupported struct{ Reason string }

func (u Unsupported) Error() string { return u.Reason }

// ParseGroup reads a tlsmatrix group name.
func ParseGroup(name string) (tls.CurveID, error) {
	if g, ok := groupIDs[name]; ok {
		return g, nil
	}
	if why, ok := groupsMissing[name]; ok {
		return 0, Unsupported{why}
	}
	return 0, fmt.Errorf("unknown group %q", name)
}

var schemes = map[string]tls.SignatureScheme{
	"ecdsa-p256": tls.ECDSAWithP256AndSHA256,
	"ecdsa-p384": tls.ECDSAWithP384AndSHA384,
	"rsa-2048":   tls.PSSWithSHA256,
	"rsa-3072":   tls.PSSWithSHA256,
	"ed25519":    tls.Ed25519,
}

// ParseOffer reads the names tlsmatrix uses; prefer may be empty.
func ParseOffer(version, cipher, group, prefer, sig string) (Offer, error) {
	var o Offer
	switch version {
	case "tls12":
		o.Version = tls.VersionTLS12
	case "tls13":
		o.Version = tls.VersionTLS13
	default:
		return o, fmt.Errorf("unknown version %q", version)
	}
	var err error
	if o.Group, err = ParseGroup(group); err != nil {
		return o, err
	}
	if prefer != "" {
		if o.Prefer, err = ParseGroup(prefer); err != nil {
			return o, err
		}
	}
	var ok bool
	if o.Scheme, ok = schemes[sig]; !ok {
		if strings.HasPrefix(sig, "mldsa") {
			return o, Unsupported{"crypto/tls has no ML-DSA: no signature scheme or certificate key for it (" + runtime.Version() + ")"}
		}
		return o, fmt.Errorf("unknown certificate key %q", sig)
	}
	if o.Version == tls.VersionTLS12 {
		curves := map[string]tls.CurveID{"ecdsa-p256": tls.CurveP256, "ecdsa-p384": tls.CurveP384}
		if c, ok := curves[sig]; ok && c != o.Group {
			o.CertCurve = c
		}
		rsa := sig == "rsa-2048" || sig == "rsa-3072"
		suites := map[string][2]uint16{
			"aes-128-gcm":       {tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256},
			"aes-256-gcm":       {tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
			"chacha20-poly1305": {tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256},
		}
		s, ok := suites[cipher]
		if !ok {
			return o, fmt.Errorf("unknown cipher %q", cipher)
		}
		o.Suite = s[0]
		if rsa {
			o.Suite = s[1]
		}
	} else {
		tls13 := map[string]uint16{
			"aes-128-gcm":       tls.TLS_AES_128_GCM_SHA256,
			"aes-256-gcm":       tls.TLS_AES_256_GCM_SHA384,
			"chacha20-poly1305": tls.TLS_CHACHA20_POLY1305_SHA256,
		}
		s, ok := tls13[cipher]
		if !ok {
			return o, fmt.Errorf("unknown cipher %q", cipher)
		}
		o.Suite = s
	}
	return o, nil
}

// Config pins version and group (and the TLS 1.2 suite); the TLS 1.3 suite is checked after
// the handshake instead, since crypto/tls chooses it itself.
func (o Offer) Config() *tls.Config {
	c := &tls.Config{
		MinVersion:       o.Version,
		MaxVersion:       o.Version,
		CurvePreferences: []tls.CurveID{o.Group},
	}
	if o.Prefer != 0 {
		c.CurvePreferences = []tls.CurveID{o.Prefer, o.Group}
	}
	c.NextProtos = o.ALPN
	if o.Version == tls.VersionTLS12 {
		c.CipherSuites = []uint16{o.Suite}
		if o.CertCurve != 0 {
			c.CurvePreferences = append(c.CurvePreferences, o.CertCurve)
		}
	}
	return c
}

// defaultGroupOrder is the order crypto/tls offers groups in: since Go 1.24 the order of
// Config.CurvePreferences is ignored, the list only selects (crypto/tls/defaults.go).
var defaultGroupOrder = []tls.CurveID{
	tls.X25519MLKEM768, tls.SecP256r1MLKEM768, tls.SecP384r1MLKEM1024,
	tls.X25519, tls.CurveP256, tls.CurveP384, tls.CurveP521,
}

// Unpinnable says why crypto/tls cannot be made to do what the offer asks, or nil.
func (o Offer) Unpinnable() error {
	if o.Version == tls.VersionTLS13 && o.Suite != tls.TLS_AES_128_GCM_SHA256 {
		return fmt.Errorf("crypto/tls chooses the TLS 1.3 cipher suite itself (AES-128-GCM on a CPU with AES instructions) and has no setting to pin %s",
			tls.CipherSuiteName(o.Suite))
	}
	before := func(a, b tls.CurveID) bool {
		return slices.Index(defaultGroupOrder, a) < slices.Index(defaultGroupOrder, b)
	}
	if o.Prefer != 0 && before(o.Group, o.Prefer) {
		return fmt.Errorf("crypto/tls offers groups in its own order (Config.CurvePreferences only selects them), so its client cannot offer %s before %s to draw a HelloRetryRequest",
			o.Prefer, o.Group)
	}
	// RFC 8422 makes a TLS 1.2 client list the certificate's curve, and a crypto/tls TLS 1.2
	// server takes the client's first group.
	if o.CertCurve != 0 && before(o.CertCurve, o.Group) {
		return fmt.Errorf("crypto/tls offers groups in its own order, so a TLS 1.2 client that must list %s for the certificate lists it before %s, and a crypto/tls server takes the first",
			o.CertCurve, o.Group)
	}
	return nil
}

// Check holds a connection's state to the offer; resumed says whether it must have resumed.
func (o Offer) Check(st tls.ConnectionState, resumed bool) error {
	if st.DidResume != resumed {
		return fmt.Errorf("resumed: %v, but the case asks for %v", st.DidResume, resumed)
	}
	if st.Version != o.Version {
		return fmt.Errorf("negotiated %s, but the case asks for %s", tls.VersionName(st.Version), tls.VersionName(o.Version))
	}
	if st.CipherSuite != o.Suite {
		return fmt.Errorf("negotiated %s, but the case asks for %s", tls.CipherSuiteName(st.CipherSuite), tls.CipherSuiteName(o.Suite))
	}
	if st.CurveID != 0 && st.CurveID != o.Group {
		return fmt.Errorf("negotiated group %s, but the case asks for %s", st.CurveID, o.Group)
	}
	if o.ExpectSNI != "" && st.ServerName != o.ExpectSNI {
		return fmt.Errorf("the server received SNI %q, but the case asks for %s", st.ServerName, o.ExpectSNI)
	}
	if o.ExpectALPN != "" && st.NegotiatedProtocol != o.ExpectALPN {
		return fmt.Errorf("ALPN agreed on %q, but the case asks for %s", st.NegotiatedProtocol, o.ExpectALPN)
	}
	return nil
}

// Certificate folder layout (the names are crates/model/src/cert_files.rs's, which a test
// holds these to; crates/harness/src/certs.rs writes the files): per key type, the trust
// anchor, the server's chains of one to four certificates with one key, and a client
// certificate.
const (
	CAFile        = "ca.pem"
	KeyFile       = "key.pem"
	ClientFile    = "client.pem"
	ClientKeyFile = "client-key.pem"
	completeFile  = "complete-v3"
)

// ChainFile names the chain of n certificates, leaf first.
func ChainFile(n int) string {
	if n == 1 {
		return "chain.pem"
	}
	return fmt.Sprintf("chain%d.pem", n)
}

// CheckFolder says, when dir is not a whole certificate set, how to make one.
func CheckFolder(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, completeFile)); err != nil {
		return fmt.Errorf("no complete certificate set in %s; any Rust driver (or `tlsmatrix run`) writes one there", dir)
	}
	return nil
}

// LoadRoots reads the set's trust anchor.
func LoadRoots(dir string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificate", filepath.Join(dir, CAFile))
	}
	return roots, nil
}

// LoadCert reads a chain and its key from the set.
func LoadCert(dir, chainFile, keyFile string) (tls.Certificate, error) {
	return tls.LoadX509KeyPair(filepath.Join(dir, chainFile), filepath.Join(dir, keyFile))
}
