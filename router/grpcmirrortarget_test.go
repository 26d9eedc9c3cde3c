package router

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// mirrorTargetSink is a plain HTTP/1.1 server, as a mirror-target's URL
// names one; calls records what it received.
func mirrorTargetSink(t *testing.T) (addr string, calls chan grpcCall) {
	calls = make(chan grpcCall, 16)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		calls <- grpcCall{r.ProtoMajor, r.Method + " " + r.URL.RequestURI(), r.Header.Clone(), string(b), r.Header.Get("Content-Type")}
		_, _ = io.WriteString(w, "ignored\n")
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String(), calls
}

// An Ingress's mirror-target on a gRPC location (backend-protocol GRPC)
// copies each call, as ingress-nginx's mirror does on every location: the
// copy goes to the target's URL as any mirror-target copy does (HTTP/1.1,
// $request_uri the call's path), with the client's headers and the
// call's body bytes, of a unary call and of a client-streaming one, and
// the call is answered as without it.
func TestGRPCMirrorTargetCopiesCall(t *testing.T) {
	main, mainCalls := grpcSink(t, "main")
	target, copies := mirrorTargetSink(t)
	r := newTestRouter(Options{ReadTimeout: 5 * time.Second})
	t.Cleanup(r.CloseIdleConnections)
	be := backend("app/grpc:50051", match.GRPC, match.Serving, main)
	rt := route(match.Prefix, "/pkg.Svc", be)
	m, err := match.NewMirror(match.Mirror{Target: "http://" + target + "$request_uri", Host: "copy.test", Source: "/_mirror-uid"})
	require.NoError(t, err)
	rt.Response = &match.Response{Mirror: m}
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("grpc.test", nil, rt)}, Backends: []*match.Backend{be}}))
	t.Cleanup(func() {
		require.Eventually(t, func() bool { return r.mirrors.inFlight.Load() == 0 }, 10*time.Second, 10*time.Millisecond, "copies in flight")
	})
	front := h1AndH2CServer(t, r)
	for _, msgs := range [][]string{{"\x00\x00\x00\x00\x05hello"}, {"\x00\x00\x00\x00\x01a", "\x00\x00\x00\x00\x02bc", "\x00\x00\x00\x00\x03def"}} {
		got, status := callGRPC(t, front.URL, msgs...)
		assert.Equal(t, "main", got)
		assert.Equal(t, "0", status)
		want := strings.Join(msgs, "")
		assert.Equal(t, want, (<-mainCalls).body)
		var c grpcCall
		select {
		case c = <-copies:
		case <-time.After(5 * time.Second):
			t.Fatal("no mirrored copy arrived")
		}
		assert.Equal(t, "POST /pkg.Svc/Do", c.path)
		assert.Equal(t, "application/grpc", c.contentType)
		assert.Equal(t, "c1", c.header.Get("X-Client"))
		assert.Equal(t, want, c.body, "the call's body")
	}
	assert.Zero(t, r.Stats().MirrorsDropped)
	assert.Zero(t, r.Stats().MirrorsFailed)
}

// A mirrored copy of a call lasts as long as the call's body streams, as
// nginx's mirror subrequest lasts as long as its request: the connect and
// read timeouts that bound a copy's exchange (300 ms here) start once the
// body is whole, and a stream that goes on for longer is copied whole.
// The router's timeouts are the copy's; the call's location has its own.
func TestGRPCMirrorOutlivesReadTimeout(t *testing.T) {
	main, mainCalls := grpcSink(t, "main")
	copyAddr, copies := grpcSink(t, "copy")
	m := grpcMirrorTo(copyAddr)
	r := newTestRouter(Options{ConnectTimeout: 100 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	t.Cleanup(r.CloseIdleConnections)
	be := backend("app/grpc:50051", match.GRPC, match.Serving, main)
	// The call's own location waits longer: only the copy's bound is
	// tested.
	rt := policyRoute("/pkg.Svc", be, &match.Policy{ReadTimeout: 5 * time.Second})
	rt.Response = &match.Response{Mirror: m}
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("grpc.test", nil, rt)}, Backends: []*match.Backend{be, m.Backend}}))
	t.Cleanup(func() {
		require.Eventually(t, func() bool { return r.mirrors.inFlight.Load() == 0 }, 10*time.Second, 10*time.Millisecond, "copies in flight")
	})
	front := h1AndH2CServer(t, r)

	msgs := []string{"\x00\x00\x00\x00\x01a", "\x00\x00\x00\x00\x01b", "\x00\x00\x00\x00\x01c", "\x00\x00\x00\x00\x01d", "\x00\x00\x00\x00\x01e"}
	pr, pw := io.Pipe()
	go func() {
		for _, m := range msgs {
			if _, err := pw.Write([]byte(m)); err != nil {
				return
			}
			time.Sleep(150 * time.Millisecond) // 750 ms in all
		}
		pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Do", pr)
	require.NoError(t, err)
	req.Host = "grpc.test"
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	res, err := (&http.Client{Transport: h2cTransport(t), Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "main", string(b))
	assert.Equal(t, "0", res.Trailer.Get("Grpc-Status"))
	want := strings.Join(msgs, "")
	assert.Equal(t, want, (<-mainCalls).body)
	select {
	case c := <-copies:
		assert.Equal(t, want, c.body, "the copy of the whole stream")
	case <-time.After(5 * time.Second):
		t.Fatal("no mirrored call arrived")
	}
	require.Eventually(t, func() bool { return r.mirrors.inFlight.Load() == 0 }, 5*time.Second, 10*time.Millisecond)
	assert.Zero(t, r.Stats().MirrorsFailed)
	assert.Zero(t, r.Stats().MirrorsDropped)
}
