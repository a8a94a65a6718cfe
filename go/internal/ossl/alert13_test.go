//go:build openssl

package ossl

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// expandLabel is HKDF-Expand-Label (RFC 8446, section 7.1) with an empty
// context, written from the RFC apart from the C code it checks.
func expandLabel(t *testing.T, h func() hash.Hash, secret []byte, label string, n int) []byte {
	t.Helper()
	full := "tls13 " + label
	info := append([]byte{byte(n >> 8), byte(n), byte(len(full))}, full...)
	info = append(info, 0)
	out, err := hkdf.Expand(h, secret, string(info), n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// openAlert decrypts a sealed record with Go's AEADs and returns the inner
// plaintext.
func openAlert(t *testing.T, suite uint16, secret, record []byte) []byte {
	t.Helper()
	h, keyLen := sha256.New, 16
	switch suite {
	case 0x1302:
		h, keyLen = sha512.New384, 32
	case 0x1303:
		keyLen = 32
	}
	key := expandLabel(t, h, secret, "key", keyLen)
	iv := expandLabel(t, h, secret, "iv", 12)
	var aead cipher.AEAD
	var err error
	if suite == 0x1303 {
		aead, err = chacha20poly1305.New(key)
	} else {
		var block cipher.Block
		if block, err = aes.NewCipher(key); err == nil {
			aead, err = cipher.NewGCM(block)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	plain, err := aead.Open(nil, iv, record[5:], record[:5])
	if err != nil {
		t.Fatalf("suite %#04x: Go cannot open the sealed alert: %v", suite, err)
	}
	return plain
}

func TestSealAlert13OpensWithGo(t *testing.T) {
	if BoringAPI() {
		t.Skip("BoringSSL and AWS-LC seal their own alerts; the shim's sealing is not built")
	}
	for _, tc := range []struct {
		suite     uint16
		secretLen int
	}{{0x1301, 32}, {0x1302, 48}, {0x1303, 32}} {
		secret := bytes.Repeat([]byte{0xa5}, tc.secretLen)
		secret[0] = byte(tc.suite)
		for _, alert := range []uint8{42, 40, 116} {
			rec := sealAlert13(tc.suite, secret, alert, 64)
			if len(rec) != 24 {
				t.Fatalf("suite %#04x: sealed %d bytes, want 24", tc.suite, len(rec))
			}
			if want := []byte{23, 3, 3, 0, 19}; !bytes.Equal(rec[:5], want) {
				t.Fatalf("suite %#04x: header % x, want % x", tc.suite, rec[:5], want)
			}
			if got, want := openAlert(t, tc.suite, secret, rec), []byte{2, alert, 21}; !bytes.Equal(got, want) {
				t.Fatalf("suite %#04x: inner plaintext % x, want % x (fatal, alert, content type alert)", tc.suite, got, want)
			}
		}
	}
}

func TestSealAlert13Refuses(t *testing.T) {
	if BoringAPI() {
		t.Skip("BoringSSL and AWS-LC seal their own alerts; the shim's sealing is not built")
	}
	s32, s48 := make([]byte, 32), make([]byte, 48)
	for _, tc := range []struct {
		name   string
		suite  uint16
		secret []byte
		outcap int
	}{
		{"unknown suite", 0x1304, s32, 64},
		{"TLS 1.2 suite", 0xc02b, s32, 64},
		{"secret shorter than the hash", 0x1302, s32, 64},
		{"secret longer than the hash", 0x1301, s48, 64},
		{"empty secret", 0x1301, nil, 64},
		{"no room for the record", 0x1301, s32, 23},
	} {
		if rec := sealAlert13(tc.suite, tc.secret, 42, tc.outcap); rec != nil {
			t.Errorf("%s: sealed % x, want a refusal", tc.name, rec)
		}
	}
}

func TestKeylogSecret(t *testing.T) {
	if BoringAPI() {
		t.Skip("BoringSSL and AWS-LC seal their own alerts; the key-log parser is not built")
	}
	const label = "CLIENT_HANDSHAKE_TRAFFIC_SECRET"
	random := "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	secret := bytes.Repeat([]byte{0x3c}, 48)
	line := label + " " + random + " " + hex.EncodeToString(secret)
	if got := keylogSecret(line, label); !bytes.Equal(got, secret) {
		t.Fatalf("parsed % x, want % x", got, secret)
	}
	for name, bad := range map[string]string{
		"another label":       "SERVER_HANDSHAKE_TRAFFIC_SECRET " + random + " " + hex.EncodeToString(secret),
		"label prefix only":   label + "X " + random + " " + hex.EncodeToString(secret),
		"no secret":           label + " " + random,
		"odd digits":          label + " " + random + " abc",
		"not hex":             label + " " + random + " zz" + hex.EncodeToString(secret[1:]),
		"longer than SHA-384": label + " " + random + " " + hex.EncodeToString(append(secret, 1)),
	} {
		if got := keylogSecret(bad, label); got != nil {
			t.Errorf("%s: parsed % x, want nothing", name, got)
		}
	}
}
