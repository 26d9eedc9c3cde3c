package router

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// An HTTP backend's request leaves the router on the fast path (its own
// HTTP/1.1 pool, the default) or through ReverseProxy and the built-in
// net/http transports, which HTTPS backends always take. These tests run
// the guarantees of SPEC §13 that depend on the way out on both.
type upstreamPath struct {
	name    string
	netHTTP bool
}

var upstreamPaths = []upstreamPath{{"fast", false}, {"net/http", true}}

// transport is the Options.Transport that takes the path: nil for the
// fast path, else a net/http Transport of its own.
func (p upstreamPath) transport() http.RoundTripper {
	if p.netHTTP {
		return &http.Transport{}
	}
	return nil
}

// newPathRouter is newTestRouter sending HTTP backends' requests the way
// named by netHTTP.
func newPathRouter(o Options, netHTTP bool) *Router {
	r := newTestRouter(o)
	if netHTTP {
		r.h1 = nil
	}
	return r
}

// TestUpstreamPathsForwardAlike sends the same requests both ways and
// requires the backend to see the same target, Host and headers: one
// place decides what is forwarded (SPEC §13).
func TestUpstreamPathsForwardAlike(t *testing.T) {
	_, addr := echoBackend(t, "web")
	fronts := map[string]string{} // path name: listener address
	for _, p := range upstreamPaths {
		r := newPathRouter(Options{OriginalURIHeader: true}, p.netHTTP)
		r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
		t.Cleanup(r.CloseIdleConnections)
		front := httptest.NewServer(r)
		t.Cleanup(front.Close)
		fronts[p.name] = front.Listener.Addr().String()
	}
	generated := regexp.MustCompile(`^[0-9a-f]{32}$`)
	tests := []struct {
		name, target, headers string
		want                  map[string][]string // some of what the backend must see
		absent                []string            // headers it must not see
	}{
		{"underscored names", "/p", "X_Forwarded_For: 6.6.6.6\r\nX-Forwarded-For: 192.0.2.1\r\nX-Custom_Header: v\r\n_: v\r\nX-Custom-Header: kept\r\n",
			map[string][]string{"Seen-X-Forwarded-For": {"127.0.0.1"}, "Seen-X-Original-Forwarded-For": {"192.0.2.1"}, "Seen-X-Custom-Header": {"kept"}},
			[]string{"Seen-X_forwarded_for", "Seen-X-Custom_header", "Seen-_"}},
		{"two request IDs", "/p", "X-Request-ID: first\r\nX-Request-ID: second\r\n",
			map[string][]string{"Seen-X-Request-Id": {"first"}}, nil},
		{"forged forwarding headers", "/p",
			"X-Real-IP: 6.6.6.6\r\nX-Forwarded-Host: evil\r\nX-Forwarded-Port: 1\r\nX-Forwarded-Proto: https\r\nX-Scheme: https\r\nX-Forwarded-Scheme: https\r\nForwarded: for=6.6.6.6\r\n",
			map[string][]string{"Seen-X-Real-Ip": {"127.0.0.1"}, "Seen-X-Forwarded-Host": {"h.test"}, "Seen-X-Forwarded-Proto": {"http"},
				"Seen-X-Scheme": {"http"}, "Seen-X-Forwarded-Scheme": {"http"}},
			[]string{"Seen-Forwarded"}},
		{"hop-by-hop", "/p", "Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nProxy-Connection: x\r\nTe: trailers\r\nUpgrade-Insecure-Requests: 1\r\n",
			map[string][]string{"Seen-Te": {"trailers"}, "Seen-Upgrade-Insecure-Requests": {"1"}},
			[]string{"Seen-X-Hop", "Seen-Keep-Alive", "Seen-Proxy-Connection", "Seen-Connection"}},
		{"double slash target", `//a\b"c?q=\x`, "", map[string][]string{"X-Seen-Uri": {`//a\b"c?q=\x`}}, nil},
		{"fragment", "/a#b?c", "", map[string][]string{"X-Seen-Uri": {"/a#b?c"}}, nil},
		// nginx on Unix treats '\' as an ordinary byte and proxy_pass sends
		// $request_uri as received: never turned into '/' or escaped.
		{"backslashes", `/a\b/..\c\\d?x=\y`, "", map[string][]string{"X-Seen-Uri": {`/a\b/..\c\\d?x=\y`}}, nil},
		{"escaped backslash", `/a%5Cb%5c..%5C`, "", map[string][]string{"X-Seen-Uri": {`/a%5Cb%5c..%5C`}}, nil},
		{"backslashes in an absolute form", `http://h.test/a\b?c\d`, "", map[string][]string{"X-Seen-Uri": {`/a\b?c\d`}}, nil},
		// proxy-add-original-uri-header: X-Original-URI is $request_uri,
		// which nginx keeps from an absolute-form target's path on.
		{"original URI", "/a?b", "", map[string][]string{"Seen-X-Original-Uri": {"/a?b"}}, nil},
		{"original URI of an absolute form", "http://h.test/a?b", "", map[string][]string{"Seen-X-Original-Uri": {"/a?b"}}, nil},
		{"original URI of an absolute form without a path", "http://h.test?b", "", map[string][]string{"Seen-X-Original-Uri": {"?b"}, "X-Seen-Uri": {"/?b"}}, nil},
		{"no User-Agent added", "/p", "", nil, []string{"Seen-User-Agent", "Seen-Accept-Encoding"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]http.Header{}
			for _, p := range upstreamPaths {
				res := rawRequest(t, fronts[p.name], "GET "+tt.target+" HTTP/1.1\r\nHost: h.test\r\n"+tt.headers+"\r\n")
				require.Equal(t, http.StatusOK, res.StatusCode, p.name)
				h := http.Header{}
				for k, v := range res.Header {
					// Connection is this hop's own: the net/http path sends
					// a "//" target on a connection it then closes.
					if k != "Seen-Connection" && (strings.HasPrefix(k, "Seen-") || strings.HasPrefix(k, "X-Seen-")) {
						h[k] = v
					}
				}
				_, port, _ := net.SplitHostPort(fronts[p.name])
				assert.Equal(t, []string{port}, h["Seen-X-Forwarded-Port"], p.name)
				h["Seen-X-Forwarded-Port"] = []string{"<listener's>"}
				ids := h["Seen-X-Request-Id"]
				require.Len(t, ids, 1, "%s: exactly one X-Request-ID", p.name)
				if generated.MatchString(ids[0]) {
					h["Seen-X-Request-Id"] = []string{"<generated>"}
				}
				for k, v := range tt.want {
					assert.Equal(t, v, h[k], "%s: %s", p.name, k)
				}
				for _, k := range tt.absent {
					assert.NotContains(t, h, k, p.name)
				}
				seen[p.name] = h
			}
			if diff := cmp.Diff(seen["net/http"], seen["fast"]); diff != "" {
				t.Errorf("what the backend saw (-net/http +fast):\n%s", diff)
			}
		})
	}
}

