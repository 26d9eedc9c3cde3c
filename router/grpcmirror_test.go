package router

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// grpcCall is what a gRPC-like backend saw of one call.
type grpcCall struct {
	proto       int
	path        string
	header      http.Header
	body        string
	contentType string
}

// grpcSink is an h2c backend answering every call with status 0 after
// reading its whole body; calls records them.
func grpcSink(t *testing.T, answer string) (addr string, calls chan grpcCall) {
	calls = make(chan grpcCall, 16)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		calls <- grpcCall{r.ProtoMajor, r.URL.Path, r.Header.Clone(), string(b), r.Header.Get("Content-Type")}
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		_, _ = io.WriteString(w, answer)
		w.Header().Set("Grpc-Status", "0")
	}))
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://"), calls
}

// grpcMirrorRouter serves /pkg.Svc on a GRPC backend at addr, with m as
// the route's mirror (rule) or its one alternative's (backendRef).
func grpcMirrorRouter(t *testing.T, addr string, m *match.Mirror, onBackend bool) *httptest.Server {
	r := newTestRouter(Options{ReadTimeout: 5 * time.Second})
	t.Cleanup(r.CloseIdleConnections)
	be := backend("app/grpc:50051", match.GRPC, match.Serving, addr)
	rt := route(match.Prefix, "/pkg.Svc", be)
	if onBackend {
		rt.Split = &match.Split{Alternatives: []match.Alternative{{Backend: be, Weight: 1, Mirrors: []*match.Mirror{m}}}}
	} else {
		rt.Response = &match.Response{Mirror: m}
	}
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("grpc.test", nil, rt)},
		Backends: []*match.Backend{be, m.Backend}}))
	t.Cleanup(func() {
		require.Eventually(t, func() bool { return r.mirrors.inFlight.Load() == 0 }, 10*time.Second, 10*time.Millisecond, "copies in flight")
	})
	return h1AndH2CServer(t, r)
}

func grpcMirrorTo(addr string) *match.Mirror {
	return &match.Mirror{Target: "http://copy.app.svc$request_uri",
		Backend: backend("app/copy:50051", match.GRPC, match.Serving, addr)}
}

// callGRPC makes a call to front sending the messages one by one, and
// returns the answer's body and grpc-status.
func callGRPC(t *testing.T, front string, msgs ...string) (string, string) {
	pr, pw := io.Pipe()
	go func() {
		for _, m := range msgs {
			if _, err := pw.Write([]byte(m)); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, front+"/pkg.Svc/Do", pr)
	require.NoError(t, err)
	req.Host = "grpc.test"
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("X-Client", "c1")
	// A bound against a hang only: no caller tests a deadline with it.
	res, err := (&http.Client{Transport: h2cTransport(t), Timeout: time.Minute}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b), res.Trailer.Get("Grpc-Status")
}

// A GRPCRoute's mirror (the rule's, or a backendRef's) gets each call as
// a gRPC call of its own over HTTP/2: the same path, the client's
// headers and the body's bytes, of a unary call and of a client-streaming
// one; its answer is ignored.
func TestGRPCMirrorCopiesCall(t *testing.T) {
	for _, onBackend := range []bool{false, true} {
		t.Run(map[bool]string{false: "rule", true: "backendRef"}[onBackend], func(t *testing.T) {
			main, mainCalls := grpcSink(t, "main")
			copyAddr, copies := grpcSink(t, "copy")
			front := grpcMirrorRouter(t, main, grpcMirrorTo(copyAddr), onBackend)
			for _, msgs := range [][]string{{"\x00\x00\x00\x00\x05hello"}, {"\x00\x00\x00\x00\x01a", "\x00\x00\x00\x00\x02bc", "\x00\x00\x00\x00\x03def"}} {
				got, status := callGRPC(t, front.URL, msgs...)
				assert.Equal(t, "main", got)
				assert.Equal(t, "0", status)
				want := strings.Join(msgs, "")
				m := <-mainCalls
				assert.Equal(t, want, m.body)
				var c grpcCall
				select {
				case c = <-copies:
				case <-time.After(5 * time.Second):
					t.Fatal("no mirrored call arrived")
				}
				assert.Equal(t, 2, c.proto, "HTTP/2")
				assert.Equal(t, "/pkg.Svc/Do", c.path)
				assert.Equal(t, "application/grpc", c.contentType)
				assert.Equal(t, "c1", c.header.Get("X-Client"))
				assert.Equal(t, "trailers", c.header.Get("Te"))
				assert.Equal(t, want, c.body, "the body's bytes")
			}
		})
	}
}

// A mirror that never reads the call's body neither stalls nor fails the
// call: past what the copy may hold it is abandoned, counted as dropped.
func TestGRPCMirrorNeverStalls(t *testing.T) {
	main, mainCalls := grpcSink(t, "main")
	release, arrived := make(chan struct{}), make(chan string, 1)
	stuck := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	stuck.Config.Protocols = new(http.Protocols)
	stuck.Config.Protocols.SetUnencryptedHTTP2(true)
	stuck.Start()
	t.Cleanup(stuck.Close)
	t.Cleanup(func() { close(release) })
	m := grpcMirrorTo(strings.TrimPrefix(stuck.URL, "http://"))
	// A call the stuck copy held would end no sooner than the copy's
	// bound, past readTimeout: the call is measured against that, not
	// against a time the machine must be quiet to keep.
	const readTimeout = 20 * time.Second
	r := newTestRouter(Options{ReadTimeout: readTimeout, MaxBodySize: -1})
	t.Cleanup(r.CloseIdleConnections)
	be := backend("app/grpc:50051", match.GRPC, match.Serving, main)
	rt := route(match.Prefix, "/pkg.Svc", be)
	rt.Response = &match.Response{Mirror: m}
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("grpc.test", nil, rt)}, Backends: []*match.Backend{be, m.Backend}}))
	front := h1AndH2CServer(t, r)

	chunk := string(bytes.Repeat([]byte("x"), 64<<10))
	msgs := make([]string, 128) // 8 MiB, far past what flow control and the copy hold
	for i := range msgs {
		msgs[i] = chunk
	}
	start := time.Now()
	got, status := callGRPC(t, front.URL, msgs...)
	assert.Equal(t, "main", got)
	assert.Equal(t, "0", status)
	assert.Equal(t, len(msgs)*len(chunk), len((<-mainCalls).body))
	assert.Less(t, time.Since(start), readTimeout, "the stuck copy held the call")
	select {
	case p := <-arrived:
		assert.Equal(t, "/pkg.Svc/Do", p)
	case <-time.After(readTimeout):
		t.Fatal("the mirrored call never arrived")
	}
	require.Eventually(t, func() bool { return r.Stats().MirrorsDropped == 1 }, readTimeout, 10*time.Millisecond, "the copy dropped")
	assert.Zero(t, r.Stats().MirrorsFailed)
}

