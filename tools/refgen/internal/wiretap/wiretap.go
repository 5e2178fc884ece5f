// Package wiretap is a loopback TCP proxy for one connection that records both directions byte for byte, for the
// commands that record captures from Go's HTTP stacks.
package wiretap

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy is a loopback TCP proxy for one connection that records the bytes of each direction.
type Proxy struct {
	// Addr is the address to connect to (127.0.0.1, an ephemeral port).
	Addr string
	ln   net.Listener
	done chan struct{}
	err  error
	s2c  lockedBuffer
	c2s  lockedBuffer
}

// lockedBuffer is a bytes.Buffer that can be measured while a pump writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// WaitQuiet returns once no server-to-client byte has passed the proxy for 100 ms.
func (p *Proxy) WaitQuiet() {
	n, stable := p.s2c.Len(), 0
	for stable < 10 {
		time.Sleep(10 * time.Millisecond)
		if m := p.s2c.Len(); m != n {
			n, stable = m, 0
		} else {
			stable++
		}
	}
}

// New starts a proxy that accepts one connection and forwards it to upstream.
func New(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer ln.Close()
		client, err := ln.Accept()
		if err != nil {
			p.err = err
			return
		}
		defer client.Close()
		server, err := net.Dial("tcp", upstream)
		if err != nil {
			p.err = err
			return
		}
		defer server.Close()
		var wg sync.WaitGroup
		wg.Add(2)
		var errs [2]error
		go func() { defer wg.Done(); errs[0] = pump(server, client, &p.c2s) }()
		go func() { defer wg.Done(); errs[1] = pump(client, server, &p.s2c) }()
		wg.Wait()
		p.err = errors.Join(errs[0], errs[1])
	}()
	return p, nil
}

// pump copies src to dst and into rec until src ends, then half-closes dst so that the end reaches the other side.
func pump(dst, src net.Conn, rec io.Writer) error {
	_, err := io.Copy(io.MultiWriter(dst, rec), src)
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	return err
}

// Wait returns the recorded bytes once both directions have ended.
func (p *Proxy) Wait(timeout time.Duration) (s2c, c2s []byte, err error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.ln.Close()
		return nil, nil, errors.New("the recorded connection did not end")
	}
	return p.s2c.buf.Bytes(), p.c2s.buf.Bytes(), p.err
}
