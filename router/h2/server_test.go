package h2

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func testCert(t testing.TB) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "h2.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"h2.test"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// serveTLS serves s over TLS on loopback, as router/h1's loop hands
// connections over: the handshake done, "h2" negotiated.
func serveTLS(t testing.TB, s *Server) (addr string, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{testCert(t)}, NextProtos: []string{"h2"}}
	if s.ErrorLog == nil {
		s.ErrorLog = log.New(io.Discard, "", 0)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				tc := tls.Server(c, cfg)
				if err := tc.Handshake(); err != nil {
					c.Close()
					return
				}
				s.ServeConn(tc)
			}()
		}
	}()
	return ln.Addr().String(), func() { ln.Close(); s.Close(); wg.Wait() }
}

func testClient() *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true}
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

func TestServeBasics(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			w.Header().Set("X-Method", r.Method)
			w.Header().Set("X-Len", fmt.Sprint(r.ContentLength))
			n, err := io.Copy(w, r.Body)
			if err != nil {
				t.Errorf("copy after %d: %v", n, err)
			}
		case "/trailers":
			w.Header().Set("Trailer", "X-T")
			w.WriteHeader(200)
			_, _ = io.WriteString(w, "body")
			w.(http.Flusher).Flush()
			w.Header().Set("X-T", "tv")
			w.Header().Set(http.TrailerPrefix+"X-U", "uv")
		default:
			fmt.Fprintf(w, "%s %s %s %s %q %q", r.Proto, r.Method, r.Host, r.RequestURI, r.URL.RawQuery, r.Header.Get("Cookie"))
		}
	})}
	addr, stop := serveTLS(t, s)
	defer stop()
	cl := testClient()
	req, _ := http.NewRequest("GET", "https://"+addr+"/a/b?x=1", nil)
	req.Host = "h2.test"
	req.Header.Add("Cookie", "a=1")
	req.AddCookie(&http.Cookie{Name: "b", Value: "2"})
	res, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.ProtoMajor != 2 || string(b) != `HTTP/2.0 GET h2.test /a/b?x=1 "x=1" "a=1; b=2"` {
		t.Fatalf("%s %q", res.Proto, b)
	}
	if res.ContentLength != int64(len(b)) || res.Header.Get("Date") == "" || res.Header.Get("Content-Type") == "" {
		t.Errorf("head %v, length %d", res.Header, res.ContentLength)
	}

	// A body larger than every window, both ways.
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	res, err = cl.Post("https://"+addr+"/echo", "application/octet-stream", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || !bytes.Equal(b, big) || res.Header.Get("X-Len") != fmt.Sprint(len(big)) {
		t.Fatalf("echo: %d bytes, %v, %v", len(b), err, res.Header)
	}

	res, err = cl.Get("https://" + addr + "/trailers")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "body" || res.Trailer.Get("X-T") != "tv" || res.Trailer.Get("X-U") != "uv" {
		t.Errorf("trailers: %q %v", b, res.Trailer)
	}

	// Many streams at once on one connection.
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat("x", i*1000)
			res, err := cl.Post("https://"+addr+"/echo", "text/plain", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if string(b) != body {
				t.Errorf("stream %d: %d bytes", i, len(b))
			}
		}()
	}
	wg.Wait()
}

func TestHeaderListTooLarge(t *testing.T) {
	s := &Server{MaxHeaderBytes: 1000, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	addr, stop := serveTLS(t, s)
	defer stop()
	req, _ := http.NewRequest("GET", "https://"+addr+"/", nil)
	req.Header.Set("X-Big", strings.Repeat("b", 2000))
	res, err := testClient().Do(req)
	if err != nil {
		// The client checks the advertised size itself.
		if !strings.Contains(err.Error(), "header list") {
			t.Fatal(err)
		}
		return
	}
	res.Body.Close()
	if res.StatusCode != 431 {
		t.Errorf("status %d", res.StatusCode)
	}
}

func TestContextCancelledOnReset(t *testing.T) {
	done := make(chan error, 1)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			done <- nil
		case <-time.After(5 * time.Second):
			done <- fmt.Errorf("not cancelled")
		}
	})}
	addr, stop := serveTLS(t, s)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://"+addr+"/", nil)
	res, err := testClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	res.Body.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestConfigureServer serves through net/http's server: HTTP/2 over TLS
// and cleartext with prior knowledge reach this package's server.
func TestConfigureServer(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, own := w.(*responseWriter)
		fmt.Fprintf(w, "%s %v %v", r.Proto, own, r.TLS != nil)
	})
	ts := httptest.NewUnstartedServer(h)
	ts.EnableHTTP2 = true
	ConfigureServer(ts.Config, &Server{ErrorLog: log.New(io.Discard, "", 0)})
	ts.StartTLS()
	defer ts.Close()
	res, err := ts.Client().Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "HTTP/2.0 true true" {
		t.Errorf("TLS: %q", b)
	}

	hc := httptest.NewUnstartedServer(h)
	hc.Config.Protocols = new(http.Protocols)
	hc.Config.Protocols.SetHTTP1(true)
	hc.Config.Protocols.SetUnencryptedHTTP2(true)
	ConfigureServer(hc.Config, &Server{ErrorLog: log.New(io.Discard, "", 0)})
	hc.Start()
	defer hc.Close()
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	res, err = (&http.Client{Transport: tr}).Get(hc.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "HTTP/2.0 true false" {
		t.Errorf("h2c: %q", b)
	}
}
