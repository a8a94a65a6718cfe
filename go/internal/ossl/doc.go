// Package ossl drives TLS connections with a libssl (the system's, a vendored
// OpenSSL release, BoringSSL or AWS-LC) through cgo.
//
// The Go side owns the socket and OpenSSL sees only memory buffers, so each
// operation (a handshake flight, a read, a write) is one call into C: the C
// side takes the bytes Go read and hands back the bytes Go must send.
// Deadlines, context cancellation and the network poller keep working as
// they do for any net.Conn. Peer certificates are passed to a Go callback,
// exactly as received, during the handshake, so refusing one sends a real
// TLS alert.
//
// It is compiled only with the openssl build tag (go build -tags openssl),
// and needs cgo and the libssl headers (Debian: libssl-dev); without the tag
// the package is empty and the libp2p transport is pure Go.
package ossl
