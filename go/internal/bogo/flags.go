// Package bogo is the BoGo shim for Go's crypto/tls: BoringSSL's TLS test runner
// (ssl/test/runner) starts it once per test with flags that say how to configure the stack
// and what to check; the shim connects back to the runner, plays its side over TCP, echoes
// data, and exits 0 when every check held. It is the Go side of crates/driver/src/bogo.rs and
// honours the same flags, less those crypto/tls has no API for; any other flag exits with
// status 89, which the runner counts as "unimplemented", never as passed.
package bogo

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ExitUnimplemented is the runner's exit status for a shim that does not implement what a
// test asks.
const ExitUnimplemented = 89

// Unimplemented says which flag (and, where it helps, why) a test cannot run here.
type Unimplemented struct{ What string }

func (u *Unimplemented) Error() string { return "unimplemented: " + u.What }

func unimplemented(format string, a ...any) error {
	return &Unimplemented{fmt.Sprintf(format, a...)}
}

// The environment `tlsmatrix conformance` gives a shim (crates/model/src/bogo_flags.rs): the
// folder for the reasons of its unimplemented tests, and the test's name, for which the
// runner itself keeps only the exit status.
const (
	reasonsDirEnv = "TLSMATRIX_BOGO_REASONS"
	testNameEnv   = "BOGO_TEST_NAME"
)

// RecordReason leaves why the test is unimplemented in the reasons folder, under the test's
// name, as the Rust shims do; without the folder or a name it does nothing.
func RecordReason(err error) {
	dir, test := os.Getenv(reasonsDirEnv), os.Getenv(testNameEnv)
	// A test name is one path component; anything else is no name the runner gives.
	if dir == "" || test == "" || strings.Contains(test, "/") || strings.HasPrefix(test, ".") {
		return
	}
	_ = os.WriteFile(filepath.Join(dir, test), []byte(err.Error()), 0o644)
}

// IsUnimplemented reports whether err means the test asks what this shim cannot honour.
func IsUnimplemented(err error) bool {
	var u *Unimplemented
	return errors.As(err, &u)
}

// Flags is what the runner asked, from the flags this shim honours.
type Flags struct {
	Port    uint16
	ShimID  uint64
	IPv6    bool
	Server  bool
	KeyFile string
	// CertFile is the credential's chain; -trust-cert is taken and ignored, since no chain
	// is verified (as BoringSSL's shim, whose verify callback accepts any).
	CertFile          string
	VerifyPeer        bool
	RequireClientCert bool
	// ResumeCount is how many connections follow the first, each resuming the one before.
	ResumeCount       int
	ExpectSessionMiss bool
	// AdvertiseALPN is the client's offer, in ALPN's wire form (length-prefixed names).
	AdvertiseALPN []byte
	// SelectALPN is the one protocol a server accepts.
	SelectALPN       string
	ExpectALPN       string
	Curves           []tls.CurveID
	ExpectCurveID    tls.CurveID
	MinVersion       uint16
	MaxVersion       uint16
	ExpectVersion    uint16
	HostName         string
	ExpectServerName string
	ShimWritesFirst  bool
	CheckCloseNotify bool
}

// ErrHandshakerQuery is Parse's answer to -is-handshaker-supported: the runner asks before
// making its split-handshake tests, a feature only BoringSSL has, so the answer is "No".
var ErrHandshakerQuery = errors.New("handshaker query")

// crypto/tls's groups by code point (RFC 8446 and the IANA registry).
var groups = map[uint64]tls.CurveID{
	uint64(tls.CurveP256):      tls.CurveP256,
	uint64(tls.CurveP384):      tls.CurveP384,
	uint64(tls.CurveP521):      tls.CurveP521,
	uint64(tls.X25519):         tls.X25519,
	uint64(tls.X25519MLKEM768): tls.X25519MLKEM768,
}

