package bogo

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseHonoursTheRunnersFlags(t *testing.T) {
	f, err := Parse([]string{"-port", "4433", "-shim-id", "7", "-server", "-curves", "29",
		"-curves", "23", "-advertise-alpn", "\x03foo", "-min-version", "771",
		"-expect-version", "772", "-async", "-resume-count", "2"})
	if err != nil {
		t.Fatal(err)
	}
	if f.Port != 4433 || f.ShimID != 7 || !f.Server || f.ResumeCount != 2 ||
		f.MinVersion != tls.VersionTLS12 || f.ExpectVersion != tls.VersionTLS13 {
		t.Fatalf("parsed %+v", f)
	}
	if len(f.Curves) != 2 || f.Curves[0] != tls.X25519 || f.Curves[1] != tls.CurveP256 {
		t.Fatalf("curves %v", f.Curves)
	}
	if names, _ := alpnNames(f.AdvertiseALPN); len(names) != 1 || names[0] != "foo" {
		t.Fatalf("alpn %q", names)
	}
}

// An unimplemented test's reason lands in the reasons folder under the test's name, and a
// name that is not one path component writes nothing.
func TestTheReasonIsLeftUnderTheTestsName(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(reasonsDirEnv, dir)
	_, err := Parse([]string{"-port", "1", "-enable-channel-id"})
	t.Setenv(testNameEnv, "ChannelID-Server")
	RecordReason(err)
	got, readErr := os.ReadFile(filepath.Join(dir, "ChannelID-Server"))
	if readErr != nil || string(got) != "unimplemented: -enable-channel-id: the crypto/tls shim does not honour it" {
		t.Fatalf("reason %q, %v", got, readErr)
	}
	t.Setenv(testNameEnv, "../escape")
	RecordReason(err)
	if _, statErr := os.Stat(filepath.Join(dir, "..", "escape")); statErr == nil {
		t.Fatal("a name with a slash wrote outside the folder")
	}
}

func TestAnythingNotHonouredIsUnimplemented(t *testing.T) {
	for _, args := range [][]string{
		{"-port", "1", "-enable-channel-id"},
		{"-port", "1", "-key-update"},
		{"-port", "1", "-curves", "1234"},
		{"-port", "1", "-max-version", "770"}, // TLS 1.1
		{"-port", "1", "-min-version"},        // no value
		{"-shim-id", "1"},                     // not started by the runner
	} {
		_, err := Parse(args)
		if !IsUnimplemented(err) {
			t.Errorf("%q: %v, want unimplemented", args, err)
		}
	}
	if _, err := Parse([]string{"-is-handshaker-supported"}); !errors.Is(err, ErrHandshakerQuery) {
		t.Errorf("handshaker query: %v", err)
	}
	if _, err := alpnNames([]byte("\x05ab")); !IsUnimplemented(err) {
		t.Errorf("a truncated ALPN list: %v", err)
	}
}

func TestVerifyPeerOverridesRequireAnyClientCertificate(t *testing.T) {
	cert, key := credential(t)
	base := []string{"-port", "1", "-server", "-cert-file", cert, "-key-file", key}
	for _, c := range []struct {
		extra []string
		want  tls.ClientAuthType
	}{
		{nil, tls.NoClientCert},
		{[]string{"-require-any-client-certificate"}, tls.RequireAnyClientCert},
		{[]string{"-require-any-client-certificate", "-verify-peer"}, tls.RequestClientCert},
	} {
		f, err := Parse(append(base, c.extra...))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := f.Config()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.ClientAuth != c.want {
			t.Errorf("%q: %v, want %v", c.extra, cfg.ClientAuth, c.want)
		}
	}
	f, _ := Parse([]string{"-port", "1", "-server"})
	if _, err := f.Config(); err == nil {
		t.Error("a server without -key-file was configured")
	}
}

// runnerSide listens as the runner does, starts the shim as a server with a test credential
// and the extra flags, and returns the connection the shim made and the shim's result.
func runnerSide(t *testing.T, extra ...string) (net.Conn, <-chan error) {
	t.Helper()
	cert, key := credential(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	f, err := Parse(append([]string{"-port", port, "-server", "-cert-file", cert, "-key-file", key}, extra...))
	if err != nil {
		t.Fatal(err)
	}
	shim := make(chan error, 1)
	go func() { shim <- Run(f) }()
	raw, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	return raw, shim
}

// TestTheShimEchoesFlippedAndClosesCleanly plays the runner's side of one server test: it
// reads the shim id, handshakes, writes, and expects every byte back flipped, then a
// close_notify answering its own.
func TestTheShimEchoesFlippedAndClosesCleanly(t *testing.T) {
	raw, shim := runnerSide(t, "-shim-id", "42", "-check-close-notify", "-expect-version", "772",
		"-curves", "29", "-expect-curve-id", "29")
	id := make([]byte, 8)
	if _, err := io.ReadFull(raw, id); err != nil || binary.LittleEndian.Uint64(id) != 42 {
		t.Fatalf("shim id %v, %v", id, err)
	}
	c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13,
		CurvePreferences: []tls.CurveID{tls.X25519}})
	msg := []byte("runner says hi")
	if _, err := c.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] ^= 0xff
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo %q", got)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(got); n != 0 || err != io.EOF {
		t.Fatalf("after close_notify: %d, %v (want the shim's close_notify)", n, err)
	}
	raw.Close()
	if err := <-shim; err != nil {
		t.Fatalf("shim: %v", err)
	}
}

// TestAFailedCheckFailsTheTest: the shim expects TLS 1.2 and the runner's side allows only 1.3.
func TestAFailedCheckFailsTheTest(t *testing.T) {
	raw, shim := runnerSide(t, "-expect-version", "771")
	io.ReadFull(raw, make([]byte, 8))
	c := tls.Client(raw, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13})
	c.Handshake()
	raw.Close()
	if err := <-shim; err == nil || !strings.Contains(err.Error(), "want version 0303, got 0304") {
		t.Fatalf("shim: %v, want the version check to fail", err)
	}
}

// credential writes a self-signed ECDSA P-256 certificate and its key, as the runner passes
// them, and returns their paths.
func credential(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"test"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	write := func(path, kind string, der []byte) {
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cert, "CERTIFICATE", der)
	write(key, "PRIVATE KEY", kder)
	return cert, key
}
