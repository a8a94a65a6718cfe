package bench

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	tpt "github.com/libp2p/go-libp2p/core/transport"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	tptu "github.com/libp2p/go-libp2p/p2p/net/upgrader"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/quicreuse"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
	"github.com/quic-go/quic-go"

	"github.com/tlsmatrix/tlsmatrix/go/internal/metrics"
)

// A DialLink is a delay link the dial workload's wire pass runs one
// connection of each arm through: its round trip, and the metric of the time
// to first byte measured through it.
type DialLink struct {
	RTT    time.Duration
	Metric string
}

// DialLinks are the wire pass's links, shortest first; the round trips are
// counted from the first and the last.
var DialLinks = []DialLink{
	{20 * time.Millisecond, metrics.DelayedTtfb20Ms},
	{100 * time.Millisecond, metrics.DelayedTtfb100Ms},
}

// muxers are what a go-libp2p host's TCP connections multiplex with by
// default, offered in the TLS handshake's ALPN as a host's security
// transports offer them (early muxer negotiation).
var muxers = []tptu.StreamMuxer{{ID: yamux.ID, Muxer: yamux.DefaultTransport}}

// Wire is what the dial workload's wire pass read of one arm.
type Wire struct {
	// TTFB is the wall time from the dial to the client reading the
	// server's first stream byte through each of DialLinks.
	TTFB []time.Duration
	// RoundTrips is the difference of the first and the last link's TTFB over the
	// difference of their round trips, rounded: the CPU on the path drops out.
	RoundTrips int
}

// A WireReader is a session that measured its arm's wire (the dial workload).
type WireReader interface {
	Wire() Wire
}

// Dials says whether the workload makes whole libp2p connections, a
// transport stack an arm (TCP + security + yamux, or QUIC), rather than
// handshakes of one security transport.
func (w Workload) Dials() bool { return w.dials }

// peerPair is a new client peer and a new server peer, the server listening,
// all made outside the timed part. dial and accept each make their side of
// one connection, and run at the same time: the client uses its side as
// soon as it has it, as a node does, whether or not the server has yet.
type peerPair interface {
	dial(ctx context.Context) (tpt.CapableConn, error)
	accept(ctx context.Context) (tpt.CapableConn, error)
	Close() error
}

// newPeerPair makes two new peers of the named transports, QUIC or TCP with
// a security transport and yamux; a positive delay puts every socket's
// writes on a delay line of that one-way delay.
func newPeerPair(client, server string, group tls.CurveID, delay time.Duration) (peerPair, error) {
	if (client == QUICName) != (server == QUICName) {
		return nil, fmt.Errorf("%s cannot dial %s: QUIC meets QUIC only", client, server)
	}
	if client == QUICName {
		return newQUICPeers(group, delay)
	}
	return newTCPPeers(client, server, group, delay)
}

// tcpPeers dial over TCP and upgrade the connection as a go-libp2p host
// does: multistream-select picks the security transport, which offers yamux
// in its ALPN.
type tcpPeers struct {
	server   *Transport
	upgrader [2]tpt.Upgrader // client, server
	ln       net.Listener
	delay    time.Duration
}

func newTCPPeers(client, server string, group tls.CurveID, delay time.Duration) (*tcpPeers, error) {
	p := &tcpPeers{delay: delay}
	for i, name := range []string{client, server} {
		t, err := newTransport(name, group, muxers)
		if err != nil {
			return nil, err
		}
		if i == 1 {
			p.server = t
		}
		p.upgrader[i], err = tptu.New([]sec.SecureTransport{checkedSecurity{t.sec, group}}, muxers, nil, nil, nil)
		if err != nil {
			return nil, err
		}
	}
	var err error
	p.ln, err = net.Listen("tcp", "127.0.0.1:0")
	return p, err
}

func (p *tcpPeers) dial(ctx context.Context) (tpt.CapableConn, error) {
	raw, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.ln.Addr().String())
	if err != nil {
		return nil, err
	}
	if p.delay > 0 {
		// The kernel's SYN and SYN-ACK cross loopback undelayed: the client
		// waits the round trip they would take.
		time.Sleep(2 * p.delay)
	}
	return p.upgrade(ctx, raw, network.DirOutbound, p.server.id)
}

func (p *tcpPeers) accept(ctx context.Context) (tpt.CapableConn, error) {
	if d, ok := ctx.Deadline(); ok {
		if err := p.ln.(*net.TCPListener).SetDeadline(d); err != nil {
			return nil, err
		}
	}
	raw, err := p.ln.Accept()
	if err != nil {
		return nil, err
	}
	return p.upgrade(ctx, raw, network.DirInbound, "")
}

