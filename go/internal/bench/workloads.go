package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/sec"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

// A Workload is one of the benchmarks the go-libp2p-tls OpenSSL pull
// request ran, over loopback TCP.
type Workload struct {
	Name     string // the Go benchmark name: Handshake, Latency, Connections
	Scenario string // the tlsmatrix scenario id
	// Group is the key exchange every handshake pins and is checked for.
	Group tls.CurveID
	// grouped workloads time handshakes, so each group is a workload of its
	// own (WithGroup); Latency times pings after the handshake, which no
	// group changes, and runs with X25519 only.
	grouped bool
	// dials: an arm is a transport stack, not a security transport (Dials).
	dials bool
	open  func(client, server *Transport) (Session, error)
	// About says in a few words what the workload times, for its tables.
	About string
}

// A Session runs a workload's operations on one client/server pair.
type Session interface {
	// Run does n operations and returns the time they took, set-up that is
	// not part of the operation left out.
	Run(n int) (time.Duration, error)
	Close() error
}

// Open starts the workload on a pair: listeners, and for Latency the
// connection it pings over.
func (w Workload) Open(client, server *Transport) (Session, error) {
	return w.open(client, server)
}

// Workloads are the benchmarks, in the order they are reported: new peers
// first, the cost a node pays meeting peers (a DHT walk, a gossip mesh);
// then the same two peers reconnecting, a warm path that a cache of verified
// certificates flatters. Each is X25519's; WithGroup gives the other groups'.
var Workloads = []Workload{
	{"HandshakeNewPeers", "libp2p-handshake-new-peers-tls13-ecdsa-p256-x25519", tls.X25519, true, false, openNewPeerHandshakes,
		"a new peer every handshake, both sides made anew untimed (their allocations are counted): what a node meets"},
	{"Handshake", "libp2p-handshake-tls13-ecdsa-p256-x25519", tls.X25519, true, false, openHandshakes,
		"the same two peers reconnecting: a warm path a verified-certificate cache flatters"},
	{"Latency", "libp2p-latency-tls13-aes-128-gcm-6b", tls.X25519, false, false, openLatency,
		"one ping over an established connection"},
	{"Connections", "libp2p-connection-tls13-ecdsa-p256-x25519", tls.X25519, true, false, openConnections,
		"a whole connection with the same two peers: TCP dial and accept, handshake, close"},
	{"DialNewPeers", "libp2p-dial-new-peers-tls13-ecdsa-p256-x25519", tls.X25519, true, true, openDialNewPeers,
		"a whole libp2p connection to a peer never met and its first stream byte each way: TCP + security + yamux, or QUIC; both nodes made and listening untimed (their allocations are counted)"},
}

// MeetsNewPeers says whether every operation meets a peer never seen
// before, so no cache of verified certificates can spare a check: the
// workload the std backend is held to its like-for-like reference on.
func (w Workload) MeetsNewPeers() bool {
	return strings.HasPrefix(w.Scenario, "libp2p-handshake-new-peers-")
}

// WithGroup is the workload with every handshake on group: its scenario id
// names the group, and so does its name ("Handshake/X25519MLKEM768") unless
// the group is X25519. ok is false for a workload no group changes.
func (w Workload) WithGroup(group tls.CurveID) (Workload, bool) {
	if group == w.Group {
		return w, true
	}
	if !w.grouped {
		return w, false
	}
	w.Scenario = strings.TrimSuffix(w.Scenario, groupID(w.Group)) + groupID(group)
	w.Name += "/" + group.String()
	w.Group = group
	return w, true
}

// groupID is a group as scenario ids spell it.
func groupID(g tls.CurveID) string { return strings.ToLower(g.String()) }

// OpenNamed makes the two named transports (NewTransport) and opens the
// workload on them; it also returns their versions, client first.
func (w Workload) OpenNamed(client, server string) (Session, [2]string, error) {
	if !w.dials && (client == QUICName || server == QUICName) {
		return nil, [2]string{}, fmt.Errorf("%s is a whole transport, not a security transport: only a dial workload runs it, not %s", QUICName, w.Name)
	}
	c, err := NewTransport(client, w.Group)
	if err != nil {
		return nil, [2]string{}, err
	}
	s, err := NewTransport(server, w.Group)
	if err != nil {
		return nil, [2]string{}, err
	}
	session, err := w.Open(c, s)
	return session, [2]string{c.Version, s.Version}, err
}

