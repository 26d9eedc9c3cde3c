package router

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// TestBodyLimit: ingress-nginx's proxy-body-size defaults to 1m; nginx
// answers 413 to a larger declared Content-Length before reading it, and
// to a chunked body as soon as it grows past the limit.
func TestBodyLimit(t *testing.T) {
	addr := bodyEcho(t)
	tests := []struct {
		name       string
		opts       Options
		header     string
		body       string
		wantStatus int
	}{
		{"declared at the limit", Options{}, "Content-Length: 1048576\r\n", strings.Repeat("x", 1<<20), 200},
		{"declared over the limit", Options{}, "Content-Length: 5000000\r\n", "", 413},
		{"streamed over the limit", Options{}, "Transfer-Encoding: chunked\r\n",
			chunk(strings.Repeat("x", 1<<20)) + chunk("y") + "0\r\n\r\n", 413},
		{"streamed at the limit", Options{}, "Transfer-Encoding: chunked\r\n",
			chunk(strings.Repeat("x", 1<<19)) + chunk(strings.Repeat("x", 1<<19)) + "0\r\n\r\n", 200},
		{"a raised limit", Options{MaxBodySize: 4 << 20}, "Content-Length: 2097152\r\n", strings.Repeat("x", 2<<20), 200},
		{"no limit", Options{MaxBodySize: -1}, "Transfer-Encoding: chunked\r\n",
			chunk(strings.Repeat("x", 3<<20)) + "0\r\n\r\n", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := newRecords()
			tt.opts.Observer = rs.observe
			r := newTestRouter(tt.opts)
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/up:80", addr)))))
			front := httptest.NewServer(r)
			defer front.Close()
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			go func() {
				_, _ = io.WriteString(c, "POST /up HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\n"+tt.header+"\r\n"+tt.body)
			}()
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			got := body(t, res)
			require.Equal(t, tt.wantStatus, res.StatusCode)
			rec := <-rs.ch
			if tt.wantStatus == http.StatusOK {
				assert.Len(t, got, len(strings.ReplaceAll(strings.ReplaceAll(tt.body, "0\r\n\r\n", ""), "\r\n", ""))-hexLens(tt.body))
			} else {
				assert.Equal(t, ReasonBodyTooLarge, rec.Reason)
				assert.Empty(t, rec.Endpoint, "refused before any backend")
			}
		})
	}
}

func chunk(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }

// hexLens is the length of the chunk-size lines of a chunked body (0 for
// a plain one), so the payload length can be computed from the framing.
func hexLens(body string) int {
	if !strings.HasSuffix(body, "0\r\n\r\n") {
		return 0
	}
	n := 0
	for rest := strings.TrimSuffix(body, "0\r\n\r\n"); rest != ""; {
		line, after, _ := strings.Cut(rest, "\r\n")
		size, err := strconv.ParseInt(line, 16, 64)
		if err != nil {
			return 0
		}
		n += len(line)
		rest = after[size+2:]
	}
	return n
}

// connCounter counts a server's open connections and remembers the most
// open at once.
type connCounter struct {
	open, peak atomic.Int64
}

func (c *connCounter) track(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		n := c.open.Add(1)
		for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
		}
	case http.StateClosed, http.StateHijacked:
		c.open.Add(-1)
	}
}

// TestSlowClientsHoldNoBackend: 200 clients each declare a 100 kB body
// and send it a byte at a time, then stall. nginx buffers request bodies
// before it connects upstream, so they hold no backend connection, and
// it ends each stalled body after client_body_timeout with 408. The same
// attack held 201 backend connections before bodies were buffered. The
// timeout is shortened so the test takes about a second.
func TestSlowClientsHoldNoBackend(t *testing.T) {
	var conns connCounter
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, strconv.FormatInt(n, 10))
	}))
	backend.Config.ConnState = conns.track
	backend.Start()
	defer backend.Close()
	addr := backend.Listener.Addr().String()

	rs := newRecords()
	const bodyTimeout = 300 * time.Millisecond
	r := newTestRouter(Options{Observer: rs.observe, ClientBodyTimeout: bodyTimeout})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/up:80", addr)))))
	defer r.CloseIdleConnections()
	front := httptest.NewServer(r)
	defer front.Close()

	const clients = 200
	statuses := make(chan int, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			if err != nil {
				statuses <- -1
				return
			}
			defer c.Close()
			io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: h.test\r\nContent-Length: 100000\r\n\r\n")
			// A byte every 100 ms, inside the body timeout, for half a
			// second; then nothing.
			for range 5 {
				time.Sleep(100 * time.Millisecond)
				io.WriteString(c, "x")
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				statuses <- -2
				return
			}
			res.Body.Close()
			statuses <- res.StatusCode
		}()
	}
	// Meanwhile the service answers everyone else.
	time.Sleep(200 * time.Millisecond)
	for range 5 {
		res, err := front.Client().Post(front.URL+"/ok", "text/plain", strings.NewReader("hello"))
		require.NoError(t, err)
		assert.Equal(t, "5", body(t, res))
		assert.Equal(t, http.StatusOK, res.StatusCode)
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	assert.Equal(t, map[int]int{http.StatusRequestTimeout: clients}, counts, "every stalled body ends with 408")
	assert.LessOrEqual(t, conns.peak.Load(), int64(2), "only the well-behaved client's requests reached the backend")
	t.Logf("%d slow clients: %v; backend connections at most %d open at once", clients, counts, conns.peak.Load())
	assert.Zero(t, r.InFlight(addr))
}

