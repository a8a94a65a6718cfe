// Command pairedbench runs the libp2p TLS transport's benchmarks
// (HandshakeNewPeers, Handshake, Latency, Connections, DialNewPeers) paired: for each
// workload, upstream go-libp2p's own p2p/security/tls (the reference), a
// second copy of it (A/A: the noise floor), upstream with the certificate
// self-signature check the spec requires (the std backend's like-for-like
// reference), and every pair of this module's backends take turns in one
// process, a short sample each per round. Each factor is the median over
// rounds of an arm's time over the reference's time in the same round, so a
// machine whose speed drifts moves both alike. It writes tlsmatrix records
// (with the per-round ratios) and prints the factors with 95% intervals.
//
//	pairedbench --out results/go-bench.jsonl [--rounds 40] [--sample 20ms]
//
// Both peers share one CPU (GOMAXPROCS=1, as -cpu=1 in the pull request
// that added the OpenSSL backend). The handshake workloads run once per
// group (--groups), the group pinned on every arm (upstream's through
// GODEBUG tlsmlkem) and checked on each handshake; an arm whose library
// lacks the group is recorded as unsupported, with the reason.
//
// DialNewPeers has arms of its own: whole transport stacks (TCP + upstream's
// TLS + yamux, the reference; TCP + each backend + yamux; go-libp2p's QUIC),
// each a new pair of nodes per connection. Besides the time it pairs the
// process's CPU per connection, and writes each stack's round trips to the
// first byte and the time to it through 20 ms and 100 ms delay links.
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/bench"
	"github.com/tlsmatrix/tlsmatrix/go/internal/paired"
)

// arm is one client/server pair of a workload; aa marks the reference's
// second copy, recorded under the A/A label tlsmatrix uses.
type arm struct {
	client, server string
	aa             bool
}

// arms are sampled in turns for each workload; the first is the reference.
var arms = []arm{
	{bench.UpstreamName, bench.UpstreamName, false},
	{bench.UpstreamName, bench.UpstreamName, true},
	{bench.UpstreamSpecName, bench.UpstreamSpecName, false},
	{bench.StdName, bench.StdName, false},
	{bench.StdName, bench.OpenSSLName, false},
	{bench.OpenSSLName, bench.StdName, false},
	{bench.OpenSSLName, bench.OpenSSLName, false},
}

// dialArms are the dial workload's, each a whole transport stack (TCP +
// security transport + yamux, or QUIC): its reference is TCP with upstream's
// TLS, what go-libp2p dials over TCP today.
var dialArms = []arm{
	{bench.UpstreamName, bench.UpstreamName, false},
	{bench.UpstreamName, bench.UpstreamName, true},
	{bench.StdName, bench.StdName, false},
	{bench.OpenSSLName, bench.OpenSSLName, false},
	{bench.QUICName, bench.QUICName, false},
}

// armsFor is the arms a workload samples, the reference first.
func armsFor(w bench.Workload, opensslOnly bool) []arm {
	all := arms
	if w.Dials() {
		all = dialArms
	}
	if opensslOnly {
		return opensslArms(all)
	}
	return all
}

func (a arm) labels() (string, string) {
	if a.aa {
		return a.client + " (A/A)", a.server + " (A/A)"
	}
	return a.client, a.server
}

// stdTarget is the std backend's limit against the like-for-like reference
// (upstream with the spec's self-signature check, which the std backend
// makes): a drop-in replacement must not be slower than what it replaces
// doing the same work. Against plain upstream the factor is shown beside it.
const stdTarget = 1.03

type options struct {
	rounds    int
	sample    time.Duration
	warmup    time.Duration
	workloads []bench.Workload
	out, rev  string
	runID     string
	// opensslOnly: the reference and the arms with the OpenSSL backend only.
	opensslOnly bool
}

// opensslArms keeps the reference and the arms with the OpenSSL backend on
// a side: what a binary built against a vendored libssl adds to a run that
// the system build's process already measured in full.
func opensslArms(all []arm) []arm {
	kept := all[:1:1]
	for _, a := range all[1:] {
		if a.client == bench.OpenSSLName || a.server == bench.OpenSSLName {
			kept = append(kept, a)
		}
	}
	return kept
}

