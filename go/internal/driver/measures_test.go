package driver

import (
	"strings"
	"testing"

	"github.com/tlsmatrix/tlsmatrix/go/internal/measures"
)

// The measures info lists as refused are exactly those run refuses on a scenario kind the
// measure table accepts, and run refuses a kind the table refuses in the table's words.
func TestInfoAndRunRefuseTheSameMeasures(t *testing.T) {
	listed := map[string]bool{}
	for _, r := range refusalList() {
		listed[r["measure"]] = true
	}
	for _, m := range measures.Names {
		why, err := measureRefusal(m, "handshake")
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if tableWhy := measures.KindRefusal(m, "handshake"); tableWhy != "" {
			if why != tableWhy {
				t.Errorf("%s on a handshake: run says %q, the table %q", m, why, tableWhy)
			}
			continue
		}
		if (why != "") != listed[m] {
			t.Errorf("%s: run refuses it (%q) but info lists it: %v", m, why, listed[m])
		}
	}
	if why, _ := measureRefusal(measures.Wire, "bulk"); why != measures.KindRefusal(measures.Wire, "bulk") || why == "" {
		t.Errorf("wire on bulk: %q", why)
	}
	if _, err := measureRefusal("speed", "handshake"); err == nil || !strings.Contains(err.Error(), "contention") {
		t.Errorf("an unknown measure: %v", err)
	}
}
