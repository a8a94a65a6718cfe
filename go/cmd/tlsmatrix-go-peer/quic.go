package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/tlsmatrix/tlsmatrix/go/internal/tlsconf"
)

// The QUIC cases speak hq-interop as the drivers' QUIC peers do
// (crates/harness/src/quic_stream.rs): the client opens one stream, sends
// "GET /N" and ends it; the server answers N bytes of a pattern and ends its
// side; the client checks every byte and closes the connection.
const (
	maxRequest = 1024    // the longest request line a server reads
	maxAnswer  = 1 << 30 // the largest /N a server answers
)

// answerByte is the byte at offset of every answer.
func answerByte(offset int) byte { return byte(offset % 251) }

// quicConfig is quic-go's configuration for a case: its defaults, with the
// handshake bounded by the case's deadline.
func quicConfig(deadline time.Time) *quic.Config {
	return &quic.Config{HandshakeIdleTimeout: time.Until(deadline), MaxIdleTimeout: time.Until(deadline)}
}

// checkQUIC holds connection i (from 0) of a case to QUIC version 1 and the case's offer.
func checkQUIC(c *quic.Conn, o offer, i int) (tls.ConnectionState, error) {
	st := c.ConnectionState()
	if st.Version != quic.Version1 {
		return st.TLS, fmt.Errorf("QUIC version %v, but the case asks for version 1", st.Version)
	}
	return st.TLS, o.check(st.TLS, i)
}

// quicLine says what a QUIC connection negotiated, as the drivers' QUIC peers do.
func quicLine(st tls.ConnectionState) string {
	resumed := ""
	if st.DidResume {
		resumed = " resumed"
	}
	return fmt.Sprintf("QUIC v1 %s %s %s%s; ALPN %s; quic-go %s",
		tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), st.CurveID, resumed, st.NegotiatedProtocol, quicGoVersion())
}

// quicServer serves the case's hq-interop clients on one UDP port, one after
// another (two when the second must resume the first by its ticket, which
// crypto/tls under quic-go issues by default).
func quicServer(listen string, o offer, certDir string, deadline time.Time) (string, error) {
	if o.requireClientCert {
		return "", errors.New("the QUIC cases have no client certificates")
	}
	cert, err := tlsconf.LoadCert(certDir, tlsconf.ChainFile(1), tlsconf.KeyFile)
	if err != nil {
		return "", err
	}
	cfg := o.Config()
	cfg.Certificates = []tls.Certificate{cert}
	addr, err := net.ResolveUDPAddr("udp", listen)
	if err != nil {
		return "", err
	}
	udp, err := net.ListenUDP("udp", addr)
	if err != nil {
		return "", err
	}
	tr := &quic.Transport{Conn: udp}
	defer tr.Close()
	ln, err := tr.Listen(cfg, quicConfig(deadline))
	if err != nil {
		return "", err
	}
	fmt.Printf("listening %s\n", udp.LocalAddr())
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	return each(o, func(i int) (string, error) { return serveQUIC(ctx, ln, o, i) })
}

// serveQUIC serves connection i of the case: it answers the client's request,
// then waits for the client to close the connection (bounded by the deadline),
// so that the answer is not cut short.
func serveQUIC(ctx context.Context, ln *quic.Listener, o offer, i int) (string, error) {
	c, err := ln.Accept(ctx)
	if err != nil {
		return "", fmt.Errorf("no client completed a handshake: %w", err)
	}
	st, err := checkQUIC(c, o, i)
	if err != nil {
		c.CloseWithError(0, err.Error())
		return "", err
	}
	n, err := answerOne(ctx, c)
	if err != nil {
		c.CloseWithError(0, err.Error())
		return "", err
	}
	// The client checks the answer; the server stays to resend what may be lost until the
	// client closes the connection, or for a while if it leaves without a word (as the
	// drivers' clients do: they linger, then go).
	linger := time.NewTimer(answerLinger)
	defer linger.Stop()
	ending := "the client closed the connection"
	select {
	case <-c.Context().Done():
	case <-linger.C:
		ending = "the client left without closing the connection"
	case <-ctx.Done():
		ending = "the case's time ran out before the client closed the connection"
	}
	c.CloseWithError(0, "")
	return fmt.Sprintf("%s; answered /%d; %s", quicLine(st), n, ending), nil
}

