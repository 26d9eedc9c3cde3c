package router

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// countingBackend is an httptest server that counts the connections
// opened to it.
func countingBackend(t *testing.T, h http.HandlerFunc) (addr string, conns *atomic.Int64) {
	t.Helper()
	conns = new(atomic.Int64)
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s.Listener.Addr().String(), conns
}

func singleBackendRouter(t *testing.T, addr string, o Options) (*Router, *records) {
	t.Helper()
	rs := newRecords()
	o.Observer = rs.observe
	r := newTestRouter(o)
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	t.Cleanup(r.CloseIdleConnections)
	return r, rs
}

// failingWriter is a client that goes away after the first write.
type failingWriter struct {
	h      http.Header
	status int
	writes int
}

func (w *failingWriter) Header() http.Header  { return w.h }
func (w *failingWriter) WriteHeader(code int) { w.status = code }
func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	return 0, errors.New("client gone")
}

// TestH1ConnectionReuse: a connection goes back to the pool only when the
// response was read to its end; otherwise it is closed and the next
// request opens another.
func TestH1ConnectionReuse(t *testing.T) {
	big := strings.Repeat("x", 256<<10)
	tests := []struct {
		name      string
		target    string
		broken    bool // the client fails the first write
		wantConns int64
	}{
		{"full responses share one connection", "/small", false, 1},
		{"a response not read to its end closes the connection", "/big", true, 3},
		{"Connection: close from the backend", "/close", false, 3},
		{"HEAD responses have no body to read", "/small", false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, conns := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/big":
					_, _ = io.WriteString(w, big)
				case "/close":
					w.Header().Set("Connection", "close")
					_, _ = io.WriteString(w, "bye\n")
				default:
					_, _ = io.WriteString(w, "ok\n")
				}
			})
			r, rs := singleBackendRouter(t, addr, Options{})
			method := http.MethodGet
			if strings.HasPrefix(tt.name, "HEAD") {
				method = http.MethodHead
			}
			for range 3 {
				req := httptest.NewRequest(method, tt.target, nil)
				req.Host = "web"
				if tt.broken {
					w := &failingWriter{h: http.Header{}}
					r.ServeHTTP(w, req)
					assert.Equal(t, http.StatusOK, w.status)
					assert.Equal(t, 1, w.writes, "copying stops at the first failed write")
					assert.Equal(t, ReasonClientClosed, rs.last(t).Reason)
				} else {
					rec := httptest.NewRecorder()
					r.ServeHTTP(rec, req)
					require.Equal(t, http.StatusOK, rec.Code)
				}
			}
			assert.Equal(t, tt.wantConns, conns.Load())
			assert.Zero(t, r.InFlight(addr))
		})
	}
}

// rawBackend answers each request on a connection with respond(n), n
// counting requests over all connections, and closes the connection when
// respond returns "".
func rawBackend(t *testing.T, respond func(n int) string) (addr string, conns, requests *atomic.Int64) {
	t.Helper()
	conns, requests = new(atomic.Int64), new(atomic.Int64)
	addr = rawServer(t, func(c net.Conn) {
		conns.Add(1)
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			out := respond(int(requests.Add(1)))
			if out == "" {
				return
			}
			if _, err := io.WriteString(c, out); err != nil {
				return
			}
		}
	})
	return addr, conns, requests
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"

