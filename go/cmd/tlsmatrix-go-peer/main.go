// Command tlsmatrix-go-peer is Go's crypto/tls as a tlsmatrix interop peer. It speaks the harness's
// protocol: a server prints "listening ADDR" and echoes until close_notify; a client sends
// the payload write by write, checks each echo, and closes with close_notify. Both end with
// one line, "ok: ..." (exit 0) or "error: ..." (exit 1). The harness passes the case's offer
// as flags, so the cases are defined once, in tlsmatrix.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/tlsconf"
)

// offer is what this peer offers in the case: the pinned parameters, and the case's
// mutual TLS and resumption.
type offer struct {
	tlsconf.Offer
	// Mutual TLS.
	requireClientCert bool
	clientCert        bool
	// Ticket resumption: the client connects twice and the second connection must resume.
	// crypto/tls resumes with tickets only; it has no session-id cache.
	resume bool
}

// connections is how many connections the case makes: two when the second must resume.
func (o offer) connections() int {
	if o.resume {
		return 2
	}
	return 1
}

// check holds connection i (from 0) to the offer; only a second connection resumes.
func (o offer) check(st tls.ConnectionState, i int) error {
	return o.Check(st, i > 0)
}

// payload is the harness's: printable 64-byte lines.
func payload(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		if i%64 == 63 {
			p[i] = '\n'
		} else {
			p[i] = byte('!' + (i*7+i/64)%90)
		}
	}
	return p
}

func reversedLines(b []byte) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		body := bytes.TrimSuffix(line, []byte("\n"))
		for i := len(body) - 1; i >= 0; i-- {
			out = append(out, body[i])
		}
		if len(body) < len(line) {
			out = append(out, '\n')
		}
	}
	return out
}

func summary(st tls.ConnectionState, n int, sum uint64) string {
	resumed := ""
	if st.DidResume {
		resumed = " resumed"
	}
	return fmt.Sprintf("%s %s %s%s; %d bytes echoed, checksum %016x",
		tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), st.CurveID, resumed, n, sum)
}

// each runs one() for every connection of the offer and joins their summaries.
func each(o offer, one func(i int) (string, error)) (string, error) {
	var out []string
	for i := range o.connections() {
		s, err := one(i)
		if err != nil {
			if o.connections() > 1 {
				err = fmt.Errorf("connection %d of %d: %w", i+1, o.connections(), err)
			}
			return "", err
		}
		out = append(out, s)
	}
	return strings.Join(out, "; then "), nil
}

// serveDefaults is a server for outside test tools (testssl.sh, tlsfuzzer, openssl
// s_time): crypto/tls on its own defaults (TLS 1.2 and 1.3, every suite, group and
// signature scheme it enables by default, tickets) with only the certificate set, serving
// connections one after another (0: until killed), a line each; a connection that fails is
// reported and the next is served. It answers as respond says: echo, or one HTTP/1.1 GET.
func serveDefaults(listen, certDir string, connections int, respond string, perConnection time.Duration) (string, error) {
	cert, err := tlsconf.LoadCert(certDir, tlsconf.ChainFile(1), tlsconf.KeyFile)
	if err != nil {
		return "", err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", err
	}
	fmt.Printf("listening %s\n", ln.Addr())
	failed, served := 0, 0
	for ; connections == 0 || served < connections; served++ {
		raw, err := ln.Accept()
		if err != nil {
			return "", err
		}
		raw.SetDeadline(time.Now().Add(perConnection))
		line, err := answer(tls.Server(raw, cfg), respond)
		raw.Close()
		if err != nil {
			failed++
			fmt.Printf("connection %d: error: %v\n", served+1, err)
			continue
		}
		fmt.Printf("connection %d: ok: %s\n", served+1, line)
	}
	if failed > 0 {
		return "", fmt.Errorf("%d of %d connection(s) failed", failed, served)
	}
	return fmt.Sprintf("served %d connection(s)", served), nil
}

