package driver

import (
	"bufio"
	"encoding/json"
	"os"
)

// The messages a driver prints, one JSON object per line (crates/model/src/protocol.rs).
// In `group` output every line but done names its cell, and samples their round.

type metricValue [2]any

type message struct {
	Type          string        `json:"type"`
	Cell          *int          `json:"cell,omitempty"`
	Round         *int          `json:"round,omitempty"`
	ClientVersion string        `json:"client_version,omitempty"`
	ServerVersion string        `json:"server_version,omitempty"`
	Values        []metricValue `json:"values,omitempty"`
	Reason        string        `json:"reason,omitempty"`
	Message       string        `json:"message,omitempty"`
	Trace         *trace        `json:"trace,omitempty"`
	Step          *int          `json:"step,omitempty"`
}

// sample is one sample's figures, in order.
type sample []metricValue

func (s *sample) add(metric string, v float64) { *s = append(*s, metricValue{metric, v}) }

var out = bufio.NewWriter(os.Stdout)

// emit prints one message; a closed pipe means the orchestrator is gone, so the driver ends.
func emit(m message) {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // every message marshals
	}
	out.Write(append(b, '\n'))
	if err := out.Flush(); err != nil {
		os.Exit(1)
	}
}

func cellIndex(cell int) *int {
	if cell < 0 {
		return nil
	}
	return &cell
}

func hello(cell int, version string) {
	emit(message{Type: "hello", Cell: cellIndex(cell), ClientVersion: version, ServerVersion: version})
}

func emitSample(cell, round int, s sample) {
	m := message{Type: "sample", Cell: cellIndex(cell), Values: s}
	if round >= 0 {
		m.Round = &round
	}
	emit(m)
}

func unsupported(cell int, reason string) {
	emit(message{Type: "unsupported", Cell: cellIndex(cell), Reason: reason})
}

func failed(cell int, err error) {
	emit(message{Type: "error", Cell: cellIndex(cell), Message: err.Error()})
}

func done() { emit(message{Type: "done"}) }
