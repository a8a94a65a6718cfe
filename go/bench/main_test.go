//go:debug tlsmlkem=0

package bench

// The //go:debug line above makes crypto/tls offer X25519 first by default,
// as upstream go-libp2p cannot be told which groups to offer; every
// handshake checks what was negotiated (checkNegotiated).