// dialDefaults is a client on crypto/tls's own defaults (every version, suite, group and
// scheme it offers by default) with only the test CA set: what Go offers a server it has
// never seen, which tlsmatrix interop reads from its ClientHello.
func dialDefaults(addr, certDir string, deadline time.Time) (string, error) {
	roots, err := tlsconf.LoadRoots(certDir)
	if err != nil {
		return "", err
	}
	raw, err := net.DialTimeout("tcp", addr, time.Until(deadline))
	if err != nil {
		return "", err
	}
	defer raw.Close()
	raw.SetDeadline(deadline)
	conn := tls.Client(raw, &tls.Config{RootCAs: roots, ServerName: "localhost"})
	if err := conn.Handshake(); err != nil {
		return "", err
	}
	st := conn.ConnectionState()
	return fmt.Sprintf("%s %s %s", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), st.CurveID), nil
}

// answer completes one defaults connection's handshake and echoes until the client closes,
// or answers one HTTP/1.1 request; it says what was negotiated.
func answer(conn *tls.Conn, respond string) (string, error) {
	if err := conn.Handshake(); err != nil {
		return "", err
	}
	st := conn.ConnectionState()
	if respond == "http" {
		req, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("no HTTP request line: %w", err)
		}
		body := fmt.Sprintf("tlsmatrix-go-peer: %s %s %s\n", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), st.CurveID)
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		conn.Close()
		return fmt.Sprintf("%s %s %s; answered %s", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), st.CurveID, strings.TrimSpace(req)), nil
	}
	n, sum, _, err := echoUntilClosed(conn, -1)
	if err != nil {
		return "", err
	}
	conn.Close()
	return summary(st, n, sum), nil
}

// echoUntilClosed sends back what the client sends until its close_notify,
// or until stopAfter bytes (negative: no limit), when dropped is true; it
// returns the bytes echoed and their checksum.
func echoUntilClosed(conn *tls.Conn, stopAfter int) (echoed int, sum uint64, dropped bool, err error) {
	h := fnv.New64a()
	buf := make([]byte, 64<<10)
	for {
		if stopAfter >= 0 && echoed >= stopAfter {
			return echoed, h.Sum64(), true, nil
		}
		n, err := conn.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			if _, werr := conn.Write(buf[:n]); werr != nil {
				return echoed, 0, false, werr
			}
			echoed += n
		}
		if errors.Is(err, io.EOF) {
			return echoed, h.Sum64(), false, nil
		}
		if err != nil {
			return echoed, 0, false, err
		}
	}
}

