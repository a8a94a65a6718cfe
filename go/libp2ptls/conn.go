package libp2ptls

import (
	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// conn is a secured connection, whichever backend made it.
type conn struct {
	tlsConn
	localPeer  peer.ID
	remotePeer peer.ID
	remoteKey  ic.PubKey
	state      network.ConnectionState
}

var _ DetailedConn = (*conn)(nil)

func (c *conn) LocalPeer() peer.ID                 { return c.localPeer }
func (c *conn) RemotePeer() peer.ID                { return c.remotePeer }
func (c *conn) RemotePublicKey() ic.PubKey         { return c.remoteKey }
func (c *conn) ConnState() network.ConnectionState { return c.state }

// Details reports what the handshake negotiated.
func (c *conn) Details() Details { return c.details() }
