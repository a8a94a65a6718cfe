package driver

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/mlkem"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/metrics"
)

// The crypto floor (`tlsmatrix run --measure floor`): the operations the runner lists for a
// handshake (--floor-ops, tlsmatrix_model::floor::encode) timed through the Go packages
// crypto/tls calls (crypto/ecdh, crypto/mlkem, crypto/ecdsa, crypto/rsa, crypto/ed25519,
// crypto/hmac), in turns with the handshake itself.

// floorOp is one operation of one side, ready to run: run performs it once and returns the
// time of the operation itself.
type floorOp struct {
	side, kind, arg string
	count           int
	run             func() (time.Duration, error)
	reps            int
}

// part is the floor part an operation belongs to, as tlsmatrix_model::floor::FloorPart.
func (o *floorOp) part() int {
	switch o.kind {
	case "key-share", "server-share", "client-secret":
		return 0
	case "sign", "verify":
		return 1
	}
	return 2
}

// timed runs f once and returns its time.
func timed(f func() error) (time.Duration, error) {
	t := time.Now()
	err := f()
	return time.Since(t), err
}

// kex is a group as its two halves: an ECDH curve, an ML-KEM size, or both (a hybrid). The
// wire order follows the group's draft: ML-KEM first for X25519MLKEM768, the curve first
// for the SecP hybrids.
type kex struct {
	curve     ecdh.Curve
	kem       int // 0, 768 or 1024
	kemFirst  bool
	curveSize int // an encoded public key's bytes
}

func kexOf(group string) (kex, error) {
	switch group {
	case "x25519":
		return kex{curve: ecdh.X25519(), curveSize: 32}, nil
	case "p256":
		return kex{curve: ecdh.P256(), curveSize: 65}, nil
	case "p384":
		return kex{curve: ecdh.P384(), curveSize: 97}, nil
	case "x25519mlkem768":
		return kex{curve: ecdh.X25519(), curveSize: 32, kem: 768, kemFirst: true}, nil
	case "secp256r1mlkem768":
		return kex{curve: ecdh.P256(), curveSize: 65, kem: 768}, nil
	case "secp384r1mlkem1024":
		return kex{curve: ecdh.P384(), curveSize: 97, kem: 1024}, nil
	case "mlkem768":
		return kex{kem: 768}, nil
	case "mlkem1024":
		return kex{kem: 1024}, nil
	}
	return kex{}, fmt.Errorf("crypto/mlkem and crypto/ecdh have no %s", group)
}

// clientKey is a client's key share: its private halves and the share as sent.
type clientKey struct {
	ecdh  *ecdh.PrivateKey
	dk768 *mlkem.DecapsulationKey768
	dk1k  *mlkem.DecapsulationKey1024
	share []byte
}

func (k kex) join(kemPart, curvePart []byte) []byte {
	if k.kemFirst {
		return append(kemPart, curvePart...)
	}
	return append(curvePart, kemPart...)
}

// split cuts a share into its KEM and curve parts.
func (k kex) split(b []byte) (kemPart, curvePart []byte, err error) {
	if len(b) < k.curveSize {
		return nil, nil, errors.New("a short key share")
	}
	if k.curve == nil {
		return b, nil, nil
	}
	if k.kem == 0 {
		return nil, b, nil
	}
	if k.kemFirst {
		return b[:len(b)-k.curveSize], b[len(b)-k.curveSize:], nil
	}
	return b[k.curveSize:], b[:k.curveSize], nil
}

func (k kex) keyShare() (*clientKey, error) {
	c := &clientKey{}
	var kemPart, curvePart []byte
	var err error
	if k.curve != nil {
		if c.ecdh, err = k.curve.GenerateKey(rand.Reader); err != nil {
			return nil, err
		}
		curvePart = c.ecdh.PublicKey().Bytes()
	}
	switch k.kem {
	case 768:
		if c.dk768, err = mlkem.GenerateKey768(); err != nil {
			return nil, err
		}
		kemPart = c.dk768.EncapsulationKey().Bytes()
	case 1024:
		if c.dk1k, err = mlkem.GenerateKey1024(); err != nil {
			return nil, err
		}
		kemPart = c.dk1k.EncapsulationKey().Bytes()
	}
	c.share = k.join(kemPart, curvePart)
	return c, nil
}