// TestH1BackendClosesKeptAlive: a backend closes a kept-alive connection.
// Closed while idle, the connection's watcher finds out before any request
// is written to it (see idle.go); closed when
// the request arrived, before any byte of the response, the
// request is sent once more on a new connection if it is idempotent and
// its body, if any, is held whole (a streamed body may be half read), as
// nginx does with the bodies it buffers.
func TestH1BackendClosesKeptAlive(t *testing.T) {
	tests := []struct {
		name         string
		method       string
		body         string
		closeOn      int // the request the backend drops unanswered (0: none)
		idleClose    bool
		wantStatus   int
		wantConns    int64
		wantRequests int64
	}{
		{"closed while idle: found before a POST is written", http.MethodPost, "", 0, true, 200, 2, 2},
		{"closed while idle: a GET written to it is sent again", http.MethodGet, "", 0, true, 200, 2, 2},
		{"closed while idle: found before a PUT with a streamed body is written", http.MethodPut, strings.Repeat("d", h1.InlineMax+1), 0, true, 200, 2, 2},
		{"closed on arrival: GET sent again", http.MethodGet, "", 2, false, 200, 2, 3},
		{"closed on arrival: PUT without body sent again", http.MethodPut, "", 2, false, 200, 2, 3},
		{"closed on arrival: POST is not", http.MethodPost, "", 2, false, 502, 1, 2},
		{"closed on arrival: PUT with a small held body sent again", http.MethodPut, "data", 2, false, 200, 2, 3},
		{"closed on arrival: PUT whose held body went after the head sent again", http.MethodPut, strings.Repeat("d", h1.InlineMax+1), 2, false, 200, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var addr string
			var conns, requests, closed *atomic.Int64
			if tt.idleClose {
				addr, conns, requests, closed = rawBackendClosingAfter(t, 1, okResponse)
			} else {
				addr, conns, requests = rawBackend(t, func(n int) string {
					if n == tt.closeOn {
						return ""
					}
					return okResponse
				})
			}
			r, rs := singleBackendRouter(t, addr, Options{})
			res := serve(r, http.MethodGet, "web", "/", nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			body(t, res)
			if tt.idleClose {
				settle(t, "the backend's close", func() bool { return closed.Load() == 1 })
				time.Sleep(20 * time.Millisecond) // the FIN reaches the router's socket
			}
			req := httptest.NewRequest(tt.method, "/", strings.NewReader(tt.body))
			if tt.body == "" {
				req = httptest.NewRequest(tt.method, "/", nil)
			}
			req.Host = "web"
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			assert.Equal(t, tt.wantStatus, rec.Code, rec.Body.String())
			assert.Equal(t, tt.wantConns, conns.Load(), "connections")
			assert.Equal(t, tt.wantRequests, requests.Load(), "requests the backend read")
			assert.Equal(t, 1, rs.last(t).Tries, "the same endpoint: one try")
			assert.Zero(t, r.InFlight(addr))
		})
	}
}

// rawBackendClosingAfter answers every request with response and closes
// each connection after n responses, without announcing it; closed counts
// the connections it has closed.
func rawBackendClosingAfter(t *testing.T, n int, response string) (addr string, conns, requests, closed *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	conns, requests, closed = new(atomic.Int64), new(atomic.Int64), new(atomic.Int64)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			wg.Go(func() {
				defer closed.Add(1)
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				br := bufio.NewReader(c)
				for range n {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					// Closing with a body unread would reset the connection
					// and could discard the response before the router reads it.
					if _, err := io.Copy(io.Discard, req.Body); err != nil {
						return
					}
					requests.Add(1)
					if _, err := io.WriteString(c, response); err != nil {
						return
					}
				}
			})
		}
	})
	return l.Addr().String(), conns, requests, closed
}

