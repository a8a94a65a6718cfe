package tlsconf

import (
	"crypto/tls"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestOffersPinWhatTheyName(t *testing.T) {
	o, err := ParseOffer("tls12", "chacha20-poly1305", "p384", "", "rsa-2048")
	if err != nil {
		t.Fatal(err)
	}
	if o.Suite != tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 || o.Scheme != tls.PSSWithSHA256 || o.CertCurve != 0 {
		t.Fatalf("%+v", o)
	}
	c := o.Config()
	if c.MinVersion != tls.VersionTLS12 || c.MaxVersion != tls.VersionTLS12 || len(c.CipherSuites) != 1 ||
		len(c.CurvePreferences) != 1 || c.CurvePreferences[0] != tls.CurveP384 {
		t.Fatalf("%+v", c)
	}
	// TLS 1.2 with an ECDSA certificate lists the certificate's curve too (RFC 8422).
	e, _ := ParseOffer("tls12", "aes-128-gcm", "x25519", "", "ecdsa-p384")
	if e.CertCurve != tls.CurveP384 || len(e.Config().CurvePreferences) != 2 {
		t.Fatalf("%+v", e)
	}
	for _, bad := range [][5]string{
		{"tls11", "aes-128-gcm", "x25519", "", "ecdsa-p256"},
		{"tls13", "aes-512-gcm", "x25519", "", "ecdsa-p256"},
		{"tls13", "aes-128-gcm", "x448", "", "ecdsa-p256"},
		{"tls13", "aes-128-gcm", "x25519", "", "dsa-1024"},
	} {
		if _, err := ParseOffer(bad[0], bad[1], bad[2], bad[3], bad[4]); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}

func TestWhatCryptoTLSCannotPinIsSaid(t *testing.T) {
	for _, tc := range []struct {
		version, cipher, group, prefer, want string
	}{
		{"tls13", "aes-256-gcm", "x25519", "", "chooses the TLS 1.3 cipher suite itself"},
		{"tls13", "aes-128-gcm", "x25519", "p256", "cannot offer CurveP256 before X25519"},
		{"tls13", "aes-128-gcm", "p256", "x25519", ""},
		{"tls12", "aes-256-gcm", "x25519", "", ""},
		{"tls12", "aes-128-gcm", "p384", "", "lists it before CurveP384"},
	} {
		o, err := ParseOffer(tc.version, tc.cipher, tc.group, tc.prefer, "ecdsa-p256")
		if err != nil {
			t.Fatal(err)
		}
		err = o.Unpinnable()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: got %v", tc, err)
		}
	}
}

// The file names are the Rust side's (crates/model/src/cert_files.rs): both read one folder.
func TestCertificateFileNamesAreTheRustSides(t *testing.T) {
	src, err := os.ReadFile("../../../crates/model/src/cert_files.rs")
	if err != nil {
		t.Fatal(err)
	}
	rust := map[string]string{}
	for _, m := range regexp.MustCompile(`pub const ([A-Z_]+): &str = "([^"]+)";`).FindAllStringSubmatch(string(src), -1) {
		rust[m[1]] = m[2]
	}
	for name, ours := range map[string]string{
		"CA": CAFile, "KEY": KeyFile, "CLIENT_CHAIN": ClientFile, "CLIENT_KEY": ClientKeyFile, "CHAIN": ChainFile(1),
	} {
		if rust[name] != ours {
			t.Errorf("cert_files::%s is %q in Rust, %q here", name, rust[name], ours)
		}
	}
	if !strings.Contains(string(src), `format!("chain{n}.pem")`) || ChainFile(3) != "chain3.pem" {
		t.Errorf("longer chains are named differently in Rust and Go")
	}
}
