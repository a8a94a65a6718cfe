//go:build openssl

package bench

import "github.com/tlsmatrix/tlsmatrix/go/internal/ossl"

// CAllocations reads libssl's allocation counters (calls and bytes so far):
// what the OpenSSL backend allocates outside Go's heap.
func CAllocations() (calls, bytes uint64, ok bool) { return ossl.CAllocations() }
