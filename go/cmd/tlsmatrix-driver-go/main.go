// Command tlsmatrix-driver-go is the tlsmatrix driver for Go's crypto/tls; everything it
// does is in internal/driver.
package main

import (
	"os"

	"github.com/tlsmatrix/tlsmatrix/go/internal/driver"
)

func main() { os.Exit(driver.Main(os.Args[1:])) }
