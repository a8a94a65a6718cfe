package bench

import (
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"runtime"
	"runtime/debug"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"
	upstream "github.com/libp2p/go-libp2p/p2p/security/tls"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

// Group is pinned on every side. crypto/tls offers X25519MLKEM768 first by
// default and the system OpenSSL 3.0 has no ML-KEM; upstream go-libp2p has
// no option for it, so the programs that run it set GODEBUG tlsmlkem=0
// (a //go:debug line), and every handshake is checked.
const Group = tls.X25519

// The tlsmatrix impl names of the transports: this module's transport on
// each backend (the names the interop matrix uses) and go-libp2p's own
// p2p/security/tls, the reference a drop-in replacement is held to.
const (
	UpstreamName = "go-libp2p-upstream"
	StdName      = "go-libp2p-std"
)

// OpenSSLName is the OpenSSL backend's impl name: go-libp2p-openssl on the
// system libssl, go-libp2p-openssl-3.6 (say) when built against a vendored
// release, go-libp2p-boringssl on BoringSSL, so results from different
// libraries never share a name.
var OpenSSLName = opensslName(libp2ptls.OpenSSLBuild())

func opensslName(build string) string {
	switch build {
	case "":
		return "go-libp2p-openssl"
	case "boringssl":
		return "go-libp2p-boringssl"
	}
	return "go-libp2p-openssl-" + build
}

// Transport is one side's libp2p security transport, with a fresh Ed25519
// host key.
type Transport struct {
	Name    string
	Version string
	sec     sec.SecureTransport
	id      peer.ID
}

// NewTransport makes the transport named by one of the impl names above.
func NewTransport(name string) (*Transport, error) {
	key, _, err := ic.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, err
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, err
	}
	t := &Transport{Name: name, id: id}
	switch name {
	case UpstreamName:
		t.sec, err = upstream.New(upstream.ID, key, nil)
		t.Version = fmt.Sprintf("go-libp2p %s (%s)", moduleVersion("github.com/libp2p/go-libp2p"), runtime.Version())
	case StdName:
		t.sec, err = libp2ptls.New(libp2ptls.ID, key, nil, libp2ptls.WithBackend(libp2ptls.BackendStd), libp2ptls.WithGroups(Group))
		t.Version = runtime.Version()
	case OpenSSLName:
		t.sec, err = libp2ptls.New(libp2ptls.ID, key, nil, libp2ptls.WithBackend(libp2ptls.BackendOpenSSL), libp2ptls.WithGroups(Group))
		t.Version = libp2ptls.OpenSSLVersion()
	default:
		return nil, fmt.Errorf("unknown transport %q (valid: %s, %s, %s)", name, UpstreamName, StdName, OpenSSLName)
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
