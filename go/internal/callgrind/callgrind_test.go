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
	if n, ok := parseTotals(dump); !ok || n != (Counts{1234, -1}) {
		t.Fatalf("got %v %v", n, ok)
	}
	if n, ok := parseTotals("version: 1\nsummary: 99\n"); !ok || n.Instructions != 99 {
		t.Fatalf("older format: got %v %v", n, ok)
	}
	if _, ok := parseTotals("events: Ir\n"); ok {
		t.Fatal("a dump without totals must not parse")
	}
	// --collect-bus=yes: the bus events follow, and a zero may be left out.
	if n, ok := parseTotals("events: Ir Ge\nfn=(1) f\n3 10 2\ntotals: 10 2\n"); !ok || n != (Counts{10, 2}) {
		t.Fatalf("with bus events: got %v %v", n, ok)
	}
	if n, ok := parseTotals("events: Ir Ge\ntotals: 10\n"); !ok || n != (Counts{10, 0}) {
		t.Fatalf("a left-out zero: got %v %v", n, ok)
	}
}
