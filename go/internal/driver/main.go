// Package driver is the tlsmatrix driver for Go's crypto/tls (cmd/tlsmatrix-driver-go is
// its thin main): it runs a
// scenario's client and server in one process over in-memory connections and prints the
// drivers' JSON messages (crates/model/src/protocol.rs), so `tlsmatrix run` measures
// go-crypto-tls beside the Rust and C stacks. The sides take turns on one P, each timing
// only its own running stretches (memconn.Clock); every handshake is held to the scenario's version,
// suite, group, signature scheme, resumption, certificates and ClientHello count.
//
// Commands: info, run, group, bogo-shim (as every driver), and parse (reads scenario ids on stdin and
// prints each back canonically, for the test that keeps this reader in step with Rust's).
package driver

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/bogo"
	"github.com/tlsmatrix/tlsmatrix/go/internal/callgrind"
	"github.com/tlsmatrix/tlsmatrix/go/internal/measures"
	"github.com/tlsmatrix/tlsmatrix/go/internal/paired"
	"github.com/tlsmatrix/tlsmatrix/go/internal/scenario"
)

func usage() {
	fmt.Fprintln(os.Stderr, `usage: tlsmatrix-driver-go COMMAND [flags]

Runs tlsmatrix scenarios for Go's crypto/tls in memory; spawned by tlsmatrix run.

commands:
  info    print the impl this driver holds and its version, as JSON
  run     run one scenario for one pair and print JSON messages (-h for flags)
  group   run the cells of each --part (a scenario and its pairs) in turns, one short
          sample each per round, one part after another
  parse   read scenario ids on stdin, print each back canonically (or "error: ...")
  bogo-shim --impl go-crypto-tls -- RUNNER-FLAGS
          play one test of BoringSSL's BoGo runner (tlsmatrix conformance starts it)`)
}

// Main runs one driver command (args without the program name) and returns the process's
// exit status. Some paths end the process themselves: -h after printing the flags, and a
// write to an orchestrator that has gone.
func Main(args []string) int {
	// The two sides of a pair take turns on one P, each timing itself (see both).
	runtime.GOMAXPROCS(1)
	if len(args) < 1 {
		usage()
		return 2
	}
	switch args[0] {
	case "info":
		b, _ := json.Marshal(map[string]any{"impls": []map[string]any{{
			"name": implName, "version": implVersion(),
			"refuses": refusalList(),
		}}})
		fmt.Println(string(b))
	case "run":
		return messagesEnd(run(args[1:]))
	case "group":
		return messagesEnd(group(args[1:]))
	case "ttfb":
		// The time-to-first-byte check runs a real TCP server thread; crypto/tls is timed
		// over sockets by the interop peer instead.
		unsupported(-1, "go-crypto-tls runs in memory only; the time-to-first-byte check uses the Rust drivers")
		done()
	case "parse":
		parse()
	case "bogo-shim":
		return bogoShim(args[1:])
	case "-h", "--help", "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", args[0])
		usage()
		return 2
	}
	return 0
}

// The measures this driver takes; it refuses every other measure of the table, so that a
// measure added to the table is refused here until the Go driver implements it, never run
// as another.
var takes = map[string]bool{
	measures.Time:         true,
	measures.Instructions: true,
	measures.Wire:         true,
	measures.Floor:        true,
}

// Reasons for the measures this driver does not take yet, by measure; info lists them and
// run refuses them, so the orchestrator never starts this driver for one.
var refusals = map[string]string{
	measures.Counters: "the Go driver does not split getrusage counts by side: both sides are goroutines, and the runtime's own threads (GC workers) fault on their behalf",
	measures.Ceiling:  "the Go driver has no AEAD ceiling yet (crypto/cipher's GCM outside crypto/tls)",
	measures.Profile:  "the Go driver does not log its sides' calls for a profile: both sides are goroutines, and the runtime's own threads work on their behalf",
	measures.Setup:    "the Go driver does not time setup costs yet: crypto/tls has no context of its own (a tls.Config holds parsed certificates) and tls.Client only allocates a struct until its handshake",
	// Go's scheduler runs goroutines on its own threads, so voluntary context switches count
	// the runtime's parking, not a library's lock waits.
	measures.Contention: "the Go driver does not measure a shared context on threads yet: goroutines run on the runtime's threads, whose context switches are the scheduler's, not crypto/tls's locks",
}

// measureNotTaken is why this driver does not take a measure of the table, or "" where it does.
func measureNotTaken(measure string) string {
	if takes[measure] {
		return ""
	}
	if why, ok := refusals[measure]; ok {
		return why
	}
	return "the Go driver does not take --measure " + measure + " yet"
}

