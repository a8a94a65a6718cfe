package driver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/memconn"
)

// stuckAfter bounds one handshake or transfer: past it both ends are closed, which wakes
// whichever side waits, and the cell fails instead of hanging the run.
var stuckAfter = 20 * time.Second

// both runs fc as the client and fs as the server, each in a goroutine of its own, and
// waits for both. The first error closes both ends (so the other side stops waiting), as
// does running past stuckAfter. Each side times itself with its end's Clock, which pauses
// while it waits for the other: with one P (GOMAXPROCS=1) the sides take turns on one
// thread, a switch costing about 0.4 µs per round trip, where two locked OS threads waking
// each other cost about 17 µs of each thread's CPU per round trip (measured with a one-byte
// ping-pong), more than a resumed handshake's own work.
func both(cc, sc *memconn.Conn, fc, fs func() error) error {
	errs := make(chan error, 2)
	var once sync.Once
	stop := func() { once.Do(func() { cc.Close(); sc.Close() }) }
	for _, job := range []struct {
		f    func() error
		side string
	}{{fc, "client"}, {fs, "server"}} {
		go func() {
			err := job.f()
			if err != nil {
				err = fmt.Errorf("%s: %w", job.side, err)
				stop()
			}
			errs <- err
		}()
	}
	timer := time.AfterFunc(stuckAfter, stop)
	defer timer.Stop()
	var first error
	for range 2 {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// conn is a handshaken pair and the CPU each side spent getting there.
type conn struct {
	client, server       *tls.Conn
	rawClient, rawServer *memconn.Conn
	clientCPU, serverCPU time.Duration
}

// handshake connects a new pair, each side timed from creating its connection to its
// handshake's end, and holds the result to the scenario. A client resuming also reads what
// the server sent after the handshake (a TLS 1.3 ticket), so the next connection can
// resume: that is part of its cost.
func (c *cell) handshake() (*conn, error) {
	return c.handshakeQueued(memconn.DefaultLimit)
}

// handshakeQueued is handshake over a pair whose queues hold limit bytes each way.
func (c *cell) handshakeQueued(limit int) (*conn, error) {
	rc, rs := memconn.Pair(limit)
	if c.counted != nil {
		countSide(rc, rs, *c.counted)
	}
	hellos := &helloCounter{}
	memconn.Observe(rc, hellos)
	r, err := c.connect(rc, rs, hellos, nil)
	// Later work on the pair (bulk) times itself from zero.
	rc.Clock().Stop()
	rs.Clock().Stop()
	return r, err
}

// connect is handshake over a pair the caller made and observes (hellos counts the
// ClientHellos); finished, if set, is told as each side's handshake ends. Each side's clock
// runs while it works and is left paused, holding its time.
func (c *cell) connect(rc, rs *memconn.Conn, hellos *helloCounter, finished func(memconn.Side)) (*conn, error) {
	r := &conn{rawClient: rc, rawServer: rs}
	err := both(rc, rs, func() error {
		k := rc.Clock()
		k.Start()
		defer func() { k.Pause(); r.clientCPU = k.Elapsed() }()
		r.client = tls.Client(rc, c.client)
		if err := r.client.Handshake(); err != nil {
			return err
		}
		if finished != nil {
			finished(memconn.Client)
		}
		if c.sc.Resumed() {
			return readPending(r.client, rc)
		}
		return nil
	}, func() error {
		k := rs.Clock()
		k.Start()
		defer func() { k.Pause(); r.serverCPU = k.Elapsed() }()
		r.server = tls.Server(rs, c.server)
		if err := r.server.Handshake(); err != nil {
			return err
		}
		if finished != nil {
			finished(memconn.Server)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := c.check(r.client.ConnectionState(), r.server.ConnectionState(), c.signer.take(), hellos.count()); err != nil {
		return nil, err
	}
	return r, nil
}

// readPending has crypto/tls process the records already received (it reads tickets only
// when asked for data) without waiting for more.
func readPending(tc *tls.Conn, raw *memconn.Conn) error {
	raw.SetReadDeadline(time.Unix(1, 0))
	defer raw.SetReadDeadline(time.Time{})
	n, err := tc.Read(make([]byte, 1))
	switch {
	case n > 0:
		return errors.New("the server sent application data right after the handshake")
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil
	}
	return err
}

// prime makes one full handshake, unmeasured and unchecked for resumption, that leaves the
// client a session to resume. Nothing to do for full-handshake scenarios.
func (c *cell) prime() error {
	if !c.sc.Resumed() {
		return nil
	}
	full := *c
	full.sc.Resumption = "full"
	r, err := full.handshake()
	if err == nil {
		err = readPending(r.client, r.rawClient)
	}
	if err != nil {
		return fmt.Errorf("priming a session to resume: %w", err)
	}
	return nil
}

// helloCounter counts the ClientHello records in the client's byte stream: plaintext
// handshake records holding exactly one message of type 1. An encrypted record of type 22
// (a TLS 1.2 Finished) matches by chance with odds below 2^-32.
type helloCounter struct {
	mu     sync.Mutex
	header []byte // the current record's header so far
	left   int    // bytes of the current record's body still to come
	first  bool   // the next body byte is the body's first
	msg    []byte // the body's first four bytes
	n      int
	length int
}

func (h *helloCounter) Wrote(from memconn.Side, p []byte) {
	if from != memconn.Client {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for len(p) > 0 {
		if h.left == 0 {
			k := min(5-len(h.header), len(p))
			h.header = append(h.header, p[:k]...)
			p = p[k:]
			if len(h.header) == 5 {
				h.length = int(h.header[3])<<8 | int(h.header[4])
				h.left, h.msg = h.length, h.msg[:0]
				h.first = h.header[0] == 22
				h.header = h.header[:0]
			}
			continue
		}
		k := min(h.left, len(p))
		if h.first {
			h.msg = append(h.msg, p[:min(k, 4-len(h.msg))]...)
			if len(h.msg) == 4 {
				body := int(h.msg[1])<<16 | int(h.msg[2])<<8 | int(h.msg[3])
				if h.msg[0] == 1 && body == h.length-4 {
					h.n++
				}
				h.first = false
			}
		}
		h.left -= k
		p = p[k:]
	}
}

func (h *helloCounter) Read(memconn.Side, int) {}

func (h *helloCounter) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}
