//go:build openssl && !ossl_vendored

package ossl

// The system libssl, found by pkg-config.

// #cgo pkg-config: libssl libcrypto
import "C"
