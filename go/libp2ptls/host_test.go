package libp2ptls_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/sec"
	"github.com/libp2p/go-libp2p/p2p/protocol/ping"
	noise "github.com/libp2p/go-libp2p/p2p/security/noise"
	upstream "github.com/libp2p/go-libp2p/p2p/security/tls"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

const echoProtocol = protocol.ID("/tlsmatrix/echo/1.0.0")

// hostLimit bounds every step of a host test.
const hostLimit = 10 * time.Second

// security is one entry of a host's security list.
type security struct {
	name string
	opt  libp2p.Option
}

var (
	ours = func(b libp2ptls.Backend) security {
		return security{"ours-" + string(b), libp2p.Security(libp2ptls.ID, libp2ptls.Constructor(libp2ptls.WithBackend(b)))}
	}
	oursDefault = security{"ours-default", libp2p.Security(libp2ptls.ID, libp2ptls.New)}
	upstreamTLS = security{"upstream", libp2p.Security(upstream.ID, upstream.New)}
	noiseSec    = security{"noise", libp2p.Security(noise.ID, noise.New)}
)

// newHost starts a TCP-only host on loopback with the given security
// transports, in preference order, and an echo handler.
func newHost(t *testing.T, secs ...security) host.Host {
	t.Helper()
	opts := []libp2p.Option{
		libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"),
		libp2p.Transport(tcp.NewTCPTransport),
		libp2p.DisableRelay(),
	}
	for _, s := range secs {
		opts = append(opts, s.opt)
	}
	h, err := libp2p.New(opts...)
	if err != nil {
		t.Fatalf("host with %v: %v", secs, err)
	}
	t.Cleanup(func() { h.Close() })
	h.SetStreamHandler(echoProtocol, func(s network.Stream) {
		defer s.Close()
		_ = s.SetDeadline(time.Now().Add(hostLimit))
		_, _ = io.Copy(s, s)
	})
	return h
}

// connect dials b from a and returns a's side of the connection.
func connect(t *testing.T, a, b host.Host) network.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostLimit)
	defer cancel()
	if err := a.Connect(ctx, peer.AddrInfo{ID: b.ID(), Addrs: b.Addrs()}); err != nil {
		t.Fatalf("connect: %v", err)
	}
	conns := a.Network().ConnsToPeer(b.ID())
	if len(conns) != 1 {
		t.Fatalf("%d connections after one dial", len(conns))
	}
	return conns[0]
}

// echo opens a stream from a to b, sends a message and reads it back.
func echo(t *testing.T, a, b host.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostLimit)
	defer cancel()
	s, err := a.NewStream(ctx, b.ID(), echoProtocol)
	if err != nil {
		t.Fatalf("stream %s -> %s: %v", a.ID(), b.ID(), err)
	}
	defer s.Close()
	_ = s.SetDeadline(time.Now().Add(hostLimit))
	msg := make([]byte, 100_000) // several TLS records and yamux frames
	if _, err := rand.Read(msg); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, _ = s.Write(msg)
		_ = s.CloseWrite()
	}()
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatalf("echo read: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo returned %d bytes, not the %d sent", len(got), len(msg))
	}
}

func pingOnce(t *testing.T, a, b host.Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hostLimit)
	defer cancel()
	res := <-ping.Ping(ctx, a, b.ID())
	if res.Error != nil {
		t.Fatalf("ping: %v", res.Error)
	}
	if res.RTT <= 0 {
		t.Fatalf("ping RTT %v", res.RTT)
	}
}

// Real go-libp2p hosts secured by our transport, against each other and
// against hosts with upstream's: connect over TCP, ping, echo on streams
// opened from each side, yamux agreed in the handshake's ALPN.
func TestHostsConnectPingAndStream(t *testing.T) {
	var sides []security
	for _, b := range libp2ptls.Backends {
		sides = append(sides, ours(b))
	}
	sides = append(sides, oursDefault, upstreamTLS)
	for _, dialer := range sides {
		for _, listener := range sides {
			if dialer.name == "upstream" && listener.name == "upstream" {
				continue // nothing of ours in it
			}
			t.Run(fmt.Sprintf("%s->%s", dialer.name, listener.name), func(t *testing.T) {
				a, b := newHost(t, dialer), newHost(t, listener)
				c := connect(t, a, b)
				st := c.ConnState()
				if st.Security != libp2ptls.ID {
					t.Fatalf("security %q, want %q", st.Security, libp2ptls.ID)
				}
				if st.StreamMultiplexer != "/yamux/1.0.0" || !st.UsedEarlyMuxerNegotiation {
					t.Fatalf("muxer %q (early: %v), want /yamux/1.0.0 agreed in ALPN", st.StreamMultiplexer, st.UsedEarlyMuxerNegotiation)
				}
				if c.RemotePeer() != b.ID() {
					t.Fatalf("remote peer %s, want %s", c.RemotePeer(), b.ID())
				}
				pingOnce(t, a, b)
				echo(t, a, b)
				echo(t, b, a)
			})
		}
	}
}

