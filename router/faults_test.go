package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// faultRig is a router behind a real http.Server, with backends that
// misbehave on purpose, and the means to check that nothing leaked.
type faultRig struct {
	router  *Router
	front   *httptest.Server
	rs      *records
	open    atomic.Int64 // client connections the front server holds
	addrs   map[string]string
	closers []func()
}

func newFaultRig(t *testing.T) *faultRig {
	rig := &faultRig{rs: newRecords(), addrs: map[string]string{}}
	start := func(name string, h http.HandlerFunc) {
		s := httptest.NewServer(h)
		rig.closers = append(rig.closers, s.Close)
		rig.addrs[name] = s.Listener.Addr().String()
	}
	start("echo", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			return
		}
		_, _ = io.WriteString(w, "read "+strconv.FormatInt(n, 10)+"\n")
	})
	// Announces 1000 bytes, sends 10, then resets the connection.
	start("reset", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "0123456789")
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST rather than FIN
		}
		c.Close()
	})
	start("silent", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	rig.router = newTestRouter(Options{Observer: rig.rs.observe, ReadTimeout: 200 * time.Millisecond})
	b := func(name string) *match.Backend { return httpBackend("prod/"+name+":80", rig.addrs[name]) }
	rig.router.Publish(table("faults", vhost("web.example.com", nil,
		route(match.Prefix, "/", b("echo")),
		route(match.Prefix, "/reset", b("reset")),
		route(match.Prefix, "/silent", b("silent")))))

	rig.front = httptest.NewUnstartedServer(rig.router)
	rig.front.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			rig.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			rig.open.Add(-1)
		}
	}
	rig.front.Config.ReadHeaderTimeout = 5 * time.Second
	rig.front.Config.MaxHeaderBytes = 16 << 10
	rig.front.Config.ErrorLog = quietLogLogger()
	rig.front.Start()
	rig.closers = append(rig.closers, rig.front.Close)
	return rig
}

