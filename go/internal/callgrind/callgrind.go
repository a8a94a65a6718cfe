// Package callgrind counts instructions from inside a Go process running under `valgrind
// --tool=callgrind --collect-atstart=no`, as crates/measure/src/callgrind.rs does for the Rust
// drivers: collection is switched on only while the counted side runs, and each count is
// dumped and read back from callgrind's own output file.
//
// The client requests are valgrind's documented instruction sequence, written in Go
// assembly (request_amd64.s), so no cgo is needed; natively they do nothing.
package callgrind

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

const (
	runningOnValgrind = 0x1001
	// VG_USERREQ_TOOL_BASE('C','T') and the requests after it, in callgrind.h's order.
	base          = uint64('C')<<24 | uint64('T')<<16
	zeroStats     = base + 1
	toggleCollect = base + 2
	dumpStatsAt   = base + 3
	startInstr    = base + 4
)

func call(req, arg uint64) uint64 {
	args := [6]uint64{req, arg}
	return request(&args, 0)
}

// Running reports whether this process runs under valgrind (any tool).
func Running() bool { return call(runningOnValgrind, 0) != 0 }

// Toggle switches callgrind's collection on or off; natively it does nothing.
func Toggle() { call(toggleCollect, 0) }

// Counter reads counts back from callgrind's output file.
type Counter struct {
	outFile string
	dumps   int
	// instrumenting: the driver runs under --instr-atstart=no, and the first Zero switches
	// instrumentation on for good (switching flushes valgrind's translations, so once, after
	// the warm-up).
	instrumenting bool
}

// NewCounter takes the --callgrind-out-file pattern; %p becomes this process's id, as
// callgrind itself expands it.
func NewCounter(outFile string) (*Counter, error) {
	if !supported {
		return nil, errors.New("instruction counting is implemented for amd64 only")
	}
	if !Running() {
		return nil, errors.New("--measure instructions needs the driver to run under valgrind --tool=callgrind --collect-atstart=no --instr-atstart=no; `tlsmatrix run --measure instructions` starts it so")
	}
	return &Counter{outFile: strings.ReplaceAll(outFile, "%p", strconv.Itoa(os.Getpid()))}, nil
}

// Zero forgets whatever was collected so far; the first call also switches instrumentation
// on, so every count begins after one.
func (c *Counter) Zero() {
	if !c.instrumenting {
		call(startInstr, 0)
		c.instrumenting = true
	}
	call(zeroStats, 0)
}

// Counts is one dump's totals: instructions, and atomic read-modify-writes (global bus
// events, Ge) where valgrind ran with --collect-bus=yes, else -1.
type Counts struct {
	Instructions uint64
	Atomics      int64
}

// Take dumps what was collected since the last dump or Zero, reads the totals back and
// removes the dump (callgrind starts from zero after every dump).
func (c *Counter) Take(label string) (Counts, error) {
	l := append([]byte(label), 0)
	call(dumpStatsAt, uint64(uintptr(unsafe.Pointer(&l[0]))))
	runtime.KeepAlive(l)
	c.dumps++
	// Callgrind names the n-th dump of a run `<out-file>.<n>`.
	part := fmt.Sprintf("%s.%d", c.outFile, c.dumps)
	text, err := os.ReadFile(part)
	if err != nil {
		return Counts{}, fmt.Errorf("callgrind wrote no dump at %s: %w", part, err)
	}
	os.Remove(part)
	n, ok := parseTotals(string(text))
	if !ok {
		return Counts{}, fmt.Errorf("%s has no totals line", part)
	}
	return n, nil
}

// parseTotals reads a dump's `totals:` line (or, in older formats, `summary:`): its first
// event is instructions (Ir), and the one the `events:` line names Ge, if any, the bus
// events (a trailing zero may be left out).
func parseTotals(text string) (Counts, bool) {
	lines := strings.Split(text, "\n")
	bus := -1
	for _, line := range lines {
		if rest, ok := strings.CutPrefix(line, "events:"); ok {
			bus = slices.Index(strings.Fields(rest), "Ge")
			break
		}
	}
	for _, key := range []string{"totals:", "summary:"} {
		for _, line := range lines {
			if rest, ok := strings.CutPrefix(line, key); ok {
				f := strings.Fields(rest)
				if len(f) == 0 {
					return Counts{}, false
				}
				n, err := strconv.ParseUint(f[0], 10, 64)
				c := Counts{Instructions: n, Atomics: -1}
				if bus >= 0 {
					c.Atomics = 0
					if bus < len(f) {
						a, aerr := strconv.ParseInt(f[bus], 10, 64)
						if aerr != nil {
							return Counts{}, false
						}
						c.Atomics = a
					}
				}
				return c, err == nil
			}
		}
	}
	return Counts{}, false
}
