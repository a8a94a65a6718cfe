package libp2ptls

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/sec"
)

var keyTypes = []struct {
	name string
	typ  int
}{
	{"ed25519", ic.Ed25519},
	{"ecdsa", ic.ECDSA},
	{"rsa", ic.RSA},
	{"secp256k1", ic.Secp256k1},
}

// exchange sends data both ways and checks it arrives intact.
func exchange(t *testing.T, a, b net.Conn, size int) {
	t.Helper()
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	for _, dir := range [][2]net.Conn{{a, b}, {b, a}} {
		errc := make(chan error, 1)
		go func() { _, err := dir[0].Write(msg); errc <- err }()
		got := make([]byte, size)
		_ = dir[1].SetReadDeadline(time.Now().Add(waitLimit))
		if _, err := io.ReadFull(dir[1], got); err != nil {
			t.Fatalf("read: %v", err)
		}
		_ = dir[1].SetReadDeadline(time.Time{})
		if err := <-errc; err != nil {
			t.Fatalf("write: %v", err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatal("data corrupted in transit")
		}
	}
}

func TestHandshake(t *testing.T) {
	forEachPair(t, func(t *testing.T, p pair) {
		for _, kt := range keyTypes {
			for _, critical := range []bool{false, true} {
				name := kt.name
				if critical {
					name += "/critical-extension"
				}
				t.Run(name, func(t *testing.T) {
					ck, sk := hostKey(t, kt.typ, 0), hostKey(t, kt.typ, 1)
					var idOpts []IdentityOption
					if critical {
						idOpts = append(idOpts, WithCriticalExtension())
					}
					cid, err := NewIdentity(ck, idOpts...)
					if err != nil {
						t.Fatal(err)
					}
					sid, err := NewIdentity(sk, idOpts...)
					if err != nil {
						t.Fatal(err)
					}
					client := transportFor(t, ck, p.client, nil, cid)
					server := transportFor(t, sk, p.server, nil, sid)
					cl, sv := handshakePair(t, context.Background(), client, server, peerOf(t, sk), "")
					if cl.err != nil || sv.err != nil {
						t.Fatalf("client: %v, server: %v", cl.err, sv.err)
					}
					if cl.conn.RemotePeer() != peerOf(t, sk) || sv.conn.RemotePeer() != peerOf(t, ck) {
						t.Fatal("remote peer ids are wrong")
					}
					if cl.conn.LocalPeer() != peerOf(t, ck) || sv.conn.LocalPeer() != peerOf(t, sk) {
						t.Fatal("local peer ids are wrong")
					}
					if !cl.conn.RemotePublicKey().Equals(sk.GetPublic()) || !sv.conn.RemotePublicKey().Equals(ck.GetPublic()) {
						t.Fatal("remote public keys are wrong")
					}
					for _, c := range []sec.SecureConn{cl.conn, sv.conn} {
						d := detailsOf(t, c)
						if d.Version != tls.VersionTLS13 {
							t.Fatalf("%s negotiated version %#x", d.Backend, d.Version)
						}
						if d.CipherSuite != tls.TLS_AES_128_GCM_SHA256 {
							t.Fatalf("%s negotiated %s; both backends prefer AES-128-GCM", d.Backend, tls.CipherSuiteName(d.CipherSuite))
						}
						if d.PeerSignature != 0 && d.PeerSignature != tls.ECDSAWithP256AndSHA256 {
							t.Fatalf("%s saw peer signature scheme %v", d.Backend, d.PeerSignature)
						}
						if c.ConnState().Security != ID {
							t.Fatalf("security protocol %q", c.ConnState().Security)
						}
					}
					exchange(t, cl.conn, sv.conn, 100)
				})
			}
		}
	})
}

func TestLargeTransferAndConcurrentIO(t *testing.T) {
	forEachPair(t, func(t *testing.T, p pair) {
		ck, sk := hostKey(t, ic.Ed25519, 0), hostKey(t, ic.Ed25519, 1)
		cl, sv := handshakePair(t, context.Background(), transportFor(t, ck, p.client, nil, nil), transportFor(t, sk, p.server, nil, nil), peerOf(t, sk), "")
		if cl.err != nil || sv.err != nil {
			t.Fatalf("client: %v, server: %v", cl.err, sv.err)
		}
		exchange(t, cl.conn, sv.conn, 3<<20+17)
		// Both directions at once: reads and writes on one connection run
		// concurrently, as a stream muxer does.
		msg := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
		errc := make(chan error, 4)
		for _, c := range []net.Conn{cl.conn, sv.conn} {
			go func() { _, err := c.Write(msg); errc <- err }()
			go func() {
				got := make([]byte, len(msg))
				_ = c.SetReadDeadline(time.Now().Add(waitLimit))
				_, err := io.ReadFull(c, got)
				if err == nil && !bytes.Equal(got, msg) {
					err = errors.New("data corrupted in transit")
				}
				errc <- err
			}()
		}
		for range 4 {
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		}
		// Closing sends close_notify: the peer reads a clean EOF.
		cl.conn.Close()
		if _, err := readWithin(sv.conn, make([]byte, 1)); err != io.EOF {
			t.Fatalf("after the peer closed: %v, want EOF", err)
		}
	})
}

func TestMuxerNegotiation(t *testing.T) {
	cases := []struct {
		client, server []protocol.ID
		want           protocol.ID
	}{
		{[]protocol.ID{"muxer1", "muxer2"}, []protocol.ID{"muxer2", "muxer1"}, "muxer1"}, // the client's preference wins
		{[]protocol.ID{"muxer1", "muxer2", "libp2p"}, []protocol.ID{"muxer2", "muxer1", "libp2p"}, "muxer1"},
		{[]protocol.ID{"muxer1", "libp2p"}, []protocol.ID{"libp2p"}, ""},
		{[]protocol.ID{"libp2p"}, []protocol.ID{"libp2p"}, ""},
		{[]protocol.ID{"muxer1"}, nil, ""},
		{nil, []protocol.ID{"muxer1"}, ""},
		{[]protocol.ID{"muxer2"}, []protocol.ID{"muxer1"}, ""}, // no common muxer: fall back to "libp2p"
	}
	forEachPair(t, func(t *testing.T, p pair) {
		ck, sk := hostKey(t, ic.Ed25519, 0), hostKey(t, ic.Ed25519, 1)
		for _, tc := range cases {
			client := transportFor(t, ck, p.client, tc.client, nil)
			server := transportFor(t, sk, p.server, tc.server, nil)
			cl, sv := handshakePair(t, context.Background(), client, server, peerOf(t, sk), "")
			if cl.err != nil || sv.err != nil {
				t.Fatalf("%v vs %v: client: %v, server: %v", tc.client, tc.server, cl.err, sv.err)
			}
			for _, c := range []sec.SecureConn{cl.conn, sv.conn} {
				st := c.ConnState()
				if st.StreamMultiplexer != tc.want || st.UsedEarlyMuxerNegotiation != (tc.want != "") {
					t.Fatalf("client %v, server %v: got muxer %q (early=%v), want %q",
						tc.client, tc.server, st.StreamMultiplexer, st.UsedEarlyMuxerNegotiation, tc.want)
				}
			}
			exchange(t, cl.conn, sv.conn, 6)
		}
	})
}

// slowConn delays reads so that a cancelled context is seen mid-handshake.
type slowConn struct {
	net.Conn
	delay time.Duration
}

func (c *slowConn) Read(b []byte) (int, error) {
	time.Sleep(c.delay)
	return c.Conn.Read(b)
}

func TestContextCancellation(t *testing.T) {
	forEachPair(t, func(t *testing.T, p pair) {
		ck, sk := hostKey(t, ic.Ed25519, 0), hostKey(t, ic.Ed25519, 1)
		client := transportFor(t, ck, p.client, nil, nil)
		server := transportFor(t, sk, p.server, nil, nil)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		for _, side := range []string{"client", "server"} {
			t.Run("cancel-"+side, func(t *testing.T) {
				cc, sc := connect(t)
				cctx, sctx := context.Background(), context.Background()
				var cconn, sconn net.Conn = cc, sc
				if side == "client" {
					cctx, cconn = cancelled, &slowConn{cc, 5 * time.Millisecond}
				} else {
					sctx, sconn = cancelled, &slowConn{sc, 5 * time.Millisecond}
				}
				done := make(chan error, 1)
				go func() {
					c, err := server.SecureInbound(sctx, sconn, "")
					if err == nil {
						_, err = readWithin(c, make([]byte, 1))
					}
					done <- err
				}()
				c, cerr := client.SecureOutbound(cctx, cconn, peerOf(t, sk))
				if cerr == nil {
					_, cerr = readWithin(c, make([]byte, 1))
				}
				var serr error
				select {
				case serr = <-done:
				case <-time.After(waitLimit):
					t.Fatal("server did not return")
				}
				cancelledErr, otherErr := cerr, serr
				if side == "server" {
					cancelledErr, otherErr = serr, cerr
				}
				if !errors.Is(cancelledErr, context.Canceled) {
					t.Fatalf("cancelled side: %v, want context.Canceled", cancelledErr)
				}
				if otherErr == nil {
					t.Fatal("the other side succeeded")
				}
			})
		}
	})
}

func TestPeerIDMismatch(t *testing.T) {
	forEachPair(t, func(t *testing.T, p pair) {
		ck, sk, third := hostKey(t, ic.Ed25519, 0), hostKey(t, ic.Ed25519, 1), hostKey(t, ic.Ed25519, 2)
		client := transportFor(t, ck, p.client, nil, nil)
		server := transportFor(t, sk, p.server, nil, nil)

		t.Run("client-expects-another-server", func(t *testing.T) {
			cl, sv := handshakePair(t, context.Background(), client, server, peerOf(t, third), "")
			var mismatch sec.ErrPeerIDMismatch
			if !errors.As(cl.err, &mismatch) || mismatch.Expected != peerOf(t, third) || mismatch.Actual != peerOf(t, sk) {
				t.Fatalf("client: %v, want a peer id mismatch", cl.err)
			}
			if a, ok := ReceivedAlert(sv.err); !ok || a != AlertBadCertificate {
				t.Fatalf("server: %v, want a bad_certificate alert", sv.err)
			}
		})
		t.Run("server-expects-another-client", func(t *testing.T) {
			cl, sv := handshakePair(t, context.Background(), client, server, peerOf(t, sk), peerOf(t, third))
			var mismatch sec.ErrPeerIDMismatch
			if !errors.As(sv.err, &mismatch) || mismatch.Expected != peerOf(t, third) || mismatch.Actual != peerOf(t, ck) {
				t.Fatalf("server: %v, want a peer id mismatch", sv.err)
			}
			// TLS 1.3: the client finished first; the refusal arrives on its first read.
			err := cl.err
			if err == nil {
				_, err = readWithin(cl.conn, make([]byte, 1))
			}
			if a, ok := ReceivedAlert(err); !ok || a != AlertBadCertificate {
				t.Fatalf("client: %v, want a bad_certificate alert", err)
			}
		})
	})
}

func TestBadOptions(t *testing.T) {
	key := hostKey(t, ic.Ed25519, 0)
	if _, err := New(ID, key, nil, WithBackend("gnutls")); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Fatalf("unknown backend: %v", err)
	}
	if _, err := New(ID, key, nil, WithGroups()); err == nil {
		t.Fatal("WithGroups() with no group was accepted")
	}
	if _, err := New(ID, key, nil, WithBackend(BackendOpenSSL), WithGroups(tls.CurveID(0x1234))); err == nil {
		t.Fatal("an unknown group was accepted by the OpenSSL backend")
	}
}

// TestDataRightAfterHandshake: the client's first data often arrives with its
// Finished, in one read on the server; it must not wait there unseen.
func TestDataRightAfterHandshake(t *testing.T) {
	forEachPair(t, func(t *testing.T, p pair) {
		ck, sk := hostKey(t, ic.Ed25519, 0), hostKey(t, ic.Ed25519, 1)
		client := transportFor(t, ck, p.client, nil, nil)
		server := transportFor(t, sk, p.server, nil, nil)
		cc, sc := connect(t)
		got := make(chan error, 1)
		go func() {
			// Slow reads make the Finished and the data arrive together.
			c, err := server.SecureInbound(context.Background(), &slowConn{sc, 20 * time.Millisecond}, "")
			if err == nil {
				buf := make([]byte, 5)
				_ = c.SetReadDeadline(time.Now().Add(waitLimit))
				_, err = io.ReadFull(c, buf)
				if err == nil && string(buf) != "hello" {
					err = errors.New("wrong data")
				}
				c.Close()
			}
			got <- err
		}()
		c, err := client.SecureOutbound(context.Background(), cc, peerOf(t, sk))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatalf("server: %v", err)
		}
	})
}