// WorkloadNamed finds a workload by its benchmark name, with X25519.
func WorkloadNamed(name string) (Workload, error) {
	for _, w := range Workloads {
		if w.Name == name {
			return w, nil
		}
	}
	names := make([]string, len(Workloads))
	for i, w := range Workloads {
		names[i] = w.Name
	}
	return Workload{}, fmt.Errorf("unknown workload %q (valid: %s)", name, strings.Join(names, ", "))
}

// handshakeTimeout bounds one handshake, so a peer that stalls fails its
// session instead of hanging the run.
const handshakeTimeout = 10 * time.Second

type secured struct {
	conn sec.SecureConn
	err  error
}

// handshake secures an established TCP pair, the server in a goroutine, and
// checks that both ends negotiated what the scenarios name.
func handshake(client, server *Transport, c, s net.Conn) (sec.SecureConn, sec.SecureConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	done := make(chan secured, 1)
	go func() {
		conn, err := server.sec.SecureInbound(ctx, s, "")
		done <- secured{conn, err}
	}()
	conn, cerr := client.sec.SecureOutbound(ctx, c, server.id)
	sv := <-done
	if err := errors.Join(cerr, sv.err); err != nil {
		c.Close()
		s.Close()
		return nil, nil, fmt.Errorf("%s -> %s handshake: %w", client.Name, server.Name, err)
	}
	for _, end := range []struct {
		t    *Transport
		conn sec.SecureConn
	}{{client, conn}, {server, sv.conn}} {
		if err := checkNegotiated(end.conn, end.t.Group); err != nil {
			conn.Close()
			sv.conn.Close()
			return nil, nil, fmt.Errorf("%s: %w", end.t.Name, err)
		}
	}
	return conn, sv.conn, nil
}

// checkNegotiated fails unless the connection is TLS 1.3 with
// TLS_AES_128_GCM_SHA256 and the group the workload pins, what the
// scenario ids name.
func checkNegotiated(c sec.SecureConn, group tls.CurveID) error {
	var version, suite uint16
	var got tls.CurveID
	switch c := c.(type) {
	case libp2ptls.DetailedConn:
		d := c.Details()
		version, suite, got = d.Version, d.CipherSuite, d.Group
	case interface{ ConnectionState() tls.ConnectionState }:
		st := c.ConnectionState()
		version, suite, got = st.Version, st.CipherSuite, st.CurveID
	default:
		return fmt.Errorf("cannot tell what %T negotiated", c)
	}
	return checkParams(version, suite, got, group)
}

// checkParams fails unless a handshake negotiated TLS 1.3,
// TLS_AES_128_GCM_SHA256 and group.
func checkParams(version, suite uint16, got, group tls.CurveID) error {
	if version != tls.VersionTLS13 || suite != tls.TLS_AES_128_GCM_SHA256 || got != group {
		return fmt.Errorf("negotiated version %#x, %s, group %v; the benchmarks pin TLS 1.3, TLS_AES_128_GCM_SHA256, %v",
			version, tls.CipherSuiteName(suite), got, group)
	}
	return nil
}

// loopback is a listener on 127.0.0.1 that hands out connected TCP pairs.
type loopback struct {
	ln net.Listener
}

func listen() (*loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &loopback{ln}, nil
}