// TestUpstreamPathsStreamedBodyFailures: a body past the buffer (possible
// only without a limit) is streamed to the backend; when the client's
// part of it fails, the answer is the client's, whichever way the request
// left: 400 for a bad chunk, 408 for a stall, 499 for a body that ends
// early, never a backend warning.
func TestUpstreamPathsStreamedBodyFailures(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "read "+strconv.FormatInt(n, 10))
	}))
	t.Cleanup(s.Close)
	addr := s.Listener.Addr().String()
	big := chunk(strings.Repeat("x", DefaultMaxBodySize+100))
	tests := []struct {
		name       string
		headers    string
		send       string
		hangUp     bool // half-close after send; else keep the connection open and silent
		wantStatus int
		wantReason string
	}{
		{"bad chunk", "Transfer-Encoding: chunked\r\n", big + "zz\r\n", false, http.StatusBadRequest, ReasonBadBody},
		{"stall", "Transfer-Encoding: chunked\r\n", big, false, http.StatusRequestTimeout, ReasonClientTimeout},
		{"ends early", "Content-Length: 3000000\r\n", strings.Repeat("x", DefaultMaxBodySize+100), true, 499, ReasonClientClosed},
		{"whole", "Transfer-Encoding: chunked\r\n", big + "0\r\n\r\n", false, http.StatusOK, ""},
	}
	for _, p := range upstreamPaths {
		for _, tt := range tests {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				var logs strings.Builder
				var mu sync.Mutex
				logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
					mu.Lock()
					defer mu.Unlock()
					return logs.Write(b)
				}), &slog.HandlerOptions{Level: slog.LevelWarn}))
				rs := newRecords()
				r := newPathRouter(Options{Logger: logger, Observer: rs.observe, MaxBodySize: -1, ClientBodyTimeout: 300 * time.Millisecond}, p.netHTTP)
				r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
				t.Cleanup(r.CloseIdleConnections)
				front := httptest.NewServer(r)
				defer front.Close()

				c, err := net.Dial("tcp", front.Listener.Addr().String())
				require.NoError(t, err)
				defer c.Close()
				go func() {
					_, _ = io.WriteString(c, "PUT /up HTTP/1.1\r\nHost: h.test\r\n"+tt.headers+"\r\n"+tt.send)
					if tt.hangUp {
						_ = c.(*net.TCPConn).CloseWrite()
					}
				}()
				require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
				head := make([]byte, len("HTTP/1.1 200"))
				n, _ := io.ReadFull(c, head)
				assert.Equal(t, "HTTP/1.1 "+strconv.Itoa(tt.wantStatus), string(head[:n]))
				// The record comes as ServeHTTP returns, which may be
				// after the head reached the client.
				var rec Record
				select {
				case rec = <-rs.ch:
				case <-time.After(5 * time.Second):
					t.Fatal("no record 5 s after the answer's head")
				}
				assert.Equal(t, tt.wantReason, rec.Reason)
				assert.Zero(t, r.InFlight(addr))
				mu.Lock()
				defer mu.Unlock()
				assert.Empty(t, logs.String(), "a client's body failing is not a backend failure")
			})
		}
	}
}

