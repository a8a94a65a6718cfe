// Package scenario reads tlsmatrix scenario ids (crates/model/src/scenario.rs is the
// definition): `<kind>-<version>-<params...>`, dash-separated in a fixed order, where axis
// values may themselves hold dashes (`ecdsa-p256`, `aes-128-gcm`), so an id is read axis by
// axis, each time taking the longest value that matches the front of what is left.
// String gives back the canonical id; the Rust test suite feeds every id of the catalogue
// through the Go driver's `parse` command and compares, so the two readers cannot drift.
package scenario

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
)

// Axis is one of a scenario's named parameters and its valid values, in display order.
type axis struct {
	label  string
	values []string
}

var (
	kinds       = axis{"kind", []string{"handshake", "bulk", "memory", "throughput"}}
	versions    = axis{"version", []string{"tls12", "tls13"}}
	sigs        = axis{"signature", []string{"ecdsa-p256", "ecdsa-p384", "rsa-2048", "rsa-3072", "ed25519", "mldsa44", "mldsa65", "mldsa87"}}
	groups      = axis{"group", []string{"x25519", "p256", "p384", "x25519mlkem768", "secp256r1mlkem768", "secp384r1mlkem1024", "mlkem512", "mlkem768", "mlkem1024"}}
	resumptions = axis{"resumption", []string{"full", "session-id", "ticket"}}
	aeads       = axis{"cipher", []string{"aes-128-gcm", "aes-256-gcm", "chacha20-poly1305"}}
	sizes       = axis{"write size", []string{"1k", "16k", "1m"}}
	sessions    = axis{"session count", []string{"n100", "n1000", "n5000", "n10000"}}
	cores       = axis{"cores", []string{"1core", "allcores"}}
	chains      = []string{"chain1", "chain2", "chain3", "chain4"}
)

// The fixed parameters of the kinds that do not name them (scenario.rs: HANDSHAKE_AEAD,
// BULK_SIG, BULK_GROUP).
const (
	HandshakeAEAD = "aes-128-gcm"
	BulkSig       = "ecdsa-p256"
	BulkGroup     = "x25519"
)

// Scenario is a parsed id. Fields a kind does not name hold that kind's fixed value, so
// Params-like fields (Version, Sig, Group, AEAD, Resumption, extras) are always complete.
type Scenario struct {
	Kind       string
	Version    string
	Sig        string
	Group      string
	AEAD       string
	Resumption string
	// Handshake extras: mutual TLS, certificates the server sends (1-4), a HelloRetryRequest.
	MTLS  bool
	Chain int
	HRR   bool
	// Bulk: bytes per application write.
	WriteSize int
	// Memory: connection pairs alive at once.
	Sessions int
	// Throughput: "1core" or "allcores".
	Cores string
}

// Resumed says whether the measured handshakes resume an earlier session.
func (s Scenario) Resumed() bool { return s.Resumption != "full" }

// PostQuantumGroup says whether the group's key exchange includes ML-KEM (scenario.rs:
// Group::is_post_quantum).
func (s Scenario) PostQuantumGroup() bool {
	return s.Group != "x25519" && s.Group != "p256" && s.Group != "p384"
}

// MLDSA says whether the certificate key is ML-DSA (scenario.rs: SigAlg::is_mldsa).
func (s Scenario) MLDSA() bool { return strings.HasPrefix(s.Sig, "mldsa") }

// Threads is how many handshaking pairs a throughput scenario runs at once on this machine.
func (s Scenario) Threads() int {
	if s.Cores == "allcores" {
		return runtime.NumCPU()
	}
	return 1
}

// HRRDecoy is the group a HelloRetryRequest client offers first: any group other than the
// scenario's, never a post-quantum one (scenario.rs: Extras::hrr_decoy).
func (s Scenario) HRRDecoy() string {
	if s.Group == "x25519" {
		return "p256"
	}
	return "x25519"
}

type cursor struct {
	id, rest string
}

func (c *cursor) take(a axis) (string, error) {
	values := append([]string(nil), a.values...)
	sort.SliceStable(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	for _, v := range values {
		if c.takeWord(v) {
			return v, nil
		}
	}
	found := "nothing"
	if c.rest != "" {
		found = fmt.Sprintf("'%s'", strings.SplitN(c.rest, "-", 2)[0])
	}
	return "", fmt.Errorf("scenario id '%s': expected a %s (%s) but found %s",
		c.id, a.label, strings.Join(a.values, ", "), found)
}

// takeWord takes word if it is the next whole part.
func (c *cursor) takeWord(word string) bool {
	after, ok := strings.CutPrefix(c.rest, word)
	switch {
	case !ok:
		return false
	case after == "":
		c.rest = ""
		return true
	case after[0] == '-':
		c.rest = after[1:]
		return true
	}
	return false
}

// Parse reads an id; an unknown part is an error naming the valid values.
func Parse(id string) (Scenario, error) {
	c := &cursor{id: id, rest: id}
	s := Scenario{AEAD: HandshakeAEAD, Sig: BulkSig, Group: BulkGroup, Resumption: "full", Chain: 1}
	var err error
	take := func(a axis, into *string) {
		if err == nil {
			*into, err = c.take(a)
		}
	}
	take(kinds, &s.Kind)
	take(versions, &s.Version)
	switch s.Kind {
	case "handshake":
		take(sigs, &s.Sig)
		take(groups, &s.Group)
		take(resumptions, &s.Resumption)
		if err == nil {
			s.MTLS = c.takeWord("mtls")
			for i := len(chains) - 1; i >= 0; i-- {
				if c.takeWord(chains[i]) {
					s.Chain = i + 1
					break
				}
			}
			s.HRR = c.takeWord("hrr")
		}
	case "bulk":
		var size string
		take(aeads, &s.AEAD)
		take(sizes, &size)
		s.WriteSize = map[string]int{"1k": 1 << 10, "16k": 16 << 10, "1m": 1 << 20}[size]
	case "memory":
		var n string
		take(sigs, &s.Sig)
		take(sessions, &n)
		fmt.Sscanf(strings.TrimPrefix(n, "n"), "%d", &s.Sessions)
	case "throughput":
		take(sigs, &s.Sig)
		take(cores, &s.Cores)
	}
	if err != nil {
		return Scenario{}, err
	}
	if c.rest != "" {
		return Scenario{}, fmt.Errorf("scenario id '%s': unexpected trailing part '%s'", id, c.rest)
	}
	return s, nil
}

// String is the canonical id: extras only where they differ from a plain handshake.
func (s Scenario) String() string {
	switch s.Kind {
	case "handshake":
		id := fmt.Sprintf("handshake-%s-%s-%s-%s", s.Version, s.Sig, s.Group, s.Resumption)
		if s.MTLS {
			id += "-mtls"
		}
		if s.Chain > 1 {
			id += fmt.Sprintf("-chain%d", s.Chain)
		}
		if s.HRR {
			id += "-hrr"
		}
		return id
	case "bulk":
		size := map[int]string{1 << 10: "1k", 16 << 10: "16k", 1 << 20: "1m"}[s.WriteSize]
		return fmt.Sprintf("bulk-%s-%s-%s", s.Version, s.AEAD, size)
	case "memory":
		return fmt.Sprintf("memory-%s-%s-n%d", s.Version, s.Sig, s.Sessions)
	case "throughput":
		return fmt.Sprintf("throughput-%s-%s-%s", s.Version, s.Sig, s.Cores)
	}
	return "?"
}
