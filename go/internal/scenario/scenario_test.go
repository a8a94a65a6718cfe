package scenario

import (
	"strings"
	"testing"
)

func TestIdsRoundTrip(t *testing.T) {
	for _, id := range []string{
		"handshake-tls13-ecdsa-p256-x25519-full",
		"handshake-tls12-rsa-2048-p256-session-id",
		"handshake-tls13-ecdsa-p256-x25519mlkem768-full-mtls-chain4-hrr",
		"handshake-tls13-rsa-3072-x25519-ticket-chain2",
		"bulk-tls12-chacha20-poly1305-1m",
		"bulk-tls13-aes-128-gcm-16k",
		"memory-tls13-ecdsa-p256-n10000",
		"throughput-tls12-ed25519-allcores",
	} {
		s, err := Parse(id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if got := s.String(); got != id {
			t.Errorf("%s printed back as %s", id, got)
		}
	}
}

func TestParsedValues(t *testing.T) {
	s, err := Parse("handshake-tls13-ecdsa-p384-x25519mlkem768-ticket-mtls-chain3-hrr")
	if err != nil {
		t.Fatal(err)
	}
	want := Scenario{Kind: "handshake", Version: "tls13", Sig: "ecdsa-p384", Group: "x25519mlkem768",
		AEAD: HandshakeAEAD, Resumption: "ticket", MTLS: true, Chain: 3, HRR: true}
	if s != want {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	b, _ := Parse("bulk-tls12-aes-256-gcm-1k")
	if b.WriteSize != 1024 || b.Sig != BulkSig || b.Group != BulkGroup || b.AEAD != "aes-256-gcm" {
		t.Fatalf("bulk parsed as %+v", b)
	}
	if p, _ := Parse("handshake-tls13-ecdsa-p256-x25519-full-chain1"); p.String() != "handshake-tls13-ecdsa-p256-x25519-full" {
		t.Fatalf("an explicit default chain1 prints as %s", p)
	}
}

func TestBadIdsSayWhatIsValid(t *testing.T) {
	for id, want := range map[string]string{
		"handshake-tls14-ecdsa-p256-x25519-full":          "expected a version (tls12, tls13) but found 'tls14'",
		"handshake-tls13-ecdsa-p256-x448-full":            "expected a group",
		"bulk-tls13-aes-128-gcm-16k-extra":                "unexpected trailing part 'extra'",
		"handshake-tls13-ecdsa-p256-x25519":               "expected a resumption (full, session-id, ticket) but found nothing",
		"handshake-tls13-ecdsa-p256-x25519-full-hrr-mtls": "unexpected trailing part 'mtls'",
	} {
		_, err := Parse(id)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", id, err, want)
		}
	}
}
