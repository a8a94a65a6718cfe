package bench

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	tptu "github.com/libp2p/go-libp2p/p2p/net/upgrader"
	upstream "github.com/libp2p/go-libp2p/p2p/security/tls"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

// Groups are the key exchanges the handshake workloads run with, each pinned
// on every side and checked on every handshake: X25519, which every libssl
// has, and X25519MLKEM768, crypto/tls's default first choice (OpenSSL 3.5+
// and BoringSSL have it; the system OpenSSL 3.0 does not).
var Groups = []tls.CurveID{tls.X25519, tls.X25519MLKEM768}

// Hybrids are the other two hybrid groups crypto/tls and OpenSSL 3.5+ offer,
// which the new-peers workload runs with too (pairedbench --new-peer-groups).
// Upstream go-libp2p cannot be made to negotiate either, so they have no
// reference arm: each backend's figures stand beside the other's.
var Hybrids = []tls.CurveID{tls.SecP256r1MLKEM768, tls.SecP384r1MLKEM1024}

// ErrUnsupported marks a transport that cannot run a group at all: its
// cell is unsupported, not failed.
var ErrUnsupported = errors.New("unsupported")

// offer is what this module's backends offer to negotiate group: X25519
// alone, or X25519MLKEM768 with X25519 after it, which is what crypto/tls
// (and so upstream go-libp2p) offers by default, key shares for both
// included; pinning ML-KEM alone would spare our client the X25519 share
// upstream's client sends, and the comparison would not be like for like.
// The other hybrids (Hybrids) have no upstream arm to match: alone.
func offer(group tls.CurveID) []tls.CurveID {
	if group == tls.X25519MLKEM768 {
		return []tls.CurveID{tls.X25519MLKEM768, tls.X25519}
	}
	return []tls.CurveID{group}
}

// upstreamOffers makes upstream go-libp2p, which cannot be told which groups
// to offer, negotiate group: crypto/tls offers X25519MLKEM768 first unless
// GODEBUG tlsmlkem=0, which it reads at each handshake. The setting is the
// process's, so workloads of different groups must not run at the same time.
func upstreamOffers(group tls.CurveID) error {
	switch group {
	case tls.X25519:
		return setGODEBUG("tlsmlkem", "0")
	case tls.X25519MLKEM768:
		return setGODEBUG("tlsmlkem", "1")
	}
	return fmt.Errorf("%w: upstream go-libp2p cannot be made to negotiate %v (crypto/tls sends key shares for X25519MLKEM768 and X25519 only, and go-libp2p takes no group setting)", ErrUnsupported, group)
}

// setGODEBUG sets one GODEBUG setting, keeping the others the user set.
func setGODEBUG(key, value string) error {
	var kept []string
	for kv := range strings.SplitSeq(os.Getenv("GODEBUG"), ",") {
		if kv != "" && !strings.HasPrefix(kv, key+"=") {
			kept = append(kept, kv)
		}
	}
	return os.Setenv("GODEBUG", strings.Join(append(kept, key+"="+value), ","))
}

// The tlsmatrix impl names of the transports: this module's transport on
// each backend (the names the interop matrix uses) and go-libp2p's own
// p2p/security/tls, the reference a drop-in replacement is held to.
const (
	UpstreamName = "go-libp2p-upstream"
	// UpstreamSpecName is upstream's transport with the certificate
	// self-signature check the spec requires and upstream skips
	// (specReference): what the std backend does, like for like.
	UpstreamSpecName = "go-libp2p-upstream-selfsig"
	StdName          = "go-libp2p-std"
	// QUICName is go-libp2p's QUIC transport (p2p/transport/quic on
	// quic-go, TLS from crypto/tls): the dial workload's only arm that is
	// not TCP + a security transport + yamux.
	QUICName = "go-libp2p-quic"
)