// refusalList is info's list of refusals, in the measure table's order.
func refusalList() []map[string]string {
	var list []map[string]string
	for _, m := range measures.Names {
		if why := measureNotTaken(m); why != "" {
			list = append(list, map[string]string{"measure": m, "reason": why})
		}
	}
	return list
}

// measureRefusal is why this driver does not take the measure on a scenario of this kind,
// or "" where it does: the measure table's refusal of the kind, else this driver's own.
func measureRefusal(measure, kind string) (string, error) {
	known := false
	for _, m := range measures.Names {
		known = known || m == measure
	}
	if !known {
		return "", fmt.Errorf("unknown measure '%s' (%s)", measure, strings.Join(measures.Names, ", "))
	}
	if why := measures.KindRefusal(measure, kind); why != "" {
		return why, nil
	}
	return measureNotTaken(measure), nil
}

// messagesEnd ends a command that speaks in messages: a failure is its last message.
func messagesEnd(err error) int {
	if err != nil {
		failed(-1, err)
		return 1
	}
	return 0
}

// helpOr ends the process quietly after -h printed the flags; any other parse error is
// the command's failure.
func helpOr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	return err
}

// cellFlags are the flags run and group share (run also takes --scenario; group takes its
// scenarios as --part).
type cellFlags struct {
	scenario, certs    string
	warmupMS, sampleMS int
}

func (f *cellFlags) register(fs *flag.FlagSet, warmup, sample int) {
	fs.StringVar(&f.certs, "certs", "", "folder of cached test certificates (tlsmatrix writes them)")
	fs.IntVar(&f.warmupMS, "warmup-ms", warmup, "warm-up in milliseconds")
	fs.IntVar(&f.sampleMS, "sample-ms", sample, "target duration of one sample in milliseconds")
}

func (f *cellFlags) open() (scenario.Scenario, error) {
	if f.scenario == "" || f.certs == "" {
		return scenario.Scenario{}, errors.New("--scenario and --certs are required")
	}
	return scenario.Parse(f.scenario)
}

func checkImpl(name string) error {
	if name != implName {
		return fmt.Errorf("this driver has no impl '%s' (it has %s)", name, implName)
	}
	return nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var cf cellFlags
	cf.register(fs, 200, 100)
	fs.StringVar(&cf.scenario, "scenario", "", "scenario id, e.g. handshake-tls13-ecdsa-p256-x25519-full")
	client := fs.String("client", "", "client impl name (go-crypto-tls)")
	server := fs.String("server", "", "server impl name (go-crypto-tls)")
	runs := fs.Int("runs", 10, "samples to produce after warm-up")
	bulkBytes := fs.Int("bulk-bytes", 64<<20, "bytes sent per bulk sample")
	measure := fs.String("measure", measures.Time, "what to measure: "+strings.Join(measures.Names, ", ")+" (this driver takes time, instructions, wire and floor)")
	floorOps := fs.String("floor-ops", "", "floor: the operations to time, side:op:arg:count joined by ';' (tlsmatrix_model::floor::encode)")
	callgrindOut := fs.String("callgrind-out", "", "instructions: the --callgrind-out-file given to valgrind (%p is the process id)")
	perSample := fs.Int("per-sample", 10, "instructions: handshakes counted per sample")
	if err := fs.Parse(args); err != nil {
		return helpOr(err)
	}
	sc, err := cf.open()
	if err != nil {
		return err
	}
	if err := errors.Join(checkImpl(*client), checkImpl(*server)); err != nil {
		return err
	}
	if *runs < 1 {
		return errors.New("--runs must be at least 1")
	}
	why, err := measureRefusal(*measure, sc.Kind)
	if err != nil {
		return err
	}
	if why != "" {
		unsupported(-1, why)
		return nil
	}
	if *measure == measures.Floor && *floorOps == "" {
		return errors.New("--measure floor needs --floor-ops (tlsmatrix run passes the list)")
	}
	c, refused, err := newCell(sc, cf.certs)
	if err != nil {
		return err
	}
	if refused != nil {
		unsupported(-1, refused.Error())
		return nil
	}
	hello(-1, implVersion())
	warmup := time.Duration(cf.warmupMS) * time.Millisecond
	target := time.Duration(cf.sampleMS) * time.Millisecond
	on := func(s sample) { emitSample(-1, -1, s) }
	switch {
	case *measure == measures.Instructions:
		var counter *callgrind.Counter
		if counter, err = callgrind.NewCounter(*callgrindOut); err != nil {
			break
		}
		if sc.Kind == "handshake" {
			err = handshakeInstructions(c, *runs, *perSample, counter, on)
		} else {
			err = bulkInstructions(c, sc.WriteSize, *runs, *bulkBytes, counter, on)
		}
	case *measure == measures.Floor:
		var h *handshakeSampler
		var f *floorSampler
		if h, err = warmHandshakes(c, warmup, target); err == nil {
			if f, err = warmFloor(c, *floorOps, warmup, target); err == nil {
				err = handshakesAgainstFloor(h, f, *runs, on)
			}
		}
	case *measure == measures.Wire:
		var t *trace
		if t, err = wire(c, *runs, warmup, on); err == nil {
			emit(message{Type: "trace", Trace: t})
		}
	case sc.Kind == "handshake" || sc.Kind == "bulk":
		var s sampler
		if sc.Kind == "handshake" {
			s, err = warmHandshakes(c, warmup, target)
		} else {
			s, err = warmBulk(c, sc.WriteSize, warmup, *bulkBytes, 0)
		}
		for i := 0; err == nil && i < *runs; i++ {
			var v sample
			if v, err = s.sample(); err == nil {
				on(v)
			}
		}
	case sc.Kind == "memory":
		err = memory(c, sc.Sessions, *runs, on)
	case sc.Kind == "throughput":
		err = throughput(c, sc.Threads(), *runs, warmup, target, on)
	}
	if err != nil {
		return err
	}
	done()
	return nil
}

