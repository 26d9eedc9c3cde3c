package router

import (
	"bufio"
	"encoding/binary"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h2"
)

// refusedPaths serves r over each server path other than router/h1's,
// which refuses these heads itself (h1.Server.Refused): net/http's HTTP/1
// server, net/http's HTTP/2 server and router/h2 (which refuses some
// itself, told to r's Refused), the last two over cleartext HTTP/2 with
// prior knowledge.
func refusedPaths(t *testing.T, r http.Handler) map[string]string {
	t.Helper()
	paths := map[string]string{}
	one := httptest.NewUnstartedServer(r)
	// Else net/http answers OPTIONS * itself (200), never the router, over
	// HTTP/1 and HTTP/2 alike.
	one.Config.DisableGeneralOptionsHandler = true
	one.Start()
	t.Cleanup(one.Close)
	paths["net/http HTTP/1"] = one.URL
	for _, own := range []bool{false, true} {
		s := httptest.NewUnstartedServer(r)
		s.Config.DisableGeneralOptionsHandler = true
		s.Config.Protocols = new(http.Protocols)
		s.Config.Protocols.SetHTTP1(true)
		s.Config.Protocols.SetUnencryptedHTTP2(true)
		name := "net/http HTTP/2"
		if own {
			hs := &h2.Server{ErrorLog: log.New(io.Discard, "", 0)}
			if rt, ok := r.(*Router); ok {
				hs.Refused = rt.Refused // as the controller wires it
			}
			h2.ConfigureServer(s.Config, hs)
			name = "router/h2"
		}
		s.Start()
		t.Cleanup(s.Close)
		paths[name] = s.URL
	}
	return paths
}

// What router/h1 refuses as nginx does once it has read a head (TRACE, a
// method nginx's parser does not read, a field nginx takes once sent
// twice) is a decision about the request, not framing: whichever server
// hands it to the router, it gets the same answer, reaches no backend, and
// is recorded as refused with its request line, as router/h1's are.
func TestRefusedOnEveryServerPath(t *testing.T) {
	var reached atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(backend.Close)
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", backend.Listener.Addr().String())))))
	for name, url := range refusedPaths(t, r) {
		proto := "HTTP/2.0"
		tr := h2cTransport(t)
		if name == "net/http HTTP/1" {
			proto, tr = "HTTP/1.1", &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
		}
		for _, c := range []struct {
			method string
			header http.Header
			status int
		}{
			{"TRACE", nil, 405},
			{"get", nil, 400},
			{"G.T", nil, 400},
			{"GET1", nil, 400},
			{"GET", http.Header{"Authorization": {"Basic YTpi", "Basic Yzpk"}}, 400},
			{"GET", http.Header{"If-None-Match": {`"a"`, `"b"`}}, 400},
		} {
			req, err := http.NewRequest(c.method, url+"/t?q", nil)
			require.NoError(t, err)
			for k, v := range c.header {
				req.Header[k] = v
			}
			res, err := tr.RoundTrip(req)
			require.NoError(t, err, "%s %s", name, c.method)
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			assert.Equal(t, c.status, res.StatusCode, "%s %s %v", name, c.method, c.header)
			if proto == "HTTP/1.1" {
				// As nginx and router/h1, a 400 closes the connection.
				assert.Equal(t, c.status == 400, res.Close, "%s %s close", name, c.method)
			}
			rec := lastRaw(t, rs)
			assert.Equal(t, c.status, rec.Status, "%s %s %v", name, c.method, c.header)
			assert.Equal(t, ReasonRefused, rec.Reason, "%s %s %v", name, c.method, c.header)
			assert.Equal(t, c.method+" /t?q "+proto, rec.RequestLine, "%s", name)
			assert.Empty(t, rec.Endpoint, "%s %s", name, c.method)
		}
	}
	// Past the refusals the same requests, each field once, are proxied.
	for name, url := range refusedPaths(t, r) {
		tr := h2cTransport(t)
		if name == "net/http HTTP/1" {
			tr = &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
		}
		for _, m := range []string{"GET", "PROPFIND", "VERSION-CONTROL", "X_Y"} {
			req, err := http.NewRequest(m, url+"/t", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Basic YTpi")
			res, err := tr.RoundTrip(req)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, 200, res.StatusCode, "%s %s", name, m)
		}
	}
	assert.Equal(t, int32(3*4), reached.Load(), "the backend saw a refused request")
}