func (l *loopback) pair() (net.Conn, net.Conn, error) {
	type accepted struct {
		c   net.Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() {
		c, err := l.ln.Accept()
		ch <- accepted{c, err}
	}()
	c, err := net.DialTimeout("tcp", l.ln.Addr().String(), handshakeTimeout)
	if err != nil {
		l.ln.Close() // ends the Accept above
		<-ch
		return nil, nil, err
	}
	a := <-ch
	if a.err != nil {
		c.Close()
		return nil, nil, a.err
	}
	return c, a.c, nil
}

func (l *loopback) Close() error { return l.ln.Close() }

// handshakes times the handshake alone: TCP set-up and teardown are outside.
type handshakes struct {
	client, server *Transport
	*loopback
}

func openHandshakes(client, server *Transport) (Session, error) {
	l, err := listen()
	if err != nil {
		return nil, err
	}
	return &handshakes{client, server, l}, nil
}

func (h *handshakes) Run(n int) (time.Duration, error) {
	var spent time.Duration
	for range n {
		d, err := h.timedHandshake(h.client, h.server)
		if err != nil {
			return 0, err
		}
		spent += d
	}
	return spent, nil
}

// timedHandshake secures a new TCP pair and returns how long the handshake
// alone took; TCP set-up and teardown are outside.
func (l *loopback) timedHandshake(client, server *Transport) (time.Duration, error) {
	c, s, err := l.pair()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	cl, sv, err := handshake(client, server, c, s)
	spent := time.Since(start)
	if err != nil {
		return 0, err
	}
	cl.Close()
	sv.Close()
	return spent, nil
}

// newPeerHandshakes times handshakes between peers that have never met:
// both sides are new transports (host key, certificate) each time, made
// outside the timed part, so nothing a transport remembers about a peer
// helps. Handshake, with the same two peers throughout, is a reconnect.
type newPeerHandshakes struct {
	client, server string
	group          tls.CurveID
	make           func(name string, group tls.CurveID) (*Transport, error)
	*loopback
}

func openNewPeerHandshakes(client, server *Transport) (Session, error) {
	l, err := listen()
	if err != nil {
		return nil, err
	}
	return &newPeerHandshakes{client.Name, server.Name, client.Group, NewTransport, l}, nil
}

func (h *newPeerHandshakes) Run(n int) (time.Duration, error) {
	var spent time.Duration
	for range n {
		client, err := h.make(h.client, h.group)
		if err != nil {
			return 0, err
		}
		server, err := h.make(h.server, h.group)
		if err != nil {
			return 0, err
		}
		d, err := h.timedHandshake(client, server)
		if err != nil {
			return 0, err
		}
		spent += d
	}
	return spent, nil
}

// connections times a whole connection: TCP dial and accept, the handshake
// on both sides, close. Checking what was negotiated is inside: it reads
// state the handshake left and costs next to nothing.
type connections struct {
	client, server *Transport
	*loopback
}

func openConnections(client, server *Transport) (Session, error) {
	l, err := listen()
	if err != nil {
		return nil, err
	}
	return &connections{client, server, l}, nil
}

func (h *connections) Run(n int) (time.Duration, error) {
	start := time.Now()
	for range n {
		c, s, err := h.pair()
		if err != nil {
			return 0, err
		}
		cl, sv, err := handshake(h.client, h.server, c, s)
		if err != nil {
			return 0, err
		}
		cl.Close()
		sv.Close()
	}
	return time.Since(start), nil
}

// latency times a 6-byte ping and its echo on one established connection.
type latency struct {
	client, server sec.SecureConn
	ping, pong     []byte
	echoed         chan struct{}
}

func openLatency(client, server *Transport) (Session, error) {
	l, err := listen()
	if err != nil {
		return nil, err
	}
	defer l.Close()
	c, s, err := l.pair()
	if err != nil {
		return nil, err
	}
	cl, sv, err := handshake(client, server, c, s)
	if err != nil {
		return nil, err
	}
	lat := &latency{client: cl, server: sv, ping: []byte("foobar"), pong: make([]byte, 6), echoed: make(chan struct{})}
	go lat.echo()
	return lat, nil
}

func (l *latency) echo() {
	defer close(l.echoed)
	buf := make([]byte, len(l.ping))
	for {
		if _, err := io.ReadFull(l.server, buf); err != nil {
			return
		}
		if _, err := l.server.Write(buf); err != nil {
			return
		}
	}
}

func (l *latency) Run(n int) (time.Duration, error) {
	// A stalled peer fails the session instead of hanging the run.
	if err := l.client.SetDeadline(time.Now().Add(handshakeTimeout + time.Duration(n)*time.Millisecond)); err != nil {
		return 0, err
	}
	start := time.Now()
	for range n {
		if _, err := l.client.Write(l.ping); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(l.client, l.pong); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func (l *latency) Close() error {
	err := errors.Join(l.client.Close(), l.server.Close())
	<-l.echoed
	return err
}