func main() {
	var o options
	var workloads string
	flag.IntVar(&o.rounds, "rounds", 40, "rounds per workload: each round takes one sample of every arm")
	flag.DurationVar(&o.sample, "sample", 20*time.Millisecond, "the time one sample aims at (its operations are fixed after the warm-up)")
	flag.DurationVar(&o.warmup, "warmup", 200*time.Millisecond, "warm-up of each arm before the first round")
	flag.StringVar(&workloads, "workloads", "HandshakeNewPeers,Handshake,Latency,Connections,DialNewPeers", "comma-separated workloads to run, in the order they are reported: HandshakeNewPeers (a new peer every handshake), Handshake (the same two peers reconnecting), Latency, Connections, DialNewPeers (a whole connection to a new peer and its first byte: TCP + security + yamux against go-libp2p's QUIC, with CPU per connection and round trips through delay links)")
	var groups string
	flag.StringVar(&groups, "groups", "X25519,X25519MLKEM768", "comma-separated key exchanges each handshake workload runs with (Latency runs with X25519 only: its timing has no handshake)")
	var newPeerGroups string
	flag.StringVar(&newPeerGroups, "new-peer-groups", "SecP256r1MLKEM768,SecP384r1MLKEM1024", "comma-separated key exchanges the HandshakeNewPeers workload runs with besides --groups, each group alone on both sides (upstream cannot be made to negotiate them, so they have no reference arm); empty: none")
	flag.StringVar(&o.out, "out", "", "JSON-lines file for the records (required; replaced atomically)")
	flag.StringVar(&o.rev, "git-rev", "", "git revision to record in the environment")
	flag.StringVar(&o.runID, "run-id", "", "run id for the records (default go-bench-TIMESTAMP); processes built against different libssl releases share one to make one run")
	var armSet string
	flag.StringVar(&armSet, "arms", "all", "all: every arm; openssl: the reference and the arms with the OpenSSL backend only")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: pairedbench --out FILE [options]\n\n"+
			"Samples upstream go-libp2p's TLS transport, a copy of it (A/A) and every pair of\n"+
			"this module's backends in turns, per workload; writes tlsmatrix records and prints\n"+
			"each arm's time over upstream's in the same rounds, with a bootstrap 95%% interval.\n"+
			"Exits 1 if an arm failed (its cell is recorded as failed), 2 on bad usage.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	var err error
	switch armSet {
	case "all":
	case "openssl":
		o.opensslOnly = true
	default:
		err = fmt.Errorf("--arms %q: want all or openssl", armSet)
	}
	if err == nil {
		o.workloads, err = parseWorkloads(workloads, groups, newPeerGroups)
	}
	if err != nil || o.out == "" || flag.NArg() > 0 || o.rounds < 2 || o.sample <= 0 {
		if err != nil {
			fmt.Fprintln(os.Stderr, "pairedbench:", err)
		} else if o.rounds < 2 || o.sample <= 0 {
			fmt.Fprintln(os.Stderr, "pairedbench: --rounds must be at least 2 and --sample positive")
		}
		flag.Usage()
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1)
	failed, err := run(o, os.Stdout, progressTo(os.Stderr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "pairedbench:", err)
		os.Exit(1)
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "pairedbench: %d arm(s) failed; see the FAILED lines above\n", failed)
		os.Exit(1)
	}
}

