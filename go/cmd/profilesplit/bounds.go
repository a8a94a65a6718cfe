package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"text/tabwriter"
)

// upstreamArm is the reference every factor is taken against.
const upstreamArm = "go-libp2p-upstream"

// record is one profile's time per operation, split in and out of the TLS
// library, as --record appends it.
type record struct {
	Name     string  `json:"name"`
	Workload string  `json:"workload"`
	NsPerOp  float64 `json:"ns_per_op"`
	// LibraryNs is the TLS library's share of NsPerOp; the rest (the
	// libp2p check, kernel, runtime, glue, unwound Go crypto) is NsPerOp less it.
	LibraryNs float64 `json:"library_ns"`
	// MonitorSamples are Go's monitor thread's, kept out of the shares: on
	// one CPU they still take time from the handshake.
	MonitorSamples int `json:"monitor_samples"`
}

func (p profile) record(name, workload string, nsPerOp float64) record {
	return record{
		Name:           name,
		Workload:       workload,
		NsPerOp:        nsPerOp,
		LibraryNs:      float64(p.counts[library]) / float64(p.total) * nsPerOp,
		MonitorSamples: p.counts[monitor],
	}
}

func appendRecord(file string, r record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readRecords(file string) ([]record, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs []record
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, n, err)
		}
		if r.Name == "" || r.Workload == "" || !(r.NsPerOp > 0) || r.LibraryNs < 0 || r.LibraryNs > r.NsPerOp || math.IsInf(r.NsPerOp, 0) {
			return nil, fmt.Errorf("%s:%d: not a profile record (name, workload, ns_per_op > 0, 0 <= library_ns <= ns_per_op)", file, n)
		}
		rs = append(rs, r)
	}
	return rs, sc.Err()
}

// bound is what a backend's time could come down to if everything outside
// its TLS library cost what it costs the leanest backend: all backends run
// the same Go code (transport, shim, libp2p check), so the difference left
// is the library's own work, which the transport cannot remove.
type bound struct {
	record
	factor, bound float64
}

// bounds takes each workload's backends against its upstream record; the
// leanest rest is the smallest time outside the library of any backend.
func bounds(rs []record) (map[string][]bound, map[string]record, error) {
	ref := map[string]record{}
	for _, r := range rs {
		if r.Name == upstreamArm {
			ref[r.Workload] = r
		}
	}
	leanest := map[string]record{}
	for _, r := range rs {
		if r.Name == upstreamArm {
			continue
		}
		if l, ok := leanest[r.Workload]; !ok || r.NsPerOp-r.LibraryNs < l.NsPerOp-l.LibraryNs {
			leanest[r.Workload] = r
		}
	}
	out := map[string][]bound{}
	for _, r := range rs {
		if r.Name == upstreamArm {
			continue
		}
		up, ok := ref[r.Workload]
		if !ok {
			return nil, nil, fmt.Errorf("no %s profile for %s to take factors against", upstreamArm, r.Workload)
		}
		l := leanest[r.Workload]
		out[r.Workload] = append(out[r.Workload], bound{
			record: r,
			factor: r.NsPerOp / up.NsPerOp,
			bound:  (r.LibraryNs + l.NsPerOp - l.LibraryNs) / up.NsPerOp,
		})
	}
	if len(out) == 0 {
		return nil, nil, errors.New("no backend profiles to bound")
	}
	return out, leanest, nil
}

func printBounds(file string, w io.Writer) error {
	rs, err := readRecords(file)
	if err != nil {
		return err
	}
	bs, leanest, err := bounds(rs)
	if err != nil {
		return err
	}
	workloads := make([]string, 0, len(bs))
	for wl := range bs {
		workloads = append(workloads, wl)
	}
	sort.Strings(workloads)
	for _, wl := range workloads {
		l := leanest[wl]
		fmt.Fprintf(w, "\n%s: time / %s's under perf, and the bound each TLS library allows: its own\n", wl, upstreamArm)
		fmt.Fprintf(w, "time plus the leanest time outside a library of any backend (%s: %.0f µs)\n", l.Name, (l.NsPerOp-l.LibraryNs)/1e3)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "arm\tper op\tlibrary\toutside it\tfactor\tbound\tmonitor samples\t\n")
		for _, b := range bs[wl] {
			fmt.Fprintf(tw, "%s\t%.0f µs\t%.0f µs\t%.0f µs\t%.2fx\t%.2fx\t%d\t\n", b.Name, b.NsPerOp/1e3, b.LibraryNs/1e3,
				(b.NsPerOp-b.LibraryNs)/1e3, b.factor, b.bound, b.MonitorSamples)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
