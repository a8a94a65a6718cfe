package bench

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

// TestMain prints the versions under test, which cmd/benchrecords requires
// in the output it converts.
func TestMain(m *testing.M) {
	fmt.Printf("tlsmatrix-versions\tgo-crypto-tls=%s\tgo-openssl=%s\n", runtime.Version(), libp2ptls.OpenSSLVersion())
	os.Exit(m.Run())
}
