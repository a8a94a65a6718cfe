//go:build openssl

package ossl

/*
#include <openssl/x509_vfy.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/cgo"
	"runtime/debug"
	"sync"
	"time"
	"unsafe"
)

// VerifyFunc checks the peer's certificates, DER, leaf first, exactly as
// received. An error refuses the peer: the handshake fails with that error
// and the peer receives a bad_certificate alert.
type VerifyFunc func(rawCerts [][]byte) error

const (
	// maxRecord is the largest TLS record on the wire: 16 KiB of plaintext
	// plus header, content type, padding allowance and tag.
	maxRecord = 16384 + 256 + 5
	// writeChunk is how much plaintext one C call seals: four full records,
	// so large writes cross into C and into the kernel once per 64 KiB.
	writeChunk = 4 * 16384
	outSize    = writeChunk + 4*(256+5)
)

// Buffers are pooled rather than owned by a connection, so an idle
// connection holds no buffer at all.
var (
	inPool  = sync.Pool{New: func() any { b := make([]byte, maxRecord); return &b }}
	outPool = sync.Pool{New: func() any { b := make([]byte, outSize); return &b }}
)

// Conn is a TLS connection over a net.Conn. Read and Write may be called
// concurrently, as with crypto/tls.
type Conn struct {
	raw    net.Conn
	verify VerifyFunc

	// sslMu guards ssl and io: OpenSSL allows no concurrent calls on one SSL.
	// It is held only inside C calls, never during socket I/O.
	sslMu sync.Mutex
	ssl   *C.tm_conn
	io    *C.tm_io

	// wmu orders sealed records onto the socket; rmu serialises readers.
	wmu, rmu sync.Mutex

	verifyErr error // what the verify callback refused, if it did
	handshook bool
	buffered  bool // the next read may complete without socket input
	readErr   error
	writeErr  error
	closeOnce sync.Once
	closeErr  error
}

// Wrap makes raw a TLS connection on the side x was configured for. The
// handshake runs on the first call to Handshake.
func (x *Context) Wrap(raw net.Conn, verify VerifyFunc) (*Conn, error) {
	if verify == nil {
		return nil, errors.New("ossl: a VerifyFunc is required")
	}
	ssl := C.tm_conn_new(x.ptr)
	if ssl == nil {
		return nil, errors.New("ossl: cannot allocate a connection")
	}
	return &Conn{raw: raw, verify: verify, ssl: ssl, io: C.tm_conn_io(ssl)}, nil
}

func ptr(b []byte) *C.uint8_t { return (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b))) }

// result is what one C call left in c.io. The reader and the writer share
// c.io, so it is copied out before sslMu is released and never read after.
type result struct {
	rc                     C.int
	nread, written, outlen int
	more, buffered         bool
}

// call runs op on the connection's SSL under sslMu and returns its result;
// net.ErrClosed once Close has freed the SSL.
func (c *Conn) call(op func(ssl *C.tm_conn) C.int) (result, error) {
	c.sslMu.Lock()
	defer c.sslMu.Unlock()
	if c.ssl == nil {
		return result{}, net.ErrClosed
	}
	rc := op(c.ssl)
	return result{
		rc:       rc,
		nread:    int(c.io.nread),
		written:  int(c.io.written),
		outlen:   int(c.io.outlen),
		more:     c.io.more_out != 0,
		buffered: c.io.buffered != 0,
	}, nil
}

// Handshake runs the handshake to completion. Cancelling ctx aborts it, and
// the error is then ctx's.
func (c *Conn) Handshake(ctx context.Context) (err error) {
	if c.handshook {
		return nil
	}
	if ctx.Done() != nil {
		// A past deadline wakes any blocked socket call; cheaper than a
		// watcher goroutine per handshake.
		stop := context.AfterFunc(ctx, func() { _ = c.raw.SetDeadline(time.Unix(1, 0)) })
		defer func() {
			if !stop() {
				err = ctx.Err()
			}
		}()
	}
	// The verify callback needs this connection; the handle lives only as
	// long as the handshake, the only time OpenSSL calls back.
	h := cgo.NewHandle(c)
	defer h.Delete()
	c.sslMu.Lock()
	C.tm_conn_set_handle(c.ssl, C.uintptr_t(h))
	c.sslMu.Unlock()

	inp := inPool.Get().(*[]byte)
	defer inPool.Put(inp)
	outp := outPool.Get().(*[]byte)
	defer outPool.Put(outp)
	in, out := (*inp)[:0], *outp
	for {
		r, err := c.call(func(ssl *C.tm_conn) C.int {
			return C.tm_handshake(ssl, ptr(in), C.size_t(len(in)), ptr(out), C.size_t(len(out)))
		})
		if err != nil {
			return err
		}
		// Send what OpenSSL produced first: on failure it is the alert.
		if werr := c.flush(out, r); werr != nil && r.rc != C.TM_ERROR {
			return werr
		}
		switch r.rc {
		case C.TM_OK:
			c.handshook = true
			// The peer's first records may have come in with its last
			// handshake flight; let the first Read look before it blocks.
			c.buffered = true
			return nil
		case C.TM_ERROR, C.TM_CLOSED:
			return c.failure("handshake")
		}
		n, rerr := c.raw.Read((*inp)[:cap(*inp)])
		if n == 0 && rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return errors.New("tls: the peer closed the connection during the handshake")
			}
			return rerr
		}
		in = (*inp)[:n]
	}
}

// flush writes the r.outlen bytes a C call placed in out, then drains
// whatever is still pending. The caller holds wmu or is the only user
// (handshake).
func (c *Conn) flush(out []byte, r result) error {
	for {
		if r.outlen > 0 {
			if _, err := c.raw.Write(out[:r.outlen]); err != nil {
				return err
			}
		}
		if !r.more {
			return nil
		}
		var err error
		r, err = c.call(func(ssl *C.tm_conn) C.int {
			C.tm_drain(ssl, ptr(out), C.size_t(len(out)))
			return C.TM_OK
		})
		if err != nil {
			return err
		}
	}
}

// failure builds the error for a failed call: the verifier's own error when
// it refused the peer, else the alert or OpenSSL's reason.
func (c *Conn) failure(op string) error {
	var st C.tm_state
	var buf [256]C.char
	c.sslMu.Lock()
	if c.ssl != nil {
		C.tm_get_state(c.ssl, &st)
		C.tm_error(c.ssl, &buf[0], C.size_t(len(buf)))
	}
	c.sslMu.Unlock()
	if c.verifyErr != nil {
		return c.verifyErr
	}
	if st.alert_received >= 0 {
		return &AlertError{Alert: uint8(st.alert_received), Remote: true}
	}
	reason := cleanOpenSSLError(C.GoString(&buf[0]))
	if reason == "" {
		reason = op + " failed"
	}
	if st.alert_sent >= 0 {
		return &AlertError{Alert: uint8(st.alert_sent), Detail: reason}
	}
	return fmt.Errorf("tls: %s", reason)
}

//export tmVerifyPeer
func tmVerifyPeer(h C.uintptr_t, der *C.uint8_t, lens *C.size_t, n C.int) (verdict C.int) {
	c := cgo.Handle(h).Value().(*Conn)
	// A panic must not unwind through OpenSSL's frames.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "panic while checking the peer certificate: %v\n%s", r, debug.Stack())
			c.verifyErr = fmt.Errorf("panic while checking the peer certificate: %v", r)
			verdict = C.X509_V_ERR_CERT_REJECTED
		}
	}()
	sizes := unsafe.Slice(lens, int(n))
	total := 0
	for _, l := range sizes {
		total += int(l)
	}
	all := C.GoBytes(unsafe.Pointer(der), C.int(total))
	chain := make([][]byte, n)
	off := 0
	for i, l := range sizes {
		chain[i] = all[off : off+int(l) : off+int(l)]
		off += int(l)
	}
	if err := c.verify(chain); err != nil {
		c.verifyErr = err
		return C.X509_V_ERR_CERT_REJECTED
	}
	return C.X509_V_OK
}

// State is what the handshake negotiated, as IANA code points.
type State struct {
	Version, CipherSuite, Group, PeerSignature uint16
	ALPN                                       string
}

// State reports the negotiated parameters.
func (c *Conn) State() State {
	var st C.tm_state
	c.sslMu.Lock()
	defer c.sslMu.Unlock()
	if c.ssl == nil {
		return State{}
	}
	C.tm_get_state(c.ssl, &st)
	return State{
		Version:       uint16(st.version),
		CipherSuite:   uint16(st.cipher),
		Group:         uint16(st.group),
		PeerSignature: uint16(st.peer_sigalg),
		ALPN:          C.GoStringN((*C.char)(unsafe.Pointer(st.alpn)), C.int(st.alpn_len)),
	}
}

// Read reads decrypted application data.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.readErr != nil {
		return 0, c.readErr
	}
	var inp *[]byte
	defer func() {
		if inp != nil {
			inPool.Put(inp)
		}
	}()
	for {
		var in []byte
		if !c.buffered {
			if inp == nil {
				inp = inPool.Get().(*[]byte)
			}
			n, err := c.raw.Read((*inp)[:cap(*inp)])
			if n == 0 && err != nil {
				// A deadline is not fatal; anything else ends the stream.
				var ne net.Error
				if !(errors.As(err, &ne) && ne.Timeout()) {
					c.readErr = err
				}
				return 0, err
			}
			in = (*inp)[:n]
		}
		r, err := c.call(func(ssl *C.tm_conn) C.int {
			return C.tm_read(ssl, ptr(in), C.size_t(len(in)), ptr(p), C.size_t(len(p)))
		})
		if err != nil {
			return 0, err
		}
		c.buffered = r.buffered
		if r.more {
			// A key update or an alert to answer: the writer's lock keeps it in order.
			c.wmu.Lock()
			err := c.drainPending()
			c.wmu.Unlock()
			if err != nil && r.rc == C.TM_OK {
				return r.nread, err
			}
		}
		switch r.rc {
		case C.TM_OK:
			return r.nread, nil
		case C.TM_CLOSED:
			c.readErr = io.EOF
			return 0, io.EOF
		case C.TM_ERROR:
			c.readErr = c.failure("read")
			return 0, c.readErr
		}
	}
}

// drainPending sends output a read left pending. The caller holds wmu.
func (c *Conn) drainPending() error {
	outp := outPool.Get().(*[]byte)
	defer outPool.Put(outp)
	return c.flush(*outp, result{more: true})
}

// Write encrypts p and sends it.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.writeErr != nil {
		return 0, c.writeErr
	}
	outp := outPool.Get().(*[]byte)
	defer outPool.Put(outp)
	out := *outp
	done := 0
	for done < len(p) {
		chunk := p[done:min(len(p), done+writeChunk)]
		r, err := c.call(func(ssl *C.tm_conn) C.int {
			return C.tm_write(ssl, ptr(chunk), C.size_t(len(chunk)), ptr(out), C.size_t(len(out)))
		})
		if err != nil {
			return done, err
		}
		if r.rc != C.TM_OK {
			c.writeErr = c.failure("write")
			return done, c.writeErr
		}
		if err := c.flush(out, r); err != nil {
			c.writeErr = err
			return done, err
		}
		done += r.written
	}
	return done, nil
}

// Close sends close_notify (bounded by a short deadline) and closes the socket.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		// A writer stuck on a full socket must not hold Close forever.
		_ = c.raw.SetWriteDeadline(time.Now().Add(time.Second))
		c.wmu.Lock()
		if c.handshook && c.writeErr == nil {
			outp := outPool.Get().(*[]byte)
			out := *outp
			if r, err := c.call(func(ssl *C.tm_conn) C.int {
				C.tm_shutdown(ssl, ptr(out), C.size_t(len(out)))
				return C.TM_OK
			}); err == nil {
				_ = c.flush(out, r)
			}
			outPool.Put(outp)
		}
		c.writeErr = net.ErrClosed
		c.closeErr = c.raw.Close()
		c.sslMu.Lock()
		C.tm_conn_free(c.ssl)
		c.ssl = nil
		c.sslMu.Unlock()
		c.wmu.Unlock()
	})
	return c.closeErr
}

func (c *Conn) LocalAddr() net.Addr                { return c.raw.LocalAddr() }
func (c *Conn) RemoteAddr() net.Addr               { return c.raw.RemoteAddr() }
func (c *Conn) SetDeadline(t time.Time) error      { return c.raw.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error  { return c.raw.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.raw.SetWriteDeadline(t) }
