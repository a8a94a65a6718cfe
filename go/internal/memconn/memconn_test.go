package memconn

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

func TestBytesArriveInOrderThroughABoundedQueue(t *testing.T) {
	c, s := Pair(1000)
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	go func() {
		c.Write(data) // blocks every 1000 bytes until the reader catches up
		c.Close()
	}()
	got, err := io.ReadAll(s)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes (err %v), want the %d written", len(got), err, len(data))
	}
	if c.Written() != int64(len(data)) || s.Written() != 0 {
		t.Fatalf("written counts %d and %d", c.Written(), s.Written())
	}
}

func TestAPastDeadlineReturnsAtOnceAndTheConnStaysUsable(t *testing.T) {
	c, s := Pair(DefaultLimit)
	s.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := s.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
	s.SetReadDeadline(time.Time{})
	c.Write([]byte("hi"))
	if n, err := s.Read(make([]byte, 10)); n != 2 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
}

func TestAFutureDeadlineEndsABlockedRead(t *testing.T) {
	_, s := Pair(DefaultLimit)
	s.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	start := time.Now()
	if _, err := s.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatal("the deadline did not wake the reader")
	}
}

func TestClosingWakesABlockedPeer(t *testing.T) {
	c, s := Pair(DefaultLimit)
	done := make(chan error)
	go func() {
		_, err := s.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	c.Close()
	if err := <-done; err != io.EOF {
		t.Fatalf("got %v, want EOF", err)
	}
	if _, err := c.Write([]byte("x")); err == nil {
		t.Fatal("a closed end accepted a write")
	}
}

// An instruction count switches callgrind's collection with OnRun, so it must hear every
// start and stop of the clock once, waits included, and nothing while the clock is idle.
func TestOnRunHearsEachStartAndStopOnce(t *testing.T) {
	c, s := Pair(DefaultLimit)
	var heard []bool
	waiting := make(chan struct{}, 1)
	k := s.Clock()
	k.OnRun = func(running bool) {
		heard = append(heard, running)
		if !running && len(heard) == 2 {
			waiting <- struct{}{} // the read has paused the clock to wait
		}
	}
	go func() {
		<-waiting
		c.Write([]byte("hi"))
	}()
	k.Start()
	k.Start() // already running: not a new start
	if n, err := s.Read(make([]byte, 10)); n != 2 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	k.Stop()
	k.Pause() // already stopped
	want := []bool{true, false, true, false}
	if len(heard) != len(want) {
		t.Fatalf("heard %v, want %v (start, the wait's pause and resume, stop)", heard, want)
	}
	for i := range want {
		if heard[i] != want[i] {
			t.Fatalf("heard %v, want %v", heard, want)
		}
	}
}
