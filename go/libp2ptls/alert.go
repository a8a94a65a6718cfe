package libp2ptls

import (
	"crypto/tls"
	"errors"
	"net"
)

// remoteAlerter is an error that knows whether it is an alert the peer sent:
// the OpenSSL backend's errors are, and this file need not import it.
type remoteAlerter interface {
	RemoteAlert() (alert uint8, ok bool)
}

// ReceivedAlert reports the TLS alert the peer sent, if err says one came.
// It reads errors from both backends.
func ReceivedAlert(err error) (alert uint8, ok bool) {
	var ra remoteAlerter
	if errors.As(err, &ra) {
		if a, ok := ra.RemoteAlert(); ok {
			return a, true
		}
	}
	// crypto/tls reports a received alert as an OpError "remote error"
	// around an unexported alert type whose text matches tls.AlertError's.
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "remote error" && oe.Err != nil {
		text := oe.Err.Error()
		for a := 0; a < 256; a++ {
			if tls.AlertError(a).Error() == text {
				return uint8(a), true
			}
		}
	}
	return 0, false
}

// TLS alert numbers the tests and tools refer to (RFC 8446, section 6).
const (
	AlertHandshakeFailure      uint8 = 40
	AlertBadCertificate        uint8 = 42
	AlertDecryptError          uint8 = 51
	AlertProtocolVersion       uint8 = 70
	AlertCertificateRequired   uint8 = 116
	AlertNoApplicationProtocol uint8 = 120
)
