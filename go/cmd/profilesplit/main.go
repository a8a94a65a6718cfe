// Command profilesplit reads `perf script` output (samples with call
// stacks) and says where a libp2p handshake's CPU time goes: in the TLS
// library (libssl and libcrypto, or for a crypto/tls transport Go's
// crypto/tls and crypto packages), in the libp2p certificate check, in the
// kernel (sockets, scheduling), in the Go runtime (scheduler, GC, cgo
// transitions) or in the rest of the Go and C glue (the transport, the
// shim, net); the library's share is split again by what its symbols say
// (decoding, verifying, signing, key exchange, lookups, allocation). The
// untimed making of transports is counted apart and left out of the shares.
// `make profile-go` runs it on each libssl variant.
//
//	perf script -i perf.data | profilesplit [--top N] [--ns-per-op NS] [--record FILE --name ARM --workload W]
//	profilesplit --bounds FILE
//
// With --record, each profile's time per operation in and out of the TLS
// library is appended to FILE; --bounds then sets every backend's time
// beside the bound its library allows (see bounds.go).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
)

// category is where one sample's time is charged.
type category int

const (
	library category = iota
	check
	kernel
	goRuntime
	glue
	// cut is Go crypto assembly whose callers perf could not unwind (Go's
	// P-256 field arithmetic and SHA-512 have no DWARF frame information): it
	// is the libp2p check's, crypto/tls's or the set-up's, which the stack no
	// longer tells, so it is named apart rather than charged to the library.
	cut
	// monitor is the Go runtime's monitor thread (sysmon), which polls beside
	// the handshake on a thread of its own, more often while cgo calls are
	// long: CPU spent, but not in the handshake's time, so left out of the
	// shares.
	monitor
	// setup is the untimed making of transports (new-peer workloads make both
	// sides anew before each handshake): sampled, but not part of the
	// handshake, so left out of the shares.
	setup
	categories
)

var names = [categories]string{
	library:   "TLS library (libssl, libcrypto; Go's crypto/tls, crypto)",
	check:     "libp2p certificate check (Go)",
	kernel:    "kernel (sockets, scheduling, faults)",
	goRuntime: "Go runtime (scheduler, GC, cgo calls)",
	glue:      "glue (transport, shim, net, harness)",
	cut:       "Go crypto assembly, callers not unwound (check, crypto/tls or set-up)",
	monitor:   "Go's monitor thread, sysmon (beside the handshake; not in the shares)",
	setup:     "untimed set-up (making transports; not in the shares)",
}

// setupFuncs make a transport outside the timed handshake: the harness's
// constructor, and the shim's context set-up, which a transport does once
// (perf cannot unwind from C through cgo up to the Go caller, so a C sample
// is known by its own frames).
var setupFuncs = []string{"go/bench.NewTransport", "tm_ctx_new"}

// part is where a library sample's time goes inside the library, as far as
// its symbols tell.
type part int

const (
	decode part = iota
	verify
	sign
	keyExchange
	lookups
	alloc
	otherLib
	parts
)

var partNames = [parts]string{
	decode:      "parse and decode (ASN.1, X.509, keys)",
	verify:      "signature verification",
	sign:        "signing",
	keyExchange: "key exchange (key shares, ECDH, ML-KEM)",
	lookups:     "provider and method lookups",
	alloc:       "allocation (CRYPTO_malloc and free)",
	otherLib:    "other (record layer, hashing, state machine)",
}

// partPatterns are matched against a library stack's symbols from the leaf
// up, case-insensitively; the first frame that matches one decides.
var partPatterns = []struct {
	p    part
	subs []string
}{
	{alloc, []string{"crypto_malloc", "crypto_zalloc", "crypto_realloc", "crypto_free", "crypto_clear_free", "openssl_malloc", "openssl_free", "openssl_zalloc"}},
	{lookups, []string{"ossl_method_store", "ossl_ht_", "ossl_fnv1a", "_fetch", "ossl_lib_ctx", "ossl_namemap", "ossl_provider", "ossl_decoder_cache"}},
	{verify, []string{"verify"}},
	{sign, []string{"ecdsa_sign", "digestsign", "pkey_sign", "_sign_", "do_sign", "sign_init", "ed25519_sign", "rsa_sign", "ecdsa_do_sign",
		"ecdsa.sign", "ecdsa.(*privatekey).sign", "ed25519.sign"}},
	{keyExchange, []string{"x25519", "ecdh", "derive", "key_gen", "keygen", "generate_key", "mlkem", "ml_kem", "key_share", "keyshare"}},
	{decode, []string{"d2i_", "asn1", "decoder", "x509", "pem_", "der2key", "spki", "pkey_from", "cryptobyte"}},
}

func partOf(stack []frame) part {
	for _, f := range stack {
		sym := strings.ToLower(f.sym)
		for _, pp := range partPatterns {
			for _, sub := range pp.subs {
				if strings.Contains(sym, sub) {
					return pp.p
				}
			}
		}
	}
	return otherLib
}

