package driver

import (
	"bytes"
	"testing"
)

// Both sides of every group crypto/tls has reach one secret through the floor's key
// exchange, so each half of a hybrid is cut from the share where its draft puts it.
func TestFloorKeyExchangeAgrees(t *testing.T) {
	for _, g := range []string{"x25519", "p256", "p384", "x25519mlkem768", "secp256r1mlkem768", "secp384r1mlkem1024", "mlkem768", "mlkem1024"} {
		k, err := kexOf(g)
		if err != nil {
			t.Fatal(err)
		}
		client, err := k.keyShare()
		if err != nil {
			t.Fatal(g, err)
		}
		reply, server, err := k.serverShare(client.share)
		if err != nil {
			t.Fatal(g, err)
		}
		got, err := k.clientSecret(client, reply)
		if err != nil || !bytes.Equal(got, server) || len(got) < 32 {
			t.Errorf("%s: client %x, server %x (%v)", g, got, server, err)
		}
	}
	if _, err := kexOf("mlkem512"); err == nil {
		t.Error("crypto/mlkem has no ML-KEM-512")
	}
}

// The runner's list reads back; a malformed entry is an error, not a skipped operation.
func TestParseFloorOps(t *testing.T) {
	ops, err := parseFloorOps("client:key-share:x25519:1;server:hmac:sha256:22")
	if err != nil || len(ops) != 2 || ops[1].count != 22 || ops[1].side != "server" || ops[1].part() != 2 {
		t.Fatalf("%+v %v", ops, err)
	}
	for _, bad := range []string{"client:key-share:x25519", "peer:sign:ed25519:1", "client:sign:ed25519:0"} {
		if _, err := parseFloorOps(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
