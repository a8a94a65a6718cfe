package main

import "testing"

// The request line is the drivers' (crates/harness/src/quic_stream.rs): GET /N, ended by
// CRLF or the stream's end, N at most 1 GiB; anything else is refused with a reason.
func TestParseRequest(t *testing.T) {
	for line, want := range map[string]int{"GET /0\r\n": 0, "GET /1024\r\n": 1024, "GET /1048576": 1 << 20} {
		if n, err := parseRequest(line); err != nil || n != want {
			t.Errorf("%q: %d, %v", line, n, err)
		}
	}
	for _, bad := range []string{"", "POST /1\r\n", "GET /x\r\n", "GET /-1\r\n", "GET /1073741825\r\n"} {
		if n, err := parseRequest(bad); err == nil {
			t.Errorf("%q was taken as /%d", bad, n)
		}
	}
}

// The answer's pattern repeats every 251 bytes, as the drivers' does.
func TestAnswerPatternIsTheDrivers(t *testing.T) {
	if answerByte(0) != 0 || answerByte(250) != 250 || answerByte(251) != 0 || answerByte(1000) != byte(1000%251) {
		t.Error("the answer pattern differs from crates/harness/src/quic_stream.rs")
	}
}