func (p *tcpPeers) upgrade(ctx context.Context, raw net.Conn, dir network.Direction, remote peer.ID) (tpt.CapableConn, error) {
	if p.delay > 0 {
		raw = delayConn(raw, p.delay)
	}
	c, err := manet.WrapNetConn(raw)
	if err != nil {
		raw.Close()
		return nil, err
	}
	side := 0 // the client's upgrader dials out
	if dir == network.DirInbound {
		side = 1
	}
	up, err := p.upgrader[side].Upgrade(ctx, nil, c, dir, remote, &network.NullScope{})
	if err == nil {
		if m := up.ConnState().StreamMultiplexer; m != yamux.ID {
			up.Close()
			return nil, fmt.Errorf("multiplexer %q, not %q", m, yamux.ID)
		}
	}
	return up, err
}

func (p *tcpPeers) Close() error { return p.ln.Close() }

// checkedSecurity checks each connection its transport secures for what the
// scenario names, inside the upgrade.
type checkedSecurity struct {
	sec.SecureTransport
	group tls.CurveID
}

func (c checkedSecurity) SecureInbound(ctx context.Context, insecure net.Conn, p peer.ID) (sec.SecureConn, error) {
	return c.checked(c.SecureTransport.SecureInbound(ctx, insecure, p))
}

func (c checkedSecurity) SecureOutbound(ctx context.Context, insecure net.Conn, p peer.ID) (sec.SecureConn, error) {
	return c.checked(c.SecureTransport.SecureOutbound(ctx, insecure, p))
}