// cellList collects CLIENT,SERVER pairs.
type cellList [][2]string

func (l *cellList) String() string { return fmt.Sprint(*l) }

func (l *cellList) Set(s string) error {
	c, v, ok := strings.Cut(s, ",")
	if !ok || c == "" || v == "" || strings.Contains(v, ",") {
		return fmt.Errorf("'%s' is not a pair; write CLIENT,SERVER", s)
	}
	*l = append(*l, [2]string{c, v})
	return nil
}

// part is one scenario of a group process and the pairs it samples; own[i], when set, is
// the scenario cell i runs instead (CLIENT,SERVER@SCENARIO, of the part's kind): a
// post-quantum handshake sampled in turns with its classical twin.
type part struct {
	sc    scenario.Scenario
	cells cellList
	own   []*scenario.Scenario
}

// scenarioOf is the scenario cell i runs.
func (p part) scenarioOf(i int) scenario.Scenario {
	if p.own[i] != nil {
		return *p.own[i]
	}
	return p.sc
}

// partList collects repeated --part "SCENARIO CLIENT,SERVER ..." flags, in order.
type partList []part

func (l *partList) String() string { return fmt.Sprint(len(*l), " parts") }

func (l *partList) Set(s string) error {
	words := strings.Fields(s)
	if len(words) < 2 {
		return fmt.Errorf("part '%s' names no cell; write \"SCENARIO CLIENT,SERVER ...\"", s)
	}
	sc, err := scenario.Parse(words[0])
	if err != nil {
		return err
	}
	p := part{sc: sc}
	for _, w := range words[1:] {
		pair, id, hasOwn := strings.Cut(w, "@")
		if err := p.cells.Set(pair); err != nil {
			return err
		}
		var own *scenario.Scenario
		if hasOwn {
			s, err := scenario.Parse(id)
			if err != nil {
				return err
			}
			if s.Kind != sc.Kind {
				return fmt.Errorf("cell '%s' runs a %s scenario in a %s part; a cell's own scenario must be of its part's kind", w, s.Kind, sc.Kind)
			}
			own = &s
		}
		p.own = append(p.own, own)
	}
	*l = append(*l, p)
	return nil
}

// groupRun is how a group process runs its parts.
type groupRun struct {
	certs          string
	warmup, target time.Duration
	rounds         int
	stepped        bool
	in             stepReader
}

// await waits for the orchestrator's go-ahead in a stepped group.
func (g *groupRun) await() {
	if g.stepped {
		if _, err := g.in.line(); err != nil {
			os.Exit(1) // the orchestrator is gone
		}
	}
}

func (g *groupRun) step(done int) {
	if g.stepped {
		emit(message{Type: "stepped", Step: &done})
	}
}

