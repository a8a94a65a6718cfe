package libp2ptls

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/sec"
	tptu "github.com/libp2p/go-libp2p/p2p/net/upgrader"
)

// ID is the protocol id negotiated by multistream.
const ID = "/tls/1.0.0"

// alpnLibp2p is listed last by every peer; seeing it selected means no
// muxer was negotiated early.
const alpnLibp2p = "libp2p"

// Transport secures connections for one local peer.
type Transport struct {
	protocolID protocol.ID
	localPeer  peer.ID
	protos     []string
	backend    tlsBackend
	name       Backend
	verified   *verifiedCerts
}

var _ sec.SecureTransport = (*Transport)(nil)

// Option configures a Transport.
type Option func(*options) error

type options struct {
	backend       Backend
	verifiedCerts int
	settings      backendSettings
	identity      []IdentityOption
}

// WithBackend chooses the TLS implementation; the default is BackendStd.
func WithBackend(b Backend) Option {
	return func(o *options) error {
		if _, err := ParseBackend(string(b)); err != nil {
			return err
		}
		o.backend = b
		return nil
	}
}

// WithGroups pins the key-exchange groups, in preference order. Comparing
// backends needs this: crypto/tls offers X25519MLKEM768 first, and OpenSSL
// before 3.5 has no ML-KEM.
func WithGroups(groups ...tls.CurveID) Option {
	return func(o *options) error {
		if len(groups) == 0 {
			return errors.New("WithGroups needs at least one group")
		}
		o.settings.groups = groups
		return nil
	}
}

// WithVerifiedCertCache sets how many verified peer certificates the
// transport remembers (DefaultVerifiedCerts unless set); 0 turns the cache
// off, so every handshake checks both signatures again.
func WithVerifiedCertCache(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("WithVerifiedCertCache: %d is negative", n)
		}
		o.verifiedCerts = n
		return nil
	}
}

// WithIdentityOptions passes options to the certificate's creation.
func WithIdentityOptions(opts ...IdentityOption) Option {
	return func(o *options) error {
		o.identity = append(o.identity, opts...)
		return nil
	}
}

// New makes a transport for the peer owning key. muxers are offered in
// ALPN in preference order, so the muxer is agreed on in the handshake.
func New(id protocol.ID, key ic.PrivKey, muxers []tptu.StreamMuxer, opts ...Option) (*Transport, error) {
	o := options{backend: BackendStd, verifiedCerts: DefaultVerifiedCerts}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	identity, err := NewIdentity(key, o.identity...)
	if err != nil {
		return nil, err
	}
	ids := make([]protocol.ID, len(muxers))
	for i, m := range muxers {
		ids[i] = m.ID
	}
	return newTransport(id, key, ids, identity, o)
}

// Constructor is New with opts fixed, in the shape go-libp2p's
// libp2p.Security wants:
//
//	libp2p.Security(libp2ptls.ID, libp2ptls.Constructor(libp2ptls.WithBackend(libp2ptls.BackendOpenSSL)))
//
// libp2p.Security(libp2ptls.ID, libp2ptls.New) works too, with the defaults.
func Constructor(opts ...Option) func(protocol.ID, ic.PrivKey, []tptu.StreamMuxer) (*Transport, error) {
	return func(id protocol.ID, key ic.PrivKey, muxers []tptu.StreamMuxer) (*Transport, error) {
		return New(id, key, muxers, opts...)
	}
}

func newTransport(id protocol.ID, key ic.PrivKey, muxers []protocol.ID, identity *Identity, o options) (*Transport, error) {
	local, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, err
	}
	protos := make([]string, 0, len(muxers)+1)
	for _, m := range muxers {
		protos = append(protos, string(m))
	}
	protos = append(protos, alpnLibp2p)
	backend, err := newBackend(o.backend, identity, protos, o.settings)
	if err != nil {
		return nil, err
	}
	return &Transport{
		protocolID: id, localPeer: local, protos: protos, backend: backend, name: o.backend,
		verified: newVerifiedCerts(o.verifiedCerts),
	}, nil
}

// ID is the protocol id this transport was made with.
func (t *Transport) ID() protocol.ID { return t.protocolID }

// Backend names the TLS implementation in use.
func (t *Transport) Backend() Backend { return t.name }

// SecureInbound runs the handshake as the server. An empty p accepts any peer.
func (t *Transport) SecureInbound(ctx context.Context, insecure net.Conn, p peer.ID) (sec.SecureConn, error) {
	return t.secure(ctx, insecure, p, true)
}

// SecureOutbound runs the handshake as the client, expecting peer p.
//
// In TLS 1.3 the client finishes before the server has checked the client's
// certificate, so a server's refusal shows on the client's first Read.
func (t *Transport) SecureOutbound(ctx context.Context, insecure net.Conn, p peer.ID) (sec.SecureConn, error) {
	return t.secure(ctx, insecure, p, false)
}

func (t *Transport) secure(ctx context.Context, insecure net.Conn, p peer.ID, server bool) (_ sec.SecureConn, err error) {
	check := &peerCheck{expected: p, verified: t.verified}
	c, err := t.backend.handshake(ctx, insecure, handshakeSpec{server: server, protos: t.protos, verify: check.verify})
	if err == nil && ctx.Err() != nil {
		// Cancelled as the handshake finished: honour the cancellation.
		c.Close()
		err = ctx.Err()
	}
	if err != nil {
		insecure.Close()
		return nil, err
	}
	if check.key == nil {
		c.Close()
		return nil, errors.New("libp2ptls: handshake completed without checking the peer's certificate")
	}
	remote, err := peer.IDFromPublicKey(check.key)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("libp2ptls: peer id from the peer's key: %w", err)
	}
	muxer := c.details().ALPN
	if muxer == alpnLibp2p {
		muxer = ""
	}
	return &conn{
		tlsConn:    c,
		localPeer:  t.localPeer,
		remotePeer: remote,
		remoteKey:  check.key,
		state: network.ConnectionState{
			StreamMultiplexer:         protocol.ID(muxer),
			UsedEarlyMuxerNegotiation: muxer != "",
			Security:                  t.protocolID,
		},
	}, nil
}
