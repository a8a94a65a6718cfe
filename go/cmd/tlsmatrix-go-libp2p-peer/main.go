// Command tlsmatrix-go-libp2p-peer is one end of a libp2p TLS connection over TCP,
// for trying the transport by hand and for interop runs.
//
//	tlsmatrix-go-libp2p-peer server --backend std|openssl --listen 127.0.0.1:4001
//	tlsmatrix-go-libp2p-peer client --backend std|openssl --connect 127.0.0.1:4001 [--peer ID]
//
// Both print their own peer id and the remote's. The server echoes what it
// reads; the client sends its standard input (or --message) and prints the
// echo. On any handshake failure it prints one sentence and exits 1; bad
// usage exits 2.
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	ic "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/sec"

	"github.com/tlsmatrix/tlsmatrix/go/libp2ptls"
)

const usage = `usage:
  tlsmatrix-go-libp2p-peer server --backend std|openssl --listen ADDR [--once] [--timeout D]
  tlsmatrix-go-libp2p-peer client --backend std|openssl --connect ADDR [--peer ID] [--message TEXT] [--timeout D]
  tlsmatrix-go-libp2p-peer version --backend std|openssl

Run "tlsmatrix-go-libp2p-peer server -h" or "client -h" for the options.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "server":
		err = runServer(os.Args[2:])
	case "client":
		err = runClient(os.Args[2:])
	case "version":
		err = runVersion(os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	var ue usageError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "tlsmatrix-go-libp2p-peer:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "tlsmatrix-go-libp2p-peer:", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

// common are the options both roles share.
type common struct {
	backend libp2ptls.Backend
	timeout time.Duration
}

func parse(fs *flag.FlagSet, args []string, c *common) error {
	backend := fs.String("backend", "std", "TLS implementation: std (Go crypto/tls) or openssl (system libssl)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "limit for the handshake and for each read")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	b, err := libp2ptls.ParseBackend(*backend)
	if err != nil {
		return usageError{err}
	}
	c.backend = b
	if c.timeout <= 0 {
		return usageError{errors.New("--timeout must be positive")}
	}
	return nil
}

func newTransport(b libp2ptls.Backend) (*libp2ptls.Transport, peer.ID, error) {
	key, _, err := ic.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, "", err
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return nil, "", err
	}
	t, err := libp2ptls.New(libp2ptls.ID, key, nil, libp2ptls.WithBackend(b))
	return t, id, err
}

// describe turns a handshake error into one sentence naming the cause.
func describe(err error) string {
	if a, ok := libp2ptls.ReceivedAlert(err); ok {
		return fmt.Sprintf("the peer refused the handshake with TLS alert %d (%v)", a, err)
	}
	var mismatch sec.ErrPeerIDMismatch
	if errors.As(err, &mismatch) {
		return fmt.Sprintf("the peer is %s, not the expected %s", mismatch.Actual, mismatch.Expected)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return "the peer did not complete the handshake in time"
	}
	return err.Error()
}

// runVersion names what a backend runs: Go's crypto/tls or the libssl it loaded.
func runVersion(args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	var c common
	if err := parse(fs, args, &c); err != nil {
		return err
	}
	lib := "crypto/tls"
	if c.backend == libp2ptls.BackendOpenSSL {
		lib = libp2ptls.OpenSSLVersion()
	}
	fmt.Printf("tlsmatrix libp2ptls (%s backend: %s), Go %s\n", c.backend, lib, runtime.Version())
	return nil
}

// details says what a secured connection negotiated, for the final "ok:" line.
func details(conn sec.SecureConn) string {
	d, ok := conn.(libp2ptls.DetailedConn)
	if !ok {
		return "?"
	}
	v := d.Details()
	return fmt.Sprintf("%s %s %s", tls.VersionName(v.Version), tls.CipherSuiteName(v.CipherSuite), v.Group)
}

func runServer(args []string) error {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	var c common
	listen := fs.String("listen", "", "address to listen on, e.g. 127.0.0.1:0 (required)")
	once := fs.Bool("once", false, "exit after the first connection")
	if err := parse(fs, args, &c); err != nil {
		return err
	}
	if *listen == "" {
		return usageError{errors.New("server needs --listen ADDR")}
	}
	t, self, err := newTransport(c.backend)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	// One line a script can wait for, with the real port when ADDR had port 0.
	fmt.Printf("listening %s peer %s backend %s\n", ln.Addr(), self, c.backend)
	for {
		raw, err := ln.Accept()
		if err != nil {
			return err
		}
		err = serve(t, raw, c.timeout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tlsmatrix-go-libp2p-peer: connection from", raw.RemoteAddr(), "failed:", describe(err))
		}
		if *once {
			if err != nil {
				return errors.New(describe(err))
			}
			return nil
		}
	}
}

func serve(t *libp2ptls.Transport, raw net.Conn, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := t.SecureInbound(ctx, raw, "")
	if err != nil {
		return err
	}
	defer conn.Close()
	fmt.Printf("secured remote %s\n", conn.RemotePeer())
	// Echo until the client closes.
	buf := make([]byte, 32<<10)
	echoed := 0
	for {
		_ = conn.SetReadDeadline(time.Now().Add(timeout))
		n, err := conn.Read(buf)
		if n > 0 {
			if _, werr := conn.Write(buf[:n]); werr != nil {
				return werr
			}
			echoed += n
		}
		if err == io.EOF {
			fmt.Printf("ok: remote %s verified; %s; echoed %d bytes\n", conn.RemotePeer(), details(conn), echoed)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func runClient(args []string) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	var c common
	connect := fs.String("connect", "", "server address, e.g. 127.0.0.1:4001 (required)")
	expect := fs.String("peer", "", "the server's peer id; refuse any other (default: accept any)")
	message := fs.String("message", "", "send this instead of standard input")
	if err := parse(fs, args, &c); err != nil {
		return err
	}
	if *connect == "" {
		return usageError{errors.New("client needs --connect ADDR")}
	}
	var want peer.ID
	if *expect != "" {
		id, err := peer.Decode(*expect)
		if err != nil {
			return usageError{fmt.Errorf("--peer %q is not a peer id: %v", *expect, err)}
		}
		want = id
	}
	t, self, err := newTransport(c.backend)
	if err != nil {
		return err
	}
	fmt.Printf("peer %s backend %s\n", self, c.backend)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", *connect)
	if err != nil {
		return err
	}
	conn, err := t.SecureOutbound(ctx, raw, want)
	if err != nil {
		return errors.New(describe(err))
	}
	defer conn.Close()
	fmt.Printf("secured remote %s\n", conn.RemotePeer())
	var in io.Reader = os.Stdin
	if *message != "" {
		in = strings.NewReader(*message)
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		data = []byte("ping")
	}
	if _, err := conn.Write(data); err != nil {
		return errors.New(describe(err))
	}
	echo := make([]byte, len(data))
	_ = conn.SetReadDeadline(time.Now().Add(c.timeout))
	if _, err := io.ReadFull(conn, echo); err != nil {
		// TLS 1.3: a server refusing our certificate says so only now.
		return errors.New(describe(err))
	}
	if string(echo) != string(data) {
		return errors.New("the echo differs from what was sent")
	}
	fmt.Printf("ok: remote %s verified; %s; echo %d bytes\n", conn.RemotePeer(), details(conn), len(echo))
	return nil
}