// TestH1ChunkedBodiesAndTrailers sends a chunked request body with
// trailers. Up to the limit the router reads it whole first and sends it
// with its length, as nginx does (proxy_request_buffering); so is a body
// past the memory buffer, through a temporary file, even without a limit.
// The client's trailer never reaches the backend, as nginx passes none on,
// on either upstream path. The response's announced trailer reaches the
// client; what it did not announce does not.
func TestH1ChunkedBodiesAndTrailers(t *testing.T) {
	addr, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Trailer", "X-Sum")
		w.Header().Set("X-Seen-Te", strings.Join(r.TransferEncoding, ","))
		w.Header().Set("X-Seen-Length", strconv.FormatInt(r.ContentLength, 10))
		w.WriteHeader(http.StatusOK)
		for _, part := range strings.SplitAfter(string(b[:min(len(b), 20)]), ",") {
			_, _ = io.WriteString(w, part)
			_ = http.NewResponseController(w).Flush()
		}
		w.Header().Set("X-Sum", strconv.Itoa(len(b))+"/"+r.Trailer.Get("X-Client-Sum"))
		w.Header().Set(http.TrailerPrefix+"X-Late", "undeclared")
	})
	big := strings.Repeat("x", DefaultMaxBodySize+10)
	tests := []struct {
		name       string
		maxBody    int64
		parts      []string
		wantBody   string
		wantTE     string
		wantLength string
		wantSum    string
	}{
		{"buffered", 0, []string{"one,", "two,", "three"}, "one,two,three", "", "13", "13/"},
		{"held past the memory buffer", -1, []string{"one,", "two,", big},
			"one,two," + big[:12], "", strconv.Itoa(8 + len(big)), strconv.Itoa(8+len(big)) + "/"},
	}
	for _, tt := range tests {
		for _, p := range upstreamPaths {
			t.Run(tt.name+" over "+p.name, func(t *testing.T) {
				r, _ := singleBackendRouter(t, addr, Options{MaxBodySize: tt.maxBody, Transport: p.transport()})
				front := httptest.NewServer(r)
				defer front.Close()

				pr, pw := io.Pipe()
				go func() {
					for _, s := range tt.parts {
						_, _ = io.WriteString(pw, s)
					}
					pw.Close()
				}()
				req, err := http.NewRequest(http.MethodPost, front.URL+"/upload", pr)
				require.NoError(t, err)
				req.Host = "web"
				req.Trailer = http.Header{"X-Client-Sum": {"13"}}
				res, err := front.Client().Do(req)
				require.NoError(t, err)
				got := body(t, res)
				assert.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, tt.wantBody, got)
				assert.Equal(t, tt.wantTE, res.Header.Get("X-Seen-Te"), "the backend's Transfer-Encoding")
				assert.Equal(t, tt.wantLength, res.Header.Get("X-Seen-Length"))
				assert.Equal(t, []string{"chunked"}, res.TransferEncoding, "the client gets it chunked")
				if diff := cmp.Diff(http.Header{"X-Sum": {tt.wantSum}}, res.Trailer); diff != "" {
					t.Errorf("trailers (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestBackendTrailers: of a response's trailer only fields the backend
// announced reach the client, and never one that frames, routes, sets a
// cookie or a location, on either upstream path.
func TestBackendTrailers(t *testing.T) {
	const response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Ok, Set-Cookie, Location, Host, Content-Type\r\n\r\n" +
		"2\r\nok\r\n0\r\nX-Ok: 1\r\nSet-Cookie: session=attacker\r\nLocation: /evil\r\nHost: evil\r\nContent-Type: text/evil\r\n" +
		"Content-Length: 5\r\nTransfer-Encoding: chunked\r\nX-Undeclared: 1\r\n\r\n"
	for _, p := range upstreamPaths {
		t.Run(p.name, func(t *testing.T) {
			addr, _, _ := rawBackend(t, func(int) string { return response })
			r, _ := singleBackendRouter(t, addr, Options{Transport: p.transport()})
			front := httptest.NewServer(r)
			defer front.Close()
			req, err := http.NewRequest(http.MethodGet, front.URL+"/", nil)
			require.NoError(t, err)
			req.Host = "web"
			res, err := front.Client().Do(req)
			require.NoError(t, err)
			assert.Equal(t, "ok", body(t, res))
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, http.Header{"X-Ok": {"1"}}, res.Trailer)
			assert.Empty(t, res.Header.Values("Set-Cookie"))
			assert.Empty(t, res.Header.Get("Location"))
		})
	}
}

// TestRequestTrailersNotForwarded: a client's chunked body with a trailer
// reaches the backend without it, streamed or buffered, on either
// upstream path, as nginx passes no request trailer on.
func TestRequestTrailersNotForwarded(t *testing.T) {
	type seen struct {
		trailer http.Header
		header  string
	}
	got := make(chan seen, 1)
	addr, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- seen{r.Trailer, r.Header.Get("Trailer")}
	})
	for _, maxBody := range []int64{0, -1} {
		for _, p := range upstreamPaths {
			r, _ := singleBackendRouter(t, addr, Options{MaxBodySize: maxBody, Transport: p.transport()})
			front := httptest.NewServer(r)
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			// Without a limit, a body past the buffer is streamed.
			data := "body"
			if maxBody < 0 {
				data = strings.Repeat("b", DefaultMaxBodySize+10)
			}
			go func() {
				_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: web\r\nTransfer-Encoding: chunked\r\nTrailer: X-Client, Set-Cookie\r\n\r\n"+
					strconv.FormatInt(int64(len(data)), 16)+"\r\n"+data+"\r\n0\r\nX-Client: 1\r\nSet-Cookie: a=b\r\nX-Other: 2\r\n\r\n")
			}()
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, res.StatusCode)
			s := <-got
			assert.Empty(t, s.trailer, "max body %d, %s", maxBody, p.name)
			assert.Empty(t, s.header, "the backend's Trailer header")
			c.Close()
			front.Close()
		}
	}
}

