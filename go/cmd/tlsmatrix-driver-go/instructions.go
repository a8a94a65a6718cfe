package main

import (
	"runtime"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/callgrind"
	"github.com/tlsmatrix/tlsmatrix/go/internal/memconn"
)

// Instruction counts under callgrind, as crates/core/src/workload.rs takes them: each
// sample counts the client's work over a batch, then the server's over another, with
// collection switched on exactly while the counted side's clock runs (memconn.Clock.OnRun),
// so a count covers what a timed sample times: crypto/tls's calls and whatever the runtime
// does on the goroutine meanwhile (allocation, GC assists, and background marking that
// takes the one P while that side runs).

// Metric names, as in crates/core/src/record.rs.
const (
	clientInstructions = "client_instructions"
	serverInstructions = "server_instructions"
	sendInstrPerMiB    = "send_instructions_per_mib"
	recvInstrPerMiB    = "recv_instructions_per_mib"
)

// countSide switches collection while side's clock of a pair runs.
func countSide(client, server *memconn.Conn, side memconn.Side) {
	k := client.Clock()
	if side == memconn.Server {
		k = server.Clock()
	}
	k.OnRun = func(bool) { toggle() }
}

// toggle switches callgrind's collection; a test counts the switches instead.
var toggle = callgrind.Toggle

// uncount undoes countSide on both ends.
func uncount(client, server *memconn.Conn) {
	client.Clock().OnRun, server.Clock().OnRun = nil, nil
}

// settle starts every counted batch from the same heap: a collection, uncounted, so that
// the batch's own collections come at the same points of its work each time.
func settle(counter *callgrind.Counter) {
	runtime.GC()
	counter.Zero()
}

// handshakeInstructions gives runs samples of each side's instructions per handshake, over
// perSample handshakes each.
func handshakeInstructions(c *cell, runs, perSample int, counter *callgrind.Counter, on func(sample)) error {
	if err := c.prime(); err != nil {
		return err
	}
	// Lazy initialisation (CPU feature probes, precomputed tables) happens once, uncounted.
	for range 2 {
		if _, err := c.handshake(); err != nil {
			return err
		}
	}
	n := max(perSample, 1)
	defer func() { c.counted = nil }()
	for range runs {
		var s sample
		for _, side := range []struct {
			side   memconn.Side
			metric string
		}{{memconn.Client, clientInstructions}, {memconn.Server, serverInstructions}} {
			c.counted = &side.side
			settle(counter)
			for range n {
				if _, err := c.handshake(); err != nil {
					return err
				}
			}
			c.counted = nil
			total, err := counter.Take(side.metric)
			if err != nil {
				return err
			}
			s.add(side.metric, float64(total)/float64(n))
		}
		on(s)
	}
	return nil
}

// bulkInstructions gives runs samples of each side's instructions per MiB, bulkBytes each.
//
// The sides do not take turns here: the client writes a whole sample into a queue that
// holds it, then the server reads it, both in this goroutine. Under valgrind the process
// runs some 50 times slower, and the runtime's monitor asks a goroutine that has run for
// 10 ms to yield; with the two sides taking turns, the side made runnable by the last write
// then ran inside the other's counted stretch (some samples counted up to a quarter more,
// others, with that stretch left out, up to a sixth less). With nothing else runnable, a
// yield resumes the same side.
func bulkInstructions(c *cell, writeSize, runs, bulkBytes int, counter *callgrind.Counter, on func(sample)) error {
	r, err := c.handshakeQueued(2*bulkBytes + 1<<20)
	if err != nil {
		return err
	}
	b := newBulkSampler(r, writeSize)
	rc, rs := r.rawClient, r.rawServer
	// Lazy initialisation happens once, uncounted, and so does the queue's growth to a
	// sample's size (which added 60% to a first AES-GCM sample).
	if _, err := b.write(bulkBytes); err != nil {
		return err
	}
	if _, err := b.read(bulkBytes); err != nil {
		return err
	}
	defer uncount(rc, rs)
	mib := float64(bulkBytes) / (1 << 20)
	for range runs {
		var s sample
		for _, phase := range []struct {
			side   memconn.Side
			metric string
			run    func(int) (time.Duration, error)
		}{{memconn.Client, sendInstrPerMiB, b.write}, {memconn.Server, recvInstrPerMiB, b.read}} {
			countSide(rc, rs, phase.side)
			settle(counter)
			_, err := phase.run(bulkBytes)
			uncount(rc, rs)
			if err != nil {
				return err
			}
			total, err := counter.Take(phase.metric)
			if err != nil {
				return err
			}
			s.add(phase.metric, float64(total)/mib)
		}
		on(s)
	}
	return nil
}
