//go:build openssl

package ossl

/*
#cgo CFLAGS: -O2 -Wall
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"crypto/tls"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

func init() {
	if C.tm_init() == 0 {
		panic("ossl: OpenSSL could not allocate an ex_data index")
	}
}

// BuiltFor is the library a vendored build was linked against, an OpenSSL
// release ("3.6"), "boringssl" or "aws-lc", set with -ldflags -X by the
// Makefile; empty for the system libssl.
var BuiltFor string

// BoringSource names the source a BoringSSL build came from ("boring-sys
// 5.4.0"), set by the Makefile: BoringSSL has no version of its own.
var BoringSource string

// CheckBuild fails when the libssl running is not the library the binary
// was built for, so a build that picked up another library never measures
// it under the wrong name.
func CheckBuild() error {
	v := Version()
	switch {
	case BuiltFor == "":
		return nil
	case BuiltFor == "boringssl":
		if !strings.HasPrefix(v, "BoringSSL") {
			return fmt.Errorf("ossl: built for BoringSSL but running %s", v)
		}
	case BuiltFor == "aws-lc":
		if !strings.HasPrefix(v, "AWS-LC ") {
			return fmt.Errorf("ossl: built for AWS-LC but running %s", v)
		}
	case !strings.HasPrefix(v, "OpenSSL "+BuiltFor+"."):
		return fmt.Errorf("ossl: built for OpenSSL %s but running %s", BuiltFor, v)
	}
	return nil
}

// Version is the version string of the libssl this process runs with, as
// the library reports it at run time, e.g. "OpenSSL 3.0.19 27 Jan 2026",
// "AWS-LC 1.73.0" or, for BoringSSL, "BoringSSL (boring-sys 5.4.0)".
func Version() string {
	v := C.GoString(C.tm_version())
	if v == "BoringSSL" && BoringSource != "" {
		return v + " (" + BoringSource + ")"
	}
	return v
}

// BoringAPI reports whether the linked libssl is BoringSSL or AWS-LC, its
// fork, whose libssl API the shim uses in place of OpenSSL's.
func BoringAPI() bool { return C.tm_boring_api() == 1 }

// GroupsSupported reports whether this libssl knows every group in the
// colon-separated list (OpenSSL names, e.g. "X25519MLKEM768").
func GroupsSupported(groups string) bool {
	c := C.CString(groups)
	defer C.free(unsafe.Pointer(c))
	return C.tm_groups_supported(c) == 1
}

// Config describes one side of a TLS connection.
type Config struct {
	Server bool
	// Chain is sent as given, leaf first.
	Chain [][]byte
	// Key is the leaf's private key, DER (PKCS#8 or the traditional form).
	Key []byte
	// Groups in preference order, OpenSSL names ("X25519:P-256"); empty for the library default.
	Groups string
	// Ciphersuites is the TLS 1.3 suite list in preference order; empty for the library default.
	Ciphersuites string
	// ALPN protocols; a server picks the client's most preferred one it accepts.
	ALPN []string
	// MinVersion and MaxVersion are TLS protocol versions, e.g. 0x0304.
	MinVersion, MaxVersion uint16
}

// Context holds a parsed configuration, shared by every connection made from it.
type Context struct {
	ptr *C.tm_ctx
}

// NewContext parses cfg once; connections made from the context reuse it.
func NewContext(cfg Config) (*Context, error) {
	if len(cfg.Chain) == 0 || len(cfg.Key) == 0 {
		return nil, errors.New("ossl: a certificate and a private key are required")
	}
	if cfg.MinVersion == 0 || cfg.MaxVersion == 0 {
		return nil, errors.New("ossl: MinVersion and MaxVersion must be set")
	}
	var c C.tm_ctx_config
	if cfg.Server {
		c.is_server = 1
	}
	// Everything goes through C memory: the config struct holds pointers, and
	// cgo forbids passing Go memory that holds Go pointers.
	var chain []byte
	lens := make([]C.size_t, len(cfg.Chain))
	for i, der := range cfg.Chain {
		chain = append(chain, der...)
		lens[i] = C.size_t(len(der))
	}
	var alpn []byte
	for _, p := range cfg.ALPN {
		if len(p) == 0 || len(p) > 255 {
			return nil, fmt.Errorf("ossl: ALPN protocol %q must be 1 to 255 bytes", p)
		}
		alpn = append(append(alpn, byte(len(p))), p...)
	}
	cChain := C.CBytes(chain)
	cLens := C.CBytes(unsafe.Slice((*byte)(unsafe.Pointer(&lens[0])), len(lens)*int(unsafe.Sizeof(lens[0]))))
	cKey := C.CBytes(cfg.Key)
	cGroups := C.CString(cfg.Groups)
	cSuites := C.CString(cfg.Ciphersuites)
	var cALPN unsafe.Pointer
	if len(alpn) > 0 {
		cALPN = C.CBytes(alpn)
	}
	defer func() {
		// The key is secret: wipe our copy before freeing it.
		C.memset(cKey, 0, C.size_t(len(cfg.Key)))
		for _, p := range []unsafe.Pointer{cChain, cLens, cKey, unsafe.Pointer(cGroups), unsafe.Pointer(cSuites), cALPN} {
			C.free(p)
		}
	}()
	c.chain = (*C.uint8_t)(cChain)
	c.chain_lens = (*C.size_t)(cLens)
	c.chain_count = C.int(len(cfg.Chain))
	c.key = (*C.uint8_t)(cKey)
	c.key_len = C.size_t(len(cfg.Key))
	c.groups = cGroups
	c.ciphersuites = cSuites
	c.alpn = (*C.uint8_t)(cALPN)
	c.alpn_len = C.size_t(len(alpn))
	c.min_version = C.int(cfg.MinVersion)
	c.max_version = C.int(cfg.MaxVersion)

	var errBuf [512]C.char
	ptr := C.tm_ctx_new(&c, &errBuf[0], C.size_t(len(errBuf)))
	if ptr == nil {
		return nil, fmt.Errorf("ossl: %s", C.GoString(&errBuf[0]))
	}
	x := &Context{ptr: ptr}
	// Connections hold their own reference to the SSL_CTX, so freeing the
	// context when it becomes unreachable is safe.
	runtime.AddCleanup(x, func(p *C.tm_ctx) { C.tm_ctx_free(p) }, ptr)
	return x, nil
}

// AlertError is a TLS alert, received from the peer or sent to it.
type AlertError struct {
	Alert  uint8
	Remote bool   // the peer sent it
	Detail string // why we sent it, when we did
}

// RemoteAlert reports the alert when the peer sent it, so callers can read
// received alerts without importing this package.
func (e *AlertError) RemoteAlert() (uint8, bool) { return e.Alert, e.Remote }

func (e *AlertError) Error() string {
	// crypto/tls's words, so errors read alike whichever backend made them.
	text := tls.AlertError(e.Alert).Error()
	if e.Remote {
		return "remote error: " + text
	}
	if e.Detail != "" {
		return fmt.Sprintf("tls: %s (sent alert: %s)", e.Detail, strings.TrimPrefix(text, "tls: "))
	}
	return "sent alert: " + text
}

// cleanOpenSSLError turns "error:0A000086:SSL routines::certificate verify failed"
// into "certificate verify failed", and BoringSSL's reason codes
// ("error:1000007b:SSL routines:OPENSSL_internal:BAD_SIGNATURE") into the
// same kind of words ("bad signature"), so errors read alike on either.
func cleanOpenSSLError(s string) string {
	if i := strings.LastIndex(s, ":"); i >= 0 && i+1 < len(s) {
		s = s[i+1:]
	}
	if s != "" && strings.ToUpper(s) == s {
		s = strings.ToLower(strings.ReplaceAll(s, "_", " "))
	}
	return s
}
