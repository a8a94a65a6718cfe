package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Samples as `perf script` prints them, one per category, leaf first.
const script = `bench.test 1 1.0: 1001001 cpu-clock:
	4a1 __ecp_nistz256_mul_montx+0x21 (/t/bench.test)
	4a2 ossl_ec_key_gen.isra.0+0x10 (/t/bench.test)
	4a3 SSL_do_handshake+0x10 (/t/bench.test)
	4a4 tm_handshake+0x10 (/t/bench.test)

bench.test 1 1.1: 1001001 cpu-clock:
	7f1 __GI___libc_malloc+0x5 (/usr/lib/x86_64-linux-gnu/libc.so.6)
	7f2 CRYPTO_malloc+0x20 (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)

bench.test 1 1.2: 1001001 cpu-clock:
	5b1 crypto/internal/fips140/nistec.p256Mul+0x1 (/t/bench.test)
	5b2 crypto/x509.(*Certificate).CheckSignatureFrom+0x1 (/t/bench.test)
	5b3 github.com/tlsmatrix/tlsmatrix/go/libp2ptls.PeerKeyFromChain+0x1 (/t/bench.test)
	5b4 _cgoexp_1_tmVerifyPeer+0x1 (/t/bench.test)
	5b5 ssl_verify_cert_chain+0x1 (/t/bench.test)

bench.test 1 1.3: 1001001 cpu-clock:
	ffffffff81 tcp_sendmsg_locked+0x1 ([kernel.kallsyms])
	5c1 internal/runtime/syscall/linux.Syscall6+0x1 (/t/bench.test)
	5c2 net.(*netFD).Write+0x1 (/t/bench.test)

bench.test 1 1.4: 1001001 cpu-clock:
	5d1 runtime.cgocall+0x1 (/t/bench.test)
	5d2 github.com/tlsmatrix/tlsmatrix/go/internal/ossl.(*Conn).Handshake+0x1 (/t/bench.test)

bench.test 1 1.5: 1001001 cpu-clock:
	5e1 github.com/tlsmatrix/tlsmatrix/go/internal/ossl.(*Conn).Handshake+0x1 (/t/bench.test)

bench.test 1 1.6: 1001001 cpu-clock:
	5f1 _cgo_topofstack+0x1 (/t/bench.test)
	5f2 [unknown] ([unknown])

bench.test 1 1.7: 1001001 cpu-clock:
	5a1 bssl::ssl_run_handshake+0x1 (/t/bench.test)

bench.test 1 1.8: 1001001 cpu-clock:
	7e1 [unknown] (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)
	4a4 tm_handshake+0x10 (/t/bench.test)

bench.test 1 1.9: 1001001 cpu-clock:
	4b1 bn_mul_mont+0x1 (/t/bench.test)
	4b2 ossl_ecdsa_simple_verify_sig+0x1 (/t/bench.test)
	4b3 X509_verify+0x1 (/t/bench.test)

bench.test 1 2.0: 1001001 cpu-clock:
	4c1 asn1_item_embed_d2i+0x1 (/t/bench.test)
	4c2 d2i_X509+0x1 (/t/bench.test)

bench.test 1 2.1: 1001001 cpu-clock:
	4d1 ossl_ec_key_gen+0x1 (/t/bench.test)
	4d2 SSL_CTX_use_PrivateKey+0x1 (/t/bench.test)
	4d3 github.com/tlsmatrix/tlsmatrix/go/bench.NewTransport+0x1 (/t/bench.test)

bench.test 1 2.2: 1001001 cpu-clock:
	4e1 OSSL_DECODER_CTX_new_for_pkey+0x1 (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)
	4e2 tm_ctx_new+0x1 (/t/bench.test)
	4e3 _cgo_f37cec3ea04a_Cfunc_tm_ctx_new+0x1 (/t/bench.test)

bench.test 1 2.3: 1001001 cpu-clock:
	6a1 crypto/internal/fips140/nistec/fiat.p256Mul+0x1 (/t/bench.test)
	6a2 crypto/internal/fips140/ecdsa.Sign[go.shape.*uint8]+0x1 (/t/bench.test)
	6a3 crypto/ecdsa.SignASN1+0x1 (/t/bench.test)
	6a4 crypto/tls.(*serverHandshakeStateTLS13).sendServerCertificate+0x1 (/t/bench.test)

bench.test 1 2.4: 1001001 cpu-clock:
	6b1 crypto/x509.parseCertificate+0x1 (/t/bench.test)
	6b2 github.com/libp2p/go-libp2p/p2p/security/tls.PubKeyFromCertChain+0x1 (/t/bench.test)
	6b3 github.com/libp2p/go-libp2p/p2p/security/tls.(*Identity).ConfigForPeer.func2+0x1 (/t/bench.test)
	6b4 crypto/tls.(*Conn).verifyServerCertificate+0x1 (/t/bench.test)

bench.test 1 2.5: 1001001 cpu-clock:
	6c1 runtime.mallocgc+0x1 (/t/bench.test)
	6c2 crypto/tls.(*Conn).readHandshake+0x1 (/t/bench.test)

bench.test 1 2.6: 1001001 cpu-clock:
	6d1 p256MulInternal+0x1 (/t/bench.test)

bench.test 1 2.7: 1001001 cpu-clock:
	6e1 crypto/internal/fips140/sha512.blockAVX2.abi0+0x1 (/t/bench.test)

bench.test 1 2.8: 1001001 cpu-clock:
	6f1 p256MulInternal+0x1 (/t/bench.test)
	6f2 crypto/internal/fips140/nistec.p256PointAddAsm.abi0+0x1 (/t/bench.test)
	6f3 crypto/internal/fips140/ecdsa.verifyGeneric[go.shape.*crypto/internal/fips140/nistec.P256Point]+0x1 (/t/bench.test)
	6f4 github.com/tlsmatrix/tlsmatrix/go/libp2ptls.PeerKeyFromChain+0x1 (/t/bench.test)

bench.test 1 2.9: 1001001 cpu-clock:
	6a1 aws_lc_0_41_0_CBB_flush.localalias+0x1 (/t/bench.test)

bench.test 1 3.0: 1001001 cpu-clock:
	ffffffff82 finish_task_switch.isra.0+0x1 ([kernel.kallsyms])
	7a1 runtime.usleep.abi0+0x1 (/t/bench.test)
	7a2 runtime.sysmon+0x1 (/t/bench.test)
	7a3 runtime.mstart1+0x1 (/t/bench.test)
`