// raw sends bytes on a new connection and reads one response; the
// connection is closed before it returns.
func (rig *faultRig) raw(t *testing.T, request string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", rig.front.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(c, request)
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// settle waits for a condition that asynchronous cleanup makes true.
func settle(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not settle", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func quietLogLogger() *log.Logger { return log.New(io.Discard, "", 0) }

// TestFaults sends malformed and hostile input and provokes backend and
// client failures against a real server, then requires every answer to be
// what SPEC §13 says, with no goroutine, connection or in-flight count
// left behind.
func TestFaults(t *testing.T) {
	before := runtime.NumGoroutine()
	rig := newFaultRig(t)
	host := "Host: web.example.com\r\n"

	t.Run("malformed requests", func(t *testing.T) {
		tests := []struct {
			name, request string
			want          int
		}{
			{"garbage request line", "GARBAGE\r\n\r\n", 400},
			{"unknown version", "GET / HTTP/9.9\r\n" + host + "\r\n", 505},
			{"header without colon", "GET / HTTP/1.1\r\n" + host + "Bad-Header\r\n\r\n", 400},
			{"space in header name", "GET / HTTP/1.1\r\n" + host + "Bad Name: x\r\n\r\n", 400},
			{"NUL in header value", "GET / HTTP/1.1\r\n" + host + "X-A: a\x00b\r\n\r\n", 400},
			{"headers too large", "GET / HTTP/1.1\r\n" + host + "X-Big: " + strings.Repeat("a", 64<<10) + "\r\n\r\n", 431},
			{"two content lengths", "POST / HTTP/1.1\r\n" + host + "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
			{"missing host", "GET / HTTP/1.1\r\n\r\n", 400},
			{"two hosts", "GET / HTTP/1.1\r\n" + host + host + "\r\n", 400},
			{"host with a space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400},
			{"host with angle brackets", "GET / HTTP/1.1\r\nHost: <script>\r\n\r\n", 400},
			{"empty host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400},
			{"HTTP/1.0 without host: the catch-all", "GET / HTTP/1.0\r\n\r\n", 404},
			{"very long host", "GET / HTTP/1.1\r\nHost: " + strings.Repeat("a.", 4000) + "example.com\r\n\r\n", 404},
			{"host with a bad port", "GET / HTTP/1.1\r\nHost: web.example.com:port\r\n\r\n", 200},
			{"path climbs above /", "GET /../etc/passwd HTTP/1.1\r\n" + host + "\r\n", 400},
			{"encoded climb", "GET /a/%2e%2e/%2E%2E/etc HTTP/1.1\r\n" + host + "\r\n", 400},
			{"bad percent-encoding", "GET /a/%zz HTTP/1.1\r\n" + host + "\r\n", 400},
			{"truncated percent-encoding", "GET /a/% HTTP/1.1\r\n" + host + "\r\n", 400},
			{"asterisk", "GET * HTTP/1.1\r\n" + host + "\r\n", 400},
			{"OPTIONS * is net/http's own", "OPTIONS * HTTP/1.1\r\n" + host + "\r\n", 200},
			{"CONNECT authority form", "CONNECT web.example.com:443 HTTP/1.1\r\n" + host + "\r\n", 400},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res, b := rig.raw(t, tt.request)
				assert.Equal(t, tt.want, res.StatusCode, b)
				assert.NotContains(t, b, "127.0.0.1")
			})
		}
	})

	t.Run("client disconnects mid-body", func(t *testing.T) {
		c, err := net.Dial("tcp", rig.front.Listener.Addr().String())
		require.NoError(t, err)
		_, err = io.WriteString(c, "PUT /upload HTTP/1.1\r\n"+host+"Content-Length: 1048576\r\n\r\n"+strings.Repeat("x", 64<<10))
		require.NoError(t, err)
		// The body is read whole before a backend is picked (as nginx
		// buffers it), so going away mid-body never reaches a backend.
		require.NoError(t, c.Close())
		rec := nextRecord(t, rig.rs, "/upload")
		assert.Equal(t, 499, rec.Status, "nobody reads the answer; it is recorded")
		assert.Equal(t, ReasonClientClosed, rec.Reason)
		assert.Zero(t, rec.Tries, "no backend was involved")
		assert.Zero(t, rig.router.InFlight(rig.addrs["echo"]))
	})

	t.Run("backend resets mid-response", func(t *testing.T) {
		c, err := net.Dial("tcp", rig.front.Listener.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		_, err = io.WriteString(c, "GET /reset HTTP/1.1\r\n"+host+"\r\n")
		require.NoError(t, err)
		// The status line may or may not have left the router's buffer
		// before the connection is cut; either way the client never sees
		// a complete response.
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err == nil {
			assert.Equal(t, http.StatusOK, res.StatusCode)
			_, err = io.ReadAll(res.Body)
		}
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the client sees the response cut short")
		rec := nextRecord(t, rig.rs, "/reset")
		assert.Equal(t, ReasonUpstreamError, rec.Reason)
		assert.Equal(t, 200, rec.Status)
	})

	t.Run("backend never answers", func(t *testing.T) {
		res, b := rig.raw(t, "GET /silent HTTP/1.1\r\n"+host+"\r\n")
		assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
		assert.Contains(t, b, "did not answer in time")
		assert.Equal(t, ReasonUpstreamTimeout, nextRecord(t, rig.rs, "/silent").Reason)
	})

	t.Run("still serving", func(t *testing.T) {
		res, b := rig.raw(t, "POST /ok HTTP/1.1\r\n"+host+"Content-Length: 5\r\n\r\nhello")
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "read 5\n", b)
	})

	settle(t, "client connections", func() bool { return rig.open.Load() == 0 })
	for name, addr := range rig.addrs {
		assert.Zero(t, rig.router.InFlight(addr), name)
	}
	done := make(chan struct{})
	go func() {
		for i := len(rig.closers) - 1; i >= 0; i-- {
			rig.closers[i]()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a server could not close: some request is still running")
	}
	rig.router.CloseIdleConnections()
	settle(t, "goroutines (before "+strconv.Itoa(before)+")", func() bool { return runtime.NumGoroutine() <= before })
}

// nextRecord waits for the record of the request to target.
func nextRecord(t *testing.T, rs *records, target string) Record {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case rec := <-rs.ch:
			if rec.Path == target {
				return rec
			}
		case <-deadline:
			t.Fatalf("no record for %s", target)
		}
	}
}
