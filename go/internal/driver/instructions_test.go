package driver

import (
	"testing"

	"github.com/tlsmatrix/tlsmatrix/go/internal/memconn"
)

// countToggles replaces callgrind's switch with a counter for the test's length.
func countToggles(t *testing.T) *int {
	n := new(int)
	saved := toggle
	toggle = func() { *n++ }
	t.Cleanup(func() { toggle = saved })
	return n
}

// A counted handshake switches collection on and off around the counted side's stretches
// only, so every switch on has its switch off; an uncounted one switches nothing.
func TestACountedHandshakeSwitchesCollectionInPairs(t *testing.T) {
	for _, id := range []string{"handshake-tls13-ecdsa-p256-x25519-full", "handshake-tls12-ecdsa-p256-x25519-ticket"} {
		c, refused := open(t, id)
		if refused != nil {
			t.Fatalf("%s: %v", id, refused)
		}
		if err := c.prime(); err != nil {
			t.Fatal(err)
		}
		n := countToggles(t)
		if _, err := c.handshake(); err != nil || *n != 0 {
			t.Fatalf("%s uncounted: %d switches, %v", id, *n, err)
		}
		for _, side := range []memconn.Side{memconn.Client, memconn.Server} {
			*n = 0
			c.counted = &side
			_, err := c.handshake()
			c.counted = nil
			// A side runs, waits for its peer and runs again at least once in a handshake.
			if err != nil || *n < 4 || *n%2 != 0 {
				t.Fatalf("%s, side %d: %d switches, %v", id, side, *n, err)
			}
		}
	}
}

// The bulk count's phases: the client writes a whole sample into the queue and the server
// then reads it, in one goroutine, and the bytes arrive intact; each phase switches
// collection on and off once.
func TestBulkPhasesRunOneAfterTheOther(t *testing.T) {
	c, _ := open(t, "bulk-tls13-aes-128-gcm-16k")
	const sampleBytes = 1 << 20
	r, err := c.handshakeQueued(2*sampleBytes + 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b := newBulkSampler(r, 16<<10)
	rc, rs := r.rawClient, r.rawServer
	n := countToggles(t)
	countSide(rc, rs, memconn.Client)
	if _, err := b.write(sampleBytes); err != nil {
		t.Fatal(err)
	}
	uncount(rc, rs)
	if *n != 2 {
		t.Fatalf("the write phase switched collection %d times, want on and off", *n)
	}
	countSide(rc, rs, memconn.Server)
	if _, err := b.read(sampleBytes); err != nil {
		t.Fatal(err)
	}
	uncount(rc, rs)
	if *n != 4 {
		t.Fatalf("the two phases switched collection %d times, want 4", *n)
	}
	// What follows still arrives intact and in order.
	if err := b.checkIntact(); err != nil {
		t.Fatal(err)
	}
}
