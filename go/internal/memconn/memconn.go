// Package memconn connects two net.Conns through memory: each direction a bounded byte
// queue (like a socket buffer, so a bulk sender cannot run ahead by gigabytes), reads that
// block until bytes arrive, deadlines, and counts of the bytes each side wrote. The
// in-memory driver runs crypto/tls's client and server over it, each on its own thread, so
// what is measured is TLS and not a kernel's TCP stack.
package memconn

import (
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// DefaultLimit is how many unread bytes a direction holds before its writer waits: enough
// for any handshake flight and for several 16 KiB records of bulk data.
const DefaultLimit = 1 << 20

// queue is one direction.
type queue struct {
	mu      sync.Mutex
	changed *sync.Cond
	buf     []byte // unread bytes are buf[off:]
	off     int
	limit   int
	closed  bool // the writer closed: reads drain what is left, then see EOF
	gone    bool // the reader closed: writes fail
	written int64
	// readDeadline and writeDeadline are the deadlines of the reading and writing end.
	readDeadline, writeDeadline time.Time
	observer                    Observer
}

// Observer is told, under the queue's lock, of every write to a direction and every read
// that takes bytes from it; wire figures are built from these.
type Observer interface {
	Wrote(from Side, p []byte)
	Read(by Side, n int)
}

// Side says which end of a pair.
type Side int

const (
	Client Side = iota
	Server
)

// Conn is one end of a pair.
type Conn struct {
	side  Side
	in    *queue
	out   *queue
	clock Clock
}

// Clock is the time one side spends running: started and stopped by that side, paused
// while it waits for its peer. Where a side's goroutine is the only one running while it
// runs (the driver runs with GOMAXPROCS=1), that is its CPU time, like the Rust drivers'
// monotonic clock around each call.
type Clock struct {
	busy    time.Duration
	since   time.Time
	running bool
	// OnRun, if set, is told each time the clock starts running (true) and stops (false):
	// an instruction count switches callgrind's collection with it, so that it counts what
	// the clock times.
	OnRun func(running bool)
}

// Start starts counting, or goes on counting after Pause (from zero after a Stop).
func (k *Clock) Start() {
	if !k.running && k.OnRun != nil {
		k.OnRun(true)
	}
	k.since, k.running = time.Now(), true
}

// Pause stops counting without forgetting the time counted.
func (k *Clock) Pause() { k.pause() }

// Elapsed is the time counted so far.
func (k *Clock) Elapsed() time.Duration {
	if k.running {
		return k.busy + time.Since(k.since)
	}
	return k.busy
}

// Stop stops counting and returns the time counted since Start, less the waits.
func (k *Clock) Stop() time.Duration {
	k.pause()
	b := k.busy
	k.busy = 0
	return b
}

func (k *Clock) pause() {
	if k.running {
		k.busy += time.Since(k.since)
		k.running = false
		if k.OnRun != nil {
			k.OnRun(false)
		}
	}
}

func (k *Clock) resume(was bool) {
	if was {
		k.Start()
	}
}

// Clock is this end's clock; only this end's goroutine may use it.
func (c *Conn) Clock() *Clock { return &c.clock }

// Pair returns two connected ends, the client's and the server's, each direction holding at
// most limit unread bytes.
func Pair(limit int) (*Conn, *Conn) {
	a, b := newQueue(limit), newQueue(limit)
	return &Conn{side: Client, in: b, out: a}, &Conn{side: Server, in: a, out: b}
}

// Observe reports this pair's traffic to o (call before any traffic).
func Observe(client *Conn, o Observer) {
	client.in.observer, client.out.observer = o, o
}

func newQueue(limit int) *queue {
	q := &queue{limit: limit}
	q.changed = sync.NewCond(&q.mu)
	return q
}

// wait blocks until woken or the deadline passes, with the waiting side's clock paused; it
// reports whether the deadline passed.
func (q *queue) wait(deadline time.Time, k *Clock) bool {
	was := k.running
	k.pause()
	defer k.resume(was)
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return true
		}
		t := time.AfterFunc(d, func() {
			q.mu.Lock()
			q.changed.Broadcast()
			q.mu.Unlock()
		})
		defer t.Stop()
	}
	q.changed.Wait()
	return false
}

func (c *Conn) Read(p []byte) (int, error) {
	q := c.in
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.off == len(q.buf) {
		switch {
		case q.gone:
			return 0, net.ErrClosed
		case q.closed:
			return 0, io.EOF
		case len(p) == 0:
			return 0, nil
		}
		if q.wait(q.readDeadline, &c.clock) {
			return 0, os.ErrDeadlineExceeded
		}
	}
	n := copy(p, q.buf[q.off:])
	q.off += n
	if q.off == len(q.buf) {
		q.buf, q.off = q.buf[:0], 0
	}
	if q.observer != nil {
		q.observer.Read(c.side, n)
	}
	q.changed.Broadcast()
	return n, nil
}

func (c *Conn) Write(p []byte) (int, error) {
	q := c.out
	q.mu.Lock()
	defer q.mu.Unlock()
	done := 0
	for done < len(p) {
		if q.gone || q.closed {
			return done, net.ErrClosed
		}
		room := q.limit - (len(q.buf) - q.off)
		if room <= 0 {
			if q.wait(q.writeDeadline, &c.clock) {
				return done, os.ErrDeadlineExceeded
			}
			continue
		}
		if q.off > 0 && q.off >= len(q.buf)/2 {
			// Move the unread tail down rather than grow the buffer for ever.
			q.buf, q.off = append(q.buf[:0], q.buf[q.off:]...), 0
		}
		n := min(room, len(p)-done)
		q.buf = append(q.buf, p[done:done+n]...)
		q.written += int64(n)
		if q.observer != nil {
			q.observer.Wrote(c.side, p[done:done+n])
		}
		done += n
		q.changed.Broadcast()
	}
	return done, nil
}

// Close ends both directions for this end: the peer reads what is left, then EOF.
func (c *Conn) Close() error {
	for q, mine := range map[*queue]bool{c.out: true, c.in: false} {
		q.mu.Lock()
		if mine {
			q.closed = true
		} else {
			q.gone = true
		}
		q.changed.Broadcast()
		q.mu.Unlock()
	}
	return nil
}

// Release drops the buffers of an idle pair's empty directions, so that a connection kept
// alive holds no transport memory: the heap then counts only what TLS keeps.
func (c *Conn) Release() {
	for _, q := range []*queue{c.in, c.out} {
		q.mu.Lock()
		if q.off == len(q.buf) {
			q.buf, q.off = nil, 0
		}
		q.mu.Unlock()
	}
}

// Written is how many bytes this end has written.
func (c *Conn) Written() int64 {
	c.out.mu.Lock()
	defer c.out.mu.Unlock()
	return c.out.written
}

func (c *Conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *Conn) SetReadDeadline(t time.Time) error {
	c.in.mu.Lock()
	c.in.readDeadline = t
	c.in.changed.Broadcast()
	c.in.mu.Unlock()
	return nil
}

func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.out.mu.Lock()
	c.out.writeDeadline = t
	c.out.changed.Broadcast()
	c.out.mu.Unlock()
	return nil
}

type addr string

func (a addr) Network() string { return "memory" }
func (a addr) String() string  { return string(a) }

func (c *Conn) LocalAddr() net.Addr {
	return addr([]string{"client", "server"}[c.side])
}

func (c *Conn) RemoteAddr() net.Addr {
	return addr([]string{"server", "client"}[c.side])
}
