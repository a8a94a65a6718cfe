package callgrind

import "testing"

func TestNativelyNobodyIsCounting(t *testing.T) {
	// go test never runs under valgrind in make test; the sequence must then be a no-op.
	if Running() {
		t.Skip("running under valgrind")
	}
	Toggle()
	if _, err := NewCounter("/tmp/x.%p"); err == nil {
		t.Fatal("a counter outside valgrind must be refused")
	}
}

func TestTotalsAreReadFromADump(t *testing.T) {
	dump := "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfn=(1) f\n3 10\n\nsummary: 1234\ntotals: 1234\n"
	if n, ok := parseTotal(dump); !ok || n != 1234 {
		t.Fatalf("got %d %v", n, ok)
	}
	if n, ok := parseTotal("version: 1\nsummary: 99\n"); !ok || n != 99 {
		t.Fatalf("older format: got %d %v", n, ok)
	}
	if _, ok := parseTotal("events: Ir\n"); ok {
		t.Fatal("a dump without totals must not parse")
	}
}
