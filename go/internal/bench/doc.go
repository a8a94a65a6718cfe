// Package bench holds the transport's benchmarks: Handshake, Latency and
// Connections for every client/server backend pair, as the go-libp2p-tls
// OpenSSL pull request measured them. Run them with `make bench-go`, which
// repeats them, interleaved, and writes tlsmatrix result records.
package bench
