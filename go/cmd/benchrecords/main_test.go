package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const oneRun = `tlsmatrix-versions	go-crypto-tls=go1.26.8	go-openssl=OpenSSL 3.0.19 27 Jan 2026
goos: linux
cpu: AMD EPYC
BenchmarkHandshake/client=std/server=std         	     300	   1600000 ns/op	   99854 B/op	    1119 allocs/op
BenchmarkHandshake/client=openssl/server=openssl 	     300	   %d ns/op	   11150 B/op	     154 allocs/op
BenchmarkLatency/client=std/server=std           	     200	     36793 ns/op	      49 B/op	       2 allocs/op
BenchmarkLatency/client=openssl/server=openssl   	     200	     40383 ns/op	       0 B/op	       0 allocs/op
PASS
`

func twoRuns() string {
	return strings.Replace(oneRun, "%d", "3200000", 1) + strings.Replace(oneRun, "%d", "3000000", 1)
}

func TestRecordsFromTwoRuns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	in := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(in, []byte(twoRuns()), 0o644); err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := run(in, out, "abc123", &table); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4*3 {
		t.Fatalf("%d records, want 4 pairs x 3 metrics", len(lines))
	}
	// The field set is exactly the Rust side's Record.
	want := []string{"ci_high", "ci_low", "client", "client_version", "env", "median", "metric", "min",
		"run_id", "samples", "scenario", "schema", "server", "server_version", "unit"}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range first {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Fatalf("record fields %v, want %v", keys, want)
	}
	var r record
	for _, l := range lines {
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Client == "go-openssl" && r.Metric == "ns_per_op" && r.Scenario == scenarios["Handshake"] {
			break
		}
	}
	if r.Median != 3.1e6 || r.Min != 3e6 || len(r.Samples) != 2 || r.ClientVersion != "OpenSSL 3.0.19 27 Jan 2026" {
		t.Fatalf("openssl handshake record: %+v", r)
	}
	if r.CILow > r.Median || r.CIHigh < r.Median || r.Env.GitRevision != "abc123" {
		t.Fatalf("interval or env wrong: %+v", r)
	}
	if !strings.Contains(table.String(), "1.94x") || !strings.Contains(table.String(), "<=1.3x missed") {
		t.Fatalf("table lacks the factor or the verdict:\n%s", table.String())
	}
}

func TestBadInputIsRefused(t *testing.T) {
	cases := map[string]string{
		"no versions":    strings.Replace(strings.Replace(oneRun, "%d", "1", 1), "tlsmatrix-versions", "x", 1),
		"no -benchmem":   "tlsmatrix-versions\tgo-crypto-tls=a\tgo-openssl=b\nBenchmarkLatency/client=std/server=std 10 5 ns/op\n",
		"no results":     "tlsmatrix-versions\tgo-crypto-tls=a\tgo-openssl=b\nPASS\n",
		"zero time":      "tlsmatrix-versions\tgo-crypto-tls=a\tgo-openssl=b\nBenchmarkLatency/client=std/server=std 10 0 ns/op 1 B/op 1 allocs/op\n",
		"version change": strings.Replace(oneRun, "%d", "1", 1) + "tlsmatrix-versions\tgo-crypto-tls=go1.27\tgo-openssl=x\n",
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "in.txt")
			out := filepath.Join(t.TempDir(), "out.jsonl")
			os.WriteFile(in, []byte(input), 0o644)
			if err := run(in, out, "", &bytes.Buffer{}); err == nil {
				t.Fatal("accepted")
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatal("wrote a results file from bad input")
			}
		})
	}
}
