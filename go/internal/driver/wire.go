package driver

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tlsmatrix/tlsmatrix/go/internal/memconn"
	"github.com/tlsmatrix/tlsmatrix/go/internal/metrics"
)

// Wire figures, as crates/measure/src/flights.rs defines them: a flight is what one side
// writes without reading anything new from its peer in between; it waits for the peer
// flight holding the last byte its sender had read. A traced connection is a handshake, a
// 100-byte request and a 1,000-byte response.
const (
	requestBytes  = 100
	responseBytes = 1000
)

type flight struct {
	From     string `json:"from"`
	Bytes    int64  `json:"bytes"`
	WaitsFor *int   `json:"waits_for,omitempty"`
	CPUNs    int64  `json:"cpu_ns"`
}

type trace struct {
	Flights             []flight `json:"flights"`
	HandshakeFlights    int      `json:"handshake_flights"`
	ClientFinishedAfter *int     `json:"client_finished_after"`
	ServerFinishedAfter *int     `json:"server_finished_after"`
	Request             int      `json:"request"`
	Response            int      `json:"response"`
	TailNs              int64    `json:"tail_ns"`
}

// flightRecorder builds a trace from a pair's traffic (memconn.Observer) and each side's
// clock: a flight's CPU is the time its sender ran since its previous flight.
type flightRecorder struct {
	mu       sync.Mutex
	clocks   [2]*memconn.Clock
	hellos   helloCounter
	flights  []flight
	written  [2]int64
	read     [2]int64
	ends     [2][]flightEnd
	readAt   [2]int64
	charged  [2]time.Duration
	finished [2]*int
	done     [2]bool
}

type flightEnd struct {
	end   int64
	index int
}

var senders = [2]string{"client", "server"}

// lastReadFlight is the peer flight holding the last byte side has read.
func (r *flightRecorder) lastReadFlight(side int) *int {
	if r.read[side] == 0 {
		return nil
	}
	for _, e := range r.ends[1-side] {
		if e.end >= r.read[side] {
			i := e.index
			return &i
		}
	}
	return nil
}

func (r *flightRecorder) Wrote(from memconn.Side, p []byte) {
	r.hellos.Wrote(from, p)
	r.mu.Lock()
	defer r.mu.Unlock()
	s := int(from)
	r.written[s] += int64(len(p))
	cpu := r.clocks[s].Elapsed() - r.charged[s]
	r.charged[s] += cpu
	if n := len(r.ends[s]); n > 0 && r.readAt[s] == r.read[s] {
		last := &r.ends[s][n-1]
		last.end = r.written[s]
		r.flights[last.index].Bytes += int64(len(p))
		r.flights[last.index].CPUNs += cpu.Nanoseconds()
		return
	}
	waits := r.lastReadFlight(s)
	r.readAt[s] = r.read[s]
	r.ends[s] = append(r.ends[s], flightEnd{r.written[s], len(r.flights)})
	r.flights = append(r.flights, flight{From: senders[s], Bytes: int64(len(p)), WaitsFor: waits, CPUNs: cpu.Nanoseconds()})
}

func (r *flightRecorder) Read(by memconn.Side, n int) {
	r.mu.Lock()
	r.read[by] += int64(n)
	r.mu.Unlock()
}

// finishedHandshake notes, once, the flight whose arrival let side finish its handshake.
func (r *flightRecorder) finishedHandshake(side memconn.Side) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done[side] {
		r.finished[side], r.done[side] = r.lastReadFlight(int(side)), true
	}
}

func (r *flightRecorder) latest(side memconn.Side) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.ends[side]; len(e) > 0 {
		return e[len(e)-1].index
	}
	return -1
}

// traced connects a pair, traced and checked like every handshake, then sends the request
// and the response.
func (c *cell) traced() (*trace, error) {
	rc, rs := memconn.Pair(memconn.DefaultLimit)
	rec := &flightRecorder{clocks: [2]*memconn.Clock{rc.Clock(), rs.Clock()}}
	memconn.Observe(rc, rec)
	r, err := c.connect(rc, rs, &rec.hellos, rec.finishedHandshake)
	if err != nil {
		return nil, err
	}
	client, server := r.client, r.server
	rec.mu.Lock()
	handshakeFlights := len(rec.flights)
	rec.mu.Unlock()
	request := -1
	err = both(rc, rs, func() error {
		rc.Clock().Start()
		defer rc.Clock().Pause()
		if _, err := client.Write(make([]byte, requestBytes)); err != nil {
			return err
		}
		request = rec.latest(memconn.Client)
		_, err := io.ReadFull(client, make([]byte, responseBytes))
		return err
	}, func() error {
		rs.Clock().Start()
		defer rs.Clock().Pause()
		if _, err := io.ReadFull(server, make([]byte, requestBytes)); err != nil {
			return err
		}
		_, err := server.Write(make([]byte, responseBytes))
		return err
	})
	if err != nil {
		return nil, err
	}
	response := rec.latest(memconn.Server)
	if response < handshakeFlights {
		return nil, errors.New("the server's response left in no flight of its own")
	}
	return &trace{
		Flights:             rec.flights,
		HandshakeFlights:    handshakeFlights,
		ClientFinishedAfter: rec.finished[memconn.Client],
		ServerFinishedAfter: rec.finished[memconn.Server],
		Request:             request,
		Response:            response,
		TailNs:              (rc.Clock().Elapsed() - rec.charged[memconn.Client]).Nanoseconds(),
	}, nil
}

