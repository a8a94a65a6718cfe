//go:build openssl

package ossl

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"testing"
	"time"
)

// identity is a self-signed ECDSA P-256 certificate and its PKCS#8 key.
func identity(t *testing.T) (chain [][]byte, key []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ossl test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	if key, err = x509.MarshalPKCS8PrivateKey(priv); err != nil {
		t.Fatal(err)
	}
	return [][]byte{der}, key
}

// side is one end's configuration and certificate check.
type side struct {
	alpn   []string
	verify VerifyFunc
}

func accept([][]byte) error { return nil }

// handshake runs a client and a server context against each other over an
// in-process pipe. It returns the client's handshake error and a channel
// with the server's: in TLS 1.3 the client finishes first, and a server
// alert sent after that waits on the pipe until the client reads.
func handshake(t *testing.T, client, server side) (c, s *Conn, cErr error, sErr <-chan error) {
	t.Helper()
	chain, key := identity(t)
	base := Config{Chain: chain, Key: key, Groups: "X25519",
		Ciphersuites: "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256",
		MinVersion:   0x0304, MaxVersion: 0x0304}
	cc, sc := base, base
	cc.ALPN, sc.ALPN, sc.Server = client.alpn, server.alpn, true
	cx, err := NewContext(cc)
	if err != nil {
		t.Fatal(err)
	}
	sx, err := NewContext(sc)
	if err != nil {
		t.Fatal(err)
	}
	cRaw, sRaw := net.Pipe()
	t.Cleanup(func() { cRaw.Close(); sRaw.Close() })
	if c, err = cx.Wrap(cRaw, client.verify); err != nil {
		t.Fatal(err)
	}
	if s, err = sx.Wrap(sRaw, server.verify); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		err := s.Handshake(ctx)
		if err != nil {
			sRaw.Close() // unblocks a client still waiting for a flight
		}
		done <- err
	}()
	cErr = c.Handshake(ctx)
	if cErr != nil {
		cRaw.Close()
	}
	return c, s, cErr, done
}

func TestHandshakeNegotiatesWhatIsConfigured(t *testing.T) {
	c, s, cErr, done := handshake(t,
		side{alpn: []string{"b", "a"}, verify: accept},
		side{alpn: []string{"a", "b"}, verify: accept})
	if sErr := <-done; cErr != nil || sErr != nil {
		t.Fatalf("client: %v, server: %v", cErr, sErr)
	}
	want := State{Version: 0x0304, CipherSuite: 0x1301, Group: 0x001d, PeerSignature: 0x0403, ALPN: "b"}
	if got := c.State(); got != want {
		t.Errorf("client state %+v, want %+v", got, want)
	}
	// The server saw the client's certificate (mutual authentication).
	if got := s.State(); got != want {
		t.Errorf("server state %+v, want %+v", got, want)
	}
	msg := []byte("ping over OpenSSL")
	go func() { _, _ = c.Write(msg) }()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(s, got); err != nil || string(got) != string(msg) {
		t.Fatalf("server read %q, %v; want %q", got, err, msg)
	}
}

// A side whose check refuses the peer fails with the check's own error, and
// the peer receives bad_certificate. When the client refuses, the alert is
// the one the shim seals itself (alert13.c): the server reading it as
// bad_certificate, not as a bad record MAC, is what shows the sealing right.
func TestRefusedPeerGetsBadCertificate(t *testing.T) {
	refused := errors.New("not the peer we dialled")
	refuse := func([][]byte) error { return refused }
	for _, offender := range []string{"client", "server"} {
		t.Run("refused-by-"+offender, func(t *testing.T) {
			client, server := side{verify: accept}, side{verify: accept}
			if offender == "client" {
				client.verify = refuse
			} else {
				server.verify = refuse
			}
			c, _, cErr, done := handshake(t, client, server)
			if offender == "server" && cErr == nil {
				// The client finished its side; the refusal arrives on its
				// first read.
				_, cErr = c.Read(make([]byte, 1))
			}
			sErr := <-done
			mine, theirs := cErr, sErr
			if offender == "server" {
				mine, theirs = sErr, cErr
			}
			if !errors.Is(mine, refused) {
				t.Fatalf("the refusing side's error is %v, want the check's own", mine)
			}
			var ae *AlertError
			if !errors.As(theirs, &ae) || !ae.Remote || ae.Alert != 42 {
				t.Fatalf("the refused side's error is %v, want a received bad_certificate alert", theirs)
			}
			if a, ok := ae.RemoteAlert(); !ok || a != 42 {
				t.Fatalf("RemoteAlert() = %d, %v", a, ok)
			}
		})
	}
}

