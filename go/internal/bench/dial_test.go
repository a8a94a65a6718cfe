package bench

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/paired"
)

// checkDialFigures holds a dial session to what its stack must show: CPU
// counted, and through each delay link the round trips the protocols take
// to a new peer's first byte. TCP: the connect, multistream-select's choice
// of security transport, the TLS 1.3 handshake (yamux chosen in its ALPN)
// and the request; QUIC: its handshake and the request. The time through a
// link is never less than its round trips.
func checkDialFigures(t *testing.T, at, stack string, s Session) {
	t.Helper()
	if cpu := s.(paired.CPUCounter).TimedCPU(); cpu <= 0 {
		t.Errorf("%s: %v of CPU for 3 connections", at, cpu)
	}
	wire := s.(WireReader).Wire()
	want := 4
	if stack == QUICName {
		want = 2
	}
	if wire.RoundTrips != want || len(wire.TTFB) != len(DialLinks) {
		t.Fatalf("%s: %d round trips to the first byte, want %d (%v)", at, wire.RoundTrips, want, wire.TTFB)
	}
	// No upper bound: a busy machine adds CPU time to the path (the round trips are
	// counted with it taken out).
	for i, link := range DialLinks {
		if least := time.Duration(want) * link.RTT; wire.TTFB[i] < least {
			t.Errorf("%s: first byte after %v through a %v link, less than %v", at, wire.TTFB[i], link.RTT, least)
		}
	}
}

func TestQUICMeetsQUICOnly(t *testing.T) {
	if _, err := newPeerPair(QUICName, StdName, tls.X25519, 0); err == nil {
		t.Error("a QUIC client was paired with a TCP server")
	}
	w, _ := WorkloadNamed("Handshake")
	if _, _, err := w.OpenNamed(QUICName, QUICName); err == nil {
		t.Error("QUIC ran a security transport's handshake workload")
	}
}

// A delay line hands each write on after its delay, in order, and a write
// never waits for it.
func TestDelayLineDeliversLateAndInOrder(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	const delay = 30 * time.Millisecond
	c := delayConn(a, delay)
	start := time.Now()
	for _, chunk := range []string{"one ", "two ", "three"} {
		if _, err := c.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if wrote := time.Since(start); wrote > delay/3 {
		t.Errorf("writes waited %v", wrote)
	}
	got := make([]byte, len("one two three"))
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if since := time.Since(start); since < delay {
		t.Errorf("delivered after %v, before the %v delay", since, delay)
	}
	if string(got) != "one two three" {
		t.Errorf("delivered %q", got)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if _, err := c.Write([]byte("late")); err == nil {
		t.Error("a write after close was taken")
	}
}
