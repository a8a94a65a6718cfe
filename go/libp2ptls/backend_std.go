package libp2ptls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"runtime"
	"slices"
)

// stdBackend is Go's crypto/tls.
type stdBackend struct {
	base *tls.Config
}

func newStdBackend(id *Identity, s backendSettings) *stdBackend {
	return &stdBackend{base: &tls.Config{
		MinVersion: tls.VersionTLS13,
		// Not insecure: the peer's certificate is self-signed by design and
		// VerifyPeerCertificate checks it as the libp2p spec says.
		InsecureSkipVerify: true,
		ClientAuth:         tls.RequireAnyClientCert,
		Certificates: []tls.Certificate{{
			Certificate: id.chain,
			PrivateKey:  id.signer,
		}},
		CurvePreferences:       s.groups,
		SessionTicketsDisabled: true,
	}}
}

func (b *stdBackend) handshake(ctx context.Context, insecure net.Conn, spec handshakeSpec) (tlsConn, error) {
	conf := b.base.Clone()
	conf.NextProtos = spec.protos
	conf.VerifyPeerCertificate = func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
		return spec.verify(rawCerts)
	}
	var c *tls.Conn
	if spec.server {
		// crypto/tls picks the server's preference; libp2p wants the client's.
		conf.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			for _, p := range hello.SupportedProtos {
				if slices.Contains(spec.protos, p) {
					conf.NextProtos = []string{p}
					break
				}
			}
			return conf, nil
		}
		c = tls.Server(insecure, conf)
	} else {
		c = tls.Client(insecure, conf)
	}
	if err := c.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return stdConn{c}, nil
}

type stdConn struct{ *tls.Conn }

func (c stdConn) details() Details {
	st := c.ConnectionState()
	return Details{
		Backend:     BackendStd,
		Version:     st.Version,
		CipherSuite: st.CipherSuite,
		Group:       st.CurveID,
		// crypto/tls does not report the peer's signature scheme; with
		// libp2p's ECDSA P-256 certificates in TLS 1.3 it can only be
		// ecdsa_secp256r1_sha256, which the OpenSSL backend confirms.
		ALPN:    st.NegotiatedProtocol,
		Library: "Go crypto/tls " + runtime.Version(),
	}
}