// OpenSSLName is the OpenSSL backend's impl name: go-libp2p-openssl on the
// system libssl, go-libp2p-openssl-3.6 (say) when built against a vendored
// release, go-libp2p-boringssl on BoringSSL, go-libp2p-aws-lc on AWS-LC, so results from different
// libraries never share a name.
var OpenSSLName = opensslName(libp2ptls.OpenSSLBuild())

func opensslName(build string) string {
	switch build {
	case "":
		return "go-libp2p-openssl"
	case "boringssl", "aws-lc":
		return "go-libp2p-" + build
	}
	return "go-libp2p-openssl-" + build
}

// Transport is one side's libp2p security transport, with a fresh Ed25519
// host key.
type Transport struct {
	Name    string
	Version string
	Group   tls.CurveID         // what it offers first and must negotiate
	sec     sec.SecureTransport // nil for QUICName, whose TLS is quic-go's
	key     ic.PrivKey
	id      peer.ID
}

// NewTransport makes the transport named by one of the impl names above,
// offering group (see offer and upstreamOffers).
func NewTransport(name string, group tls.CurveID) (*Transport, error) {
	return newTransport(name, group, nil)
}

// newTransport is NewTransport offering muxers in the handshake's ALPN
// (early muxer negotiation), as a go-libp2p host's security transports do.
func newTransport(name string, group tls.CurveID, muxers []tptu.StreamMuxer) (*Transport, error) {
	key, _, err := ic.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, err
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, err
	}
	t := &Transport{Name: name, Group: group, key: key, id: id}
	switch name {
	case UpstreamName:
		if err = upstreamOffers(group); err == nil {
			t.sec, err = upstream.New(upstream.ID, key, muxers)
		}
		t.Version = fmt.Sprintf("go-libp2p %s (%s)", moduleVersion("github.com/libp2p/go-libp2p"), runtime.Version())
	case QUICName:
		err = upstreamOffers(group) // quic-go's TLS is crypto/tls, which GODEBUG steers as upstream's
		t.Version = fmt.Sprintf("go-libp2p %s, quic-go %s (%s)", moduleVersion("github.com/libp2p/go-libp2p"),
			moduleVersion("github.com/quic-go/quic-go"), runtime.Version())
	case UpstreamSpecName:
		if err = upstreamOffers(group); err == nil {
			t.sec, err = newSpecReference(key, id)
		}
		t.Version = fmt.Sprintf("go-libp2p %s (%s) + self-signature check", moduleVersion("github.com/libp2p/go-libp2p"), runtime.Version())
	case StdName:
		t.sec, err = libp2ptls.New(libp2ptls.ID, key, muxers, libp2ptls.WithBackend(libp2ptls.BackendStd), libp2ptls.WithGroups(offer(group)...))
		t.Version = runtime.Version()
	case OpenSSLName:
		if !libp2ptls.OpenSSLCompiledIn {
			return nil, fmt.Errorf("%w: %w", ErrUnsupported, libp2ptls.ErrOpenSSLNotCompiledIn)
		}
		t.Version = libp2ptls.OpenSSLVersion()
		if group != tls.X25519 && !libp2ptls.OpenSSLHasGroup(group) {
			return nil, fmt.Errorf("%w: %s has no %v", ErrUnsupported, t.Version, group)
		}
		t.sec, err = libp2ptls.New(libp2ptls.ID, key, muxers, libp2ptls.WithBackend(libp2ptls.BackendOpenSSL), libp2ptls.WithGroups(offer(group)...))
	default:
		return nil, fmt.Errorf("unknown transport %q (valid: %s, %s, %s, %s, %s)", name, UpstreamName, UpstreamSpecName, StdName, OpenSSLName, QUICName)
	}
	if errors.Is(err, ErrUnsupported) {
		return nil, err // the arm's row names the transport; the reason is the rest
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// moduleVersion is the version of a module linked into this binary, as the
// go.sum pins it.
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == path {
				return m.Version
			}
		}
	}
	return "unknown"
}
