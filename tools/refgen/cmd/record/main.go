// Command record serves watch streams of fixtures/kubernetes/streams with Go's net/http, over HTTP/1.1 and over
// h2c (golang.org/x/net/http2 + h2c), requests them with Go's HTTP clients, and records both directions of each
// TCP connection byte for byte through a loopback proxy. Output: <out>/<name>.s2c.bin (server to client),
// <out>/<name>.c2s.bin (client to server) and <out>/index.json.
//
//	go run ./cmd/record -streams ../../fixtures/kubernetes/streams -out ../../fixtures/kubernetes/captures
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"golang.org/x/net/http2/hpack"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/watchwire/watchwire/tools/refgen/internal/wiretap"
	"github.com/watchwire/watchwire/tools/refgen/realistic/wire"
)

// resource is a watchable collection the server knows, and the fixture stream it serves for it.
type resource struct {
	path   string // request path without query
	gv     schema.GroupVersion
	stream string // base name in streams/ ("v1.Pod")
}

var resources = map[string]resource{
	"pods":        {"/api/v1/namespaces/default/pods", schema.GroupVersion{Version: "v1"}, "v1.Pod"},
	"nodes":       {"/api/v1/nodes", schema.GroupVersion{Version: "v1"}, "v1.Node"},
	"configmaps":  {"/api/v1/namespaces/default/configmaps", schema.GroupVersion{Version: "v1"}, "v1.ConfigMap"},
	"deployments": {"/apis/apps/v1/namespaces/default/deployments", schema.GroupVersion{Group: "apps", Version: "v1"}, "apps_v1.Deployment"},
}

// capture is one recorded connection: one watch request and its response.
type capture struct {
	Name        string `json:"name"`
	Protocol    string `json:"protocol"` // "http/1.1" or "h2c"
	Resource    string `json:"-"`
	RequestPath string `json:"requestPath"`
	Accept      string `json:"accept"`
	ContentType string `json:"contentType"` // of the response
	S2C         string `json:"s2c"`
	C2S         string `json:"c2s"`
	// Stream is the fixture file the response body equals byte for byte (relative to fixtures/kubernetes).
	Stream string `json:"stream"`
	Events int    `json:"events"`
}

const (
	host          = "kubernetes.default.svc" // the Host / :authority the clients send (not the ephemeral proxy port)
	query         = "?allowWatchBookmarks=true&watch=true"
	acceptPB      = "application/vnd.kubernetes.protobuf;stream=watch"
	acceptJSON    = "application/json"
	serverTimeout = 30 * time.Second
)

var captures = []capture{
	{Name: "go-http1-pods", Protocol: "http/1.1", Resource: "pods", Accept: acceptPB},
	{Name: "go-http1-nodes", Protocol: "http/1.1", Resource: "nodes", Accept: acceptPB},
	{Name: "go-http1-configmaps", Protocol: "http/1.1", Resource: "configmaps", Accept: acceptPB},
	{Name: "go-http1-deployments", Protocol: "http/1.1", Resource: "deployments", Accept: acceptPB},
	{Name: "go-http1-pods-json", Protocol: "http/1.1", Resource: "pods", Accept: acceptJSON},
	{Name: "go-h2c-pods", Protocol: "h2c", Resource: "pods", Accept: acceptPB},
	{Name: "go-h2c-nodes", Protocol: "h2c", Resource: "nodes", Accept: acceptPB},
	{Name: "go-h2c-configmaps", Protocol: "h2c", Resource: "configmaps", Accept: acceptPB},
	{Name: "go-h2c-deployments", Protocol: "h2c", Resource: "deployments", Accept: acceptPB},
}

func main() {
	streams := flag.String("streams", "", "the streams/ folder written by cmd/fixtures")
	out := flag.String("out", "", "output folder (fixtures/kubernetes/captures); its *.bin and index.json are replaced")
	force := flag.Bool("force", false, "replace a capture even when the new recording differs from it only in the Date header")
	check := flag.Bool("check", false, "write nothing; fail if a new recording differs from the one in -out other than in the Date header")
	flag.Parse()
	if *streams == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: record -streams DIR -out DIR [-force | -check]")
		os.Exit(2)
	}
	if err := run(*streams, *out, *force, *check); err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}

