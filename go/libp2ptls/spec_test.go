package libp2ptls

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	tptu "github.com/libp2p/go-libp2p/p2p/net/upgrader"
	upstream "github.com/libp2p/go-libp2p/p2p/security/tls"
	"golang.org/x/crypto/cryptobyte"
)

func TestSpecVectors(t *testing.T) {
	f, err := os.Open("testdata/spec-vectors.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("malformed vector line %q", line)
		}
		name, want, certHex := fields[0], fields[1], fields[2]
		der, err := hex.DecodeString(certHex)
		if err != nil {
			t.Fatal(err)
		}
		n++
		t.Run(name, func(t *testing.T) {
			key, err := PeerKeyFromChain([][]byte{der}, time.Now())
			if want == "invalid" {
				if err == nil {
					t.Fatal("the invalid vector was accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			id, err := peer.IDFromPublicKey(key)
			if err != nil {
				t.Fatal(err)
			}
			if id.String() != want {
				t.Fatalf("peer id %s, want %s", id, want)
			}
		})
	}
	if n != 4 {
		t.Fatalf("read %d vectors, want the spec's 4", n)
	}
}

// TestClientHello checks what each backend's client puts on the wire: TLS
// 1.3 only, no SNI, ALPN with "libp2p" last, and crypto/tls's default offer:
// X25519MLKEM768 first where the library has it, with key shares for it and
// for X25519 (one round trip with a server of either kind), else X25519.
func TestClientHello(t *testing.T) {
	for _, b := range Backends {
		t.Run(string(b), func(t *testing.T) {
			key := hostKey(t, ic.Ed25519, 0)
			client := transportFor(t, key, b, []protocol.ID{"/yamux/1.0.0"}, nil)
			cc, sc := connect(t)
			raw := &recordingConn{Conn: sc}
			hellos := make(chan *tls.ClientHelloInfo, 1)
			go func() {
				srv := tls.Server(raw, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
					hellos <- h
					return nil, io.EOF // stop here
				}})
				_ = srv.Handshake()
				sc.Close()
			}()
			_, _ = client.SecureOutbound(context.Background(), cc, "")
			h := <-hellos
			if h.ServerName != "" {
				t.Errorf("client sent SNI %q; the spec forbids it", h.ServerName)
			}
			if !slices.Equal(h.SupportedVersions, []uint16{tls.VersionTLS13}) {
				t.Errorf("client offered versions %x, want only TLS 1.3", h.SupportedVersions)
			}
			if !slices.Equal(h.SupportedProtos, []string{"/yamux/1.0.0", "libp2p"}) {
				t.Errorf("client offered ALPN %q", h.SupportedProtos)
			}
			wantShares := []tls.CurveID{tls.X25519}
			if b == BackendStd || OpenSSLHasMLKEM() {
				wantShares = []tls.CurveID{tls.X25519MLKEM768, tls.X25519}
			}
			if h.SupportedCurves[0] != wantShares[0] {
				t.Errorf("client prefers %v, want %v", h.SupportedCurves, wantShares[0])
			}
			shares, err := keyShareGroups(raw.read)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(shares, wantShares) {
				t.Errorf("client sent key shares for %v, want %v", shares, wantShares)
			}
		})
	}
}

// recordingConn keeps every byte read through it.
type recordingConn struct {
	net.Conn
	read []byte
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read = append(c.read, p[:n]...)
	return n, err
}

// keyShareGroups reads the groups of the key_share extension of the
// ClientHello that starts a client's first flight (RFC 8446, 4.1.2, 4.2.8).
func keyShareGroups(flight []byte) ([]tls.CurveID, error) {
	s := cryptobyte.String(flight)
	var record, hello, body, exts cryptobyte.String
	var msgType uint8
	if !s.Skip(3) || !s.ReadUint16LengthPrefixed(&record) || // type, version, length
		!record.ReadUint8(&msgType) || msgType != 1 || !record.ReadUint24LengthPrefixed(&hello) ||
		!hello.Skip(2+32) || !hello.ReadUint8LengthPrefixed(&body) || // version, random, session id
		!hello.ReadUint16LengthPrefixed(&body) || !hello.ReadUint8LengthPrefixed(&body) || // suites, compression
		!hello.ReadUint16LengthPrefixed(&exts) {
		return nil, fmt.Errorf("not a ClientHello record: % x", flight[:min(len(flight), 16)])
	}
	for !exts.Empty() {
		var typ uint16
		var ext cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&ext) {
			return nil, fmt.Errorf("truncated extensions")
		}
		if typ != 0x0033 { // key_share
			continue
		}
		var list cryptobyte.String
		if !ext.ReadUint16LengthPrefixed(&list) {
			return nil, fmt.Errorf("truncated key_share")
		}
		var groups []tls.CurveID
		for !list.Empty() {
			var g uint16
			var key cryptobyte.String
			if !list.ReadUint16(&g) || !list.ReadUint16LengthPrefixed(&key) {
				return nil, fmt.Errorf("truncated key share")
			}
			groups = append(groups, tls.CurveID(g))
		}
		return groups, nil
	}
	return nil, fmt.Errorf("the ClientHello has no key_share extension")
}

// tls12Config is a plain crypto/tls peer that stops at TLS 1.2.
func tls12Config(t testing.TB) *tls.Config {
	id, err := NewIdentity(hostKey(t, ic.Ed25519, 3))
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{
		MaxVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true,
		Certificates:       []tls.Certificate{{Certificate: id.chain, PrivateKey: id.signer}},
	}
}

