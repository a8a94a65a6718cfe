package bench

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	upstream "github.com/libp2p/go-libp2p/p2p/security/tls"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

// pairs are the client/server transports the Go benchmarks run: upstream
// go-libp2p with itself, then every pair of this module's backends.
var pairs = [][2]string{
	{UpstreamName, UpstreamName},
	{UpstreamSpecName, UpstreamSpecName},
	{StdName, StdName}, {StdName, OpenSSLName},
	{OpenSSLName, StdName}, {OpenSSLName, OpenSSLName},
}

// dialPairs are the dial workload's: each transport stack with itself.
var dialPairs = [][2]string{
	{UpstreamName, UpstreamName}, {StdName, StdName}, {OpenSSLName, OpenSSLName}, {QUICName, QUICName},
}

func pairsFor(w Workload) [][2]string {
	if w.Dials() {
		return dialPairs
	}
	return pairs
}

// benchmark runs a workload on every pair as a sub-benchmark; each is
// timed by the session, which leaves out what is not the operation.
// `make bench-go` runs the same workloads paired instead (cmd/pairedbench);
// these are for `go test -bench` and benchstat.
func benchmark(b *testing.B, name string) {
	w, err := WorkloadNamed(name)
	if err != nil {
		b.Fatal(err)
	}
	for _, g := range Groups {
		w, ok := w.WithGroup(g)
		if !ok {
			continue
		}
		for _, p := range pairsFor(w) {
			b.Run(fmt.Sprintf("group=%v/client=%s/server=%s", g, p[0], p[1]), func(b *testing.B) {
				s, _, err := w.OpenNamed(p[0], p[1])
				if errors.Is(err, ErrUnsupported) {
					b.Skip(err)
				}
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				b.ReportAllocs()
				b.ResetTimer()
				spent, err := s.Run(b.N)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "ns/op")
			})
		}
	}
}

func BenchmarkHandshake(b *testing.B)         { benchmark(b, "Handshake") }
func BenchmarkHandshakeNewPeers(b *testing.B) { benchmark(b, "HandshakeNewPeers") }
func BenchmarkLatency(b *testing.B)           { benchmark(b, "Latency") }
func BenchmarkConnections(b *testing.B)       { benchmark(b, "Connections") }
func BenchmarkDialNewPeers(b *testing.B)      { benchmark(b, "DialNewPeers") }