// A "*" request-target (OPTIONS *) is refused as nginx's parser refuses
// it, and router/h1 with it: 400, logged as refused, on every path.
func TestAsteriskTargetRefusedOnEveryServerPath(t *testing.T) {
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", deadAddr(t))))))
	for name, url := range refusedPaths(t, r) {
		proto := "HTTP/2.0"
		tr := h2cTransport(t)
		if name == "net/http HTTP/1" {
			proto, tr = "HTTP/1.1", &http.Transport{}
			t.Cleanup(tr.CloseIdleConnections)
		}
		req, err := http.NewRequest(http.MethodOptions, url, nil)
		require.NoError(t, err)
		req.URL.Opaque = "*"
		res, err := tr.RoundTrip(req)
		require.NoError(t, err, name)
		res.Body.Close()
		assert.Equal(t, 400, res.StatusCode, name)
		rec := lastRaw(t, rs)
		assert.Equal(t, ReasonRefused, rec.Reason, name)
		assert.Equal(t, "OPTIONS * "+proto, rec.RequestLine, name)
	}
}

// lastRaw waits for the next record and returns it whole.
func lastRaw(t *testing.T, rs *records) Record {
	t.Helper()
	select {
	case <-rs.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no record")
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.raw[len(rs.raw)-1]
}

// Fields nginx takes once, sent twice over HTTP/2, which no client library
// sends but a raw client can: nginx refuses them ("client sent duplicate
// header line", "duplicate host header"), and so does router/h1 over
// HTTP/1; the backend would take either. net/http's HTTP/1
// server, the one path left out, refuses two Hosts and differing
// Content-Lengths itself before any handler runs, and merges equal ones
// (which GuardFraming in front of it refuses).
func TestDuplicateFieldsOverHTTP2Refused(t *testing.T) {
	var reached atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(backend.Close)
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe})
	r.Publish(table("one", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", backend.Listener.Addr().String())))))
	for name, url := range refusedPaths(t, r) {
		if name == "net/http HTTP/1" {
			continue
		}
		for _, twice := range [][2]string{{"content-length", "2"}, {"host", "h.test"}} {
			c, err := net.Dial("tcp", url[len("http://"):])
			require.NoError(t, err)
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			var b []byte
			for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/up"}, {":authority", "h.test"}, twice, twice} {
				// A literal field without indexing, its name a literal too.
				b = append(b, 0, byte(len(f[0])))
				b = append(b, f[0]...)
				b = append(b, byte(len(f[1])))
				b = append(b, f[1]...)
			}
			out := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
			out = appendRawFrame(out, 0x4, 0, 0, nil)            // SETTINGS
			out = appendRawFrame(out, 0x1, 0x4, 1, b)            // HEADERS, END_HEADERS
			out = appendRawFrame(out, 0x0, 0x1, 1, []byte("ab")) // DATA, END_STREAM
			_, err = c.Write(out)
			require.NoError(t, err)
			br := bufio.NewReader(c)
			var typ byte
			for {
				var h [9]byte
				_, err := io.ReadFull(br, h[:])
				require.NoError(t, err, name)
				n := int(binary.BigEndian.Uint32(h[:4]) >> 8)
				_, _ = br.Discard(n)
				if id := binary.BigEndian.Uint32(h[5:]) & (1<<31 - 1); id == 1 {
					typ = h[3]
					break
				}
			}
			require.Equal(t, byte(0x1), typ, "%s %s: stream 1 not answered with HEADERS", name, twice[0])
			rec := lastRaw(t, rs)
			assert.Equal(t, 400, rec.Status, "%s %s", name, twice[0])
			assert.Equal(t, ReasonRefused, rec.Reason, "%s %s", name, twice[0])
			assert.Equal(t, "POST /up HTTP/2.0", rec.RequestLine, "%s %s", name, twice[0])
		}
	}
	assert.Zero(t, reached.Load(), "the backend saw a field twice")
}

func appendRawFrame(b []byte, typ, flags uint8, stream uint32, p []byte) []byte {
	n := len(p)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, p...)
}
