//go:build openssl && ossl_vendored

package ossl

// A vendored static OpenSSL (make go-openssl-VERSION): the Makefile passes its
// include directory and archives in CGO_CFLAGS and CGO_LDFLAGS, and sets
// BuiltFor, which CheckBuild holds the running library to.

// #cgo LDFLAGS: -ldl -pthread
import "C"
