package driver

import (
	"crypto/tls"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/memconn"
	"github.com/tlsmatrix/tlsmatrix/go/internal/metrics"
	"github.com/tlsmatrix/tlsmatrix/go/internal/scenario"
)

// handshakeIDs are the handshake scenarios of crates/model/src/scenario.rs's catalogue.
func handshakeIDs() []string {
	var ids []string
	sigs := []string{"ecdsa-p256", "ecdsa-p384", "rsa-2048", "rsa-3072", "ed25519"}
	groups := []string{"x25519", "p256", "p384", "x25519mlkem768"}
	for _, v := range []string{"tls12", "tls13"} {
		for _, s := range sigs {
			for _, g := range groups {
				for _, r := range []string{"full", "session-id", "ticket"} {
					if v == "tls13" && r == "session-id" {
						continue
					}
					ids = append(ids, fmt.Sprintf("handshake-%s-%s-%s-%s", v, s, g, r))
				}
				extras := []string{"mtls", "chain2", "chain3", "chain4"}
				if v == "tls13" {
					extras = append(extras, "hrr")
				}
				for _, e := range extras {
					ids = append(ids, fmt.Sprintf("handshake-%s-%s-%s-full-%s", v, s, g, e))
				}
			}
		}
	}
	return ids
}

func open(t *testing.T, id string) (*cell, error) {
	t.Helper()
	sc, err := scenario.Parse(id)
	if err != nil {
		t.Fatal(err)
	}
	c, refused, err := newCell(sc, certDir(t))
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	return c, refused
}

// Every handshake scenario either completes, held each time to its version, suite, group,
// signature scheme, resumption, certificates and ClientHello count, or is refused for one of
// the reasons crypto/tls has; most complete.
func TestEveryHandshakeScenarioCompletesOrIsRefusedWithItsReason(t *testing.T) {
	reasons := []string{
		"defined for TLS 1.3 only",
		"no HelloRetryRequest",
		"no session-id cache",
		"offers groups in its own order",
	}
	ids := handshakeIDs()
	completed := 0
	for _, id := range ids {
		c, refused := open(t, id)
		if refused != nil {
			ok := false
			for _, r := range reasons {
				ok = ok || strings.Contains(refused.Error(), r)
			}
			if !ok {
				t.Errorf("%s refused: %v", id, refused)
			}
			continue
		}
		if err := c.prime(); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		for range 2 {
			r, err := c.handshake()
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			if r.clientCPU <= 0 || r.serverCPU <= 0 || r.clientCPU > time.Second || r.serverCPU > time.Second {
				t.Fatalf("%s: client %v, server %v", id, r.clientCPU, r.serverCPU)
			}
		}
		completed++
	}
	t.Logf("%d of %d handshake scenarios completed", completed, len(ids))
	if completed*10 < len(ids)*7 {
		t.Fatalf("only %d of %d completed", completed, len(ids))
	}
}

// The check fails a handshake that negotiated anything the scenario does not name.
func TestTheCheckCatchesWhatTheScenarioDidNotName(t *testing.T) {
	for _, tc := range []struct {
		id, want string
		spoil    func(c *cell)
	}{
		{"handshake-tls13-ecdsa-p256-x25519-full", "negotiated group CurveP256", func(c *cell) {
			c.client.CurvePreferences = []tls.CurveID{tls.CurveP256}
			c.server.CurvePreferences = []tls.CurveID{tls.CurveP256}
		}},
		{"handshake-tls12-rsa-2048-x25519-full", "signed with PKCS1WithSHA256", func(c *cell) {
			c.server.Certificates[0].SupportedSignatureAlgorithms = []tls.SignatureScheme{tls.PKCS1WithSHA256}
		}},
		{"handshake-tls13-ecdsa-p256-x25519-full", "resumed: true", func(c *cell) {
			c.server.SessionTicketsDisabled = false
			c.client.ClientSessionCache = tls.NewLRUClientSessionCache(1)
			c.sc.Resumption = "ticket"
			c.prime()
			c.sc.Resumption = "full"
		}},
		{"handshake-tls13-ecdsa-p256-p256-full-hrr", "1 ClientHello(s)", func(c *cell) {
			c.client.CurvePreferences = []tls.CurveID{tls.CurveP256}
		}},
		{"handshake-tls13-ecdsa-p256-x25519-full", "received 1 certificates, but the scenario asks for 2", func(c *cell) {
			c.sc.Chain = 2
		}},
	} {
		c, refused := open(t, tc.id)
		if refused != nil {
			t.Fatal(refused)
		}
		tc.spoil(c)
		_, err := c.handshake()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.id, err, tc.want)
		}
	}
}