// arrivals is each flight's arrival in round trips when it leaves the moment the flight it
// waits for arrives and each crossing takes half a round trip.
func (t *trace) arrivals() []float64 {
	a := make([]float64, len(t.Flights))
	for i, f := range t.Flights {
		if f.WaitsFor != nil {
			a[i] = a[*f.WaitsFor]
		}
		a[i] += 0.5
	}
	return a
}

func (t *trace) ready(after *int) float64 {
	if after == nil {
		return 0
	}
	return t.arrivals()[*after]
}

func (t *trace) describe() string {
	var parts []string
	for _, f := range t.Flights {
		p := fmt.Sprintf("%c %d", strings.ToUpper(f.From)[0], f.Bytes)
		if f.WaitsFor != nil {
			p += fmt.Sprintf(" <%d", *f.WaitsFor)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// checkRoundTrips holds both sides to the round trips the protocol allows before each may
// send application data (flights.rs, expected_ready_rtts).
func (c *cell) checkRoundTrips(t *trace) error {
	retry := float64(btoi(c.sc.HRR))
	client := 1.0
	if c.sc.Version == "tls12" && !c.sc.Resumed() {
		client = 2
	}
	for _, v := range []struct {
		side         string
		got, allowed float64
	}{{"client", t.ready(t.ClientFinishedAfter), client + retry}, {"server", t.ready(t.ServerFinishedAfter), 1.5 + retry}} {
		if v.got != v.allowed {
			return fmt.Errorf("the %s could send application data after %v round trips where the protocol allows %v (flights: %s)",
				v.side, v.got, v.allowed, t.describe())
		}
	}
	return nil
}

// wire traces `runs` connections after a warm-up; each sample holds the wire figures and
// the CPU both sides spent until the response. The median trace (flight by flight, of
// traces that all have one shape) is returned for the model.
func wire(c *cell, runs int, warmup time.Duration, on func(sample)) (*trace, error) {
	if err := c.prime(); err != nil {
		return nil, err
	}
	for start := time.Now(); time.Since(start) < warmup; {
		if _, err := c.traced(); err != nil {
			return nil, err
		}
	}
	var traces []*trace
	for range runs {
		t, err := c.traced()
		if err != nil {
			return nil, err
		}
		if err := c.checkRoundTrips(t); err != nil {
			return nil, err
		}
		on(wireSample(t))
		traces = append(traces, t)
	}
	return medianTrace(traces)
}

func wireSample(t *trace) sample {
	var bytes [2]int64
	var count [2]int
	var largest int64
	for _, f := range t.Flights[:t.HandshakeFlights] {
		s := btoi(f.From == "server")
		bytes[s] += f.Bytes
		count[s]++
		largest = max(largest, f.Bytes)
	}
	cpu := t.TailNs
	for _, f := range t.Flights {
		cpu += f.CPUNs
	}
	var s sample
	s.add(metrics.ClientWireBytes, float64(bytes[0]))
	s.add(metrics.ServerWireBytes, float64(bytes[1]))
	s.add(metrics.ClientFlights, float64(count[0]))
	s.add(metrics.ServerFlights, float64(count[1]))
	s.add(metrics.ClientHelloBytes, float64(t.Flights[0].Bytes))
	s.add(metrics.LargestFlightBytes, float64(largest))
	s.add(metrics.ClientReadyRTTs, t.ready(t.ClientFinishedAfter))
	s.add(metrics.ServerReadyRTTs, t.ready(t.ServerFinishedAfter))
	s.add(metrics.PathCPUNs, float64(cpu))
	return s
}

func medianTrace(traces []*trace) (*trace, error) {
	shape := func(t *trace) string {
		var b strings.Builder
		for _, f := range t.Flights {
			w := -1
			if f.WaitsFor != nil {
				w = *f.WaitsFor
			}
			fmt.Fprintf(&b, "%s<%d ", f.From, w)
		}
		return b.String()
	}
	first := traces[0]
	var shapes []string
	same := true
	for _, t := range traces {
		same = same && shape(t) == shape(first)
		shapes = append(shapes, t.describe())
	}
	if !same {
		return nil, fmt.Errorf("the connections' flights changed shape from one to the next: %s", strings.Join(shapes, " / "))
	}
	median := func(v []int64) int64 {
		sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	out := *first
	out.Flights = append([]flight(nil), first.Flights...)
	for i := range out.Flights {
		var v []int64
		for _, t := range traces {
			v = append(v, t.Flights[i].CPUNs)
		}
		out.Flights[i].CPUNs = median(v)
	}
	var tails []int64
	for _, t := range traces {
		tails = append(tails, t.TailNs)
	}
	out.TailNs = median(tails)
	return &out, nil
}
