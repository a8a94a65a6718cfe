package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/bench"
	"github.com/tlsmatrix/tlsmatrix/go/internal/metrics"
	"github.com/tlsmatrix/tlsmatrix/go/internal/paired"
)

// The schemas of tlsmatrix results files (crates/model/src/record.rs): a
// record of figures, and a cell that produced none.
const (
	resultSchema = "tlsmatrix.result/1"
	cellSchema   = "tlsmatrix.cell/1"
)

type env struct {
	CPUModel    string            `json:"cpu_model"`
	Cores       int               `json:"cores"`
	Kernel      string            `json:"kernel"`
	Compilers   map[string]string `json:"compilers"`
	GitRevision string            `json:"git_revision"`
	Timestamp   string            `json:"timestamp"`
	Command     string            `json:"command"`
}

// pairing is a record's samples over the reference's of the same round.
type pairing struct {
	ReferenceClient string    `json:"reference_client"`
	ReferenceServer string    `json:"reference_server"`
	Ratios          []float64 `json:"ratios"`
	Blocks          []uint32  `json:"blocks"`
}

type record struct {
	Schema        string    `json:"schema"`
	RunID         string    `json:"run_id"`
	Scenario      string    `json:"scenario"`
	Client        string    `json:"client"`
	Server        string    `json:"server"`
	ClientVersion string    `json:"client_version"`
	ServerVersion string    `json:"server_version"`
	Metric        string    `json:"metric"`
	Unit          string    `json:"unit"`
	Samples       []float64 `json:"samples"`
	Median        float64   `json:"median"`
	Min           float64   `json:"min"`
	CILow         float64   `json:"ci_low"`
	CIHigh        float64   `json:"ci_high"`
	Env           env       `json:"env"`
	Paired        *pairing  `json:"paired,omitempty"`
}

type cellLine struct {
	Schema   string `json:"schema"`
	RunID    string `json:"run_id"`
	Scenario string `json:"scenario"`
	Client   string `json:"client"`
	Server   string `json:"server"`
	Outcome  string `json:"outcome"`
	Reason   string `json:"reason"`
}

// metric is one figure of a sample, as a record metric.
type metric struct {
	name     string
	get      func(paired.Sample) float64
	positive bool // zero is implausible for a time; allocations may be zero
	paired   bool // its record carries the per-round ratios to the reference's
}

var (
	nsPerOp = metric{metrics.NsPerOp, func(s paired.Sample) float64 { return s.NsPerOp }, true, true}
	// The process's CPU time, for a workload that counts it: both peers'.
	cpuPerOp = metric{metrics.CPUNsPerOp, func(s paired.Sample) float64 { return s.CPUNsPerOp }, true, true}
	figures  = []metric{
		nsPerOp,
		{metrics.BytesPerOp, func(s paired.Sample) float64 { return s.BytesPerOp }, false, false},
		{metrics.AllocsPerOp, func(s paired.Sample) float64 { return s.AllocsPerOp }, false, false},
	}
	// libssl's own allocations, which Go's figures leave out (an OpenSSL
	// build counts them; a pure-Go arm's are zero).
	cFigures = []metric{
		{metrics.CBytesPerOp, func(s paired.Sample) float64 { return s.CBytesPerOp }, false, false},
		{metrics.CAllocsPerOp, func(s paired.Sample) float64 { return s.CAllocsPerOp }, false, false},
	}
	// The whole of what an operation allocates, Go's heap and libssl's
	// together: the figure factors are taken on (the parts have none), so a
	// backend on libssl does not look lighter for allocating in C.
	totals = []metric{
		{metrics.TotalBytesPerOp, func(s paired.Sample) float64 { return s.BytesPerOp + s.CBytesPerOp }, false, false},
		{metrics.TotalAllocsPerOp, func(s paired.Sample) float64 { return s.AllocsPerOp + s.CAllocsPerOp }, false, false},
	}
)

func pick(ss []paired.Sample, f func(paired.Sample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// newRecord summarises one metric of an arm; it refuses figures that cannot
// be right (negative, not finite, a zero time).
func newRecord(base record, m metric, xs []float64) (record, error) {
	if len(xs) == 0 {
		return record{}, fmt.Errorf("%s -> %s: no %s samples", base.Client, base.Server, m.name)
	}
	mn := math.Inf(1)
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || (m.positive && x == 0) {
			return record{}, fmt.Errorf("%s -> %s: implausible %s %v", base.Client, base.Server, m.name, x)
		}
		mn = math.Min(mn, x)
	}
	r := base
	r.Schema, r.Metric, r.Unit, r.Samples = resultSchema, m.name, metrics.Unit(m.name), xs
	r.Median, r.Min = paired.Median(xs), mn
	r.CILow, r.CIHigh = paired.MedianCI(xs)
	return r, nil
}

// wireRecords are an arm's wire pass as records, one sample each: the round
// trips to the first byte and the time to it through each delay link.
func wireRecords(base record, w *bench.Wire) ([]any, error) {
	if w == nil {
		return nil, nil
	}
	var out []any
	add := func(name string, x float64) error {
		r, err := newRecord(base, metric{name: name, positive: true}, []float64{x})
		out = append(out, r)
		return err
	}
	if err := add(metrics.FirstByteRoundTrips, float64(w.RoundTrips)); err != nil {
		return nil, err
	}
	for i, link := range bench.DialLinks {
		if err := add(link.Metric, float64(w.TTFB[i].Nanoseconds())/1e6); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func newEnv(rev string, now time.Time) env {
	return env{
		CPUModel:    cpuModel(),
		Cores:       runtime.NumCPU(),
		Kernel:      kernel(),
		Compilers:   map[string]string{"go": runtime.Version()},
		GitRevision: rev,
		Timestamp:   now.UTC().Format(time.RFC3339),
		Command:     "pairedbench " + strings.Join(os.Args[1:], " "),
	}
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// writeAtomically writes the lines to a temporary file beside path, syncs,
// then renames, so a reader never sees half a file.
func writeAtomically(path string, lines []any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pairedbench-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	enc := json.NewEncoder(tmp)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