// run records every capture. A recording that differs from the file already in out only in the server's Date
// header leaves the file as it is (unless force), so that regenerating changes nothing when nothing else changed.
func run(streams, out string, force, check bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var index []capture
	files := map[string][]byte{}
	for _, c := range captures {
		c, s2c, c2s, err := record(c, streams)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		index = append(index, c)
		oldS2C, err1 := os.ReadFile(filepath.Join(out, c.S2C))
		oldC2S, err2 := os.ReadFile(filepath.Join(out, c.C2S))
		exact := err1 == nil && err2 == nil && bytes.Equal(oldC2S, c2s) && bytes.Equal(oldS2C, s2c)
		same := exact || err1 == nil && err2 == nil && sameRecording(c.Protocol, oldS2C, s2c) && sameRecording(c.Protocol, oldC2S, c2s)
		status := "new"
		switch {
		case exact:
			status = "identical"
		case same && !force:
			status, s2c, c2s = "same but Date/control frame order: kept", oldS2C, oldC2S
		case same:
			status = "same but Date/control frame order: replaced"
		case err1 == nil:
			status = "CHANGED"
		}
		fmt.Fprintf(os.Stderr, "record: %-22s %-8s %6d B s2c %5d B c2s, %d events: %s\n", c.Name, c.Protocol, len(s2c), len(c2s), c.Events, status)
		if check && !same {
			return fmt.Errorf("%s: the new recording differs from %s", c.Name, out)
		}
		files[c.S2C], files[c.C2S] = s2c, c2s
	}
	data, err := json.MarshalIndent(index, "", "  ")
	if err != nil {
		return err
	}
	files["index.json"] = append(data, '\n')
	if check {
		if old, err := os.ReadFile(filepath.Join(out, "index.json")); err != nil || !bytes.Equal(old, files["index.json"]) {
			return fmt.Errorf("%s/index.json differs", out)
		}
		return nil
	}
	// Everything named *.bin in out is ours: drop captures that are no longer made.
	old, _ := filepath.Glob(filepath.Join(out, "*.bin"))
	for _, f := range old {
		if _, ok := files[filepath.Base(f)]; !ok {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// watchHandler serves a watch as the API server's watch handler does (WatchServer.HandleHTTP): Content-Type
// with ";stream=watch" for protobuf, Transfer-Encoding: chunked, WriteHeader and Flush, then one encoded event
// per framer write with a Flush after each, and the response ends when the watch ends (after the ERROR event).
// The events are read from the fixture stream and encoded again with the real encoder; the header values that the
// apiserver's filters add (Audit-Id, Cache-Control, X-Kubernetes-Pf-*) are fixed. done is closed when a watch
// response has ended.
func watchHandler(streams string, done chan<- struct{}) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		defer once.Do(func() { close(done) })
		var res resource
		found := false
		for _, r := range resources {
			if r.path == req.URL.Path {
				res, found = r, true
			}
		}
		if !found || req.URL.Query().Get("watch") != "true" {
			http.NotFound(w, req)
			return
		}
		mediaType, ext := wire.JSON, ".json"
		if strings.Contains(req.Header.Get("Accept"), wire.Protobuf) {
			mediaType, ext = wire.Protobuf, ".pb"
		}
		data, err := os.ReadFile(filepath.Join(streams, res.stream+ext))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		events, err := wire.DecodeStream(data, mediaType, res.gv)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		flusher := w.(http.Flusher)
		h := w.Header()
		h.Set("Audit-Id", "3f6b1f0e-9d1c-4b7e-8a52-0c2e6f1d9a47")
		h.Set("Cache-Control", "no-cache, private")
		h.Set("X-Kubernetes-Pf-Flowschema-Uid", "7b9f2c31-5d4e-4a8b-9c61-2e3f4a5b6c7d")
		h.Set("X-Kubernetes-Pf-Prioritylevel-Uid", "1a2b3c4d-5e6f-4789-8abc-def012345678")
		h.Set("Content-Type", wire.ResponseContentType(mediaType))
		h.Set("Transfer-Encoding", "chunked")
		w.WriteHeader(http.StatusOK)
		flusher.Flush()
		enc, err := wire.Encoder(w, mediaType, res.gv)
		if err != nil {
			return
		}
		for i := range events {
			if err := enc.Encode(&watch.Event{Type: events[i].Type, Object: events[i].Object}); err != nil {
				return
			}
			flusher.Flush()
		}
	})
}

