package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/bench"
	"github.com/tlsmatrix/tlsmatrix/go/internal/metrics"
	"github.com/tlsmatrix/tlsmatrix/go/internal/paired"
	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// A short run of one workload: every arm is measured, its figures are sane,
// its versions are the ones linked, and every arm but the reference carries
// a ratio per round.
func TestAShortRunWritesSaneRecords(t *testing.T) {
	if !libp2ptls.OpenSSLCompiledIn {
		t.Skip("every arm runs only with the OpenSSL backend (-tags openssl)")
	}
	wl, _ := bench.WorkloadNamed("Handshake")
	out := filepath.Join(t.TempDir(), "go.jsonl")
	var sb strings.Builder
	o := options{rounds: 3, sample: time.Millisecond, warmup: time.Millisecond, workloads: []bench.Workload{wl}, out: out}
	failed, err := run(o, &sb, func(int, int) {})
	if err != nil || failed != 0 {
		t.Fatalf("failed %d, %v", failed, err)
	}
	lines := readLines(t, out)
	_, _, counted := bench.CAllocations()
	if !counted {
		t.Error("the OpenSSL build counts no libssl allocations")
	}
	want := outcome{cCounted: counted}.figures()
	if len(lines) != len(arms)*len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(arms)*len(want))
	}
	versions := map[string]string{bench.StdName: "go1.", bench.OpenSSLName: libp2ptls.OpenSSLVersion(),
		bench.UpstreamName: "go-libp2p v0.", bench.UpstreamSpecName: "go-libp2p v0."}
	for _, l := range lines {
		if l["schema"] != resultSchema || l["scenario"] != wl.Scenario {
			t.Fatalf("line %v", l)
		}
		client := strings.TrimSuffix(l["client"].(string), " (A/A)")
		if !strings.HasPrefix(l["client_version"].(string), versions[client]) {
			t.Errorf("%s reported %q", client, l["client_version"])
		}
		for _, s := range l["samples"].([]any) {
			v := s.(float64)
			if math.IsNaN(v) || v < 0 || (l["metric"] == metrics.NsPerOp && v == 0) {
				t.Errorf("%s %s: implausible sample %v", client, l["metric"], v)
			}
		}
		// libssl allocates in every handshake an OpenSSL backend makes, and
		// nowhere else.
		if l["metric"] == metrics.CBytesPerOp {
			onOpenSSL := l["client"] == bench.OpenSSLName || l["server"] == bench.OpenSSLName
			if median := l["median"].(float64); onOpenSSL != (median > 0) {
				t.Errorf("%s -> %s: libssl allocated %v B/op", l["client"], l["server"], median)
			}
		}
		p, isPaired := l["paired"].(map[string]any)
		isRef := l["client"] == bench.UpstreamName && l["server"] == bench.UpstreamName
		switch {
		case l["metric"] != metrics.NsPerOp || isRef:
			if isPaired {
				t.Errorf("%s %s should carry no ratios", client, l["metric"])
			}
		case !isPaired || len(p["ratios"].([]any)) != 3 || p["reference_client"] != bench.UpstreamName:
			t.Errorf("%s -> %s: pairing %v", l["client"], l["server"], l["paired"])
		}
	}
	for _, want := range []string{"std backend / upstream:", "openssl backend / std backend:", "go-libp2p-upstream (A/A)"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, sb.String())
		}
	}
}

// A short run of the dial workload: each stack's CPU per connection is
// paired with the reference's like its time, and its wire pass is written:
// round trips to the first byte (4 over TCP, 2 over QUIC) and the time to it
// through each delay link, never less than those round trips take.
func TestADialRunWritesCPUAndTheWire(t *testing.T) {
	if !libp2ptls.OpenSSLCompiledIn {
		t.Skip("every arm runs only with the OpenSSL backend (-tags openssl)")
	}
	wl, _ := bench.WorkloadNamed("DialNewPeers")
	out := filepath.Join(t.TempDir(), "go.jsonl")
	var sb strings.Builder
	o := options{rounds: 3, sample: time.Millisecond, warmup: time.Millisecond, workloads: []bench.Workload{wl}, out: out}
	if failed, err := run(o, &sb, func(int, int) {}); err != nil || failed != 0 {
		t.Fatalf("failed %d, %v", failed, err)
	}
	seen := map[string]map[string]map[string]any{}
	for _, l := range readLines(t, out) {
		client := l["client"].(string)
		if seen[client] == nil {
			seen[client] = map[string]map[string]any{}
		}
		seen[client][l["metric"].(string)] = l
	}
	if len(seen) != len(dialArms) {
		t.Fatalf("arms %v", seen)
	}
	for client, m := range seen {
		cpu := m[metrics.CPUNsPerOp]
		if cpu == nil || cpu["median"].(float64) <= 0 {
			t.Errorf("%s: CPU %v", client, cpu)
		} else if _, isPaired := cpu["paired"]; isPaired != (client != bench.UpstreamName) {
			t.Errorf("%s: CPU pairing %v", client, cpu["paired"])
		}
		want := 4.0
		if client == bench.QUICName {
			want = 2
			if v := m[metrics.NsPerOp]["client_version"].(string); !strings.Contains(v, "quic-go v0.") {
				t.Errorf("QUIC's version %q names no quic-go", v)
			}
		}
		if rt := m[metrics.FirstByteRoundTrips]; rt == nil || rt["median"].(float64) != want {
			t.Errorf("%s: round trips %v, want %v", client, rt, want)
		}
		for _, link := range bench.DialLinks {
			ttfb := m[link.Metric]
			if least := want * float64(link.RTT.Milliseconds()); ttfb == nil || ttfb["median"].(float64) < least {
				t.Errorf("%s: %s %v, want at least %v ms", client, link.Metric, ttfb, least)
			}
		}
	}
	if !strings.Contains(sb.String(), "round trips x RTT + CPU") {
		t.Errorf("the dial table is missing:\n%s", sb.String())
	}
}

