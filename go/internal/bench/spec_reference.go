package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/core/sec"
	upstream "github.com/libp2p/go-libp2p/p2p/security/tls"
)

// specReference is upstream go-libp2p's TLS transport with the one check
// upstream leaves out and the libp2p TLS spec requires ("Endpoints MUST abort
// the connection attempt if ... the certificate's self-signature is not
// valid"): the like-for-like reference for this module's std backend, which
// makes that check. It is built from upstream's own identity code
// (upstream.Identity.ConfigForPeer makes the config and checks the peer as
// upstream does); only the self-signature check is added, before upstream's.
// The handshake steps are upstream's transport.go's, without muxers, which no
// benchmark negotiates. Its one cost beyond the check: the leaf is parsed once
// more (upstream's check parses it again).
type specReference struct {
	identity *upstream.Identity
	local    peer.ID
}

var _ sec.SecureTransport = (*specReference)(nil)

func newSpecReference(key ic.PrivKey, local peer.ID) (*specReference, error) {
	identity, err := upstream.NewIdentity(key)
	if err != nil {
		return nil, err
	}
	return &specReference{identity: identity, local: local}, nil
}

func (t *specReference) ID() protocol.ID { return upstream.ID }

func (t *specReference) SecureInbound(ctx context.Context, insecure net.Conn, p peer.ID) (sec.SecureConn, error) {
	config, keyCh := t.config(p)
	return t.handshake(ctx, insecure, tls.Server(insecure, config), keyCh)
}

func (t *specReference) SecureOutbound(ctx context.Context, insecure net.Conn, p peer.ID) (sec.SecureConn, error) {
	config, keyCh := t.config(p)
	return t.handshake(ctx, insecure, tls.Client(insecure, config), keyCh)
}

// config is upstream's config for the peer with the self-signature checked
// first.
func (t *specReference) config(p peer.ID) (*tls.Config, <-chan ic.PubKey) {
	config, keyCh := t.identity.ConfigForPeer(p)
	upstreamCheck := config.VerifyPeerCertificate
	config.VerifyPeerCertificate = func(raw [][]byte, chains [][]*x509.Certificate) error {
		if err := checkSelfSignature(raw); err != nil {
			return err
		}
		return upstreamCheck(raw, chains)
	}
	return config, keyCh
}

// checkSelfSignature checks the one certificate's signature with its own key.
// Any other chain is left to upstream's check, which refuses it.
func checkSelfSignature(raw [][]byte) error {
	if len(raw) != 1 {
		return nil
	}
	cert, err := x509.ParseCertificate(raw[0])
	if err != nil {
		return err
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		return fmt.Errorf("certificate self-signature: %w", err)
	}
	return nil
}

func (t *specReference) handshake(ctx context.Context, insecure net.Conn, c *tls.Conn, keyCh <-chan ic.PubKey) (sec.SecureConn, error) {
	if err := c.HandshakeContext(ctx); err != nil {
		insecure.Close()
		return nil, err
	}
	var remoteKey ic.PubKey
	select {
	case remoteKey = <-keyCh:
	default:
	}
	if remoteKey == nil {
		insecure.Close()
		return nil, errors.New("no peer key after the handshake")
	}
	remote, err := peer.IDFromPublicKey(remoteKey)
	if err != nil {
		insecure.Close()
		return nil, err
	}
	return &specConn{Conn: c, local: t.local, remote: remote, remoteKey: remoteKey}, nil
}

type specConn struct {
	*tls.Conn
	local, remote peer.ID
	remoteKey     ic.PubKey
}

func (c *specConn) LocalPeer() peer.ID                 { return c.local }
func (c *specConn) RemotePeer() peer.ID                { return c.remote }
func (c *specConn) RemotePublicKey() ic.PubKey         { return c.remoteKey }
func (c *specConn) ConnState() network.ConnectionState { return network.ConnectionState{} }