func TestDowngradeRefused(t *testing.T) {
	for _, b := range Backends {
		key := hostKey(t, ic.Ed25519, 0)
		tr := transportFor(t, key, b, nil, nil)

		t.Run(string(b)+"/server-vs-tls12-client", func(t *testing.T) {
			cc, sc := connect(t)
			done := make(chan error, 1)
			go func() { _, err := tr.SecureInbound(context.Background(), sc, ""); done <- err }()
			cerr := tls.Client(cc, tls12Config(t)).Handshake()
			if a, ok := ReceivedAlert(cerr); !ok || a != AlertProtocolVersion {
				t.Fatalf("TLS 1.2 client: %v, want a protocol_version alert", cerr)
			}
			if err := <-done; err == nil {
				t.Fatal("the server accepted a TLS 1.2 client")
			}
		})

		t.Run(string(b)+"/client-vs-tls12-server", func(t *testing.T) {
			cc, sc := connect(t)
			done := make(chan error, 1)
			go func() { done <- tls.Server(sc, tls12Config(t)).Handshake() }()
			_, err := tr.SecureOutbound(context.Background(), cc, "")
			if err == nil {
				t.Fatal("the client accepted a TLS 1.2 server")
			}
			// crypto/tls sees that this client offers only TLS 1.3 and refuses first.
			if a, ok := ReceivedAlert(err); !ok || a != AlertProtocolVersion {
				t.Fatalf("client: %v, want a protocol_version alert", err)
			}
			<-done
		})

		t.Run(string(b)+"/client-vs-downgrading-server", func(t *testing.T) {
			// A server that answers with a TLS 1.2 ServerHello whatever the
			// client offered: the client itself must refuse with an alert.
			cc, sc := connect(t)
			got := make(chan []byte, 1)
			go func() { got <- downgradingServer(sc) }()
			_, err := tr.SecureOutbound(context.Background(), cc, "")
			if err == nil {
				t.Fatal("the client accepted a TLS 1.2 ServerHello")
			}
			// An alert record (the legacy record version may be 3.1 or 3.3)
			// holding a fatal protocol_version.
			reply := <-got
			if len(reply) != 7 || reply[0] != 21 || reply[1] != 3 || !slices.Equal(reply[3:], []byte{0, 2, 2, AlertProtocolVersion}) {
				t.Fatalf("client answered % x, want a fatal protocol_version alert", reply)
			}
		})
	}
}

// downgradingServer reads a ClientHello, answers with a TLS 1.2 ServerHello
// (ECDHE-ECDSA-AES128-GCM-SHA256, no extensions) and returns the client's reply.
func downgradingServer(c net.Conn) []byte {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(waitLimit))
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(c, hdr); err != nil {
		return nil
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(c, body); err != nil || len(body) < 39 {
		return nil
	}
	sid := body[39 : 39+int(body[38])] // after type, length, version and random
	hello := []byte{3, 3}
	hello = append(hello, make([]byte, 32)...) // random
	hello = append(hello, byte(len(sid)))
	hello = append(hello, sid...)
	hello = append(hello, 0xc0, 0x2b, 0) // cipher suite, compression
	msg := append([]byte{2, 0, byte(len(hello) >> 8), byte(len(hello))}, hello...)
	rec := append([]byte{22, 3, 3, byte(len(msg) >> 8), byte(len(msg))}, msg...)
	if _, err := c.Write(rec); err != nil {
		return nil
	}
	reply := make([]byte, 64)
	n, _ := io.ReadAtLeast(c, reply, 7)
	return reply[:n]
}

func TestInteropWithUpstream(t *testing.T) {
	muxers := []protocol.ID{"/yamux/1.0.0", "/mplex/6.7.0"}
	stream := make([]tptu.StreamMuxer, len(muxers))
	for i, m := range muxers {
		stream[i] = tptu.StreamMuxer{ID: m}
	}
	for _, b := range Backends {
		ours, theirs := hostKey(t, ic.ECDSA, 0), hostKey(t, ic.Ed25519, 4)
		mine := transportFor(t, ours, b, muxers, nil)
		up, err := upstream.New(upstream.ID, theirs, stream)
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{"we-dial", "they-dial"} {
			t.Run(string(b)+"/"+dir, func(t *testing.T) {
				cc, sc := connect(t)
				done := make(chan result, 1)
				var cl result
				if dir == "we-dial" {
					go func() { c, err := up.SecureInbound(context.Background(), sc, ""); done <- result{c, err} }()
					c, err := mine.SecureOutbound(context.Background(), cc, peerOf(t, theirs))
					cl = result{c, err}
				} else {
					go func() { c, err := mine.SecureInbound(context.Background(), sc, ""); done <- result{c, err} }()
					c, err := up.SecureOutbound(context.Background(), cc, peerOf(t, ours))
					cl = result{c, err}
				}
				sv := <-done
				if cl.err != nil || sv.err != nil {
					t.Fatalf("client: %v, server: %v", cl.err, sv.err)
				}
				defer cl.conn.Close()
				defer sv.conn.Close()
				if cl.conn.ConnState().StreamMultiplexer != muxers[0] || sv.conn.ConnState().StreamMultiplexer != muxers[0] {
					t.Fatalf("muxers %q / %q, want %q", cl.conn.ConnState().StreamMultiplexer, sv.conn.ConnState().StreamMultiplexer, muxers[0])
				}
				exchange(t, cl.conn, sv.conn, 1<<20)
			})
		}
	}
}
