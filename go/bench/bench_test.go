package bench

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"testing"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

// group is pinned on both sides: crypto/tls would otherwise offer
// X25519MLKEM768 first, which the system OpenSSL 3.0 lacks.
const group = tls.X25519

// peers is a client and a server transport on one backend pair.
type peers struct {
	client, server *libp2ptls.Transport
	serverID       peer.ID
}

func newPeers(b *testing.B, client, server libp2ptls.Backend) peers {
	b.Helper()
	mk := func(be libp2ptls.Backend) (*libp2ptls.Transport, peer.ID) {
		key, _, err := ic.GenerateEd25519Key(rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		t, err := libp2ptls.New(libp2ptls.ID, key, nil, libp2ptls.WithBackend(be), libp2ptls.WithGroups(group))
		if err != nil {
			b.Fatal(err)
		}
		id, _ := peer.IDFromPrivateKey(key)
		return t, id
	}
	c, _ := mk(client)
	s, sid := mk(server)
	return peers{client: c, server: s, serverID: sid}
}

// forEachPair names sub-benchmarks client=X/server=Y, the form
// cmd/benchrecords reads.
func forEachPair(b *testing.B, fn func(b *testing.B, p peers)) {
	for _, c := range libp2ptls.Backends {
		for _, s := range libp2ptls.Backends {
			b.Run(fmt.Sprintf("client=%s/server=%s", c, s), func(b *testing.B) {
				fn(b, newPeers(b, c, s))
			})
		}
	}
}

// check fails the benchmark unless both ends are secured and negotiated
// what it claims to measure: TLS 1.3, TLS_AES_128_GCM_SHA256, X25519.
func check(b *testing.B, cl, sv secured) {
	if cl.err != nil || sv.err != nil {
		b.Fatalf("client: %v, server: %v", cl.err, sv.err)
	}
	for _, c := range []sec.SecureConn{cl.conn, sv.conn} {
		d := c.(interface{ Details() libp2ptls.Details }).Details()
		if d.Version != tls.VersionTLS13 || d.CipherSuite != tls.TLS_AES_128_GCM_SHA256 || d.Group != group {
			b.Fatalf("%s negotiated version %#x, %s, group %v; the benchmark pins TLS 1.3, TLS_AES_128_GCM_SHA256, X25519",
				d.Backend, d.Version, tls.CipherSuiteName(d.CipherSuite), d.Group)
		}
	}
}

func tcpPair(b *testing.B, ln net.Listener) (net.Conn, net.Conn) {
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		b.Fatal("accept failed")
	}
	return c, s
}

func listen(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	return ln
}

type secured struct {
	conn sec.SecureConn
	err  error
}

// handshake secures an established TCP pair, the server in a goroutine.
func handshake(p peers, c, s net.Conn) (client, server secured) {
	done := make(chan secured, 1)
	go func() {
		conn, err := p.server.SecureInbound(context.Background(), s, "")
		done <- secured{conn, err}
	}()
	conn, err := p.client.SecureOutbound(context.Background(), c, p.serverID)
	return secured{conn, err}, <-done
}

// BenchmarkHandshake times the handshake alone, both sides on one CPU with
// -cpu=1; TCP set-up and teardown are outside the timer.
func BenchmarkHandshake(b *testing.B) {
	forEachPair(b, func(b *testing.B, p peers) {
		ln := listen(b)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			c, s := tcpPair(b, ln)
			b.StartTimer()
			cl, sv := handshake(p, c, s)
			b.StopTimer()
			check(b, cl, sv)
			cl.conn.Close()
			sv.conn.Close()
			b.StartTimer()
		}
	})
}

// BenchmarkLatency times a 6-byte ping and its echo on an established connection.
func BenchmarkLatency(b *testing.B) {
	forEachPair(b, func(b *testing.B, p peers) {
		c, s := tcpPair(b, listen(b))
		cl, sv := handshake(p, c, s)
		check(b, cl, sv)
		defer cl.conn.Close()
		defer sv.conn.Close()
		go func() {
			buf := make([]byte, 6)
			for {
				if _, err := io.ReadFull(sv.conn, buf); err != nil {
					return
				}
				if _, err := sv.conn.Write(buf); err != nil {
					return
				}
			}
		}()
		ping, pong := []byte("foobar"), make([]byte, 6)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := cl.conn.Write(ping); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(cl.conn, pong); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkConnections times a whole connection: TCP dial and accept,
// handshake on both sides, close.
func BenchmarkConnections(b *testing.B) {
	forEachPair(b, func(b *testing.B, p peers) {
		ln := listen(b)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c, s := tcpPair(b, ln)
			cl, sv := handshake(p, c, s)
			b.StopTimer()
			check(b, cl, sv)
			b.StartTimer()
			cl.conn.Close()
			sv.conn.Close()
		}
	})
}
