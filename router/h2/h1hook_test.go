package h2

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"ramjet.dev/ramjet/router/h1"
)

// TestBehindH1Loop: router/h1's loop hands cleartext HTTP/2 with prior
// knowledge to this server (h1.Server.HTTP2) and keeps HTTP/1 itself;
// its Shutdown ends both.
func TestBehindH1Loop(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, own := w.(*responseWriter)
		fmt.Fprintf(w, "%s %v", r.Proto, own)
	})
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	quiet := log.New(io.Discard, "", 0)
	loop := &h1.Server{Handler: h, ErrorLog: quiet, Fallback: &http.Server{Protocols: p, ErrorLog: quiet},
		HTTP2: &Server{Handler: h, ErrorLog: quiet}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- loop.Serve(ln) }()
	url := "http://" + ln.Addr().String() + "/"

	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	for _, c := range []struct {
		client *http.Client
		want   string
	}{{&http.Client{Transport: tr}, "HTTP/2.0 true"}, {&http.Client{}, "HTTP/1.1 false"}} {
		res, err := c.client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != c.want {
			t.Errorf("got %q, want %q", b, c.want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := loop.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Fatal(err)
	}
}
