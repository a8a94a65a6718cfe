package driver

import (
	"runtime"

	"github.com/tlsmatrix/tlsmatrix/go/internal/callgrind"
	"github.com/tlsmatrix/tlsmatrix/go/internal/memconn"
	"github.com/tlsmatrix/tlsmatrix/go/internal/metrics"
)

// Instruction counts under callgrind, as crates/measure/src/workload.rs takes them: each
// sample counts the client's work over a batch, then the server's over another, with
// collection switched on exactly while the counted side's clock runs (memconn.Clock.OnRun),
// so a count covers what a timed sample times: crypto/tls's calls and whatever the runtime
// does on the goroutine meanwhile (allocation, GC assists, and background marking that
// takes the one P while that side runs).

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
	counted := [2]string{metrics.ClientInstructions, metrics.ServerInstructions}
	atomics := [2]string{metrics.ClientAtomics, metrics.ServerAtomics}
	return countRuns(counter, runs, float64(n), counted, atomics, func(side memconn.Side) error {
		c.counted = &side
		defer func() { c.counted = nil }()
		for range n {
			if _, err := c.handshake(); err != nil {
				return err
			}
		}
		return nil
	}, on)
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
	mib := float64(bulkBytes) / (1 << 20)
	counted := [2]string{metrics.SendInstrPerMiB, metrics.RecvInstrPerMiB}
	return countRuns(counter, runs, mib, counted, [2]string{}, func(side memconn.Side) error {
		countSide(rc, rs, side)
		defer uncount(rc, rs)
		run := b.write
		if side == memconn.Server {
			run = b.read
		}
		_, err := run(bulkBytes)
		return err
	}, on)
}

// countRuns gives runs samples: in each, phase runs with the client's work counted, then
// with the server's, each from a settled heap, and each count divided by per is the
// sample's figure for that side (metrics: the client's, the server's; atomics, where named,
// the sides' atomic read-modify-writes).
func countRuns(counter *callgrind.Counter, runs int, per float64, metrics, atomics [2]string, phase func(memconn.Side) error, on func(sample)) error {
	for range runs {
		var s sample
		for i, side := range []memconn.Side{memconn.Client, memconn.Server} {
			settle(counter)
			if err := phase(side); err != nil {
				return err
			}
			counts, err := counter.Take(metrics[i])
			if err != nil {
				return err
			}
			s.add(metrics[i], float64(counts.Instructions)/per)
			if atomics[i] != "" && counts.Atomics >= 0 {
				s.add(atomics[i], float64(counts.Atomics)/per)
			}
		}
		on(s)
	}
	return nil
}