func server(listen string, o offer, certDir string, drop bool, bytesToEcho int, deadline time.Time) (string, error) {
	cert, err := tlsconf.LoadCert(certDir, tlsconf.ChainFile(1), tlsconf.KeyFile)
	if err != nil {
		return "", err
	}
	cfg := o.Config()
	cfg.Certificates = []tls.Certificate{cert}
	if o.requireClientCert {
		roots, err := tlsconf.LoadRoots(certDir)
		if err != nil {
			return "", err
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = roots
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", err
	}
	fmt.Printf("listening %s\n", ln.Addr())
	ln.(*net.TCPListener).SetDeadline(deadline)
	return each(o, func(i int) (string, error) {
		return serveOne(ln, cfg, o, i, drop, bytesToEcho, deadline)
	})
}

// handshake completes conn's handshake and holds connection i to the offer.
func handshake(conn *tls.Conn, o offer, i int) (tls.ConnectionState, error) {
	if err := conn.Handshake(); err != nil {
		return tls.ConnectionState{}, err
	}
	st := conn.ConnectionState()
	return st, o.check(st, i)
}

func serveOne(ln net.Listener, cfg *tls.Config, o offer, i int, drop bool, bytesToEcho int, deadline time.Time) (string, error) {
	raw, err := ln.Accept()
	if err != nil {
		return "", fmt.Errorf("timed out: no client connected (%v)", err)
	}
	raw.SetDeadline(deadline)
	conn := tls.Server(raw, cfg)
	st, err := handshake(conn, o, i)
	if err != nil {
		return "", err
	}
	stopAfter := -1
	if drop {
		stopAfter = bytesToEcho
	}
	echoed, sum, dropped, err := echoUntilClosed(conn, stopAfter)
	if err != nil {
		return "", err
	}
	if dropped {
		raw.Close()
		return "dropped the connection without close_notify, as the case asks", nil
	}
	if err := conn.Close(); err != nil {
		return "", err
	}
	return summary(st, echoed, sum), nil
}

func client(addr string, o offer, certDir, echo string, n, writeSize int, truncation bool, deadline time.Time) (string, error) {
	roots, err := tlsconf.LoadRoots(certDir)
	if err != nil {
		return "", err
	}
	cfg := o.Config()
	cfg.RootCAs = roots
	if o.clientCert {
		c, err := tlsconf.LoadCert(certDir, tlsconf.ClientFile, tlsconf.ClientKeyFile)
		if err != nil {
			return "", err
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	cfg.ServerName = "localhost"
	if o.resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	}
	return each(o, func(i int) (string, error) {
		return connectOne(addr, cfg, o, i, echo, n, writeSize, truncation, deadline)
	})
}

func connectOne(addr string, cfg *tls.Config, o offer, i int, echo string, n, writeSize int, truncation bool, deadline time.Time) (string, error) {
	raw, err := net.DialTimeout("tcp", addr, time.Until(deadline))
	if err != nil {
		return "", err
	}
	raw.SetDeadline(deadline)
	conn := tls.Client(raw, cfg)
	st, err := handshake(conn, o, i)
	if err != nil {
		return "", err
	}
	if n == 0 {
		// Nothing to send: hear the server out first. In TLS 1.3 a server refuses a client
		// certificate only after the client has finished its handshake.
		if _, err := conn.Read(make([]byte, 1024)); err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
	}
	data := payload(n)
	want := data
	if echo == "reversed-lines" {
		want = reversedLines(data)
	}
	h := fnv.New64a()
	buf := make([]byte, 64<<10)
	for sent := 0; sent < len(data); {
		end := min(sent+writeSize, len(data))
		if _, err := conn.Write(data[sent:end]); err != nil {
			return "", err
		}
		for got := sent; got < end; {
			k, err := conn.Read(buf[:min(len(buf), end-got)])
			if k > 0 {
				if !bytes.Equal(buf[:k], want[got:got+k]) {
					return "", fmt.Errorf("the echo differs from what was sent at byte %d", got)
				}
				h.Write(buf[:k])
				got += k
			}
			if err != nil {
				return "", fmt.Errorf("after %d of %d echoed bytes: %w", got, end, err)
			}
		}
		sent = end
	}
	if truncation {
		_, err := conn.Read(buf)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return "", errors.New("the server closed the connection without close_notify (truncation detected)")
		case errors.Is(err, io.EOF):
			// crypto/tls deliberately reports EOF at a record boundary as a clean end.
			return "crypto/tls reported a clean end of stream (it accepts EOF at a record boundary without close_notify)", nil
		default:
			return "", err
		}
	}
	if err := conn.CloseWrite(); err != nil {
		return "", err
	}
	if _, err := conn.Read(buf); !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("waiting for the server's close_notify: %v", err)
	}
	return summary(st, n, h.Sum64()), nil
}

