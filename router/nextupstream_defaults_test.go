package router

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// blackholeAddr is a loopback address whose SYNs go unanswered, so that a
// connect to it times out: a listening socket with the smallest backlog,
// never accepted from, its queue filled.
func blackholeAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { c.Close() })
	}
	if c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond); err == nil {
		c.Close()
		t.Skip("could not make a port that drops SYNs")
	}
	return addr
}

// routerFront serves r on loopback until the test ends, through the
// project's HTTP/1 server ("h1") or net/http's ("nethttp"), and returns
// its address.
func routerFront(t *testing.T, front string, r *Router) string {
	t.Helper()
	t.Cleanup(r.CloseIdleConnections)
	if front == "nethttp" {
		s := httptest.NewUnstartedServer(r)
		s.Config.ErrorLog = log.New(io.Discard, "", 0)
		s.Start()
		t.Cleanup(s.Close)
		return s.Listener.Addr().String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &h1.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return ln.Addr().String()
}

var routerFronts = []string{"h1", "nethttp"}

// frontRequest sends one request with body to the front at addr and
// returns the status and the body of the answer.
func frontRequest(t *testing.T, addr, method, path, body string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	head := method + " " + path + " HTTP/1.1\r\nHost: web\r\n"
	if body != "" || method == http.MethodPost || method == http.MethodPut {
		head += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n"
	}
	_, err = io.WriteString(c, head+"\r\n"+body)
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// TestConnectTimeoutDefaults: a connect that times out is nginx's
// "timeout": with no endpoint left the answer is 504 and its
// $upstream_status 504, as nginx 1.22 answers ("upstream timed out while
// connecting to upstream"), where a refused connect is an "error", 502;
// with another endpoint a GET goes on to it, the timed-out try listed
// with 504. A POST stays where it is (SPEC §13), with the timeout's 504.
// Through either front, on either way to the backend.
func TestConnectTimeoutDefaults(t *testing.T) {
	hole := blackholeAddr(t)
	live := bodyEcho(t)
	for _, front := range routerFronts {
		for _, p := range proxyPaths() {
			for _, tt := range []struct {
				name      string
				method    string
				endpoints []string
				status    int
				reason    string
				passed    []int // $upstream_status of the tries passed on
				// the last try opened no connection: $upstream_connect_time "-"
				unconnected bool
			}{
				{"alone", http.MethodGet, []string{hole}, http.StatusGatewayTimeout, ReasonUpstreamTimeout, nil, true},
				{"refused alone", http.MethodGet, []string{deadAddr(t)}, http.StatusBadGateway, ReasonUpstreamUnreachable, nil, true},
				{"then live", http.MethodGet, []string{hole, live}, http.StatusOK, "", []int{http.StatusGatewayTimeout}, false},
				{"POST then live", http.MethodPost, []string{hole, live}, http.StatusGatewayTimeout, ReasonUpstreamTimeout, nil, true},
			} {
				t.Run(front+" "+p.name+" "+tt.name, func(t *testing.T) {
					rs := newRecords()
					o := Options{Observer: rs.observe, ConnectTimeout: 200 * time.Millisecond}
					if p.rt != nil {
						o.Transport = DefaultTransport(o)
					}
					r := newTestRouter(o)
					// Round-robin starts with the first endpoint.
					r.Publish(table("ct", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", tt.endpoints...)))))
					status, _ := frontRequest(t, routerFront(t, front, r), tt.method, "/", "")
					assert.Equal(t, tt.status, status)
					rec := awaitRecord(t, rs)
					assert.Equal(t, tt.status, rec.Status, "the last $upstream_status")
					assert.Equal(t, tt.reason, rec.Reason)
					var passed []int
					for _, try := range rec.PassedOn {
						passed = append(passed, try.Status)
					}
					assert.Equal(t, tt.passed, passed)
					assert.Equal(t, tt.unconnected, rec.Unconnected)
					assert.Equal(t, len(tt.passed)+1, rec.Tries)
				})
			}
		}
	}
}

// awaitRecord waits for the record of the next request to end and
// returns it as observed.
func awaitRecord(t *testing.T, rs *records) Record {
	t.Helper()
	select {
	case <-rs.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no record observed")
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.raw[len(rs.raw)-1]
}

// staleOnSecond is a backend that answers the first request on each
// connection and keeps the connection, then drops it, resetting it, once
// the next request's head arrives: the race of a backend closing a
// kept-alive connection as the proxy reuses it. Each answer names the
// request's body length and whether the connection was new.
func staleOnSecond(t *testing.T) string {
	return rawServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if n > 0 {
				_ = c.(*net.TCPConn).SetLinger(0)
				return
			}
			b, err := io.ReadAll(req.Body)
			if err != nil {
				return
			}
			msg := req.Method + " got " + strconv.Itoa(len(b)) + "\n"
			_, err = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(msg))+"\r\n\r\n"+msg)
			if err != nil {
				return
			}
		}
	})
}