// frame is one line of a stack: the symbol (offset cut) and its object.
type frame struct {
	sym, dso string
}

var frameLine = regexp.MustCompile(`^\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)$`)

// compilerSuffix is what GCC appends to a C function it cloned or split.
var compilerSuffix = regexp.MustCompile(`(\.(isra|constprop|part|cold|lto_priv|llvm|localalias)(\.\d+)?)+$`)

// checkFuncs are the libp2p check's entry points: every sample under one
// of them is the check's, whatever it calls. Upstream go-libp2p's check is
// the closure its ConfigForPeer installs (it calls PubKeyFromCertChain);
// the benchmarks' like-for-like reference adds the self-signature check.
var checkFuncs = []string{"libp2ptls.PeerKeyFromChain", "libp2ptls.(*verifiedCerts).peerKey",
	"p2p/security/tls.PubKeyFromCertChain", "p2p/security/tls.(*Identity).ConfigForPeer.func",
	"go/bench.checkSelfSignature"}

// goCrypto is a Go symbol of crypto/tls or a crypto package: the TLS
// library when the transport is crypto/tls. (Go's allocations and GC for
// it stay the runtime's, where OpenSSL's malloc is the library's: a Go
// library's share is understated by that much.)
func goCrypto(sym string) bool {
	for _, p := range []string{"crypto/", "vendor/golang.org/x/crypto/", "golang.org/x/crypto/"} {
		if strings.HasPrefix(sym, p) {
			return true
		}
	}
	return false
}

// glueC are C symbols that are ours or cgo's, not the library's.
func glueC(sym string) bool {
	return strings.HasPrefix(sym, "tm_") || strings.HasPrefix(sym, "_cgo") ||
		strings.HasPrefix(sym, "x_cgo") || sym == "crosscall2" || strings.HasPrefix(sym, "_cgoexp")
}

// isGo tells Go symbols ("runtime.mallocgc", "crypto/tls.(*Conn).Read")
// from C ones ("SSL_do_handshake", "bssl::ssl_run_handshake").
func isGo(sym string) bool {
	sym = compilerSuffix.ReplaceAllString(sym, "")
	return strings.Contains(sym, ".") && !strings.Contains(sym, "::")
}

// inLibrary is a frame in a shared libssl or libcrypto, with or without a
// symbol.
func inLibrary(f frame) bool {
	return strings.Contains(f.dso, "libssl") || strings.Contains(f.dso, "libcrypto")
}

func isLibc(f frame) bool {
	return strings.Contains(f.dso, "libc.so") || strings.Contains(f.dso, "libc-") || strings.Contains(f.dso, "ld-linux")
}

// goAsmStatic is a Go assembly function private to its file (TEXT
// name<>(SB)), which perf names without its package: Go's P-256 field
// arithmetic.
var goAsmStatic = regexp.MustCompile(`^p256\w*Internal$`)

// classify charges a stack (leaf first) to a category.
func classify(stack []frame) category {
	if len(stack) == 1 && (goAsmStatic.MatchString(stack[0].sym) || goCrypto(stack[0].sym)) {
		return cut
	}
	for _, f := range stack {
		for _, c := range setupFuncs {
			if strings.HasSuffix(f.sym, c) {
				return setup
			}
		}
		if f.sym == "runtime.sysmon" {
			return monitor
		}
	}
	for _, f := range stack {
		for _, c := range checkFuncs {
			if strings.Contains(f.sym, c) {
				return check
			}
		}
	}
	for _, f := range stack {
		switch {
		case f.dso == "[kernel.kallsyms]":
			return kernel
		case inLibrary(f):
			return library // a shared libssl's, symbols or not
		case f.sym == "[unknown]" || isLibc(f):
			continue // charged to its caller
		case isGo(f.sym):
			if strings.HasPrefix(f.sym, "runtime.") || strings.HasPrefix(f.sym, "runtime/") {
				return goRuntime
			}
			if goCrypto(f.sym) {
				return library
			}
			return glue
		case glueC(f.sym):
			return glue
		default:
			return library // C code linked from a static libssl/libcrypto
		}
	}
	return glue
}

// apart is a category sampled but not part of the handshake's time.
func (c category) apart() bool { return c == setup || c == monitor }

// profile is the samples counted per category, and per category per leaf
// function (the first frame that is not libc's or unknown).
type profile struct {
	counts [categories]int
	leaves [categories]map[string]int
	// parts splits the library's samples.
	parts [parts]int
	// total is every sample but those kept apart: what the shares are of.
	total int
}

func leaf(stack []frame) string {
	for _, f := range stack {
		if f.sym == "[unknown]" && inLibrary(f) {
			return "[unknown] in " + path.Base(f.dso)
		}
		if f.sym != "[unknown]" && !isLibc(f) {
			return f.sym
		}
	}
	return stack[0].sym
}

