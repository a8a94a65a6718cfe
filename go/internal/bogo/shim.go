package bogo

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"time"
)

const (
	// connectionLimit bounds one connection; the runner's own idle timeout (15 s) is shorter,
	// so the runner kills a shim that waits before this bites. It bounds a shim run by hand.
	connectionLimit = 30 * time.Second
	// drainLimit bounds the wait for the runner to close its side at the end.
	drainLimit = 5 * time.Second
	// readSize is how much BoringSSL's shim reads at a time; reading as little makes records
	// arrive split across reads, as the runner's tests expect.
	readSize = 512
)

// Config is the crypto/tls configuration the flags describe, shared by every connection of
// a test so that the second resumes the first. Where a test says nothing, crypto/tls runs its
// defaults, except that it offers every TLS 1.2 suite it has (BoringSSL's shim enables "ALL")
// and accepts any peer chain (BoringSSL's shim's verify callback accepts any); the peer's
// handshake signature is still checked.
func (f *Flags) Config() (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		MaxVersion:         tls.VersionTLS13,
		InsecureSkipVerify: true,
		ServerName:         f.HostName,
		CurvePreferences:   f.Curves,
	}
	if f.MinVersion != 0 {
		cfg.MinVersion = f.MinVersion
	}
	if f.MaxVersion != 0 {
		cfg.MaxVersion = f.MaxVersion
	}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		cfg.CipherSuites = append(cfg.CipherSuites, s.ID)
	}
	var own *tls.Certificate
	if f.KeyFile != "" {
		c, err := tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("the test's credential: %w", err)
		}
		own = &c
	}
	if f.Server {
		if own == nil {
			return nil, errors.New("a server test without -key-file")
		}
		cfg.Certificates = []tls.Certificate{*own}
		if f.SelectALPN != "" {
			cfg.NextProtos = []string{f.SelectALPN}
		}
		// BoringSSL's shim: -verify-peer asks for a certificate and overrides
		// -require-any-client-certificate, which alone makes one mandatory.
		switch {
		case f.VerifyPeer:
			cfg.ClientAuth = tls.RequestClientCert
		case f.RequireClientCert:
			cfg.ClientAuth = tls.RequireAnyClientCert
		}
		return cfg, nil
	}
	names, err := alpnNames(f.AdvertiseALPN)
	if err != nil {
		return nil, err
	}
	cfg.NextProtos = names
	cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	if own != nil {
		// Sent whenever asked, as BoringSSL's shim sends its certificate. Given in
		// Config.Certificates instead, crypto/tls would hold it back when the request's
		// certificate_authorities do not name its issuer (TLS12-Client-ClientAuth-ECDSA
		// then fails), which BoringSSL leaves to the application.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return own, nil
		}
	}
	return cfg, nil
}

// Run plays the test: one connection, then ResumeCount more, each checked as BoringSSL's
// shim checks it. The error is the test's failure (or *Unimplemented).
func Run(f *Flags) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	for n := 0; n <= f.ResumeCount; n++ {
		raw, err := connectBack(f)
		if err != nil {
			return err
		}
		if err := raw.SetDeadline(time.Now().Add(connectionLimit)); err != nil {
			raw.Close()
			return err
		}
		var c *tls.Conn
		if f.Server {
			c = tls.Server(raw, cfg)
		} else {
			c = tls.Client(raw, cfg)
		}
		// crypto/tls sends the alert for a failed handshake before Handshake returns.
		err = c.Handshake()
		if err != nil {
			err = fmt.Errorf("connection %d handshake: %w", n+1, err)
		} else if err = f.check(c.ConnectionState(), n > 0); err == nil {
			err = f.exchange(c)
		}
		drain(raw)
		if err != nil {
			return err
		}
	}
	return nil
}

// connectBack connects to the runner and says which test this process serves.
func connectBack(f *Flags) (*net.TCPConn, error) {
	host := "127.0.0.1"
	if f.IPv6 {
		host = "::1"
	}
	addr := net.JoinHostPort(host, strconv.Itoa(int(f.Port)))
	c, err := net.DialTimeout("tcp", addr, connectionLimit)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the runner at %s: %w", addr, err)
	}
	tcp := c.(*net.TCPConn)
	if _, err := tcp.Write(binary.LittleEndian.AppendUint64(nil, f.ShimID)); err != nil {
		tcp.Close()
		return nil, err
	}
	return tcp, nil
}

// check holds the connection to what the flags expect, as BoringSSL's shim does.
func (f *Flags) check(st tls.ConnectionState, resumable bool) error {
	if f.ExpectVersion != 0 && st.Version != f.ExpectVersion {
		return fmt.Errorf("want version %04x, got %04x", f.ExpectVersion, st.Version)
	}
	if f.ExpectCurveID != 0 && st.CurveID != f.ExpectCurveID {
		return fmt.Errorf("want group %d, got %d", f.ExpectCurveID, st.CurveID)
	}
	if want := resumable && !f.ExpectSessionMiss; st.DidResume != want {
		return fmt.Errorf("session unexpectedly was%s reused", map[bool]string{true: "", false: " not"}[st.DidResume])
	}
	if f.ExpectALPN != "" && st.NegotiatedProtocol != f.ExpectALPN {
		return fmt.Errorf("want ALPN %q, got %q", f.ExpectALPN, st.NegotiatedProtocol)
	}
	if f.ExpectServerName != "" && st.ServerName != f.ExpectServerName {
		return fmt.Errorf("want server name %q, got %q", f.ExpectServerName, st.ServerName)
	}
	return nil
}

// exchange is the data phase: optionally write "hello" first, then echo every read back
// with each byte flipped until the runner ends the stream, and close as BoringSSL's shim does.
func (f *Flags) exchange(c *tls.Conn) error {
	if f.ShimWritesFirst {
		if _, err := c.Write([]byte("hello")); err != nil {
			return err
		}
	}
	buf := make([]byte, readSize)
	var clean bool
	for {
		n, err := c.Read(buf)
		if n > 0 {
			flipped := slices.Clone(buf[:n])
			for i := range flipped {
				flipped[i] ^= 0xff
			}
			if _, err := c.Write(flipped); err != nil {
				return err
			}
		}
		if err == io.EOF { // close_notify
			clean = true
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) { // the stream ended without one
			break
		}
		if err != nil {
			return err
		}
	}
	if f.CheckCloseNotify {
		if !clean {
			return errors.New("the runner's stream ended without close_notify")
		}
		return c.CloseWrite()
	}
	return nil
}

// drain ends the connection without a reset that would destroy alerts still in flight:
// shut down writing, then read until the runner closes its side (or the limit).
func drain(raw *net.TCPConn) {
	_ = raw.CloseWrite()
	_ = raw.SetReadDeadline(time.Now().Add(drainLimit))
	_, _ = io.Copy(io.Discard, raw)
	raw.Close()
}