// record runs one capture: a fresh server, the proxy, one client connection. It returns the recorded bytes of
// both directions after checking them.
func record(c capture, streams string) (_ capture, s2c, c2s []byte, err error) {
	res := resources[c.Resource]
	c.RequestPath = res.path + query
	ext := ".json"
	if c.Accept == acceptPB {
		ext = ".pb"
	}
	c.Stream = "streams/" + res.stream + ext
	c.S2C, c.C2S = c.Name+".s2c.bin", c.Name+".c2s.bin"
	want, err := os.ReadFile(filepath.Join(streams, res.stream+ext))
	if err != nil {
		return c, nil, nil, err
	}

	handlerDone := make(chan struct{})
	var handler http.Handler = watchHandler(streams, handlerDone)
	if c.Protocol == "h2c" {
		handler = h2c.NewHandler(handler, &http2.Server{})
	}
	srvLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return c, nil, nil, err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: serverTimeout}
	go srv.Serve(srvLn)
	defer srv.Close()

	proxy, err := wiretap.New(srvLn.Addr().String())
	if err != nil {
		return c, nil, nil, err
	}
	dial := func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", proxy.Addr)
	}

	req, err := http.NewRequest(http.MethodGet, "http://"+host+c.RequestPath, nil)
	if err != nil {
		return c, nil, nil, err
	}
	req.Header.Set("Accept", c.Accept)
	ctx, cancel := context.WithTimeout(context.Background(), serverTimeout)
	defer cancel()
	req = req.WithContext(ctx)

	var rt http.RoundTripper
	var closeIdle func()
	switch c.Protocol {
	case "http/1.1":
		tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }}
		rt, closeIdle = tr, tr.CloseIdleConnections
	case "h2c":
		// Prior-knowledge h2c: AllowHTTP lets the http2 transport speak HTTP/2 over the plain TCP connection it
		// gets from DialTLSContext.
		tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, _, _ string, _ *tls.Config) (net.Conn, error) {
			return dial(ctx)
		}}
		rt, closeIdle = tr, tr.CloseIdleConnections
	}
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		return c, nil, nil, err
	}
	// The client reads the body only once the whole response has arrived. An HTTP/2 client's WINDOW_UPDATE
	// frames follow its reads, so reading while data still arrives would make them differ between recordings.
	select {
	case <-handlerDone:
	case <-ctx.Done():
		return c, nil, nil, errors.New("the watch response did not end")
	}
	proxy.WaitQuiet()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return c, nil, nil, err
	}
	closeIdle()
	s2c, c2s, err = proxy.Wait(serverTimeout)
	if err != nil {
		return c, nil, nil, err
	}

	// What the client saw.
	c.ContentType = resp.Header.Get("Content-Type")
	wantProto := map[string]string{"http/1.1": "HTTP/1.1", "h2c": "HTTP/2.0"}[c.Protocol]
	if resp.StatusCode != http.StatusOK || resp.Proto != wantProto || c.ContentType != wire.ResponseContentType(mediaTypeOf(c.Accept)) {
		return c, nil, nil, fmt.Errorf("response %s %d %q", resp.Proto, resp.StatusCode, c.ContentType)
	}
	if !bytes.Equal(body, want) {
		return c, nil, nil, fmt.Errorf("the response body (%d bytes) differs from %s (%d bytes)", len(body), c.Stream, len(want))
	}
	events, err := wire.DecodeStream(body, mediaTypeOf(c.Accept), res.gv)
	if err != nil {
		return c, nil, nil, err
	}
	c.Events = len(events)

	// What the proxy recorded: the body must be in the recorded bytes, framed as the protocol frames it.
	var recorded []byte
	if c.Protocol == "http/1.1" {
		recorded, err = http1Body(s2c)
	} else {
		recorded, err = h2Body(s2c, c2s)
	}
	if err != nil {
		return c, nil, nil, fmt.Errorf("recorded bytes: %w", err)
	}
	if !bytes.Equal(recorded, want) {
		return c, nil, nil, fmt.Errorf("the recorded response body (%d bytes) differs from %s", len(recorded), c.Stream)
	}

	return c, s2c, c2s, nil
}

func mediaTypeOf(accept string) string {
	if accept == acceptPB {
		return wire.Protobuf
	}
	return wire.JSON
}