func (c checkedSecurity) checked(conn sec.SecureConn, err error) (sec.SecureConn, error) {
	if err != nil {
		return nil, err
	}
	if err := checkNegotiated(conn, c.group); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// quicPeers are two nodes of go-libp2p's QUIC transport, each listening on
// its own UDP socket, as a node does, so that the client dials from it.
type quicPeers struct {
	group  tls.CurveID
	server *Transport
	conns  [2]*quicreuse.ConnManager
	tpts   [2]tpt.Transport
	lns    [2]tpt.Listener
}

func newQUICPeers(group tls.CurveID, delay time.Duration) (*quicPeers, error) {
	p := &quicPeers{group: group}
	var opts []quicreuse.Option
	if delay > 0 {
		opts = append(opts, quicreuse.OverrideListenUDP(func(network string, laddr *net.UDPAddr) (net.PacketConn, error) {
			c, err := net.ListenUDP(network, laddr)
			if err != nil {
				return nil, err
			}
			return delayPacketConn(c, delay), nil
		}))
	}
	for i := range 2 {
		t, err := newTransport(QUICName, group, nil)
		if err == nil && i == 1 {
			p.server = t
		}
		var reset quic.StatelessResetKey
		var token quic.TokenGeneratorKey
		if err == nil {
			_, err = rand.Read(reset[:])
		}
		if err == nil {
			_, err = rand.Read(token[:])
		}
		if err == nil {
			p.conns[i], err = quicreuse.NewConnManager(reset, token, opts...)
		}
		if err == nil {
			p.tpts[i], err = libp2pquic.NewTransport(t.key, p.conns[i], nil, nil, nil)
		}
		if err == nil {
			p.lns[i], err = p.tpts[i].Listen(ma.StringCast("/ip4/127.0.0.1/udp/0/quic-v1"))
		}
		if err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

func (p *quicPeers) dial(ctx context.Context) (tpt.CapableConn, error) {
	return checkedQUIC(p.tpts[0].Dial(ctx, p.lns[1].Multiaddr(), p.server.id))(p.group)
}

func (p *quicPeers) accept(ctx context.Context) (tpt.CapableConn, error) {
	type accepted struct {
		c   tpt.CapableConn
		err error
	}
	done := make(chan accepted, 1)
	go func() {
		c, err := p.lns[1].Accept()
		done <- accepted{c, err}
	}()
	select {
	case a := <-done:
		return checkedQUIC(a.c, a.err)(p.group)
	case <-ctx.Done():
		p.lns[1].Close() // ends the Accept above
		return nil, ctx.Err()
	}
}

// checkedQUIC is a connection made, checked for group (checkQUIC).
func checkedQUIC(c tpt.CapableConn, err error) func(tls.CurveID) (tpt.CapableConn, error) {
	return func(group tls.CurveID) (tpt.CapableConn, error) {
		if err == nil {
			err = checkQUIC(c, group)
		}
		if err != nil {
			closeAll(c)
			return nil, err
		}
		return c, nil
	}
}

// checkQUIC fails unless the connection is QUIC version 1 carrying what the
// scenario names (TLS 1.3 always, in QUIC).
func checkQUIC(c tpt.CapableConn, group tls.CurveID) error {
	var qc *quic.Conn
	if !c.As(&qc) {
		return fmt.Errorf("%T is not a quic-go connection", c)
	}
	st := qc.ConnectionState()
	if st.Version != quic.Version1 {
		return fmt.Errorf("QUIC version %v, not 1", st.Version)
	}
	return checkParams(st.TLS.Version, st.TLS.CipherSuite, st.TLS.CurveID, group)
}

func (p *quicPeers) Close() error {
	var errs []error
	for i := range 2 {
		if p.lns[i] != nil {
			errs = append(errs, p.lns[i].Close())
		}
		if c, ok := p.tpts[i].(io.Closer); ok {
			errs = append(errs, c.Close())
		}
		if p.conns[i] != nil {
			errs = append(errs, p.conns[i].Close())
		}
	}
	return errors.Join(errs...)
}

func closeAll(conns ...tpt.CapableConn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// ask is a new connection's first use by the client: it opens a stream,
// sends a byte and reads the server's answer.
func ask(ctx context.Context, c tpt.CapableConn) error {
	st, err := c.OpenStream(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	deadline, _ := ctx.Deadline()
	b := []byte{1}
	if err = st.SetDeadline(deadline); err == nil {
		if _, err = st.Write(b); err == nil {
			_, err = io.ReadFull(st, b)
		}
	}
	return err
}

// answer is the server's side of ask: it accepts the stream, reads the byte
// and sends one back.
func answer(ctx context.Context, c tpt.CapableConn) error {
	st, err := c.AcceptStream()
	if err != nil {
		return err
	}
	defer st.Close()
	deadline, _ := ctx.Deadline()
	b := make([]byte, 1)
	if err = st.SetDeadline(deadline); err == nil {
		if _, err = io.ReadFull(st, b); err == nil {
			_, err = st.Write(b)
		}
	}
	return err
}

// processCPU is the CPU time of every thread of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A connection is what timedConnection measured of one.
type connection struct {
	wall time.Duration // until both sides are done
	cpu  time.Duration // the process's, both sides'
	ttfb time.Duration // until the client has read the server's byte
}

// timedConnection makes a connection between the pair and uses it once (ask
// and answer), both sides at once; closing it is left out.
func timedConnection(peers peerPair) (connection, error) {
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	var m connection
	cpu0, start := processCPU(), time.Now()
	served := make(chan upgraded, 1)
	go func() {
		c, err := peers.accept(ctx)
		if err == nil {
			err = answer(ctx, c)
		}
		served <- upgraded{c, err}
	}()
	client, err := peers.dial(ctx)
	if err == nil {
		err = ask(ctx, client)
	}
	m.ttfb = time.Since(start)
	if err != nil {
		cancel() // the server stops waiting for what will not come
	}
	sv := <-served
	m.wall, m.cpu = time.Since(start), processCPU()-cpu0
	closeAll(client, sv.conn)
	return m, errors.Join(err, sv.err)
}

type upgraded struct {
	conn tpt.CapableConn
	err  error
}

// dialNewPeers makes a whole libp2p connection between two peers that have
// never met, and uses it once: TCP + security + yamux, or QUIC.
type dialNewPeers struct {
	client, server string
	group          tls.CurveID
	cpu            time.Duration
	wire           Wire
}

func openDialNewPeers(client, server *Transport) (Session, error) {
	d := &dialNewPeers{client: client.Name, server: server.Name, group: client.Group}
	return d, d.measureWire()
}

// measureWire times one connection through each delay link.
func (d *dialNewPeers) measureWire() error {
	for _, link := range DialLinks {
		rtt := link.RTT
		peers, err := newPeerPair(d.client, d.server, d.group, rtt/2)
		if err != nil {
			return err
		}
		m, err := timedConnection(peers)
		peers.Close()
		if err != nil {
			return fmt.Errorf("through a %v delay link: %w", rtt, err)
		}
		d.wire.TTFB = append(d.wire.TTFB, m.ttfb)
	}
	// The first byte's time through two links differs by the round trips times the links'
	// difference; the CPU on the path, the same through both, drops out, so a busy machine
	// cannot round to another round trip.
	first, last := DialLinks[0], DialLinks[len(DialLinks)-1]
	spread := d.wire.TTFB[len(DialLinks)-1] - d.wire.TTFB[0]
	d.wire.RoundTrips = int(math.Round(float64(spread) / float64(last.RTT-first.RTT)))
	return nil
}

func (d *dialNewPeers) Run(n int) (time.Duration, error) {
	var spent time.Duration
	for range n {
		peers, err := newPeerPair(d.client, d.server, d.group, 0)
		if err != nil {
			return 0, err
		}
		m, err := timedConnection(peers)
		peers.Close()
		if err != nil {
			return 0, fmt.Errorf("%s -> %s: %w", d.client, d.server, err)
		}
		spent += m.wall
		d.cpu += m.cpu
	}
	return spent, nil
}

func (d *dialNewPeers) TimedCPU() time.Duration { return d.cpu }

func (d *dialNewPeers) Wire() Wire { return d.wire }

func (d *dialNewPeers) Close() error { return nil }