// TestUpstreamPathsRetry: a dial failure is retried on another endpoint,
// a buffered body included, and every endpoint is released, both ways.
func TestUpstreamPathsRetry(t *testing.T) {
	dead := deadAddr(t)
	live := bodyEcho(t)
	for _, p := range upstreamPaths {
		for _, method := range []string{http.MethodGet, http.MethodPut} {
			t.Run(p.name+"/"+method, func(t *testing.T) {
				rs := newRecords()
				r := newPathRouter(Options{Observer: rs.observe}, p.netHTTP)
				r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", dead, live)))))
				t.Cleanup(r.CloseIdleConnections)
				front := httptest.NewServer(r)
				defer front.Close()
				tries := map[int]int{}
				for range 4 {
					var in io.Reader
					if method == http.MethodPut {
						in = strings.NewReader("hello")
					}
					req, err := http.NewRequest(method, front.URL+"/", in)
					require.NoError(t, err)
					req.Host = "web"
					res, err := front.Client().Do(req)
					require.NoError(t, err)
					got := body(t, res)
					require.Equal(t, http.StatusOK, res.StatusCode)
					if method == http.MethodPut {
						assert.Equal(t, "hello", got)
					}
					rec := rs.last(t)
					assert.Equal(t, live, rec.Endpoint)
					tries[rec.Tries]++
				}
				assert.Positive(t, tries[2], "some requests went to the dead endpoint first: %v", tries)
				assert.Equal(t, 4, tries[1]+tries[2], "%v", tries)
				assert.Zero(t, r.InFlight(dead))
				assert.Zero(t, r.InFlight(live))
			})
		}
	}
}

// BenchmarkUpstreamPathsBody is BenchmarkHandler with a 1 KiB request
// body, which both paths receive buffered (see checkBody), on the fast
// path and on the net/http path with the router's built-in transports.
func BenchmarkUpstreamPathsBody(b *testing.B) {
	_, backend := benchSetup(b)
	addr := backend.Listener.Addr().String()
	payload := strings.Repeat("x", 1<<10)
	for _, p := range upstreamPaths {
		b.Run("path="+p.name, func(b *testing.B) {
			r := benchRouter(b, nil, addr)
			if p.netHTTP {
				r.h1 = nil
			}
			b.Cleanup(r.CloseIdleConnections)
			body := strings.NewReader(payload)
			req := httptest.NewRequest(http.MethodPost, "/api/v1/items", nil)
			req.Host = "shop.example.com"
			w := &discardWriter{h: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				body.Reset(payload)
				req.Body, req.ContentLength = io.NopCloser(body), int64(len(payload))
				w.serveOK(b, r, req)
			}
		})
	}
}
