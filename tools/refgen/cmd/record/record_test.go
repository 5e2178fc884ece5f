package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

const fixtures = "../../../../fixtures/kubernetes"

// A fresh recording of each protocol matches the committed capture up to the Date header and control-frame order,
// and that comparison does see a change anywhere else.
func TestRecordingMatchesCommittedCapture(t *testing.T) {
	for _, name := range []string{"go-http1-pods", "go-h2c-pods"} {
		var c capture
		for _, x := range captures {
			if x.Name == name {
				c = x
			}
		}
		c, s2c, c2s, err := record(c, filepath.Join(fixtures, "streams"))
		if err != nil {
			t.Fatal(err)
		}
		oldS2C, err := os.ReadFile(filepath.Join(fixtures, "captures", c.S2C))
		if err != nil {
			t.Fatal(err)
		}
		oldC2S, err := os.ReadFile(filepath.Join(fixtures, "captures", c.C2S))
		if err != nil {
			t.Fatal(err)
		}
		if !sameRecording(c.Protocol, oldS2C, s2c) || !sameRecording(c.Protocol, oldC2S, c2s) {
			t.Errorf("%s: the new recording differs from the committed one", name)
		}
		// One byte of the body changed (inside the last DATA frame / chunk, before the end of the stream).
		changed := bytes.Clone(s2c)
		changed[len(changed)-40] ^= 1
		if sameRecording(c.Protocol, oldS2C, changed) {
			t.Errorf("%s: a changed body byte goes unnoticed", name)
		}
		if sameRecording(c.Protocol, oldC2S, append(bytes.Clone(c2s), 0)) {
			t.Errorf("%s: an extra request byte goes unnoticed", name)
		}
	}
}

func TestCanonicalBlanksOnlyTheDate(t *testing.T) {
	a := []byte("HTTP/1.1 200 OK\r\nDate: Sun, 22 Nov 2026 17:19:45 GMT\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	b := bytes.Replace(a, []byte("17:19:45"), []byte("18:00:01"), 1)
	if !sameRecording("http/1.1", a, b) {
		t.Error("a Date change is reported")
	}
	if sameRecording("http/1.1", a, bytes.Replace(a, []byte("200 OK"), []byte("201 OK"), 1)) {
		t.Error("a status change is not reported")
	}
}