// TestH1ExpectContinue: the router reads a body up to the limit before it
// picks a backend, so it answers the client's Expect: 100-continue itself,
// as nginx does when it buffers, and the backend gets the body with its
// length and no Expect. A backend that answers without reading the body
// still leaves a clean connection: the body was sent whole.
func TestH1ExpectContinue(t *testing.T) {
	var read atomic.Int64
	addr, conns := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Expect", r.Header.Get("Expect"))
		if r.URL.Path == "/refuse" {
			http.Error(w, "too big", http.StatusRequestEntityTooLarge)
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		read.Add(n)
		_, _ = io.WriteString(w, "read "+strconv.FormatInt(n, 10)+"\n")
	})
	r, rs := singleBackendRouter(t, addr, Options{})
	front := httptest.NewServer(r)
	defer front.Close()

	tests := []struct {
		path       string
		wantStatus int
		wantBody   string
		wantRead   int64
	}{
		{"/accept", 200, "read 5\n", 5},
		{"/refuse", 413, "too big\n", 5},
		{"/accept", 200, "read 5\n", 10},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			_, err = io.WriteString(c, "PUT "+tt.path+" HTTP/1.1\r\nHost: web\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
			require.NoError(t, err)
			br := bufio.NewReader(c)
			tp := textproto.NewReader(br)
			line, err := tp.ReadLine()
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(line, "HTTP/1.1 100"), "the router asks for the body itself: %s", line)
			_, err = tp.ReadLine() // the blank line
			require.NoError(t, err)
			_, err = io.WriteString(c, "hello")
			require.NoError(t, err)
			line, err = tp.ReadLine()
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(line, "HTTP/1.1 "+strconv.Itoa(tt.wantStatus)), line)
			h, err := tp.ReadMIMEHeader()
			require.NoError(t, err)
			assert.Empty(t, h.Get("X-Seen-Expect"), "the backend is not asked again")
			b := make([]byte, len(tt.wantBody))
			_, err = io.ReadFull(br, b)
			require.NoError(t, err)
			assert.Equal(t, tt.wantBody, string(b))
			assert.Equal(t, tt.wantRead, read.Load(), "bytes the backend read")
			assert.Equal(t, int64(1), conns.Load(), "backend connections: every body was sent whole, so one is reused")
			// The client has its answer before the handler returns the
			// connection to the pool; the next request must find it there.
			select {
			case <-rs.ch:
			case <-time.After(5 * time.Second):
				t.Fatal("the request was never recorded")
			}
		})
	}
}

func TestH1Informational(t *testing.T) {
	addr, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		_, _ = io.WriteString(w, "final\n")
	})
	r, _ := singleBackendRouter(t, addr, Options{})
	front := httptest.NewServer(r)
	defer front.Close()

	var hints []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		hints = append(hints, strconv.Itoa(code)+" "+h.Get("Link"))
		return nil
	}}
	req, err := http.NewRequest(http.MethodGet, front.URL+"/", nil)
	require.NoError(t, err)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	res, err := front.Client().Do(req)
	require.NoError(t, err)
	assert.Equal(t, "final\n", body(t, res))
	assert.Equal(t, []string{"103 </style.css>; rel=preload"}, hints)
	assert.Empty(t, res.Header.Get("Link"))
}

// TestInformationalNotToHTTP10: an HTTP/1.0 client gets no informational
// response, which HTTP/1.0 does not have (RFC 9110 §15.2: a server must
// not send one to it): it would read the 103 as the final answer and the
// real one as its body. Only the final response reaches it, on either
// upstream path.
func TestInformationalNotToHTTP10(t *testing.T) {
	const response = "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	for _, p := range upstreamPaths {
		t.Run(p.name, func(t *testing.T) {
			addr, _, _ := rawBackend(t, func(int) string { return response })
			r, _ := singleBackendRouter(t, addr, Options{Transport: p.transport()})
			front := httptest.NewServer(r)
			defer front.Close()
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			_, err = io.WriteString(c, "GET / HTTP/1.0\r\nHost: web\r\n\r\n")
			require.NoError(t, err)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "ok", body(t, res))
			assert.Empty(t, res.Header.Get("Link"))
		})
	}
}

