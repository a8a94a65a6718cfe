package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// key names one benchmarked figure.
type key struct {
	bench, client, server string // bench: Handshake, Latency, Connections
}

// measurement is one line of `go test -bench -benchmem` output.
type measurement struct {
	nsPerOp, bytesPerOp, allocsPerOp float64
}

// parsed is everything read from one or more runs.
type parsed struct {
	samples  map[key][]measurement
	order    []key
	versions map[string]string // impl name -> version
	cpu      string
}

var benchLine = regexp.MustCompile(`^Benchmark(\w+)/client=(\w+)/server=(\w+)(?:-\d+)?\s+\d+\s+(\S+) ns/op(?:\s+(\S+) B/op\s+(\S+) allocs/op)?`)

func parse(r io.Reader) (*parsed, error) {
	p := &parsed{samples: map[key][]measurement{}, versions: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "tlsmatrix-versions\t"):
			for _, f := range strings.Split(text, "\t")[1:] {
				name, version, ok := strings.Cut(f, "=")
				if !ok || version == "" {
					return nil, fmt.Errorf("line %d: malformed versions field %q", line, f)
				}
				if old, seen := p.versions[name]; seen && old != version {
					return nil, fmt.Errorf("line %d: %s changed version between runs (%s, then %s)", line, name, old, version)
				}
				p.versions[name] = version
			}
		case strings.HasPrefix(text, "cpu: "):
			p.cpu = strings.TrimPrefix(text, "cpu: ")
		case strings.HasPrefix(text, "Benchmark"):
			m := benchLine.FindStringSubmatch(text)
			if m == nil {
				return nil, fmt.Errorf("line %d: unrecognised benchmark line %q", line, text)
			}
			if m[5] == "" {
				return nil, fmt.Errorf("line %d: no allocation figures; run the benchmarks with -benchmem", line)
			}
			var meas measurement
			for i, dst := range []*float64{&meas.nsPerOp, &meas.bytesPerOp, &meas.allocsPerOp} {
				v, err := strconv.ParseFloat(m[4+i], 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: %v", line, err)
				}
				*dst = v
			}
			k := key{m[1], m[2], m[3]}
			if _, seen := p.samples[k]; !seen {
				p.order = append(p.order, k)
			}
			p.samples[k] = append(p.samples[k], meas)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(p.order) == 0 {
		return nil, fmt.Errorf("no benchmark results in the input")
	}
	for _, impl := range []string{"go-crypto-tls", "go-openssl"} {
		if p.versions[impl] == "" {
			return nil, fmt.Errorf("the input does not say which %s version ran (no tlsmatrix-versions line)", impl)
		}
	}
	return p, nil
}