// twoRounds is a workload's outcome with two plausible rounds on every arm.
func twoRounds(t *testing.T, workload string) outcome {
	t.Helper()
	wl, err := bench.WorkloadNamed(workload)
	if err != nil {
		t.Fatal(err)
	}
	arms := armsFor(wl, false)
	n := len(arms)
	r := outcome{w: wl, arms: arms, versions: make([][2]string, n), samples: make([][]paired.Sample, n), errs: make([]error, n),
		wires: make([]*bench.Wire, n)}
	for i := range arms {
		r.samples[i] = []paired.Sample{{Round: 0, NsPerOp: 100}, {Round: 1, NsPerOp: 110}}
	}
	return r
}

// An arm that failed is a failed cell with its reason, never a figure, and
// the others are still written.
func TestAFailedArmIsACellWithItsReason(t *testing.T) {
	r := twoRounds(t, "Latency")
	n := len(arms)
	r.errs[3], r.samples[3] = errors.New("handshake: peer reset"), nil
	lines, failed, err := recordLines([]outcome{r}, "go-bench-test", env{})
	if err != nil || failed != 1 {
		t.Fatalf("failed %d, %v", failed, err)
	}
	var cells int
	for _, l := range lines {
		if c, ok := l.(cellLine); ok {
			cells++
			if c.Outcome != "failed" || c.Reason != "handshake: peer reset" || c.Client != arms[3].client {
				t.Errorf("cell %+v", c)
			}
		}
	}
	if cells != 1 || len(lines) != 1+(n-1)*len(r.figures()) {
		t.Errorf("%d cells, %d lines", cells, len(lines))
	}
}

// An arm whose library lacks the group is an unsupported cell with the
// reason, and does not make the run fail.
func TestAnUnsupportedArmIsNotAFailure(t *testing.T) {
	r := twoRounds(t, "Handshake")
	r.errs[5] = fmt.Errorf("%w: OpenSSL 3.0.19 has no X25519MLKEM768", bench.ErrUnsupported)
	lines, failed, err := recordLines([]outcome{r}, "go-bench-test", env{})
	if err != nil || failed != 0 {
		t.Fatalf("failed %d, %v", failed, err)
	}
	for _, l := range lines {
		if c, ok := l.(cellLine); ok && (c.Outcome != "unsupported" || c.Reason != "OpenSSL 3.0.19 has no X25519MLKEM768") {
			t.Errorf("cell %+v", c)
		}
	}
}

// Each handshake workload runs once per group, Latency once.
func TestGroupsMultiplyTheHandshakeWorkloads(t *testing.T) {
	ws, err := parseWorkloads("Handshake,Latency", "X25519,x25519mlkem768", "SecP256r1MLKEM768")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
	}
	if strings.Join(names, " ") != "Handshake Handshake/X25519MLKEM768 Latency" {
		t.Errorf("workloads %v", names)
	}
	if _, err := parseWorkloads("Handshake", "P-521", ""); err == nil || !strings.Contains(err.Error(), "valid: X25519, X25519MLKEM768") {
		t.Errorf("an unknown group: %v", err)
	}
	// The other hybrids join the new-peers workload only.
	ws, err = parseWorkloads("HandshakeNewPeers,Handshake", "X25519", "SecP256r1MLKEM768,SecP384r1MLKEM1024")
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, w := range ws {
		names = append(names, w.Name)
	}
	if strings.Join(names, " ") != "HandshakeNewPeers HandshakeNewPeers/SecP256r1MLKEM768 HandshakeNewPeers/SecP384r1MLKEM1024 Handshake" {
		t.Errorf("workloads %v", names)
	}
}

// A zero time is refused, not written.
func TestImplausibleFiguresAreRefused(t *testing.T) {
	if _, err := newRecord(record{Client: "a", Server: "b"}, nsPerOp, []float64{100, 0}); err == nil {
		t.Error("a zero ns/op was accepted")
	}
	if _, err := newRecord(record{Client: "a", Server: "b"}, figures[2], []float64{0, 0}); err != nil {
		t.Errorf("zero allocations were refused: %v", err)
	}
}

// A vendored build's process samples the reference and the OpenSSL arms
// only, so no arm appears twice in a run shared with the system build's.
func TestOpenSSLArmsKeepTheReferenceAndOpenSSLOnly(t *testing.T) {
	kept := opensslArms(arms)
	if len(kept) != 4 || kept[0] != arms[0] {
		t.Fatalf("kept %v", kept)
	}
	for _, a := range kept[1:] {
		if a.aa || (a.client != bench.OpenSSLName && a.server != bench.OpenSSLName) {
			t.Fatalf("kept %v, which has no OpenSSL side", a)
		}
	}
	if len(arms) != 7 {
		t.Fatal("opensslArms changed the full list")
	}
}