// parseWorkloads is each named workload with each group that changes it, and
// the new-peers workload with each of newPeerList's too.
func parseWorkloads(list, groupList, newPeerList string) ([]bench.Workload, error) {
	groups, err := groupsNamed(groupList)
	if err != nil {
		return nil, err
	}
	newPeerGroups, err := groupsNamed(newPeerList)
	if err != nil {
		return nil, err
	}
	var ws []bench.Workload
	for name := range strings.SplitSeq(list, ",") {
		w, err := bench.WorkloadNamed(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		for i, g := range groups {
			if wg, ok := w.WithGroup(g); ok || i == 0 {
				ws = append(ws, wg)
			}
		}
		if !w.MeetsNewPeers() {
			continue
		}
		for _, g := range newPeerGroups {
			if wg, ok := w.WithGroup(g); ok && !slices.Contains(groups, g) {
				ws = append(ws, wg)
			}
		}
	}
	return ws, nil
}

// groupsNamed reads a comma-separated list of groups; "" is none.
func groupsNamed(list string) ([]tls.CurveID, error) {
	var groups []tls.CurveID
	for name := range strings.SplitSeq(list, ",") {
		if strings.TrimSpace(name) == "" {
			continue
		}
		g, err := groupNamed(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	return groups, nil
}

func groupNamed(name string) (tls.CurveID, error) {
	var valid []string
	for _, g := range slices.Concat(bench.Groups, bench.Hybrids) {
		if strings.EqualFold(g.String(), name) {
			return g, nil
		}
		valid = append(valid, g.String())
	}
	return 0, fmt.Errorf("unknown group %q (valid: %s)", name, strings.Join(valid, ", "))
}

// outcome is what one workload gave: each arm's samples, or why it has none.
type outcome struct {
	w        bench.Workload
	arms     []arm
	versions [][2]string
	samples  [][]paired.Sample
	errs     []error
	// cCounted: libssl's allocations were counted too (an OpenSSL build).
	cCounted bool
	// cpuCounted: the sessions counted the process's CPU time (CPUCounter).
	cpuCounted bool
	// wires is each arm's wire pass, for a workload that has one.
	wires []*bench.Wire
}

// run measures every workload, writes the records and prints the tables; it
// returns how many arms failed.
func run(o options, w io.Writer, progress func(done, total int)) (int, error) {
	start := time.Now()
	total := 0
	for _, wl := range o.workloads {
		total += len(armsFor(wl, o.opensslOnly)) * o.rounds
	}
	var results []outcome
	offset := 0
	for _, wl := range o.workloads {
		base := offset
		results = append(results, measure(wl, o, func(done, _ int) { progress(base+done, total) }))
		offset += len(armsFor(wl, o.opensslOnly)) * o.rounds
	}
	env := newEnv(o.rev, start)
	runID := o.runID
	if runID == "" {
		runID = "go-bench-" + start.UTC().Format("20060102T150405Z")
	}
	lines, failed, err := recordLines(results, runID, env)
	if err != nil {
		return 0, err
	}
	if err := writeAtomically(o.out, lines); err != nil {
		return 0, err
	}
	for _, r := range results {
		printTable(w, r)
	}
	fmt.Fprintf(w, "\n%d lines written to %s in %s\n", len(lines), o.out, time.Since(start).Round(time.Second))
	return failed, nil
}

// measure opens every arm on the workload and samples them in turns. An arm
// that cannot open keeps its error and takes no turns.
func measure(wl bench.Workload, o options, progress func(done, total int)) outcome {
	arms := armsFor(wl, o.opensslOnly)
	out := outcome{w: wl, arms: arms, versions: make([][2]string, len(arms)), errs: make([]error, len(arms)),
		wires: make([]*bench.Wire, len(arms))}
	runners := make([]paired.Runner, len(arms))
	for i, a := range arms {
		s, versions, err := wl.OpenNamed(a.client, a.server)
		out.versions[i] = versions
		if err != nil {
			out.errs[i] = err
			runners[i] = failedArm{err}
			continue
		}
		defer s.Close()
		runners[i] = s
		if _, ok := s.(paired.CPUCounter); ok {
			out.cpuCounted = true
		}
		if wr, ok := s.(bench.WireReader); ok {
			wire := wr.Wire()
			out.wires[i] = &wire
		}
	}
	opts := paired.Options{Rounds: o.rounds, Target: o.sample, Warmup: o.warmup, Progress: progress}
	if _, _, on := bench.CAllocations(); on {
		opts.CAllocations, out.cCounted = bench.CAllocations, true
	}
	samples, errs := paired.Run(runners, opts)
	out.samples = samples
	for i, err := range errs {
		if out.errs[i] == nil {
			out.errs[i] = err
		}
	}
	return out
}

// figures are the metrics an outcome has: libssl's allocations beside Go's
// where they were counted, and their totals (Go's heap alone in a build
// without libssl, where that is the whole).
func (r outcome) figures() []metric {
	out := slices.Clone(figures)
	if r.cpuCounted {
		out = append(out, cpuPerOp)
	}
	if r.cCounted {
		out = append(out, cFigures...)
	}
	return append(out, totals...)
}

// failedArm stands in for an arm that could not open, so it keeps its place.
type failedArm struct{ err error }

func (f failedArm) Run(int) (time.Duration, error) { return 0, f.err }

// recordLines turns the outcomes into records (each arm's ns/op paired with
// the reference's) and failed-cell lines.
func recordLines(results []outcome, runID string, e env) ([]any, int, error) {
	var lines []any
	failed := 0
	for _, r := range results {
		ref := r.samples[0]
		arms := r.arms
		for i, a := range arms {
			client, server := a.labels()
			if r.errs[i] != nil {
				status := "unsupported"
				if !errors.Is(r.errs[i], bench.ErrUnsupported) {
					status = "failed"
					failed++
				}
				lines = append(lines, cellLine{cellSchema, runID, r.w.Scenario, client, server, status, reason(r.errs[i])})
				continue
			}
			base := record{RunID: runID, Scenario: r.w.Scenario, Client: client, Server: server,
				ClientVersion: r.versions[i][0], ServerVersion: r.versions[i][1], Env: e}
			for _, m := range r.figures() {
				rec, err := newRecord(base, m, pick(r.samples[i], m.get))
				if err != nil {
					return nil, 0, fmt.Errorf("%s: %w", r.w.Name, err)
				}
				if m.paired && i > 0 && r.errs[0] == nil {
					ratios := paired.RatiosOf(r.samples[i], ref, m.get)
					rec.Paired = &pairing{arms[0].client, arms[0].server, ratios, make([]uint32, len(ratios))}
				}
				lines = append(lines, rec)
			}
			wires, err := wireRecords(base, r.wires[i])
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", r.w.Name, err)
			}
			lines = append(lines, wires...)
		}
	}
	return lines, failed, nil
}

// reason is why an arm has no figures, without the "unsupported: " that its
// status already says.
func reason(err error) string {
	return strings.TrimPrefix(err.Error(), bench.ErrUnsupported.Error()+": ")
}

// factorText is the median ratio with its interval, "1.16x [1.15-1.17]".
func factorText(ratios []float64) string {
	if len(ratios) == 0 {
		return "-"
	}
	lo, hi := paired.MedianCI(ratios)
	return fmt.Sprintf("%.3fx [%.3f-%.3f]", paired.Median(ratios), lo, hi)
}

func printTable(w io.Writer, r outcome) {
	rounds := 0
	for _, s := range r.samples {
		rounds = max(rounds, len(s))
	}
	fmt.Fprintf(w, "\n%s (%s): GOMAXPROCS=1, TLS 1.3, %v, TLS_AES_128_GCM_SHA256, %d rounds\n", r.w.Name, r.w.Scenario, r.w.Group, rounds)
	fmt.Fprintf(w, "%s\n", r.w.About)
	arms := r.arms
	fmt.Fprintf(w, "factor = time / %s time in the same round, median over rounds [bootstrap 95%% CI]; lower is faster\n", arms[0].client)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "client\tserver\tns/op\t±CI\tfactor\tB/op total\tx ref\tallocs/op total\t(B/op Go\tB/op libssl)")
	for i, a := range arms {
		client, server := a.labels()
		if r.errs[i] != nil {
			word := "FAILED"
			if errors.Is(r.errs[i], bench.ErrUnsupported) {
				word = "unsupported"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s: %s\n", client, server, word, reason(r.errs[i]))
			continue
		}
		ns := pick(r.samples[i], nsPerOp.get)
		lo, hi := paired.MedianCI(ns)
		m := paired.Median(ns)
		factor := "reference"
		if i > 0 {
			factor = factorText(paired.Ratios(r.samples[i], r.samples[0]))
		}
		libssl := "-"
		if r.cCounted {
			libssl = fmt.Sprintf("%.0f", paired.Median(pick(r.samples[i], cFigures[0].get)))
		}
		total := paired.Median(pick(r.samples[i], totals[0].get))
		ofRef := "-"
		if r.errs[0] == nil {
			if ref := paired.Median(pick(r.samples[0], totals[0].get)); ref > 0 {
				ofRef = fmt.Sprintf("%.2fx", total/ref)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f%%\t%s\t%.0f\t%s\t%.1f\t(%.0f\t%s)\n", client, server, m, (hi-lo)/2/m*100, factor,
			total, ofRef, paired.Median(pick(r.samples[i], totals[1].get)), paired.Median(pick(r.samples[i], figures[1].get)), libssl)
	}
	tw.Flush()
	if r.w.Dials() {
		printDial(w, r)
	}
	// The comparisons the transport issue sets targets on, from the same rounds.
	std, ossl := armIndex(arms, bench.StdName, bench.StdName), armIndex(arms, bench.OpenSSLName, bench.OpenSSLName)
	spec := armIndex(arms, bench.UpstreamSpecName, bench.UpstreamSpecName)
	ok := func(i int) bool { return i >= 0 && r.errs[i] == nil }
	if ok(std) && ok(0) {
		fmt.Fprintf(w, "std backend / upstream: %s\n", factorText(paired.Ratios(r.samples[std], r.samples[0])))
	}
	if ok(spec) && ok(0) {
		fmt.Fprintf(w, "upstream + self-signature check / upstream (the check's cost): %s\n", factorText(paired.Ratios(r.samples[spec], r.samples[0])))
	}
	// Like for like only where both must check every certificate: reconnecting,
	// the std backend's cache spares it the checks the reference makes.
	if ok(std) && ok(spec) && r.w.MeetsNewPeers() {
		ratios := paired.Ratios(r.samples[std], r.samples[spec])
		verdict := "met"
		if paired.Median(ratios) > stdTarget {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "std backend / (upstream + self-signature check), like for like: %s (target <= %.2fx: %s)\n", factorText(ratios), stdTarget, verdict)
	}
	if ok(std) && ok(ossl) {
		fmt.Fprintf(w, "openssl backend / std backend: %s\n", factorText(paired.Ratios(r.samples[ossl], r.samples[std])))
	}
}

// armIndex finds an arm, or -1 when this run does not sample it.
func armIndex(arms []arm, client, server string) int {
	for i, a := range arms {
		if a.client == client && a.server == server && !a.aa {
			return i
		}
	}
	return -1
}

// progressTo reports progress with an estimate of the time left: one
// rewritten line on a terminal, a line every tenth otherwise.
func progressTo(f *os.File) func(done, total int) {
	start := time.Now()
	st, err := f.Stat()
	tty := err == nil && st.Mode()&os.ModeCharDevice != 0
	lastTenth := -1
	return func(done, total int) {
		if total == 0 || done == 0 {
			return
		}
		left := time.Duration(float64(time.Since(start)) / float64(done) * float64(total-done)).Round(time.Second)
		line := fmt.Sprintf("pairedbench: %d/%d samples (%.0f%%), ~%s left", done, total, 100*float64(done)/float64(total), left)
		switch {
		case tty:
			fmt.Fprintf(f, "\r%s\x1b[K", line)
			if done == total {
				fmt.Fprintln(f)
			}
		case done*10/total != lastTenth:
			lastTenth = done * 10 / total
			fmt.Fprintln(f, line)
		}
	}
}

// printDial is the dial workload's own table: each stack's CPU per new-peer
// connection against the reference's in the same rounds, its round trips to
// the first byte, and the time to it through each delay link beside what
// round trips and CPU alone predict (round trips x RTT + CPU).
func printDial(w io.Writer, r outcome) {
	fmt.Fprintf(w, "CPU = the process's (both peers') per connection; model = round trips x RTT + CPU\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "client\tCPU µs\tCPU factor\tround trips"
	for _, link := range bench.DialLinks {
		header += fmt.Sprintf("\tfirst byte @%v: measured\tmodel", link.RTT)
	}
	fmt.Fprintln(tw, header)
	for i, a := range r.arms {
		if r.errs[i] != nil || r.wires[i] == nil {
			continue
		}
		client, _ := a.labels()
		cpu := paired.Median(pick(r.samples[i], cpuPerOp.get))
		factor := "reference"
		if i > 0 && r.errs[0] == nil {
			factor = factorText(paired.RatiosOf(r.samples[i], r.samples[0], cpuPerOp.get))
		}
		wire := r.wires[i]
		line := fmt.Sprintf("%s\t%.0f\t%s\t%d", client, cpu/1e3, factor, wire.RoundTrips)
		for k, link := range bench.DialLinks {
			model := float64(wire.RoundTrips)*float64(link.RTT.Nanoseconds()) + cpu
			line += fmt.Sprintf("\t%.1f ms\t%.1f ms", float64(wire.TTFB[k].Nanoseconds())/1e6, model/1e6)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