// TestIdleKeepAliveCloses: ConfigureServer gives the server nginx's
// keepalive_timeout (75 s) and client_header_timeout (60 s) unless the
// server has its own; an idle keep-alive connection is then closed.
func TestIdleKeepAliveCloses(t *testing.T) {
	var s http.Server
	newTestRouter(Options{}).ConfigureServer(&s)
	assert.Equal(t, 75*time.Second, s.IdleTimeout)
	assert.Equal(t, 60*time.Second, s.ReadHeaderTimeout)
	own := http.Server{IdleTimeout: time.Second}
	newTestRouter(Options{}).ConfigureServer(&own)
	assert.Equal(t, time.Second, own.IdleTimeout, "the server's own setting stays")

	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{IdleTimeout: 200 * time.Millisecond})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	front := httptest.NewUnstartedServer(r)
	r.ConfigureServer(front.Config)
	front.Start()
	defer front.Close()

	c, err := net.Dial("tcp", front.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: h.test\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	body(t, res)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(3*time.Second)))
	start := time.Now()
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the server closed the idle connection")
	assert.Less(t, time.Since(start), 2*time.Second)
}

// deadlineRecorder counts read deadlines set through a ResponseController,
// and those set after the handler returned.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	returned    atomic.Bool
	calls, late atomic.Int64
}

func (d *deadlineRecorder) SetReadDeadline(time.Time) error {
	d.calls.Add(1)
	if d.returned.Load() {
		d.late.Add(1)
	}
	return nil
}

// enteredReader says when a Read has begun, before it blocks.
type enteredReader struct {
	r       io.Reader
	entered chan struct{}
}

func (e *enteredReader) Read(p []byte) (int, error) {
	e.entered <- struct{}{}
	return e.r.Read(p)
}

// TestBodyReadAfterHandlerReturns: a Transport may still be reading the
// request body on its own goroutine when the exchange is over (RoundTrip
// may close it after returning; HTTP/2 transports do). A read that ends
// after that must leave the ResponseWriter alone: net/http's HTTP/2 server
// hands the writer's state to the next stream (a deadline set through it
// panics), and an HTTP/1.1 connection is by then reading its next request
// under the server's own deadline.
func TestBodyReadAfterHandlerReturns(t *testing.T) {
	pr, pw := io.Pipe()
	body := &enteredReader{r: pr, entered: make(chan struct{}, 1)}
	readDone := make(chan error, 1)
	tr := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		go func() {
			_, err := io.ReadAll(req.Body)
			readDone <- err
		}()
		<-body.entered // the read is under way, blocked on the client
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
	})
	r := newTestRouter(Options{Transport: tr})
	web := backend("prod/web:80", match.GRPC, match.Serving, "10.0.0.1:8080")
	r.Publish(table("t", vhost("web", nil, route(match.Prefix, "/", web))))

	// A gRPC body is streamed, never read ahead.
	w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	req := httptest.NewRequest(http.MethodPost, "/svc/Call", body)
	req.Host = "web"
	req.Header.Set("Content-Type", "application/grpc")
	r.ServeHTTP(w, req)
	w.returned.Store(true)
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, int64(1), w.calls.Load(), "the deadline of the read under way")

	require.NoError(t, pw.Close()) // the client's body ends: the read sees io.EOF
	require.NoError(t, <-readDone)
	assert.Zero(t, w.late.Load(), "read deadlines set after the handler returned")
}