// TestStaleKeptAliveConnectionResends: a kept-alive connection the
// backend drops as the next request arrives had nothing of that request
// acted on. nginx 1.22 (keepalive upstream, request buffering on) sends
// a GET or a PUT again on a new connection whatever the size of its
// buffered body, and answers a POST 502 (it was sent, and POST is not
// idempotent). A PUT whose body is over the 64 KiB sent with the head,
// in memory or in the temporary file, is sent again whole too. Through
// both fronts, on either way to the backend: net/http's transport sends
// again on its own only what it may replay (GET, HEAD, OPTIONS, TRACE
// without a body).
func TestStaleKeptAliveConnectionResends(t *testing.T) {
	big := strings.Repeat("b", 100<<10)
	for _, front := range routerFronts {
		for _, p := range proxyPaths() {
			testStaleResends(t, front, p, big)
		}
	}
}

// testStaleResends runs the cases of TestStaleKeptAliveConnectionResends
// through one front on one way to the backend.
func testStaleResends(t *testing.T, front string, p proxyPath, big string) {
	for _, tt := range []struct {
		name   string
		method string
		body   string
		memory int64 // client-body-buffer-size; 0: the router's 8k, -1: streamed
		status int
	}{
		{"GET", http.MethodGet, "", 0, http.StatusOK},
		{"DELETE", http.MethodDelete, "", 0, http.StatusOK},
		{"PUT small", http.MethodPut, "small", 0, http.StatusOK},
		{"PUT 100k spilled", http.MethodPut, big, 0, http.StatusOK},
		{"PUT 100k in memory", http.MethodPut, big, 1 << 20, http.StatusOK},
		{"POST 100k", http.MethodPost, big, 0, http.StatusBadGateway},
		// proxy-request-buffering "off": nginx passes on a body that
		// did not come whole with the head as it reads it, and sends
		// nothing again once it did.
		{"PUT 100k streamed", http.MethodPut, big, -1, http.StatusBadGateway},
	} {
		t.Run(front+" "+p.name+" "+tt.name, func(t *testing.T) {
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe, Transport: p.rt})
			rt := route(match.Prefix, "/", httpBackend("prod/web:80", staleOnSecond(t)))
			switch {
			case tt.memory > 0:
				rt.Policy = &match.Policy{BodyBufferSize: tt.memory}
			case tt.memory < 0:
				rt.Policy = &match.Policy{StreamRequestBody: true}
			}
			r.Publish(table("stale", vhost("", nil, rt)))
			addr := routerFront(t, front, r)
			// A GET without a body leaves the connection in the pool
			// once answered, with no body sender to wait for.
			status, got := frontRequest(t, addr, http.MethodGet, "/", "")
			require.Equal(t, http.StatusOK, status, "the first request opens the connection")
			require.Equal(t, "GET got 0\n", got)
			awaitRecord(t, rs)

			status, got = frontRequest(t, addr, tt.method, "/", tt.body)
			assert.Equal(t, tt.status, status)
			if tt.status == http.StatusOK {
				assert.Equal(t, tt.method+" got "+strconv.Itoa(len(tt.body))+"\n", got, "the whole body, sent again")
			}
			awaitRecord(t, rs)
		})
	}
}
