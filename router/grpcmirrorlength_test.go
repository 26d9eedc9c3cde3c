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

// TestGRPCMirrorTargetSendsLength: the copy of a gRPC call to an
// Ingress's mirror-target URL carries the call's body with its length,
// as nginx's mirror subrequest sends it (mirror_request_body reads the
// body whole first; nginx 1.22, checked on loopback, sends
// "Content-Length: 18" for a client-streaming call of two messages),
// never chunked, and its body whole.
func TestGRPCMirrorTargetSendsLength(t *testing.T) {
	type copied struct {
		length int64
		te     []string
		body   string
	}
	copies := make(chan copied, 4)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		copies <- copied{r.ContentLength, r.TransferEncoding, string(b)}
	}))
	t.Cleanup(sink.Close)
	main, mainCalls := grpcSink(t, "main")
	r := newTestRouter(Options{ReadTimeout: 5 * time.Second})
	t.Cleanup(r.CloseIdleConnections)
	be := backend("app/grpc:50051", match.GRPC, match.Serving, main)
	rt := route(match.Prefix, "/pkg.Svc", be)
	m, err := match.NewMirror(match.Mirror{Target: "http://" + sink.Listener.Addr().String() + "$request_uri", Host: "copy.test", Source: "/_mirror-uid"})
	require.NoError(t, err)
	rt.Response = &match.Response{Mirror: m}
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("grpc.test", nil, rt)}, Backends: []*match.Backend{be}}))
	t.Cleanup(func() {
		require.Eventually(t, func() bool { return r.mirrors.inFlight.Load() == 0 }, 10*time.Second, 10*time.Millisecond, "copies in flight")
	})
	front := h1AndH2CServer(t, r)
	msgs := []string{"\x00\x00\x00\x00\x05hello", "\x00\x00\x00\x00\x03abc"}
	got, status := callGRPC(t, front.URL, msgs...)
	assert.Equal(t, "main", got)
	assert.Equal(t, "0", status)
	want := strings.Join(msgs, "")
	assert.Equal(t, want, (<-mainCalls).body)
	select {
	case c := <-copies:
		assert.Equal(t, int64(len(want)), c.length, "Content-Length")
		assert.Empty(t, c.te, "not chunked")
		assert.Equal(t, want, c.body)
	case <-time.After(5 * time.Second):
		t.Fatal("no mirrored copy arrived")
	}
	assert.Zero(t, r.Stats().MirrorsDropped)
	assert.Zero(t, r.Stats().MirrorsFailed)
}
