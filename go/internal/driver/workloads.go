package driver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/metrics"
)

// sampler gives one short sample at a time, so that several can take turns (group).
type sampler interface {
	sample() (sample, error)
}

// handshakeSampler makes handshakes in batches sized to take about the sample target; a
// sample is each side's mean CPU per handshake.
type handshakeSampler struct {
	c     *cell
	batch int
}

// maxWarmup bounds warmUntilSettled when the heap never stops growing.
const maxWarmup = 2 * time.Second

// warmUntilSettled repeats step for at least warmup and on until the Go heap has stopped
// growing: until a stretch of steps (at least 10 ms and 4 steps) costs the process fewer
// than one minor page fault per step. A fresh Go process touches new heap pages for its
// first few hundred handshakes (23 faults per handshake in the first 40 ms, under 1 after
// 150 ms); samples taken then measured the kernel's page faults, not TLS. Returns the time
// per step over the last stretch.
func warmUntilSettled(warmup time.Duration, step func() error) (time.Duration, error) {
	start := time.Now()
	for {
		faults, began, n := minorFaults(), time.Now(), 0
		for n < 4 || time.Since(began) < 10*time.Millisecond {
			if err := step(); err != nil {
				return 0, err
			}
			n++
		}
		per := time.Since(began) / time.Duration(n)
		settled := float64(minorFaults()-faults)/float64(n) < 1
		if (settled && time.Since(start) >= warmup) || time.Since(start) >= maxWarmup {
			return per, nil
		}
	}
}

func minorFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Minflt
}

func warmHandshakes(c *cell, warmup, target time.Duration) (*handshakeSampler, error) {
	if err := c.prime(); err != nil {
		return nil, err
	}
	per, err := warmUntilSettled(warmup, func() error {
		_, err := c.handshake()
		return err
	})
	if err != nil {
		return nil, err
	}
	batch := int(min(max(target/max(per, 1), 1), 100_000))
	return &handshakeSampler{c: c, batch: batch}, nil
}

// rewarmHandshakes run untimed before each timed batch: paired cells take turns (here with
// the baseline's process on the same core, in duet), so a sample starts with the caches and
// predictors the other code left behind (crates/measure/src/workload.rs, REWARM_HANDSHAKES).
const rewarmHandshakes = 1

func (h *handshakeSampler) sample() (sample, error) {
	for range rewarmHandshakes {
		if _, err := h.c.handshake(); err != nil {
			return nil, err
		}
	}
	var client, server time.Duration
	for range h.batch {
		r, err := h.c.handshake()
		if err != nil {
			return nil, err
		}
		client += r.clientCPU
		server += r.serverCPU
	}
	n := float64(h.batch)
	var s sample
	s.add(metrics.ClientCPUNs, float64(client.Nanoseconds())/n)
	s.add(metrics.ServerCPUNs, float64(server.Nanoseconds())/n)
	s.add(metrics.HandshakesPerS, n*1e9/float64(max(client+server, 1)))
	return s, nil
}

// bulkSampler sends client to server over one connection in writes of the scenario's size;
// the client's time gives the send rate, the server's the receive rate. The sides take turns
// through a bounded queue (1 MiB): the sender runs until it is full, the receiver until it
// is empty.
type bulkSampler struct {
	r         *conn
	writeSize int
	bytes     int
	data, buf []byte
}

// pattern fills p with bytes that show a shifted or dropped block.
func pattern(p []byte) {
	for i := range p {
		p[i] = byte(i*7 + i>>8)
	}
}

func warmBulk(c *cell, writeSize int, warmup time.Duration, fixed int, target time.Duration) (*bulkSampler, error) {
	r, err := c.handshake()
	if err != nil {
		return nil, err
	}
	b := newBulkSampler(r, writeSize)
	if err := b.checkIntact(); err != nil {
		return nil, err
	}
	chunk := max(1<<20, writeSize)
	per, err := warmUntilSettled(warmup, func() error {
		_, _, err := b.send(chunk)
		return err
	})
	if err != nil {
		return nil, err
	}
	b.bytes = fixed
	if fixed == 0 {
		perByte := per.Seconds() / float64(chunk)
		writes := int(target.Seconds()/perByte/float64(writeSize)) + 1
		b.bytes = writeSize * min(max(writes, 1), (1<<30)/writeSize)
	}
	return b, nil
}

// newBulkSampler sends over r in writes of writeSize, of a pattern that shows a shifted or
// dropped block.
func newBulkSampler(r *conn, writeSize int) *bulkSampler {
	b := &bulkSampler{r: r, writeSize: writeSize, data: make([]byte, writeSize), buf: make([]byte, max(writeSize, 64<<10))}
	pattern(b.data)
	return b
}