// TestH1UpgradeRefusedOrWrong: a backend that declines an Upgrade answers
// as usual; one that switches to a protocol nobody asked for is a 502.
func TestH1UpgradeRefusedOrWrong(t *testing.T) {
	tests := []struct {
		name       string
		response   string
		wantStatus int
	}{
		{"declined", "HTTP/1.1 426 Upgrade Required\r\nContent-Length: 4\r\n\r\nno!\n", 426},
		{"another protocol", "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n", 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, _, _ := rawBackend(t, func(int) string { return tt.response })
			r, rs := singleBackendRouter(t, addr, Options{})
			res := serve(r, http.MethodGet, "web", "/ws", http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}})
			body(t, res)
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			assert.Equal(t, tt.wantStatus, rs.last(t).Status)
		})
	}
}

// TestH1BadChunkIsTheClients: a malformed chunk in the client's body is a
// 400, not a backend failure.
func TestH1BadChunkIsTheClients(t *testing.T) {
	addr, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	})
	r, rs := singleBackendRouter(t, addr, Options{})
	front := httptest.NewServer(r)
	defer front.Close()
	res := rawRequest(t, front.Listener.Addr().String(),
		"POST / HTTP/1.1\r\nHost: web\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n\r\n")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	rec := nextRecord(t, rs, "/")
	assert.Equal(t, ReasonBadBody, rec.Reason)
}

// TestH1BrokenResponseCutsTheClient: a backend that breaks off a response
// after its head must not leave the client with what looks like a whole
// response, chunked or not.
func TestH1BrokenResponseCutsTheClient(t *testing.T) {
	tests := []struct{ name, response string }{
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"},
		{"content length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, _, _, _ := rawBackendClosingAfter(t, 1, tt.response)
			r, rs := singleBackendRouter(t, addr, Options{})
			front := httptest.NewUnstartedServer(r)
			front.Config.ErrorLog = quietLogLogger()
			front.Start()
			defer front.Close()
			// A head still in the server's buffer is never sent; one
			// already sent is followed by a cut connection.
			res, err := front.Client().Get(front.URL + "/")
			if err == nil {
				_, err = io.ReadAll(res.Body)
				res.Body.Close()
			}
			assert.Error(t, err, "the client must see the response cut short")
			rec := nextRecord(t, rs, "/")
			assert.Equal(t, ReasonUpstreamError, rec.Reason)
			assert.Zero(t, r.InFlight(addr))
		})
	}
}

// TestH1SlowUploadIsNotATimeout: ReadTimeout bounds the wait for the
// response head once the request body is sent, as net/http's
// ResponseHeaderTimeout does, not the time the client takes to send it;
// a backend answering while the body still streams has its response
// body's waits bounded only from the end of the upload (a stall after it
// is TestBackendBodyStall's).
func TestH1SlowUploadIsNotATimeout(t *testing.T) {
	tests := []struct {
		name        string
		answerEarly bool
	}{
		{"answer after the body", false},
		{"answer before the body ends", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.answerEarly {
					_ = http.NewResponseController(w).EnableFullDuplex()
					w.WriteHeader(http.StatusOK)
					_ = http.NewResponseController(w).Flush()
				}
				n, _ := io.Copy(io.Discard, r.Body)
				if tt.answerEarly {
					time.Sleep(100 * time.Millisecond) // within ReadTimeout after the body; the upload took longer
				}
				_, _ = io.WriteString(w, "read "+strconv.FormatInt(n, 10)+"\n")
			})
			r, _ := singleBackendRouter(t, addr, Options{ReadTimeout: 150 * time.Millisecond})
			front := httptest.NewServer(r)
			defer front.Close()
			pr, pw := io.Pipe()
			go func() {
				for range 5 {
					time.Sleep(80 * time.Millisecond)
					_, _ = io.WriteString(pw, "0123456789")
				}
				pw.Close()
			}()
			res, err := front.Client().Post(front.URL+"/upload", "text/plain", pr)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "read 50\n", body(t, res))
		})
	}
}