func TestEachSampleIsChargedWhereItsTimeGoes(t *testing.T) {
	p, err := split(strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	// Go's crypto is the library of a crypto/tls transport, upstream's check
	// is the check, and Go's allocations stay the runtime's. Go assembly with
	// no caller is named apart (it may be the check's or set-up's), and a C
	// symbol's .localalias suffix does not make it Go. The monitor thread is
	// apart, as set-up is.
	want := [categories]int{library: 8, check: 3, kernel: 1, goRuntime: 2, glue: 2, cut: 2, monitor: 1, setup: 2}
	if p.counts != want || p.total != 18 {
		t.Fatalf("counts %v (total %d, set-up left out), want %v", p.counts, p.total, want)
	}
	// Inside the library: key generation, CRYPTO_malloc (libc's malloc is
	// charged to it), a signature check (found above the bignum leaf), a
	// certificate decode, Go's ECDSA signing, and two that name nothing (a
	// handshake, unknown).
	wantParts := [parts]int{keyExchange: 1, alloc: 1, verify: 1, decode: 1, sign: 1, otherLib: 3}
	if p.parts != wantParts {
		t.Errorf("library parts %v, want %v", p.parts, wantParts)
	}
	// libc is charged to the caller that called it, and not named as a leaf.
	if p.leaves[library]["CRYPTO_malloc"] != 1 {
		t.Errorf("library leaves %v", p.leaves[library])
	}
	if top := p.top(library, 1); len(top) != 1 {
		t.Errorf("top %v", top)
	}
}

func TestGoAndCSymbolsAreToldApart(t *testing.T) {
	for sym, goSym := range map[string]bool{
		"runtime.mallocgc":                   true,
		"crypto/tls.(*Conn).Read":            true,
		"SSL_do_handshake":                   false,
		"ossl_ec_GFp_mont_field_mul.isra.0":  false,
		"tls_construct_finished.constprop.0": false,
		"bssl::ssl_run_handshake":            false,
		"x25519_fe64_sqr.part.0.cold":        false,
		"aws_lc_0_41_0_CBB_flush.localalias": false,
	} {
		if isGo(sym) != goSym {
			t.Errorf("isGo(%q) = %v", sym, !goSym)
		}
	}
}

func TestBoundsTakeTheLeanestRestOfAnyBackend(t *testing.T) {
	rs := []record{
		{Name: upstreamArm, Workload: "W", NsPerOp: 500e3, LibraryNs: 200e3},
		{Name: "go-libp2p-aws-lc", Workload: "W", NsPerOp: 450e3, LibraryNs: 150e3},
		{Name: "go-libp2p-openssl-3.6", Workload: "W", NsPerOp: 900e3, LibraryNs: 500e3},
	}
	bs, leanest, err := bounds(rs)
	if err != nil {
		t.Fatal(err)
	}
	if leanest["W"].Name != "go-libp2p-aws-lc" {
		t.Fatalf("leanest rest: %s, want go-libp2p-aws-lc", leanest["W"].Name)
	}
	for _, b := range bs["W"] {
		// 3.6: its 500 µs of library plus aws-lc's 300 µs outside it, over upstream's 500.
		want := map[string][2]float64{"go-libp2p-aws-lc": {0.9, 0.9}, "go-libp2p-openssl-3.6": {1.8, 1.6}}[b.Name]
		if math.Abs(b.factor-want[0]) > 1e-9 || math.Abs(b.bound-want[1]) > 1e-9 {
			t.Errorf("%s: factor %.3f bound %.3f, want %.3f %.3f", b.Name, b.factor, b.bound, want[0], want[1])
		}
	}
	if _, _, err := bounds(rs[1:]); err == nil || !strings.Contains(err.Error(), "no go-libp2p-upstream profile") {
		t.Errorf("without upstream: %v", err)
	}
}

func TestRecordsRoundTripAndBadLinesAreRefused(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.jsonl")
	p, err := split(strings.NewReader(script))
	if err != nil {
		t.Fatal(err)
	}
	r := p.record("go-libp2p-openssl", "HandshakeNewPeers", 1e6)
	if err := appendRecord(file, r); err != nil {
		t.Fatal(err)
	}
	rs, err := readRecords(file)
	if err != nil || len(rs) != 1 || rs[0] != r {
		t.Fatalf("read back %+v, %v; want %+v", rs, err, r)
	}
	if r.LibraryNs <= 0 || r.LibraryNs >= r.NsPerOp {
		t.Errorf("library time %v of %v ns: the script has library and other samples", r.LibraryNs, r.NsPerOp)
	}
	if err := os.WriteFile(file, []byte(`{"name":"x","workload":"W","ns_per_op":-1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readRecords(file); err == nil {
		t.Error("a record with a negative time was read")
	}
}