// Security protocols are agreed by multistream: the listener takes the
// dialer's first choice it supports. With Noise on both hosts, ours is
// used exactly when the dialer prefers it.
func TestHostsPickOursWhenPreferred(t *testing.T) {
	lastBackend := libp2ptls.Backends[len(libp2ptls.Backends)-1] // openssl when compiled in
	for _, tc := range []struct {
		dialer, listener []security
		want             protocol.ID
	}{
		{[]security{ours(lastBackend), noiseSec}, []security{noiseSec, ours(libp2ptls.BackendStd)}, libp2ptls.ID},
		{[]security{ours(libp2ptls.BackendStd), noiseSec}, []security{noiseSec, ours(lastBackend)}, libp2ptls.ID},
		{[]security{noiseSec, ours(libp2ptls.BackendStd)}, []security{ours(libp2ptls.BackendStd), noiseSec}, noise.ID},
	} {
		t.Run(fmt.Sprintf("%s-first", tc.dialer[0].name), func(t *testing.T) {
			a, b := newHost(t, tc.dialer...), newHost(t, tc.listener...)
			if got := connect(t, a, b).ConnState().Security; got != tc.want {
				t.Fatalf("negotiated %q, want %q", got, tc.want)
			}
			echo(t, a, b)
		})
	}
}

// secured is one end of a transport-level handshake.
type secured struct {
	conn sec.SecureConn
	err  error
}

// groupOf is the key-exchange group a secured connection negotiated.
func groupOf(t *testing.T, c sec.SecureConn) tls.CurveID {
	t.Helper()
	switch c := c.(type) {
	case libp2ptls.DetailedConn:
		return c.Details().Group
	case interface{ ConnectionState() tls.ConnectionState }:
		return c.ConnectionState().CurveID
	}
	t.Fatalf("cannot tell what %T negotiated", c)
	return 0
}

// Go's default offer puts X25519MLKEM768 first; our std backend keeps it
// unless WithGroups pins another, so it agrees on the hybrid with upstream
// go-libp2p's default configuration either way round. The OpenSSL backend
// offers what its libssl has: the system OpenSSL 3.0 has no ML-KEM, so it
// meets upstream on X25519, with no HelloRetryRequest (Go sends both shares).
func TestDefaultGroupsAgainstUpstream(t *testing.T) {
	mk := func(t *testing.T, name string) (sec.SecureTransport, peer.ID) {
		key, _, err := ic.GenerateEd25519Key(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := peer.IDFromPrivateKey(key)
		var tr sec.SecureTransport
		switch name {
		case "upstream":
			tr, err = upstream.New(upstream.ID, key, nil)
		default:
			tr, err = libp2ptls.New(libp2ptls.ID, key, nil, libp2ptls.WithBackend(libp2ptls.Backend(name)))
		}
		if err != nil {
			t.Fatal(err)
		}
		return tr, id
	}
	type pairing struct {
		client, server string
		want           tls.CurveID
	}
	var cases []pairing
	for _, b := range libp2ptls.Backends {
		want := tls.X25519MLKEM768
		if b == libp2ptls.BackendOpenSSL && !libp2ptls.OpenSSLHasMLKEM() {
			want = tls.X25519
		}
		cases = append(cases, pairing{string(b), "upstream", want}, pairing{"upstream", string(b), want})
	}
	for _, tc := range cases {
		t.Run(tc.client+"->"+tc.server, func(t *testing.T) {
			client, _ := mk(t, tc.client)
			server, serverID := mk(t, tc.server)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			ctx, cancel := context.WithTimeout(context.Background(), hostLimit)
			defer cancel()
			done := make(chan secured, 1)
			go func() {
				s, err := ln.Accept()
				if err != nil {
					done <- secured{nil, err}
					return
				}
				c, err := server.SecureInbound(ctx, s, "")
				done <- secured{c, err}
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			cl, err := client.SecureOutbound(ctx, raw, serverID)
			if err != nil {
				t.Fatalf("client: %v", err)
			}
			defer cl.Close()
			sv := <-done
			if sv.err != nil {
				t.Fatalf("server: %v", sv.err)
			}
			defer sv.conn.Close()
			for _, c := range []sec.SecureConn{cl, sv.conn} {
				if g := groupOf(t, c); g != tc.want {
					t.Fatalf("%T negotiated %v, want %v", c, g, tc.want)
				}
			}
		})
	}
}