// TestH1ObsFoldIs502: a backend response with a field folded over lines
// (obs-fold) answers 502, as nginx answers it; net/textproto would join
// the lines, and what two parsers read differently is not passed on.
func TestH1ObsFoldIs502(t *testing.T) {
	for _, response := range []string{
		"HTTP/1.1 200 OK\r\nX-A: one\r\n two\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nX-A: one\r\n\tSet-Cookie: session=attacker\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n ; rel=preload\r\n\r\n" + okResponse,
	} {
		addr, _, _ := rawBackend(t, func(int) string { return response })
		r, rs := singleBackendRouter(t, addr, Options{})
		res := serve(r, http.MethodGet, "web", "/", nil)
		assert.Equal(t, http.StatusBadGateway, res.StatusCode, response)
		assert.Empty(t, res.Header.Get("X-A"))
		assert.Empty(t, res.Header.Get("Set-Cookie"))
		assert.Equal(t, ReasonUpstreamError, rs.last(t).Reason)
	}
}

// TestInformationalBound: of 2,000 informational responses before the
// final one, at most 5 reach the client, over the router's own pool and
// over net/http's Transport; on the pool every head counts toward the
// 1 MiB head bound, so 2,000 large ones answer 502.
func TestInformationalBound(t *testing.T) {
	small := strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n", 2000) + okResponse
	large := strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </"+strings.Repeat("a", 600)+">\r\n\r\n", 2000) + okResponse
	tests := []struct {
		name       string
		transport  http.RoundTripper
		response   string
		wantStatus int
	}{
		{"pool", nil, small, http.StatusOK},
		{"net/http", &http.Transport{}, small, http.StatusOK},
		{"pool: heads past 1 MiB", nil, large, http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, _, _ := rawBackend(t, func(int) string { return tt.response })
			r, _ := singleBackendRouter(t, addr, Options{Transport: tt.transport})
			front := httptest.NewServer(r)
			defer front.Close()
			var hints atomic.Int64
			trace := &httptrace.ClientTrace{Got1xxResponse: func(int, textproto.MIMEHeader) error {
				hints.Add(1)
				return nil
			}}
			req, err := http.NewRequest(http.MethodGet, front.URL+"/", nil)
			require.NoError(t, err)
			req.Host = "web"
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
			res, err := front.Client().Do(req)
			require.NoError(t, err)
			body(t, res)
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			assert.LessOrEqual(t, hints.Load(), int64(maxInformational), "informational responses relayed")
			if tt.wantStatus == http.StatusOK {
				assert.Equal(t, int64(maxInformational), hints.Load())
			}
		})
	}
}

// TestStreamedBodyDropsExpect: with proxy-request-buffering "off" the
// body streams, and the router still answers the client's Expect:
// 100-continue itself; the backend never gets the Expect field, as nginx
// clears it (ngx_http_proxy_headers: "Expect" ""), over either upstream
// path (HTTP over the router's pool, HTTPS over net/http's transport).
func TestStreamedBodyDropsExpect(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Expect", r.Header.Get("Expect"))
		n, _ := io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "read "+strconv.FormatInt(n, 10)+"\n")
	}
	plain := httptest.NewServer(http.HandlerFunc(h))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(h))
	defer secure.Close()
	stream := &match.Policy{StreamRequestBody: true}
	rPlain := route(match.Prefix, "/plain", httpBackend("prod/web:80", plain.Listener.Addr().String()))
	rPlain.Policy = stream
	rSecure := route(match.Prefix, "/secure", backend("prod/tls:443", match.HTTPS, match.Serving, secure.Listener.Addr().String()))
	rSecure.Policy = stream
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil, rPlain, rSecure)))
	t.Cleanup(r.CloseIdleConnections)
	front := httptest.NewServer(r)
	defer front.Close()

	for _, path := range []string{"/plain", "/secure"} {
		t.Run(path, func(t *testing.T) {
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
			_, err = io.WriteString(c, "PUT "+path+" HTTP/1.1\r\nHost: web\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
			require.NoError(t, err)
			br := bufio.NewReader(c)
			tp := textproto.NewReader(br)
			line, err := tp.ReadLine()
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(line, "HTTP/1.1 100"), "the router asks for the body itself: %s", line)
			_, err = tp.ReadLine() // the blank line
			require.NoError(t, err)
			_, err = io.WriteString(c, "hello")
			require.NoError(t, err)
			line, err = tp.ReadLine()
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(line, "HTTP/1.1 200"), line)
			hdr, err := tp.ReadMIMEHeader()
			require.NoError(t, err)
			assert.Empty(t, hdr.Get("X-Seen-Expect"), "the backend is not asked again")
			b := make([]byte, len("read 5\n"))
			_, err = io.ReadFull(br, b)
			require.NoError(t, err)
			assert.Equal(t, "read 5\n", string(b))
		})
	}
}