// checkIntact sends one write and compares what arrives.
func (b *bulkSampler) checkIntact() error {
	got := make([]byte, 0, b.writeSize)
	err := both(b.r.rawClient, b.r.rawServer, func() error {
		_, err := b.r.client.Write(b.data)
		return err
	}, func() error {
		for len(got) < b.writeSize {
			n, err := b.r.server.Read(b.buf[:min(len(b.buf), b.writeSize-len(got))])
			got = append(got, b.buf[:n]...)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && !bytes.Equal(got, b.data) {
		err = errors.New("the server received other bytes than the client sent")
	}
	return err
}

// send moves n bytes, the sides taking turns, returning each side's CPU.
func (b *bulkSampler) send(n int) (client, server time.Duration, err error) {
	err = both(b.r.rawClient, b.r.rawServer, func() (err error) {
		client, err = b.write(n)
		return err
	}, func() (err error) {
		server, err = b.read(n)
		return err
	})
	return client, server, err
}

// write has the client send n bytes in writes of the scenario's size, returning its CPU.
func (b *bulkSampler) write(n int) (time.Duration, error) {
	k := b.r.rawClient.Clock()
	k.Start()
	for sent := 0; sent < n; sent += b.writeSize {
		if _, err := b.r.client.Write(b.data[:min(b.writeSize, n-sent)]); err != nil {
			return k.Stop(), err
		}
	}
	return k.Stop(), nil
}

// read has the server receive n bytes, returning its CPU.
func (b *bulkSampler) read(n int) (time.Duration, error) {
	k := b.r.rawServer.Clock()
	k.Start()
	for got := 0; got < n; {
		m, err := b.r.server.Read(b.buf[:min(len(b.buf), n-got)])
		got += m
		if err != nil {
			return k.Stop(), fmt.Errorf("after %d of %d bytes: %w", got, n, err)
		}
	}
	return k.Stop(), nil
}

// rewarmBytes are sent untimed before each bulk sample (crates/measure/src/workload.rs,
// REWARM_BYTES).
const rewarmBytes = 64 << 10

func (b *bulkSampler) sample() (sample, error) {
	writes := (rewarmBytes + b.writeSize - 1) / b.writeSize
	if _, _, err := b.send(writes * b.writeSize); err != nil {
		return nil, err
	}
	client, server, err := b.send(b.bytes)
	if err != nil {
		return nil, err
	}
	// bytes per ns * 1e3 = MB/s with MB = 10^6 bytes.
	var s sample
	s.add(metrics.SendMBPerS, float64(b.bytes)*1e3/float64(max(client, 1)))
	s.add(metrics.RecvMBPerS, float64(b.bytes)*1e3/float64(max(server, 1)))
	return s, nil
}

// memoryIOBytes is what each side sends after the handshake, as in the Rust drivers.
const memoryIOBytes = 1024

// memorySample keeps n pairs alive and finds what each side holds per connection: the Go
// heap after a collection, then again after dropping every server connection, then every
// client connection. The in-memory transport's buffers are released first and are kept
// out of both figures. afterIO exchanges 1 KiB each way before counting.
func memorySample(c *cell, n int, afterIO bool) (client, server float64, err error) {
	conns := make([]*conn, 0, n)
	for range n {
		r, err := c.handshake()
		if err != nil {
			return 0, 0, err
		}
		if afterIO {
			if err := exchange(r); err != nil {
				return 0, 0, err
			}
		}
		r.rawClient.Release()
		r.rawServer.Release()
		conns = append(conns, r)
	}
	all := liveHeap()
	for _, r := range conns {
		r.server = nil
	}
	noServers := liveHeap()
	for _, r := range conns {
		r.client = nil
	}
	neither := liveHeap()
	runtime.KeepAlive(conns)
	per := func(a, b uint64) float64 { return (float64(a) - float64(b)) / float64(n) }
	return per(noServers, neither), per(all, noServers), nil
}

// exchange sends 1 KiB client to server and 1 KiB back.
func exchange(r *conn) error {
	out := make([]byte, memoryIOBytes)
	return both(r.rawClient, r.rawServer, func() error {
		if _, err := r.client.Write(out); err != nil {
			return err
		}
		_, err := io.ReadFull(r.client, make([]byte, memoryIOBytes))
		return err
	}, func() error {
		in := make([]byte, memoryIOBytes)
		if _, err := io.ReadFull(r.server, in); err != nil {
			return err
		}
		_, err := r.server.Write(in)
		return err
	})
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func memory(c *cell, n, runs int, on func(sample)) error {
	// Lazy initialisation (tables, caches) is the library's, not a connection's.
	if _, err := c.handshake(); err != nil {
		return err
	}
	for range runs {
		ch, sh, err := memorySample(c, n, false)
		if err != nil {
			return err
		}
		cio, sio, err := memorySample(c, n, true)
		if err != nil {
			return err
		}
		var s sample
		s.add(metrics.ClientHeapBytes, ch)
		s.add(metrics.ServerHeapBytes, sh)
		s.add(metrics.ClientHeapBytesAfterIO, cio)
		s.add(metrics.ServerHeapBytesAfterIO, sio)
		on(s)
	}
	return nil
}

// throughput runs `threads` pairs of sides at once, each handshaking its own connections
// one after another, through windows of `window` wall time: per window, handshakes per
// second of wall time summed over the pairs, and what the server side alone would sustain
// (handshakes over its CPU time, summed).
func throughput(c *cell, threads, runs int, warmup, window time.Duration, on func(sample)) error {
	// One P per pair: each pair's sides take turns, the pairs run at once.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
	type tally struct {
		handshakes int
		wall       time.Duration
		server     time.Duration
	}
	tallies := make([][]tally, threads)
	errs := make([]error, threads)
	first := time.Now().Add(warmup + 100*time.Millisecond)
	var wg sync.WaitGroup
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := c.copyFor()
			for time.Now().Before(first) {
				if _, err := mine.handshake(); err != nil {
					errs[t] = err
					return
				}
			}
			for run := range runs {
				start := first.Add(time.Duration(run) * window)
				end := start.Add(window)
				var w tally
				for time.Now().Before(end) {
					r, err := mine.handshake()
					if err != nil {
						errs[t] = err
						return
					}
					w.handshakes++
					w.server += r.serverCPU
				}
				w.wall = time.Since(start)
				tallies[t] = append(tallies[t], w)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for run := range runs {
		var wall, server float64
		for t := range threads {
			w := tallies[t][run]
			wall += float64(w.handshakes) * 1e9 / float64(max(w.wall, 1))
			server += float64(w.handshakes) * 1e9 / float64(max(w.server, 1))
		}
		var s sample
		s.add(metrics.ThroughputPerS, wall)
		s.add(metrics.ServerCapacityPerS, server)
		on(s)
	}
	return nil
}