func sane(t *testing.T, what string, s sample, metrics ...string) {
	t.Helper()
	if len(s) != len(metrics) {
		t.Fatalf("%s: %v", what, s)
	}
	for i, m := range metrics {
		v := s[i][1].(float64)
		if s[i][0] != m || !(v > 0) || math.IsInf(v, 0) {
			t.Fatalf("%s: %v", what, s)
		}
	}
}

func TestHandshakeBulkMemoryAndThroughputGivePositiveFiniteFigures(t *testing.T) {
	c, _ := open(t, "handshake-tls13-ecdsa-p256-x25519-ticket")
	h, err := warmHandshakes(c, time.Millisecond, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.sample()
	if err != nil {
		t.Fatal(err)
	}
	sane(t, "handshake", s, metrics.ClientCPUNs, metrics.ServerCPUNs, metrics.HandshakesPerS)

	for _, id := range []string{"bulk-tls13-aes-128-gcm-16k", "bulk-tls12-chacha20-poly1305-1k", "bulk-tls12-aes-256-gcm-1m"} {
		c, _ := open(t, id)
		b, err := warmBulk(c, c.sc.WriteSize, time.Millisecond, 4<<20, 0)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		s, err := b.sample()
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		sane(t, id, s, metrics.SendMBPerS, metrics.RecvMBPerS)
	}

	m, _ := open(t, "memory-tls13-ecdsa-p256-n100")
	var got sample
	if err := memory(m, 50, 1, func(s sample) { got = s }); err != nil {
		t.Fatal(err)
	}
	sane(t, "memory", got, metrics.ClientHeapBytes, metrics.ServerHeapBytes, metrics.ClientHeapBytesAfterIO, metrics.ServerHeapBytesAfterIO)
	for _, v := range got {
		// A connection keeps its keys and buffers: kilobytes, not bytes and not megabytes.
		if b := v[1].(float64); b < 500 || b > 1<<20 {
			t.Fatalf("memory: %v", got)
		}
	}

	tp, _ := open(t, "throughput-tls13-ecdsa-p256-allcores")
	var windows []sample
	if err := throughput(tp, 2, 2, time.Millisecond, 20*time.Millisecond, func(s sample) { windows = append(windows, s) }); err != nil {
		t.Fatal(err)
	}
	if len(windows) != 2 {
		t.Fatalf("throughput gave %d windows", len(windows))
	}
	for _, w := range windows {
		sane(t, "throughput", w, metrics.ThroughputPerS, metrics.ServerCapacityPerS)
	}
}

// Bulk data moved by the sampler arrives intact, and a second warm-up over the same cell
// resumes nothing (bulk scenarios are full handshakes).
func TestBulkDataArrivesIntact(t *testing.T) {
	c, _ := open(t, "bulk-tls13-aes-128-gcm-16k")
	r, err := c.handshake()
	if err != nil {
		t.Fatal(err)
	}
	if err := newBulkSampler(r, 16<<10).checkIntact(); err != nil {
		t.Fatal(err)
	}
}

// Sides that wait for each other for ever fail once stuckAfter passes, not never.
func TestStuckSidesFailInBoundedTime(t *testing.T) {
	defer func(d time.Duration) { stuckAfter = d }(stuckAfter)
	stuckAfter = 50 * time.Millisecond
	rc, rs := memconn.Pair(memconn.DefaultLimit)
	start := time.Now()
	err := both(rc, rs, func() error {
		_, err := rc.Read(make([]byte, 1))
		return err
	}, func() error {
		_, err := rs.Read(make([]byte, 1))
		return err
	})
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("got %v after %v", err, time.Since(start))
	}
}
