package bench

import (
	"bytes"
	"net"
	"sync"
	"time"
)

// A delayLine delivers what one socket writes after a fixed one-way delay,
// in order, without holding the writer up: half the round trip of a link
// whose bandwidth is not the limit. The dial workload's wire pass runs a
// connection through it on both sides to count round trips by the clock.
type delayLine struct {
	delay   time.Duration
	deliver func(b []byte, to net.Addr)
	mu      sync.Mutex // guards closed against a send racing close
	closed  bool
	queue   chan delayed
	done    chan struct{}
}

type delayed struct {
	due  time.Time
	data []byte
	to   net.Addr // nil on a stream
}

func newDelayLine(delay time.Duration, deliver func([]byte, net.Addr)) *delayLine {
	l := &delayLine{delay: delay, deliver: deliver, queue: make(chan delayed, 4096), done: make(chan struct{})}
	go l.run()
	return l
}

func (l *delayLine) run() {
	defer close(l.done)
	for d := range l.queue {
		time.Sleep(time.Until(d.due))
		l.deliver(d.data, d.to) // a peer gone by now is no error of the link's
	}
}

func (l *delayLine) send(b []byte, to net.Addr) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return net.ErrClosed
	}
	l.queue <- delayed{time.Now().Add(l.delay), bytes.Clone(b), to}
	return nil
}

// close delivers what is queued, then stops.
func (l *delayLine) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.queue)
	}
	l.mu.Unlock()
	<-l.done
}

// delayedConn is a stream socket whose writes cross a delayLine.
type delayedConn struct {
	net.Conn
	line *delayLine
}

func delayConn(c net.Conn, delay time.Duration) net.Conn {
	return &delayedConn{c, newDelayLine(delay, func(b []byte, _ net.Addr) { _, _ = c.Write(b) })}
}

func (c *delayedConn) Write(b []byte) (int, error) {
	if err := c.line.send(b, nil); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (c *delayedConn) Close() error {
	c.line.close()
	return c.Conn.Close()
}

// delayedPacketConn is a UDP socket whose datagrams cross a delayLine. It
// hides the socket's own type, so quic-go sends one datagram a call (no
// segmentation offload): the wire pass counts time, not CPU. Its buffers are
// sized as quic-go sizes a plain socket's.
type delayedPacketConn struct {
	net.PacketConn
	line *delayLine
}

func delayPacketConn(c *net.UDPConn, delay time.Duration) net.PacketConn {
	conn := &delayedPacketConn{c, newDelayLine(delay, func(b []byte, to net.Addr) { _, _ = c.WriteTo(b, to) })}
	return struct {
		net.PacketConn
		buffers
	}{conn, c}
}

// buffers are the socket options quic-go sets on a UDP socket it is given.
type buffers interface {
	SetReadBuffer(int) error
	SetWriteBuffer(int) error
}

func (c *delayedPacketConn) WriteTo(b []byte, to net.Addr) (int, error) {
	if err := c.line.send(b, to); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (c *delayedPacketConn) Close() error {
	c.line.close()
	return c.PacketConn.Close()
}
