package driver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/tlsconf"
)

// testCerts writes, once per test binary, a certificate set per key type in the layout
// crates/harness/src/certs.rs writes (a root, three intermediates in a line, a localhost leaf
// at each depth with one key, a client certificate), so the driver's tests need no Rust.
var testCerts = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "tlsmatrix-driver-go-certs")
	if err != nil {
		return "", err
	}
	for _, sig := range []string{"ecdsa-p256", "ecdsa-p384", "rsa-2048", "rsa-3072", "ed25519"} {
		if err := writeCertSet(filepath.Join(dir, sig), sig); err != nil {
			return "", err
		}
	}
	return dir, nil
})

func certDir(t *testing.T) string {
	t.Helper()
	dir, err := testCerts()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func newKey(sig string) (crypto.Signer, error) {
	switch sig {
	case "ecdsa-p256":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ecdsa-p384":
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "rsa-2048":
		return rsa.GenerateKey(rand.Reader, 2048)
	case "rsa-3072":
		return rsa.GenerateKey(rand.Reader, 3072)
	}
	_, k, err := ed25519.GenerateKey(rand.Reader)
	return k, err
}

func pemOf(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func writeCertSet(dir, sig string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	serial := int64(1)
	issue := func(tmpl *x509.Certificate, parent *x509.Certificate, key, parentKey crypto.Signer) (*x509.Certificate, error) {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
		if err != nil {
			return nil, err
		}
		return x509.ParseCertificate(der)
	}
	ca := func(name string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	}
	rootKey, err := newKey(sig)
	if err != nil {
		return err
	}
	root, err := issue(ca("tlsmatrix test root"), nil, rootKey, nil)
	if err != nil {
		return err
	}
	leafKey, err := newKey(sig)
	if err != nil {
		return err
	}
	files := map[string][]byte{tlsconf.CAFile: pemOf("CERTIFICATE", root.Raw)}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(leafKey)
	files[tlsconf.KeyFile] = pemOf("PRIVATE KEY", keyDER)
	issuers, issuerKeys := []*x509.Certificate{root}, []crypto.Signer{rootKey}
	for depth := 1; depth <= 4; depth++ {
		parent, parentKey := issuers[depth-1], issuerKeys[depth-1]
		leaf, err := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, parent, leafKey, parentKey)
		if err != nil {
			return err
		}
		chain := pemOf("CERTIFICATE", leaf.Raw)
		for i := depth - 1; i >= 1; i-- {
			chain = append(chain, pemOf("CERTIFICATE", issuers[i].Raw)...)
		}
		files[tlsconf.ChainFile(depth)] = chain
		if depth < 4 {
			k, err := newKey(sig)
			if err != nil {
				return err
			}
			mid, err := issue(ca("tlsmatrix test intermediate"), parent, k, parentKey)
			if err != nil {
				return err
			}
			issuers, issuerKeys = append(issuers, mid), append(issuerKeys, k)
		}
	}
	clientKey, err := newKey(sig)
	if err != nil {
		return err
	}
	client, err := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "tlsmatrix client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, root, clientKey, rootKey)
	if err != nil {
		return err
	}
	files[tlsconf.ClientFile] = pemOf("CERTIFICATE", client.Raw)
	clientDER, _ := x509.MarshalPKCS8PrivateKey(clientKey)
	files[tlsconf.ClientKeyFile] = pemOf("PRIVATE KEY", clientDER)
	files["complete-v3"] = nil
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
