package driver

import (
	"errors"
	"syscall"
	"unsafe"
)

// stepReader reads the orchestrator's go-ahead lines in a stepped (duet) group without
// letting the Go runtime see the wait.
//
// Why: a blocking read through os.Stdin is a syscall the runtime knows of. While it blocks,
// the one P is idle, so sysmon, the runtime's monitor thread, goes to deep sleep; the read's
// return wakes it and it restarts at its shortest period, waking every 20 µs for the next
// millisecond or two and preempting the only thread that runs on this core. Every round of a
// duet starts with such a wait, so about half the timed samples paid 40-55 involuntary
// context switches (getrusage; as many voluntary ones, the monitor's) and ran up to 1.3x
// slower: go-crypto-tls's factors moved by up to 1.11 between runs, where a Go process that
// never waits (the driver alone) showed no such samples. A raw read keeps the P running as
// far as the runtime can tell, so sysmon stays at its longest period (10 ms) and the process
// is measured as a busy one. The cost: nothing else in the process runs during the wait (a
// collection that has begun finishes after it), and nothing else needs to.
type stepReader struct {
	fd int
}

// line blocks until a whole line has arrived and returns it without the newline.
func (r stepReader) line() (string, error) {
	var line []byte
	var b [1]byte
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(r.fd), uintptr(unsafe.Pointer(&b[0])), 1)
		switch {
		case errno == syscall.EINTR:
			continue
		case errno != 0:
			return "", errno
		case n == 0:
			return "", errors.New("stdin closed")
		case b[0] == '\n':
			return string(line), nil
		}
		line = append(line, b[0])
	}
}
