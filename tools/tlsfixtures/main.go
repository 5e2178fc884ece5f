// Command tlsfixtures records one TLS connection made by Go's crypto/tls for watchwire's TLS decryption tests: a
// crypto/tls server and client on loopback, a plain TCP relay between them that keeps the bytes of each direction, and
// the client's key log (tls.Config.KeyLogWriter). The client sends a known HTTP/1.1 request, the server a known
// response; both sides' plaintext, as crypto/tls handed it over, goes into the expected file.
//
//	go run . -out ../../fixtures/captures -name tls-go-1.3 [-hrr]
//
// writes <name>.c2s.bin, <name>.s2c.bin, <name>.keys.txt and <name>.expected.json. With -hrr the server accepts only
// P-256 while the client's first ClientHello offers an X25519 key share alone: the server answers with a
// HelloRetryRequest.
package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

const serverName = "watchwire.test"

// expected is what the test checks the decryption against: what crypto/tls reported and handed over.
type expected struct {
	Producer        string `json:"producer"`
	Version         string `json:"version"`
	CipherSuite     string `json:"cipherSuite"`
	ALPN            string `json:"alpn"`
	ServerName      string `json:"serverName"`
	HelloRetry      bool   `json:"helloRetry"`
	ClientPlaintext []byte `json:"clientPlaintext"`
	ServerPlaintext []byte `json:"serverPlaintext"`
}

func main() {
	out := flag.String("out", ".", "directory to write the fixture files to")
	name := flag.String("name", "tls-go-1.3", "file name prefix")
	hrr := flag.Bool("hrr", false, "make the server answer the first ClientHello with a HelloRetryRequest")
	flag.Parse()
	if err := record(*out, *name, *hrr); err != nil {
		log.Fatal(err)
	}
}

func record(out, name string, hrr bool) error {
	cert, err := selfSigned()
	if err != nil {
		return err
	}
	serverConfig := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	clientConfig := &tls.Config{
		ServerName:         serverName,
		InsecureSkipVerify: true,
		NextProtos:         []string{"http/1.1"},
	}
	if hrr {
		serverConfig.CurvePreferences = []tls.CurveID{tls.CurveP256}
		clientConfig.CurvePreferences = []tls.CurveID{tls.X25519, tls.CurveP256}
	}
	var keyLog bytes.Buffer
	clientConfig.KeyLogWriter = &keyLog

	server, err := tls.Listen("tcp", "127.0.0.1:0", serverConfig)
	if err != nil {
		return err
	}
	defer server.Close()
	relay, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer relay.Close()

	var serverGot, serverSent []byte
	var state tls.ConnectionState
	serverDone := make(chan error, 1)
	go func() {
		serverDone <- func() error {
			conn, err := server.Accept()
			if err != nil {
				return err
			}
			defer conn.Close()
			tlsConn := conn.(*tls.Conn)
			if err := tlsConn.Handshake(); err != nil {
				return err
			}
			state = tlsConn.ConnectionState()
			// The request's head, as received: lines up to the blank one (the request has no body).
			reader := bufio.NewReader(tlsConn)
			for !bytes.HasSuffix(serverGot, []byte("\r\n\r\n")) {
				line, err := reader.ReadBytes('\n')
				if err != nil {
					return err
				}
				serverGot = append(serverGot, line...)
			}
			body := strings.Repeat("watchwire over Go crypto/tls\n", 100)
			serverSent = []byte(fmt.Sprintf(
				"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
				len(body), body,
			))
			if _, err := tlsConn.Write(serverSent); err != nil {
				return err
			}
			return tlsConn.CloseWrite()
		}()
	}()

	var c2s, s2c bytes.Buffer
	relayDone := make(chan error, 1)
	go func() {
		relayDone <- func() error {
			client, err := relay.Accept()
			if err != nil {
				return err
			}
			defer client.Close()
			upstream, err := net.Dial("tcp", server.Addr().String())
			if err != nil {
				return err
			}
			defer upstream.Close()
			var wg sync.WaitGroup
			wg.Add(2)
			pipe := func(dst, src net.Conn, keep *bytes.Buffer) {
				defer wg.Done()
				_, _ = io.Copy(io.MultiWriter(dst, keep), src)
				_ = dst.(*net.TCPConn).CloseWrite()
			}
			go pipe(upstream, client, &c2s)
			go pipe(client, upstream, &s2c)
			wg.Wait()
			return nil
		}()
	}()

	conn, err := tls.Dial("tcp", relay.Addr().String(), clientConfig)
	if err != nil {
		return err
	}
	request := "GET /watchwire/go HTTP/1.1\r\nHost: watchwire.test\r\nUser-Agent: tlsfixtures\r\nConnection: close\r\n\r\n"
	if _, err := conn.Write([]byte(request)); err != nil {
		return err
	}
	clientGot, err := io.ReadAll(conn)
	if err != nil {
		return err
	}
	if err := conn.Close(); err != nil {
		return err
	}
	if err := <-serverDone; err != nil {
		return err
	}
	if err := waitFor(relayDone); err != nil {
		return err
	}
	if !bytes.Equal(serverGot, []byte(request)) {
		return fmt.Errorf("the server received %q, the client sent %q", serverGot, request)
	}
	if !bytes.Equal(clientGot, serverSent) {
		return fmt.Errorf("the client received %d bytes, the server sent %d", len(clientGot), len(serverSent))
	}

	want := expected{
		Producer:        "Go " + runtime.Version() + " crypto/tls",
		Version:         map[uint16]string{tls.VersionTLS12: "1.2", tls.VersionTLS13: "1.3"}[state.Version],
		CipherSuite:     tls.CipherSuiteName(state.CipherSuite),
		ALPN:            state.NegotiatedProtocol,
		ServerName:      state.ServerName,
		HelloRetry:      state.HelloRetryRequest,
		ClientPlaintext: serverGot,
		ServerPlaintext: clientGot,
	}
	files := map[string][]byte{".c2s.bin": c2s.Bytes(), ".s2c.bin": s2c.Bytes(), ".keys.txt": keyLog.Bytes()}
	text, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		return err
	}
	files[".expected.json"] = append(text, '\n')
	for suffix, data := range files {
		if err := os.WriteFile(filepath.Join(out, name+suffix), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %s %s ALPN %q, %d + %d bytes\n", name, want.Version, want.CipherSuite, want.ALPN, c2s.Len(), s2c.Len())
	return nil
}

func waitFor(done chan error) error {
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the relay did not finish")
	}
}

// selfSigned is a fresh P-256 certificate for serverName.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: serverName},
		DNSNames:     []string{serverName},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