// A mirror Service that refuses connections does not fail the call; the
// copy counts as failed.
func TestGRPCMirrorDeadService(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	l.Close()
	main, mainCalls := grpcSink(t, "main")
	r := newTestRouter(Options{ReadTimeout: 5 * time.Second})
	t.Cleanup(r.CloseIdleConnections)
	m := grpcMirrorTo(dead)
	be := backend("app/grpc:50051", match.GRPC, match.Serving, main)
	rt := route(match.Prefix, "/pkg.Svc", be)
	rt.Response = &match.Response{Mirror: m}
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("grpc.test", nil, rt)}, Backends: []*match.Backend{be, m.Backend}}))
	front := h1AndH2CServer(t, r)
	got, status := callGRPC(t, front.URL, "\x00\x00\x00\x00\x02hi", "\x00\x00\x00\x00\x02yo")
	assert.Equal(t, "main", got)
	assert.Equal(t, "0", status)
	assert.Equal(t, "\x00\x00\x00\x00\x02hi\x00\x00\x00\x00\x02yo", (<-mainCalls).body)
	require.Eventually(t, func() bool { return r.Stats().MirrorsFailed == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Zero(t, r.Stats().MirrorsDropped)
}

// The copy carries the headers the call is sent with after the rule's
// and the backendRef's RequestHeaderModifier (which edit the request as
// it is routed), as an HTTPRoute's copy does.
func TestGRPCMirrorAfterHeaderFilters(t *testing.T) {
	main, mainCalls := grpcSink(t, "main")
	copyAddr, copies := grpcSink(t, "copy")
	m := grpcMirrorTo(copyAddr)
	snippet := func(ops ...match.SnippetOp) *match.Snippet {
		sn, err := match.NewSnippet(match.Snippet{Ops: ops})
		require.NoError(t, err)
		return sn
	}
	r := newTestRouter(Options{ReadTimeout: 5 * time.Second})
	t.Cleanup(r.CloseIdleConnections)
	be := backend("app/grpc:50051", match.GRPC, match.Serving, main)
	rt := route(match.Prefix, "/pkg.Svc", be)
	rt.Snippet = snippet(match.SnippetOp{Kind: match.OpSetInput, Name: "Rule", Value: "set", Always: true},
		match.SnippetOp{Kind: match.OpClearInput, Name: "X-Client"})
	rt.Split = &match.Split{Alternatives: []match.Alternative{{Backend: be, Weight: 1, Mirrors: []*match.Mirror{m},
		Snippet: snippet(match.SnippetOp{Kind: match.OpSetInput, Name: "Backend", Value: "one", Always: true})}}}
	r.Publish(mustTable(match.Spec{VirtualHosts: []*match.VirtualHost{vhost("grpc.test", nil, rt)}, Backends: []*match.Backend{be, m.Backend}}))
	front := h1AndH2CServer(t, r)
	got, status := callGRPC(t, front.URL, "\x00\x00\x00\x00\x01z")
	assert.Equal(t, "main", got)
	assert.Equal(t, "0", status)
	sent := (<-mainCalls).header
	var c grpcCall
	select {
	case c = <-copies:
	case <-time.After(5 * time.Second):
		t.Fatal("no mirrored call arrived")
	}
	for _, h := range []string{"Rule", "Backend", "X-Client"} {
		assert.Equal(t, sent.Get(h), c.header.Get(h), h)
	}
	assert.Equal(t, "set", c.header.Get("Rule"))
	assert.Equal(t, "one", c.header.Get("Backend"))
	assert.Empty(t, c.header.Get("X-Client"))
}
