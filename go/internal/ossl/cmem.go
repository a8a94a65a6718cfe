//go:build openssl

package ossl

// #include "cmem.h"
import "C"

// CAllocations is how many allocations libssl has made in this process and the bytes they
// asked for, counted through its allocator hooks (see cmem.h); ok is false when the hooks
// could not be installed, and then nothing is counted. Go's heap figures leave these out.
func CAllocations() (calls, bytes uint64, ok bool) {
	var c, b C.uint64_t
	if C.tm_cmem_read(&c, &b) == 0 {
		return 0, 0, false
	}
	return uint64(c), uint64(b), true
}