// Every workload runs on every pair with every group that changes it and
// checks what it negotiated, the upstream transport included; the new-peers
// workload with the other hybrids too. Only an OpenSSL backend whose libssl
// lacks the group, or upstream on a group it cannot be made to offer, may
// call a group unsupported.
func TestEveryWorkloadRunsOnEveryPair(t *testing.T) {
	for _, base := range Workloads {
		groups := Groups
		if base.MeetsNewPeers() {
			groups = slices.Concat(Groups, Hybrids)
		}
		for _, g := range groups {
			w, ok := base.WithGroup(g)
			if !ok {
				continue
			}
			for _, p := range pairsFor(w) {
				at := fmt.Sprintf("%s/%v %s -> %s", base.Name, g, p[0], p[1])
				s, _, err := w.OpenNamed(p[0], p[1])
				if errors.Is(err, ErrUnsupported) {
					onOpenSSL := p[0] == OpenSSLName || p[1] == OpenSSLName
					onUpstream := strings.HasPrefix(p[0], UpstreamName)
					lacks := onOpenSSL && !libp2ptls.OpenSSLHasGroup(g)
					if g == tls.X25519 || !(lacks || onUpstream && slices.Contains(Hybrids, g)) {
						t.Errorf("%s: %v", at, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", at, err)
				}
				spent, err := s.Run(3)
				if err != nil {
					t.Fatalf("%s: %v", at, err)
				}
				if spent <= 0 {
					t.Errorf("%s: took %v for 3 operations", at, spent)
				}
				if w.Dials() {
					checkDialFigures(t, at, p[0], s)
				}
				if err := s.Close(); err != nil {
					t.Errorf("%s: close: %v", at, err)
				}
			}
		}
	}
}

// The ML-KEM workloads are the X25519 ones with the group in their names;
// Latency, which times no handshake, has none.
func TestGroupsNameTheirWorkloads(t *testing.T) {
	w, _ := WorkloadNamed("Handshake")
	m, ok := w.WithGroup(tls.X25519MLKEM768)
	if !ok || m.Scenario != "libp2p-handshake-tls13-ecdsa-p256-x25519mlkem768" || m.Name != "Handshake/X25519MLKEM768" {
		t.Errorf("ML-KEM handshake workload: %+v", m)
	}
	if w.Scenario != "libp2p-handshake-tls13-ecdsa-p256-x25519" {
		t.Errorf("the X25519 workload changed: %s", w.Scenario)
	}
	lat, _ := WorkloadNamed("Latency")
	if _, ok := lat.WithGroup(tls.X25519MLKEM768); ok {
		t.Error("Latency has an ML-KEM variant, but its timing has no handshake")
	}
}

func TestUnknownNamesAreRefused(t *testing.T) {
	if _, err := NewTransport("go-libp2p-wolfssl", tls.X25519); err == nil {
		t.Error("an unknown transport was accepted")
	}
	if _, err := WorkloadNamed("Throughput"); err == nil {
		t.Error("an unknown workload was accepted")
	}
}

// A pair that negotiates another group than the scenario names fails its
// handshake instead of being measured.
func TestAnotherGroupFailsTheCheck(t *testing.T) {
	p256 := func() *Transport {
		key, _, err := ic.GenerateEd25519Key(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := libp2ptls.New(libp2ptls.ID, key, nil, libp2ptls.WithGroups(tls.CurveP256))
		if err != nil {
			t.Fatal(err)
		}
		id, err := peer.IDFromPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return &Transport{Name: "p256-only", Version: "test", Group: tls.X25519, sec: tr, id: id}
	}
	w, err := WorkloadNamed("Handshake")
	if err != nil {
		t.Fatal(err)
	}
	s, err := w.Open(p256(), p256())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Run(1)
	if err == nil || !strings.Contains(err.Error(), "the benchmarks pin") {
		t.Fatalf("a P-256 handshake passed the X25519 check: %v", err)
	}
}

// HandshakeNewPeers makes both sides anew for every handshake, on every
// pair the like-for-like reference included, so no transport meets a peer
// twice and no cache of verified certificates can hold the one it meets.
func TestNewPeerHandshakesNeverReuseAPeer(t *testing.T) {
	w, err := WorkloadNamed("HandshakeNewPeers")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairs {
		if p[0] == OpenSSLName && !libp2ptls.OpenSSLCompiledIn {
			continue
		}
		client, server := mustTransport(t, p[0]), mustTransport(t, p[1])
		s, err := w.Open(client, server)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[peer.ID]bool{client.id: true, server.id: true}
		made := 0
		s.(*newPeerHandshakes).make = func(name string, group tls.CurveID) (*Transport, error) {
			tr, err := NewTransport(name, group)
			if err == nil {
				made++
				if seen[tr.id] {
					t.Errorf("%s: peer %s made twice", name, tr.id)
				}
				seen[tr.id] = true
			}
			return tr, err
		}
		if _, err := s.Run(4); err != nil {
			t.Fatalf("%s -> %s: %v", p[0], p[1], err)
		}
		if made != 8 {
			t.Fatalf("%s -> %s: %d transports made for 4 handshakes, want 8", p[0], p[1], made)
		}
		s.Close()
	}
}

// The like-for-like reference really checks the self-signature: a
// certificate upstream's own identity code made passes, the same with one
// bit of its signature flipped does not, where upstream's check alone takes it.
func TestTheSpecReferenceChecksTheSelfSignature(t *testing.T) {
	key, _, err := ic.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	identity, err := upstream.NewIdentity(key)
	if err != nil {
		t.Fatal(err)
	}
	config, _ := identity.ConfigForPeer("")
	good := config.Certificates[0].Certificate[0]
	if err := checkSelfSignature([][]byte{good}); err != nil {
		t.Fatalf("upstream's own certificate: %v", err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)-5] ^= 1 // inside the ECDSA signature, the DER's last field
	if err := checkSelfSignature([][]byte{bad}); err == nil || !strings.Contains(err.Error(), "self-signature") {
		t.Fatalf("a broken self-signature passed: %v", err)
	}
	// Upstream's check takes it: its cert.Verify has the certificate as its own
	// root, and Go checks no root's signature. (If a go-libp2p upgrade changes
	// that, the reference arm is upstream itself and can go.)
	upstreamConfig, _ := identity.ConfigForPeer("")
	if err := upstreamConfig.VerifyPeerCertificate([][]byte{bad}, nil); err != nil {
		t.Errorf("upstream's own check now refuses a broken self-signature: %v", err)
	}
	ref, err := newSpecReference(key, "")
	if err != nil {
		t.Fatal(err)
	}
	refConfig, _ := ref.config("")
	if err := refConfig.VerifyPeerCertificate([][]byte{bad}, nil); err == nil {
		t.Fatal("the reference took a broken self-signature")
	}
}

func mustTransport(t *testing.T, name string) *Transport {
	t.Helper()
	tr, err := NewTransport(name, tls.X25519)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