// group runs each part's cells in rounds, one part after another, in the order
// crates/measure/src/paired.rs uses (internal/paired.Order): every line names its cell,
// numbered across the parts; a cell that fails says so and the others go on (as
// crates/driver's group).
func group(args []string) error {
	fs := flag.NewFlagSet("group", flag.ContinueOnError)
	var cf cellFlags
	cf.register(fs, 20, 5)
	var parts partList
	fs.Var(&parts, "part", "one scenario and its cells, \"SCENARIO CLIENT,SERVER ...\", once per scenario (repeat)")
	rounds := fs.Int("rounds", 10, "rounds: each takes one sample of every cell")
	stepped := fs.Bool("stepped", false, "wait for a line on stdin before each part's set-up, before each round and before ending, and say so after each set-up and each round (duet sampling)")
	if err := fs.Parse(args); err != nil {
		return helpOr(err)
	}
	if cf.certs == "" {
		return errors.New("--certs is required")
	}
	if len(parts) == 0 || *rounds < 1 {
		return errors.New("group needs at least one --part and --rounds of at least 1")
	}
	for _, p := range parts {
		if p.sc.Kind != "handshake" && p.sc.Kind != "bulk" {
			return fmt.Errorf("%s is not a handshake or bulk scenario; `run` measures it alone", p.sc)
		}
	}
	g := groupRun{
		certs:   cf.certs,
		warmup:  time.Duration(cf.warmupMS) * time.Millisecond,
		target:  time.Duration(cf.sampleMS) * time.Millisecond,
		rounds:  *rounds,
		stepped: *stepped,
	}
	first, step := 0, 0
	for _, p := range parts {
		g.part(p, first, step)
		first += len(p.cells)
		step += *rounds + 1
	}
	// The last go-ahead lets the process end: exiting on the core while the other driver of
	// a duet takes its last sample would slow that sample.
	g.await()
	done()
	return nil
}

// part sets up and warms one part's cells (step firstStep), then samples them in rounds
// (the steps after it); its cells are numbered from first.
func (g *groupRun) part(p part, first, firstStep int) {
	g.await()
	samplers := make([]sampler, len(p.cells))
	for i, pair := range p.cells {
		if err := errors.Join(checkImpl(pair[0]), checkImpl(pair[1])); err != nil {
			failed(first+i, err)
			continue
		}
		sc := p.scenarioOf(i)
		c, refused, err := newCell(sc, g.certs)
		switch {
		case err != nil:
			failed(first+i, err)
			continue
		case refused != nil:
			unsupported(first+i, refused.Error())
			continue
		}
		hello(first+i, implVersion())
		var s sampler
		if sc.Kind == "handshake" {
			s, err = warmHandshakes(c, g.warmup, g.target)
		} else {
			s, err = warmBulk(c, sc.WriteSize, g.warmup, 0, g.target)
		}
		if err != nil {
			failed(first+i, err)
			continue
		}
		samplers[i] = s
	}
	g.step(firstStep)
	for round := range g.rounds {
		g.await()
		for _, i := range paired.Order(len(p.cells), round) {
			if samplers[i] == nil {
				continue
			}
			v, err := samplers[i].sample()
			if err != nil {
				samplers[i] = nil
				failed(first+i, err)
				continue
			}
			emitSample(first+i, round, v)
		}
		g.step(firstStep + round + 1)
	}
}

// parse prints each id read on stdin back canonically, or the reader's error.
func parse() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		if s, err := scenario.Parse(strings.TrimSpace(in.Text())); err != nil {
			fmt.Fprintf(out, "error: %v\n", err)
		} else {
			fmt.Fprintln(out, s)
		}
	}
	out.Flush()
}

// bogoShim runs one BoGo test; the exit status is what the runner reads.
func bogoShim(args []string) int {
	fs := flag.NewFlagSet("bogo-shim", flag.ContinueOnError)
	imp := fs.String("impl", "", "the impl to test (go-crypto-tls)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := checkImpl(*imp); err != nil {
		fmt.Fprintln(os.Stderr, "tlsmatrix-bogo-shim:", err)
		return 2
	}
	flags, err := bogo.Parse(fs.Args())
	if errors.Is(err, bogo.ErrHandshakerQuery) {
		fmt.Println("No")
		return 0
	}
	if err == nil {
		err = bogo.Run(flags)
	}
	switch {
	case err == nil:
		return 0
	case bogo.IsUnimplemented(err):
		fmt.Fprintln(os.Stderr, "tlsmatrix-bogo-shim:", err)
		bogo.RecordReason(err)
		return bogo.ExitUnimplemented
	default:
		// With -loose-errors the runner takes any failure for the expected one.
		fmt.Fprintln(os.Stderr, "tlsmatrix-bogo-shim:", err)
		return 1
	}
}