// split reads perf script output and counts samples per category.
func split(r io.Reader) (profile, error) {
	var p profile
	for c := range categories {
		p.leaves[c] = map[string]int{}
	}
	var stack []frame
	flush := func() {
		if len(stack) > 0 {
			c := classify(stack)
			p.counts[c]++
			p.leaves[c][leaf(stack)]++
			if c == library {
				p.parts[partOf(stack)]++
			}
			if !c.apart() {
				p.total++
			}
		}
		stack = stack[:0]
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if m := frameLine.FindStringSubmatch(line); m != nil {
			stack = append(stack, frame{m[1], m[2]})
		}
	}
	flush()
	return p, sc.Err()
}

// top is a category's n most sampled leaf functions.
func (p profile) top(c category, n int) []string {
	fns := make([]string, 0, len(p.leaves[c]))
	for fn := range p.leaves[c] {
		fns = append(fns, fn)
	}
	sort.Slice(fns, func(i, j int) bool {
		if p.leaves[c][fns[i]] != p.leaves[c][fns[j]] {
			return p.leaves[c][fns[i]] > p.leaves[c][fns[j]]
		}
		return fns[i] < fns[j]
	})
	return fns[:min(n, len(fns))]
}

func main() {
	top := flag.Int("top", 0, "also list each category's N most sampled functions")
	nsPerOp := flag.Float64("ns-per-op", 0, "the benchmark's ns/op: adds each share's time per operation, so profiles of\ntransports that differ in speed compare category by category")
	recordTo := flag.String("record", "", "append this profile's time per operation, in and out of the TLS library, to this\nJSON-lines file (needs --ns-per-op, --name and --workload)")
	name := flag.String("name", "", "the arm profiled, e.g. go-libp2p-openssl-3.6 (with --record)")
	workload := flag.String("workload", "", "the benchmark profiled, e.g. HandshakeNewPeers (with --record)")
	boundsOf := flag.String("bounds", "", "read a --record file and print each backend's time beside the bound its TLS\nlibrary allows (no perf input)")
	flag.Usage = func() {
		out := flag.CommandLine.Output()
		fmt.Fprintln(out, "usage: perf script -i perf.data | profilesplit [--top N] [--ns-per-op NS] [--record FILE --name ARM --workload W]")
		fmt.Fprintln(out, "       profilesplit --bounds FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *boundsOf != "" {
		if err := printBounds(*boundsOf, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "profilesplit:", err)
			os.Exit(1)
		}
		return
	}
	if *recordTo != "" && (*nsPerOp <= 0 || *name == "" || *workload == "") {
		fmt.Fprintln(os.Stderr, "profilesplit: --record needs --ns-per-op, --name and --workload")
		os.Exit(2)
	}
	p, err := split(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profilesplit:", err)
		os.Exit(1)
	}
	if p.total == 0 {
		fmt.Fprintln(os.Stderr, "profilesplit: no samples with stacks on stdin (perf record -g?)")
		os.Exit(1)
	}
	if *nsPerOp < 0 || math.IsNaN(*nsPerOp) || math.IsInf(*nsPerOp, 0) {
		fmt.Fprintln(os.Stderr, "profilesplit: --ns-per-op must be a positive number of nanoseconds")
		os.Exit(2)
	}
	share := func(n int) string {
		f := float64(n) / float64(p.total)
		if *nsPerOp > 0 {
			return fmt.Sprintf("%.1f%%\t%.0f µs", 100*f, f**nsPerOp/1e3)
		}
		return fmt.Sprintf("%.1f%%", 100*f)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if *nsPerOp > 0 {
		fmt.Fprintf(tw, "where the time goes\tsamples\tshare\tper op\t\n")
	} else {
		fmt.Fprintf(tw, "where the time goes\tsamples\tshare\t\n")
	}
	for c := range categories {
		if c.apart() {
			if p.counts[c] > 0 && *nsPerOp > 0 {
				fmt.Fprintf(tw, "%s\t%d\t-\t-\t\n", names[c], p.counts[c])
			} else if p.counts[c] > 0 {
				fmt.Fprintf(tw, "%s\t%d\t-\t\n", names[c], p.counts[c])
			}
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t\n", names[c], p.counts[c], share(p.counts[c]))
		if c == library {
			for pt := range parts {
				fmt.Fprintf(tw, "  %s\t%d\t%s\t\n", partNames[pt], p.parts[pt], share(p.parts[pt]))
			}
		}
		for _, fn := range p.top(c, *top) {
			fmt.Fprintf(tw, "%s\t%d\t%s\t\n", fn, p.leaves[c][fn], share(p.leaves[c][fn]))
		}
	}
	tw.Flush()
	if *recordTo != "" {
		if err := appendRecord(*recordTo, p.record(*name, *workload, *nsPerOp)); err != nil {
			fmt.Fprintln(os.Stderr, "profilesplit:", err)
			os.Exit(1)
		}
	}
}
