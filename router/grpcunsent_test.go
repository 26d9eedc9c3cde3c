package router

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"ramjet.dev/ramjet/match"
)

// TestGRPCUnsentCallPassedOn: a gRPC call whose backend connection ends
// after it was opened but before the call's HEADERS were written never
// reached that backend, and goes to the next endpoint under
// proxy-next-upstream "error", as nginx passes a request it has not sent
// to the next upstream, a POST too.
func TestGRPCUnsentCallPassedOn(t *testing.T) {
	var lost atomic.Int32
	// Accepts, reads the client's preface, SETTINGS and WINDOW_UPDATE,
	// and closes before its own SETTINGS: the client sends no call on it.
	closing := rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		pre := make([]byte, len("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
		if _, err := io.ReadFull(br, pre); err != nil {
			return
		}
		for {
			var hdr [9]byte
			if _, err := io.ReadFull(br, hdr[:]); err != nil {
				return
			}
			n := int64(hdr[0])<<16 | int64(hdr[1])<<8 | int64(hdr[2])
			if _, err := io.CopyN(io.Discard, br, n); err != nil {
				return
			}
			if hdr[3] == 0x8 { // WINDOW_UPDATE, the last of the preface
				lost.Add(1)
				return
			}
		}
	})
	good := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		_, _ = w.Write([]byte{0, 0, 0, 0, 0})
		w.Header().Set("Grpc-Status", "0")
	}))
	good.Config.Protocols = new(http.Protocols)
	good.Config.Protocols.SetUnencryptedHTTP2(true)
	good.Start()
	t.Cleanup(good.Close)

	r := newTestRouter(Options{})
	t.Cleanup(r.CloseIdleConnections)
	rt := route(match.Prefix, "/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, closing, good.Listener.Addr().String()))
	rt.Policy = &match.Policy{Proxy: &match.Proxying{NextUpstream: match.RetryError, MaxTempFileSize: -1}}
	r.Publish(table("g", vhost("", nil, rt)))
	for i := range 4 {
		req := httptest.NewRequest(http.MethodPost, "/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
		req.Host = "grpc.test"
		req.Header.Set("Content-Type", "application/grpc")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK || w.Result().Trailer.Get("Grpc-Status") != "0" {
			t.Fatalf("call %d: %d, grpc-status %q %q; want the next endpoint's answer", i, w.Code,
				w.Result().Trailer.Get("Grpc-Status"), w.Header().Get("Grpc-Message"))
		}
	}
	if lost.Load() == 0 {
		t.Fatal("no call went to the endpoint that closes first")
	}
}
