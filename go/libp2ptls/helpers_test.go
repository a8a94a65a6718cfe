package libp2ptls

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/sec"
)

// waitLimit bounds every wait in these tests, so a broken backend fails a
// test instead of hanging the suite.
const waitLimit = 10 * time.Second

// pair is a client backend and a server backend.
type pair struct{ client, server Backend }

func (p pair) String() string { return fmt.Sprintf("client=%s/server=%s", p.client, p.server) }

// forEachPair runs fn for all four backend pairs.
func forEachPair(t *testing.T, fn func(t *testing.T, p pair)) {
	for _, c := range Backends {
		for _, s := range Backends {
			p := pair{c, s}
			t.Run(p.String(), func(t *testing.T) { fn(t, p) })
		}
	}
}

var (
	keysMu sync.Mutex
	keys   = map[int][]ic.PrivKey{}
)

// hostKey returns the n-th host key of a type, generated once per test
// binary (RSA generation is slow).
func hostKey(t testing.TB, typ, n int) ic.PrivKey {
	t.Helper()
	keysMu.Lock()
	defer keysMu.Unlock()
	for len(keys[typ]) <= n {
		bits := -1
		if typ == ic.RSA {
			bits = 2048
		}
		k, _, err := ic.GenerateKeyPairWithReader(typ, bits, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		keys[typ] = append(keys[typ], k)
	}
	return keys[typ][n]
}

func peerOf(t testing.TB, k ic.PrivKey) peer.ID {
	t.Helper()
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// transportFor builds a transport; identity nil means a proper one.
func transportFor(t testing.TB, key ic.PrivKey, b Backend, muxers []protocol.ID, identity *Identity) *Transport {
	t.Helper()
	if identity == nil {
		var err error
		if identity, err = NewIdentity(key); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := newTransport(ID, key, muxers, identity, options{backend: b, verifiedCerts: DefaultVerifiedCerts})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// connect returns both ends of a loopback TCP connection.
func connect(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

type result struct {
	conn sec.SecureConn
	err  error
}

// handshakePair runs both sides; each side's error is returned, not fatal.
func handshakePair(t testing.TB, ctx context.Context, client, server *Transport, expectServer, expectClient peer.ID) (cl, sv result) {
	t.Helper()
	cc, sc := connect(t)
	done := make(chan result, 1)
	go func() {
		c, err := server.SecureInbound(ctx, sc, expectClient)
		done <- result{c, err}
	}()
	c, err := client.SecureOutbound(ctx, cc, expectServer)
	cl = result{c, err}
	select {
	case sv = <-done:
	case <-time.After(waitLimit):
		t.Fatal("server side of the handshake did not return")
	}
	for _, r := range []result{cl, sv} {
		if r.conn != nil {
			t.Cleanup(func() { r.conn.Close() })
		}
	}
	return cl, sv
}

// readWithin reads once with a deadline.
func readWithin(c net.Conn, p []byte) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(waitLimit))
	defer c.SetReadDeadline(time.Time{})
	return c.Read(p)
}

func detailsOf(t testing.TB, c sec.SecureConn) Details {
	t.Helper()
	d, ok := c.(DetailedConn)
	if !ok {
		t.Fatalf("%T has no Details method", c)
	}
	return d.Details()
}
