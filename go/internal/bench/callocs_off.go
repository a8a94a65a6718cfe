//go:build !openssl

package bench

// CAllocations is off without the OpenSSL backend: no libssl, nothing to count.
func CAllocations() (calls, bytes uint64, ok bool) { return 0, 0, false }
