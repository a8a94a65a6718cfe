// Command benchrecords turns the output of the transport's benchmarks
// (`go test ./bench -bench . -cpu=1 -benchmem`, any number of runs
// concatenated) into tlsmatrix result records and prints a factor table
// against the std/std pair of the same runs.
//
//	benchrecords --in results/go-bench.txt --out results/go-bench.jsonl
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

const schema = "tlsmatrix.result/1"

// implNames are the tlsmatrix names of the backends.
var implNames = map[string]string{"std": "go-crypto-tls", "openssl": "go-openssl"}

// scenarios are the tlsmatrix scenario ids of the benchmarks; the group and
// suite are pinned by the benchmarks and checked on every handshake.
var scenarios = map[string]string{
	"Handshake":   "libp2p-handshake-tls13-ecdsa-p256-x25519",
	"Latency":     "libp2p-latency-tls13-aes-128-gcm-6b",
	"Connections": "libp2p-connection-tls13-ecdsa-p256-x25519",
}

// targets are the limits for openssl/openssl against std/std.
var targets = map[string]float64{"Handshake": 1.3, "Latency": 1.2, "Connections": 1.3}

// metric is one figure of a benchmark line, as a record metric.
type metric struct {
	name, unit string
	get        func(measurement) float64
	positive   bool // zero is implausible (time); allocations may be zero
}

var (
	nsPerOp     = metric{"ns_per_op", "ns", func(m measurement) float64 { return m.nsPerOp }, true}
	bytesPerOp  = metric{"bytes_per_op", "B", func(m measurement) float64 { return m.bytesPerOp }, false}
	allocsPerOp = metric{"allocs_per_op", "allocs", func(m measurement) float64 { return m.allocsPerOp }, false}
	metrics     = []metric{nsPerOp, bytesPerOp, allocsPerOp}
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
}

func main() {
	in := flag.String("in", "-", "benchmark output to read; - for standard input")
	out := flag.String("out", "", "JSON-lines file to write the records to (required; replaced atomically)")
	rev := flag.String("git-rev", "", "git revision to record in the environment")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: benchrecords --in FILE --out FILE [--git-rev REV]\n\n"+
			"Reads `go test ./bench -bench . -cpu=1 -benchmem` output (runs may be\n"+
			"concatenated; each run adds a sample), writes tlsmatrix records and prints\n"+
			"each pair's factor against std/std with a bootstrap 95%% interval.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*in, *out, *rev, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchrecords:", err)
		os.Exit(1)
	}
}

func run(inPath, outPath, rev string, w io.Writer) error {
	var r io.Reader = os.Stdin
	if inPath != "-" {
		f, err := os.Open(inPath)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	p, err := parse(r)
	if err != nil {
		return err
	}
	recs, err := records(p, rev)
	if err != nil {
		return err
	}
	if err := writeAtomically(outPath, recs); err != nil {
		return err
	}
	printTable(w, p)
	fmt.Fprintf(w, "\n%d records written to %s\n", len(recs), outPath)
	return nil
}

func records(p *parsed, rev string) ([]record, error) {
	now := time.Now().UTC()
	e := env{
		CPUModel:    p.cpu,
		Cores:       runtime.NumCPU(),
		Kernel:      kernel(),
		Compilers:   map[string]string{"go": runtime.Version()},
		GitRevision: rev,
		Timestamp:   now.Format(time.RFC3339),
		Command:     "make bench-go",
	}
	runID := "go-bench-" + now.Format("20060102T150405Z")
	var recs []record
	for _, k := range p.order {
		scenario, ok := scenarios[k.bench]
		if !ok {
			return nil, fmt.Errorf("unknown benchmark %q", k.bench)
		}
		client, cok := implNames[k.client]
		server, sok := implNames[k.server]
		if !cok || !sok {
			return nil, fmt.Errorf("unknown backend in %s/client=%s/server=%s", k.bench, k.client, k.server)
		}
		ms := p.samples[k]
		for _, metric := range metrics {
			xs := pick(ms, metric.get)
			for _, x := range xs {
				if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || (metric.positive && x == 0) {
					return nil, fmt.Errorf("%s %s/%s: implausible %s %v", k.bench, k.client, k.server, metric.name, x)
				}
			}
			lo, hi := medianCI(xs)
			mn := xs[0]
			for _, x := range xs {
				mn = math.Min(mn, x)
			}
			recs = append(recs, record{
				Schema: schema, RunID: runID, Scenario: scenario,
				Client: client, Server: server,
				ClientVersion: p.versions[client], ServerVersion: p.versions[server],
				Metric: metric.name, Unit: metric.unit, Samples: xs,
				Median: median(xs), Min: mn, CILow: lo, CIHigh: hi, Env: e,
			})
		}
	}
	return recs, nil
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// writeAtomically writes to a temporary file beside path, syncs, then
// renames, so a reader never sees half a file.
func writeAtomically(path string, recs []record) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".benchrecords-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	enc := json.NewEncoder(tmp)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func printTable(w io.Writer, p *parsed) {
	fmt.Fprintf(w, "libp2p TLS transport: both peers on one CPU (-cpu=1), TLS 1.3, X25519, TLS_AES_128_GCM_SHA256\n")
	fmt.Fprintf(w, "median of %s; factor = time / std->std time in the same runs, bootstrap 95%% CI; lower is better\n\n", runsText(p))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "benchmark\tclient\tserver\tns/op\t±CI\tfactor\t95% CI\tB/op\tallocs/op\ttarget\t")
	for _, k := range p.order {
		ns := pick(p.samples[k], nsPerOp.get)
		lo, hi := medianCI(ns)
		m := median(ns)
		base := pick(p.samples[key{k.bench, "std", "std"}], nsPerOp.get)
		factor, ci, target := "-", "-", ""
		if len(base) > 0 {
			f := m / median(base)
			flo, fhi := ratioCI(ns, base)
			factor, ci = fmt.Sprintf("%.2fx", f), fmt.Sprintf("%.2f-%.2f", flo, fhi)
			if t, ok := targets[k.bench]; ok && k.client == "openssl" && k.server == "openssl" {
				verdict := "met"
				if f > t {
					verdict = "missed"
				}
				target = fmt.Sprintf("<=%.1fx %s", t, verdict)
			}
		}
		ms := p.samples[k]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f%%\t%s\t%s\t%.0f\t%.0f\t%s\t\n", k.bench, k.client, k.server,
			thousands(m), (hi-lo)/2/m*100, factor, ci, median(pick(ms, bytesPerOp.get)), median(pick(ms, allocsPerOp.get)), target)
	}
	tw.Flush()
}

func runsText(p *parsed) string {
	n := len(p.samples[p.order[0]])
	if n == 1 {
		return "1 run (no interval: repeat the runs for one)"
	}
	return fmt.Sprintf("%d runs", n)
}

func pick(ms []measurement, f func(measurement) float64) []float64 {
	out := make([]float64, len(ms))
	for i, m := range ms {
		out[i] = f(m)
	}
	return out
}

func thousands(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
