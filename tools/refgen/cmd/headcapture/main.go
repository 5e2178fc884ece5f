// Command headcapture records one keep-alive HTTP/1.1 connection between Go's net/http client and server, both
// directions byte for byte through a loopback proxy: HEAD and GET of a Pod list, then HEAD and GET of a JSON watch of
// three Pods. The responses to HEAD are what a decoder of the server's bytes alone cannot frame: the first carries the
// list's Content-Length (82) and no body, the second neither a length nor chunked coding (the watch's GET is chunked),
// so only the requests tell where the next response starts. Output: <out>/go-http1-head.s2c.bin (server to client)
// and <out>/go-http1-head.c2s.bin (client to server). Only the Date headers change from one recording to the next.
//
//	go run ./cmd/headcapture -out ../../fixtures
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/watchwire/watchwire/tools/refgen/internal/wiretap"
)

// The requests, in order, on one connection.
var requests = []struct{ method, target string }{
	{"HEAD", "/api/v1/namespaces/default/pods"},
	{"GET", "/api/v1/namespaces/default/pods"},
	{"HEAD", "/api/v1/namespaces/default/pods?watch=1"},
	{"GET", "/api/v1/namespaces/default/pods?watch=1"},
}

const list = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]}`

func handler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("watch") != "1" {
		// For HEAD, net/http sends the head this write implies (Content-Length: 82) and drops the body.
		io.WriteString(w, list)
		return
	}
	for i := 0; i < 3; i++ {
		fmt.Fprintf(w, `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-%d","namespace":"default","resourceVersion":"%d"}}}`+"\n", i, 10+i)
		w.(http.Flusher).Flush() // each event its own chunk, as the API server sends them
	}
}

func main() {
	out := flag.String("out", "", "folder to write go-http1-head.{s2c,c2s}.bin into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: headcapture -out DIR")
		os.Exit(2)
	}
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "headcapture:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	server, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer server.Close()
	go http.Serve(server, http.HandlerFunc(handler))

	proxy, err := wiretap.New(server.Addr().String())
	if err != nil {
		return err
	}

	// One connection at most, kept alive between the requests; no Accept-Encoding, so the bodies stay as written.
	transport := &http.Transport{MaxConnsPerHost: 1, DisableCompression: true}
	client := &http.Client{Transport: transport}
	for _, req := range requests {
		r, err := http.NewRequest(req.method, "http://"+proxy.Addr+req.target, nil)
		if err != nil {
			return err
		}
		r.Host = "kubernetes.default.svc" // not the proxy's ephemeral port: recordings differ only in Date
		resp, err := client.Do(r)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s %s: %d, Content-Length %d, %d body bytes\n", req.method, req.target, resp.StatusCode, resp.ContentLength, len(body))
	}
	transport.CloseIdleConnections()
	s2c, c2s, err := proxy.Wait(5 * time.Second)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "go-http1-head.s2c.bin"), s2c, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "go-http1-head.c2s.bin"), c2s, 0o644)
}