func TestNewContextRejectsBadInput(t *testing.T) {
	chain, key := identity(t)
	good := Config{Chain: chain, Key: key, MinVersion: 0x0304, MaxVersion: 0x0304}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no certificate", func(c *Config) { c.Chain = nil }},
		{"no key", func(c *Config) { c.Key = nil }},
		{"no versions", func(c *Config) { c.MinVersion, c.MaxVersion = 0, 0 }},
		{"key that is not DER", func(c *Config) { c.Key = []byte("not a key") }},
		{"key of another certificate", func(c *Config) { _, c.Key = identity(t) }},
		{"unknown group", func(c *Config) { c.Groups = "NOT-A-GROUP" }},
		{"unknown suite", func(c *Config) { c.Ciphersuites = "TLS_NOT_A_SUITE" }},
		{"empty ALPN protocol", func(c *Config) { c.ALPN = []string{""} }},
	} {
		cfg := good
		tc.edit(&cfg)
		if _, err := NewContext(cfg); err == nil {
			t.Errorf("%s: NewContext accepted it", tc.name)
		}
	}
	if _, err := NewContext(good); err != nil {
		t.Fatalf("the unedited config: %v", err)
	}
}

func TestGroupsSupported(t *testing.T) {
	if !GroupsSupported("X25519:P-256") {
		t.Errorf("%s: X25519 and P-256 reported missing", Version())
	}
	if GroupsSupported("X25519:NOT-A-GROUP") {
		t.Errorf("%s: an unknown group reported supported", Version())
	}
}

func TestCleanOpenSSLError(t *testing.T) {
	for in, want := range map[string]string{
		"error:0A000086:SSL routines::certificate verify failed":     "certificate verify failed",
		"error:1000007b:SSL routines:OPENSSL_internal:BAD_SIGNATURE": "bad signature",
		"":                "",
		"no colon at all": "no colon at all",
		"error:0A000076:SSL routines::no suitable signature algorithm": "no suitable signature algorithm",
	} {
		if got := cleanOpenSSLError(in); got != want {
			t.Errorf("cleanOpenSSLError(%q) = %q, want %q", in, got, want)
		}
	}
}

// libssl's own allocations are counted: a handshake makes some, and the count only grows.
func TestLibsslAllocationsAreCounted(t *testing.T) {
	calls0, bytes0, ok := CAllocations()
	if !ok {
		t.Fatal("the allocator hooks are not in: libssl allocated before tm_init")
	}
	_, _, cErr, done := handshake(t, side{verify: accept}, side{verify: accept})
	if sErr := <-done; cErr != nil || sErr != nil {
		t.Fatalf("client: %v, server: %v", cErr, sErr)
	}
	calls1, bytes1, _ := CAllocations()
	if calls1 <= calls0 || bytes1 <= bytes0 {
		t.Fatalf("a handshake counted %d allocations, %d bytes", calls1-calls0, bytes1-bytes0)
	}
	// A TLS 1.3 handshake of each side allocates at least tens of blocks and kilobytes.
	if calls1-calls0 < 20 || bytes1-bytes0 < 4096 {
		t.Errorf("implausibly few: %d allocations, %d bytes", calls1-calls0, bytes1-bytes0)
	}
}