// serverShare answers a client's share: its own curve key and the secret, the encapsulation.
// The secret is the halves' secrets joined in the share's order.
func (k kex) serverShare(share []byte) (reply, secret []byte, err error) {
	kemIn, curveIn, err := k.split(share)
	if err != nil {
		return nil, nil, err
	}
	var kemOut, curveOut, kemSecret, curveSecret []byte
	if k.curve != nil {
		peer, err := k.curve.NewPublicKey(curveIn)
		if err != nil {
			return nil, nil, err
		}
		own, err := k.curve.GenerateKey(rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		if curveSecret, err = own.ECDH(peer); err != nil {
			return nil, nil, err
		}
		curveOut = own.PublicKey().Bytes()
	}
	switch k.kem {
	case 768:
		ek, err := mlkem.NewEncapsulationKey768(kemIn)
		if err != nil {
			return nil, nil, err
		}
		kemSecret, kemOut = ek.Encapsulate()
	case 1024:
		ek, err := mlkem.NewEncapsulationKey1024(kemIn)
		if err != nil {
			return nil, nil, err
		}
		kemSecret, kemOut = ek.Encapsulate()
	}
	return k.join(kemOut, curveOut), k.join(kemSecret, curveSecret), nil
}

// clientSecret is the client's secret from the server's reply.
func (k kex) clientSecret(c *clientKey, reply []byte) ([]byte, error) {
	kemIn, curveIn, err := k.split(reply)
	if err != nil {
		return nil, err
	}
	var kemSecret, curveSecret []byte
	if k.curve != nil {
		peer, err := k.curve.NewPublicKey(curveIn)
		if err != nil {
			return nil, err
		}
		if curveSecret, err = c.ecdh.ECDH(peer); err != nil {
			return nil, err
		}
	}
	switch k.kem {
	case 768:
		kemSecret, err = c.dk768.Decapsulate(kemIn)
	case 1024:
		kemSecret, err = c.dk1k.Decapsulate(kemIn)
	}
	return k.join(kemSecret, curveSecret), err
}

// signedContent is TLS 1.3's CertificateVerify content, as harness::floor::signed_content.
func signedContent() []byte {
	m := []byte(strings.Repeat(" ", 64) + "TLS 1.3, server CertificateVerify\x00")
	for range 32 {
		m = append(m, 0x5a)
	}
	return m
}

// signing is how crypto/tls signs with a key of the scheme: the hash and the options.
func signing(sig string) (crypto.Hash, crypto.SignerOpts, error) {
	switch sig {
	case "ecdsa-p256":
		return crypto.SHA256, crypto.SHA256, nil
	case "ecdsa-p384":
		return crypto.SHA384, crypto.SHA384, nil
	case "rsa-2048", "rsa-3072":
		return crypto.SHA256, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash, Hash: crypto.SHA256}, nil
	case "ed25519":
		return 0, crypto.Hash(0), nil
	}
	return 0, nil, fmt.Errorf("crypto/tls signs no %s", sig)
}

// digest hashes msg as the scheme signs it (Ed25519 signs it whole).
func digest(h crypto.Hash, msg []byte) []byte {
	if h == 0 {
		return msg
	}
	d := h.New()
	d.Write(msg)
	return d.Sum(nil)
}

func verify(pub crypto.PublicKey, h crypto.Hash, opts crypto.SignerOpts, msg, sig []byte) error {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if !ecdsa.VerifyASN1(k, digest(h, msg), sig) {
			return errors.New("ECDSA signature did not verify")
		}
		return nil
	case *rsa.PublicKey:
		return rsa.VerifyPSS(k, h, digest(h, msg), sig, opts.(*rsa.PSSOptions))
	case ed25519.PublicKey:
		if !ed25519.Verify(k, msg, sig) {
			return errors.New("Ed25519 signature did not verify")
		}
		return nil
	}
	return fmt.Errorf("no verification for a %T", pub)
}

// prepareFloorOp sets op.run, keyed by the cell's server key.
func (c *cell) prepareFloorOp(op *floorOp) error {
	switch op.kind {
	case "key-share", "server-share", "client-secret":
		k, err := kexOf(op.arg)
		if err != nil {
			return err
		}
		client, err := k.keyShare()
		if err != nil {
			return err
		}
		reply, _, err := k.serverShare(client.share)
		if err != nil {
			return err
		}
		switch op.kind {
		case "key-share":
			op.run = func() (time.Duration, error) {
				return timed(func() error { _, err := k.keyShare(); return err })
			}
		case "server-share":
			op.run = func() (time.Duration, error) {
				return timed(func() error { _, _, err := k.serverShare(client.share); return err })
			}
		default:
			op.run = func() (time.Duration, error) {
				own, err := k.keyShare()
				if err != nil {
					return 0, err
				}
				return timed(func() error { _, err := k.clientSecret(own, reply); return err })
			}
		}
	case "sign", "verify":
		h, opts, err := signing(op.arg)
		if err != nil {
			return err
		}
		key := c.signer.Signer
		msg := signedContent()
		signature, err := key.Sign(rand.Reader, digest(h, msg), opts)
		if err != nil {
			return err
		}
		if op.kind == "sign" {
			op.run = func() (time.Duration, error) {
				return timed(func() error { _, err := key.Sign(rand.Reader, digest(h, msg), opts); return err })
			}
		} else {
			// The public key read once, as a handshake holds the peer certificate's.
			pub := key.Public()
			if err := verify(pub, h, opts, msg, signature); err != nil {
				return err
			}
			op.run = func() (time.Duration, error) {
				return timed(func() error { return verify(pub, h, opts, msg, signature) })
			}
		}
	case "hmac":
		newHash := sha256.New
		size := 32
		if op.arg == "sha384" {
			newHash, size = sha512.New384, 48
		}
		key := make([]byte, size)
		msg := make([]byte, 64)
		// crypto/tls's HKDF makes an HMAC per step, as here.
		op.run = func() (time.Duration, error) {
			return timed(func() error {
				var m hash.Hash = hmac.New(newHash, key)
				m.Write(msg)
				m.Sum(nil)
				return nil
			})
		}
	default:
		return fmt.Errorf("no floor operation %q", op.kind)
	}
	return nil
}