// Parse reads the runner's flags. Anything this shim does not honour is *Unimplemented.
func Parse(args []string) (*Flags, error) {
	f := &Flags{}
	for i := 0; i < len(args); i++ {
		flag := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", unimplemented("%s without a value", flag)
			}
			i++
			return args[i], nil
		}
		number := func(bits int) (uint64, error) {
			v, err := value()
			if err != nil {
				return 0, err
			}
			n, err := strconv.ParseUint(v, 10, bits)
			if err != nil {
				return 0, unimplemented("%s %s: not a number", flag, v)
			}
			return n, nil
		}
		var err error
		var n uint64
		switch flag {
		case "-is-handshaker-supported":
			return nil, ErrHandshakerQuery
		case "-port":
			n, err = number(16)
			f.Port = uint16(n)
		case "-shim-id":
			f.ShimID, err = number(64)
		case "-ipv6":
			f.IPv6 = true
		case "-server":
			f.Server = true
		case "-key-file":
			f.KeyFile, err = value()
		case "-cert-file":
			f.CertFile, err = value()
		case "-trust-cert":
			_, err = value()
		case "-verify-peer":
			f.VerifyPeer = true
		case "-require-any-client-certificate":
			f.RequireClientCert = true
		case "-resume-count":
			n, err = number(8)
			f.ResumeCount = int(n)
		case "-expect-session-miss":
			f.ExpectSessionMiss = true
		case "-advertise-alpn":
			var v string
			v, err = value()
			f.AdvertiseALPN = []byte(v)
		case "-select-alpn":
			f.SelectALPN, err = value()
		case "-expect-alpn":
			f.ExpectALPN, err = value()
		case "-curves":
			if n, err = number(16); err == nil {
				g, ok := groups[n]
				if !ok {
					return nil, unimplemented("-curves %d: crypto/tls has no such group", n)
				}
				f.Curves = append(f.Curves, g)
			}
		case "-expect-curve-id":
			n, err = number(16)
			f.ExpectCurveID = tls.CurveID(n)
		case "-min-version":
			n, err = number(16)
			f.MinVersion = uint16(n)
		case "-max-version":
			n, err = number(16)
			f.MaxVersion = uint16(n)
		case "-expect-version":
			n, err = number(16)
			f.ExpectVersion = uint16(n)
		case "-host-name":
			f.HostName, err = value()
		case "-expect-server-name":
			f.ExpectServerName, err = value()
		case "-shim-writes-first":
			f.ShimWritesFirst = true
		case "-check-close-notify":
			f.CheckCloseNotify = true
		case "-key-update":
			// crypto/tls answers a peer's KeyUpdate but has no API to send one.
			return nil, unimplemented("-key-update: crypto/tls cannot be asked to send a KeyUpdate")
		case "-async", "-implicit-handshake":
			// crypto/tls over a blocking socket handshakes on the first read or write, or
			// when asked; these ask nothing more of it.
		default:
			return nil, unimplemented("%s: the crypto/tls shim does not honour it", flag)
		}
		if err != nil {
			return nil, err
		}
	}
	if f.Port == 0 {
		return nil, unimplemented("no -port: not started by the runner")
	}
	for _, v := range []uint16{f.MinVersion, f.MaxVersion} {
		if v != 0 && v != tls.VersionTLS12 && v != tls.VersionTLS13 {
			// tlsmatrix configures every library for TLS 1.2 and 1.3 only.
			return nil, unimplemented("version %#04x: only TLS 1.2 and 1.3 are configured", v)
		}
	}
	return f, nil
}

// alpnNames splits ALPN's wire form into protocol names.
func alpnNames(wire []byte) ([]string, error) {
	var out []string
	for len(wire) > 0 {
		n := int(wire[0])
		if n == 0 || len(wire) < 1+n {
			return nil, unimplemented("-advertise-alpn: malformed list")
		}
		out = append(out, string(wire[1:1+n]))
		wire = wire[1+n:]
	}
	return out, nil
}