// http1Body parses the recorded server-to-client bytes as one HTTP/1.1 response and returns its de-chunked body.
func http1Body(s2c []byte) ([]byte, error) {
	r := bufio.NewReader(bytes.NewReader(s2c))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		return nil, fmt.Errorf("transfer encoding %v, want chunked", resp.TransferEncoding)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if r.Buffered() != 0 {
		return nil, fmt.Errorf("%d bytes after the response", r.Buffered())
	}
	return body, nil
}

// h2Body checks the client preface and returns the DATA of stream 1 in the recorded server-to-client frames.
func h2Body(s2c, c2s []byte) ([]byte, error) {
	if !bytes.HasPrefix(c2s, []byte(http2.ClientPreface)) {
		return nil, errors.New("client-to-server bytes do not start with the HTTP/2 client preface")
	}
	fr := http2.NewFramer(io.Discard, bytes.NewReader(s2c))
	fr.MaxHeaderListSize = 1 << 20
	var body []byte
	ended := false
	for {
		f, err := fr.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if d, ok := f.(*http2.DataFrame); ok && d.StreamID == 1 {
			body = append(body, d.Data()...)
			ended = ended || d.StreamEnded()
		}
	}
	if !ended {
		return nil, errors.New("stream 1 did not end")
	}
	return body, nil
}

// sameRecording reports whether two recordings of one direction of a connection differ at most in what changes
// from one recording to the next without any change in the fixtures or the programs: the server's Date header
// value and, for HTTP/2, the order in which a peer's connection-level control frames (stream 0: SETTINGS, its
// ACK, WINDOW_UPDATE, PING) interleave with each other and with the stream's frames, which follows goroutine
// scheduling in Go's HTTP/2 server and client.
func sameRecording(protocol string, a, b []byte) bool {
	x, errX := canonical(protocol, a)
	y, errY := canonical(protocol, b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// canonical is the recording with the Date header value blanked: for HTTP/1.1 the Date line; for HTTP/2 the
// frames of streams other than 0 in order, HEADERS as their decoded header list (the Huffman-coded date can
// change a frame's length), then the stream-0 frames sorted.
func canonical(protocol string, data []byte) ([]byte, error) {
	if protocol == "http/1.1" {
		head, rest, ok := bytes.Cut(data, []byte("\r\n\r\n"))
		if !ok {
			return data, nil // a request without headers' end cannot come from these clients; compare as is
		}
		var out bytes.Buffer
		for _, line := range bytes.Split(head, []byte("\r\n")) {
			if bytes.HasPrefix(line, []byte("Date: ")) {
				line = []byte("Date: -")
			}
			out.Write(line)
			out.WriteString("\r\n")
		}
		out.WriteString("\r\n")
		out.Write(rest)
		return out.Bytes(), nil
	}
	var out bytes.Buffer
	var control []string
	if bytes.HasPrefix(data, []byte(http2.ClientPreface)) {
		out.WriteString(http2.ClientPreface)
		data = data[len(http2.ClientPreface):]
	}
	dec := hpack.NewDecoder(4096, nil)
	for r := bytes.NewReader(data); r.Len() > 0; {
		var h [9]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil, err
		}
		payload := make([]byte, int(h[0])<<16|int(h[1])<<8|int(h[2]))
		if _, err := io.ReadFull(r, payload); err != nil {
			return nil, err
		}
		stream := binary.BigEndian.Uint32(h[5:9]) & (1<<31 - 1)
		typ, flags := http2.FrameType(h[3]), http2.Flags(h[4])
		switch {
		case stream == 0:
			control = append(control, fmt.Sprintf("%s flags=%d %x", typ, flags, payload))
		case typ == http2.FrameHeaders && flags&(http2.FlagHeadersPadded|http2.FlagHeadersPriority) == 0:
			fields, err := dec.DecodeFull(payload)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&out, "HEADERS flags=%d stream=%d\n", flags, stream)
			for _, f := range fields {
				if f.Name == "date" {
					f.Value = "-"
				}
				fmt.Fprintf(&out, "%s: %s\n", f.Name, f.Value)
			}
		default:
			out.Write(h[:])
			out.Write(payload)
		}
	}
	sort.Strings(control)
	for _, c := range control {
		out.WriteString(c + "\n")
	}
	return out.Bytes(), nil
}
