package libp2ptls_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/libp2p/go-libp2p"
	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

// Two go-libp2p hosts that secure their connections with this transport, in
// place of go-libp2p's own p2p/security/tls.
func Example() {
	newHost := func() host.Host {
		h, err := libp2p.New(
			libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"),
			libp2p.Transport(tcp.NewTCPTransport),
			libp2p.Security(libp2ptls.ID, libp2ptls.New),
		)
		if err != nil {
			panic(err)
		}
		return h
	}
	a, b := newHost(), newHost()
	defer a.Close()
	defer b.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Connect(ctx, peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
		panic(err)
	}
	fmt.Println("secured by", a.Network().ConnsToPeer(b.ID())[0].ConnState().Security)
	// Output: secured by /tls/1.0.0
}

// Choosing the TLS stack: the OpenSSL backend where the binary has it
// (built with -tags openssl), crypto/tls otherwise. Asking for OpenSSL in a
// pure-Go build fails when the transport is made, not at the first dial.
func ExampleWithBackend() {
	key, _, err := ic.GenerateEd25519Key(rand.Reader)
	if err != nil {
		panic(err)
	}
	_, err = libp2ptls.New(libp2ptls.ID, key, nil, libp2ptls.WithBackend(libp2ptls.BackendOpenSSL))
	if errors.Is(err, libp2ptls.ErrOpenSSLNotCompiledIn) {
		_, err = libp2ptls.New(libp2ptls.ID, key, nil, libp2ptls.WithBackend(libp2ptls.BackendStd))
	}
	fmt.Println("transport made:", err == nil)
	// Output: transport made: true
}

// Pinning the key-exchange group on both sides, and reading what the
// handshake negotiated from the secured connection.
func ExampleWithGroups() {
	client, _ := newTransport(libp2ptls.WithGroups(tls.X25519))
	server, serverID := newTransport(libp2ptls.WithGroups(tls.X25519))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		if conn, err := server.SecureInbound(ctx, s, ""); err == nil {
			conn.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	conn, err := client.SecureOutbound(ctx, c, serverID)
	if err != nil {
		panic(err)
	}
	defer conn.Close()

	details := conn.(libp2ptls.DetailedConn).Details()
	fmt.Println(details.Group, details.Version == tls.VersionTLS13)
	// Output: X25519 true
}

// newTransport makes a transport with a new Ed25519 host key, and the peer
// ID that key makes.
func newTransport(opts ...libp2ptls.Option) (*libp2ptls.Transport, peer.ID) {
	key, _, err := ic.GenerateEd25519Key(rand.Reader)
	if err != nil {
		panic(err)
	}
	t, err := libp2ptls.New(libp2ptls.ID, key, nil, opts...)
	if err != nil {
		panic(err)
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		panic(err)
	}
	return t, id
}