// answerLinger is how long a server stays once its answer is sent: many round trips of
// loopback, for a retransmission the client may still need.
const answerLinger = time.Second

// answerOne reads one request on the client's stream and answers it.
func answerOne(ctx context.Context, c *quic.Conn) (int, error) {
	str, err := c.AcceptStream(ctx)
	if err != nil {
		return 0, fmt.Errorf("no request stream: %w", err)
	}
	line, err := bufio.NewReaderSize(io.LimitReader(str, maxRequest), maxRequest).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("reading the request: %w", err)
	}
	n, err := parseRequest(line)
	if err != nil {
		str.CancelWrite(0)
		return 0, err
	}
	buf := make([]byte, 64<<10)
	for sent := 0; sent < n; {
		k := min(len(buf), n-sent)
		for i := range k {
			buf[i] = answerByte(sent + i)
		}
		if _, err := str.Write(buf[:k]); err != nil {
			return 0, fmt.Errorf("after %d of %d answer bytes: %w", sent, n, err)
		}
		sent += k
	}
	return n, str.Close()
}

// parseRequest is the N of "GET /N", ended by CRLF or the stream's end.
func parseRequest(line string) (int, error) {
	text := strings.TrimRight(line, "\r\n")
	path, ok := strings.CutPrefix(text, "GET /")
	if !ok {
		return 0, fmt.Errorf("the request %q is not GET /N", text)
	}
	n, err := strconv.Atoi(path)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("the path /%s is not a number of bytes", path)
	}
	if n > maxAnswer {
		return 0, fmt.Errorf("/%d asks for more than %d bytes", n, maxAnswer)
	}
	return n, nil
}

// quicClient asks the server for n bytes over hq-interop and checks them, on
// each of the case's connections: the second, when there is one, resumes the
// first by the ticket kept in the configuration's session cache.
func quicClient(addr string, o offer, certDir string, n int, deadline time.Time) (string, error) {
	if o.clientCert {
		return "", errors.New("the QUIC cases have no client certificates")
	}
	roots, err := tlsconf.LoadRoots(certDir)
	if err != nil {
		return "", err
	}
	cfg := o.Config()
	cfg.RootCAs = roots
	cfg.ServerName = "localhost"
	if o.resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	}
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return "", err
	}
	return each(o, func(i int) (string, error) { return downloadQUIC(raddr, cfg, o, i, n, deadline) })
}

// downloadQUIC is connection i of the case: a new UDP port, the handshake
// checked, and n bytes asked for and checked.
func downloadQUIC(raddr *net.UDPAddr, cfg *tls.Config, o offer, i, n int, deadline time.Time) (string, error) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: raddr.IP, Port: 0})
	if err != nil {
		return "", err
	}
	tr := &quic.Transport{Conn: udp}
	defer tr.Close()
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	c, err := tr.Dial(ctx, raddr, cfg, quicConfig(deadline))
	if err != nil {
		return "", err
	}
	defer c.CloseWithError(0, "")
	st, err := checkQUIC(c, o, i)
	if err != nil {
		return "", err
	}
	str, err := c.OpenStreamSync(ctx)
	if err != nil {
		return "", err
	}
	if _, err := fmt.Fprintf(str, "GET /%d\r\n", n); err != nil {
		return "", err
	}
	if err := str.Close(); err != nil {
		return "", err
	}
	if err := str.SetReadDeadline(deadline); err != nil {
		return "", err
	}
	got, buf := 0, make([]byte, 64<<10)
	for {
		k, err := str.Read(buf)
		for i := range k {
			if buf[i] != answerByte(got+i) {
				return "", fmt.Errorf("the answer differs from the pattern at byte %d", got+i)
			}
		}
		got += k
		if got > n {
			return "", fmt.Errorf("the answer runs past the %d bytes asked for", n)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("after %d of %d answer bytes: %w", got, n, err)
		}
	}
	if got != n {
		return "", fmt.Errorf("the answer ended after %d of %d bytes", got, n)
	}
	return fmt.Sprintf("%s; read /%d whole", quicLine(st), n), nil
}