// quicGoVersion is the quic-go release linked in, as go.sum pins it.
func quicGoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "github.com/quic-go/quic-go" {
				return m.Version
			}
		}
	}
	return "unknown"
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "version" {
		fmt.Printf("Go %s crypto/tls\n", runtime.Version())
		return
	}
	if len(os.Args) < 2 || (os.Args[1] != "server" && os.Args[1] != "client") {
		fmt.Fprintln(os.Stderr, "usage: tlsmatrix-go-peer server|client [flags]; -h for the flags")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	listen := fs.String("listen", "127.0.0.1:0", "server: address to listen on")
	connect := fs.String("connect", "", "client: the server's address")
	version := fs.String("version", "tls13", "tls12 or tls13")
	cipher := fs.String("cipher", "aes-128-gcm", "aes-128-gcm, aes-256-gcm or chacha20-poly1305")
	group := fs.String("group", "x25519", "x25519, p256 or p384")
	prefer := fs.String("prefer", "", "client: a group to offer first, with the only key share")
	alpn := fs.String("alpn", "", "ALPN protocols offered or accepted, comma-separated")
	expectALPN := fs.String("expect-alpn", "", "the ALPN protocol that must be agreed on")
	expectSNI := fs.String("expect-sni", "", "server: the SNI host name the client must send")
	requireClientCert := fs.Bool("require-client-cert", false, "server: require a client certificate from the test CA")
	clientCert := fs.Bool("client-cert", false, "client: present the test client certificate")
	resume := fs.Bool("resume", false, "two connections; the second must resume the first by ticket")
	sig := fs.String("sig", "ecdsa-p256", "certificate key: the folder under --certs")
	certs := fs.String("certs", "", "folder of tlsmatrix test certificates")
	n := fs.Int("bytes", 64<<10, "client: bytes to send; server: bytes to echo before --drop")
	writeSize := fs.Int("write-size", 4<<10, "client: bytes per write")
	echo := fs.String("echo", "same", "client: what the server sends back, same or reversed-lines")
	drop := fs.Bool("drop", false, "server: drop the connection without close_notify after the echo")
	truncation := fs.Bool("expect-truncation", false, "client: the server will drop the connection")
	timeout := fs.Int("timeout", 10, "seconds the whole case may take (with -defaults: each connection, from its accept)")
	defaults := fs.Bool("defaults", false, "crypto/tls's own defaults (TLS 1.2 and 1.3, every default suite, group and scheme) with the -sig certificate (a client trusts its CA): a server for outside test tools, a client that shows what Go offers; the case's flags are ignored")
	connections := fs.Int("connections", 1, "server with -defaults: connections to serve, one after another (0: until killed)")
	respond := fs.String("respond", "echo", "server with -defaults: echo, or http (answer one HTTP/1.1 GET)")
	overQUIC := fs.Bool("quic", false, "QUIC v1 over UDP with quic-go instead of TCP: the server answers one hq-interop request (GET /N: N bytes), the client asks for -bytes and checks them")
	fs.Parse(os.Args[2:])
	if *defaults {
		var out string
		var err error
		switch {
		case os.Args[1] == "client":
			out, err = dialDefaults(*connect, filepath.Join(*certs, *sig), time.Now().Add(time.Duration(*timeout)*time.Second))
		case (*respond != "echo" && *respond != "http") || *connections < 0:
			fmt.Fprintln(os.Stderr, "-defaults: a server takes -respond echo or http and -connections 0 or more")
			os.Exit(2)
		default:
			out, err = serveDefaults(*listen, filepath.Join(*certs, *sig), *connections, *respond, time.Duration(*timeout)*time.Second)
		}
		if err != nil {
			fmt.Printf("error: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("ok: %s\n", out)
		return
	}
	pinned, err := tlsconf.ParseOffer(*version, *cipher, *group, *prefer, *sig)
	var unsupported tlsconf.Unsupported
	if errors.As(err, &unsupported) {
		// Its own line and exit code, as the drivers' peers: the harness reports the cell
		// as unsupported.
		fmt.Printf("unsupported: %v\n", unsupported)
		os.Exit(3)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	o := offer{Offer: pinned}
	if *alpn != "" {
		o.ALPN = strings.Split(*alpn, ",")
	}
	o.ExpectALPN = *expectALPN
	o.ExpectSNI = *expectSNI
	o.requireClientCert = *requireClientCert
	o.clientCert = *clientCert
	o.resume = *resume
	deadline := time.Now().Add(time.Duration(*timeout) * time.Second)
	certDir := filepath.Join(*certs, *sig)
	var out string
	switch {
	case *overQUIC && (*drop || *truncation || *echo != "same"):
		fmt.Fprintln(os.Stderr, "-quic takes no -drop, -expect-truncation or -echo: a QUIC case answers hq-interop")
		os.Exit(2)
	case *overQUIC && os.Args[1] == "server":
		out, err = quicServer(*listen, o, certDir, deadline)
	case *overQUIC:
		out, err = quicClient(*connect, o, certDir, *n, deadline)
	case os.Args[1] == "server":
		out, err = server(*listen, o, certDir, *drop, *n, deadline)
	default:
		out, err = client(*connect, o, certDir, *echo, *n, *writeSize, *truncation, deadline)
	}
	if err != nil {
		fmt.Printf("error: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("ok: %s\n", out)
}