// parseFloorOps reads the runner's list: side:op:arg:count entries joined by ';'.
func parseFloorOps(text string) ([]floorOp, error) {
	var ops []floorOp
	for _, entry := range strings.Split(text, ";") {
		f := strings.Split(entry, ":")
		if len(f) != 4 || (f[0] != "client" && f[0] != "server") {
			return nil, fmt.Errorf("floor operation %q is not side:op:arg:count", entry)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("floor operation %q has no count", entry)
		}
		ops = append(ops, floorOp{side: f[0], kind: f[1], arg: f[2], count: n})
	}
	return ops, nil
}

// minRuns mirrors CryptoOp::min_runs (no ML-DSA here, so one).
const minRuns = 1

// warmFloor prepares the listed operations and sizes each one's share of a sample.
func warmFloor(c *cell, text string, warmup, target time.Duration) (*floorSampler, error) {
	ops, err := parseFloorOps(text)
	if err != nil {
		return nil, err
	}
	share := func(d time.Duration) time.Duration { return d / time.Duration(len(ops)) }
	for i := range ops {
		op := &ops[i]
		if err := c.prepareFloorOp(op); err != nil {
			return nil, fmt.Errorf("%s %s %s: %w", op.side, op.arg, op.kind, err)
		}
		var spent time.Duration
		n := 0
		for n < 2 || spent < share(warmup) {
			d, err := op.run()
			if err != nil {
				return nil, err
			}
			spent += d
			n++
		}
		each := max(spent/time.Duration(n), 1)
		op.reps = max(int(min(share(target)/each, 1_000_000)), minRuns)
	}
	return &floorSampler{ops: ops}, nil
}

type floorSampler struct{ ops []floorOp }

// sample is each side's floor and its parts in ns per handshake; a part without an
// operation on a side has no figure.
func (f *floorSampler) sample() (sample, error) {
	var sums [2][3]float64
	var has [2][3]bool
	for i := range f.ops {
		op := &f.ops[i]
		var spent time.Duration
		for range op.reps {
			d, err := op.run()
			if err != nil {
				return nil, err
			}
			spent += d
		}
		side := 0
		if op.side == "server" {
			side = 1
		}
		sums[side][op.part()] += float64(spent.Nanoseconds()) / float64(op.reps) * float64(op.count)
		has[side][op.part()] = true
	}
	names := [2][4]string{
		{metrics.ClientFloorNs, metrics.ClientFloorKexNs, metrics.ClientFloorSigNs, metrics.ClientFloorKdfNs},
		{metrics.ServerFloorNs, metrics.ServerFloorKexNs, metrics.ServerFloorSigNs, metrics.ServerFloorKdfNs},
	}
	var s sample
	for side := range 2 {
		s.add(names[side][0], sums[side][0]+sums[side][1]+sums[side][2])
		for p := range 3 {
			if has[side][p] {
				s.add(names[side][p+1], sums[side][p])
			}
		}
	}
	return s, nil
}

// handshakesAgainstFloor takes handshake and floor samples in turns (the order alternating)
// with each side's floor over its handshake time, as tlsmatrix_measure::floor does.
func handshakesAgainstFloor(h *handshakeSampler, f *floorSampler, runs int, on func(sample)) error {
	value := func(s sample, m string) float64 {
		for _, v := range s {
			if v[0] == m {
				return v[1].(float64)
			}
		}
		return 0
	}
	for i := range runs {
		var hs, fl sample
		var err error
		if i%2 == 0 {
			if hs, err = h.sample(); err == nil {
				fl, err = f.sample()
			}
		} else {
			if fl, err = f.sample(); err == nil {
				hs, err = h.sample()
			}
		}
		if err != nil {
			return err
		}
		out := append(hs, fl...)
		out.add(metrics.ClientFloorShare, value(fl, metrics.ClientFloorNs)/max(value(hs, metrics.ClientCPUNs), 1e-9))
		out.add(metrics.ServerFloorShare, value(fl, metrics.ServerFloorNs)/max(value(hs, metrics.ServerCPUNs), 1e-9))
		on(out)
	}
	return nil
}
