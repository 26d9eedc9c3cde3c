package router

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
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

// digestBackend answers every request with its body's length and SHA-256,
// and counts the connections it accepted and the requests it is serving.
type digestBackend struct {
	addr     string
	conns    connCounter
	inFlight atomic.Int64
	started  chan struct{} // one send per request, once its handler runs
}

func newDigestBackend(t *testing.T) *digestBackend {
	t.Helper()
	d := &digestBackend{started: make(chan struct{}, 256)}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.inFlight.Add(1)
		defer d.inFlight.Add(-1)
		select {
		case d.started <- struct{}{}:
		default:
		}
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, strconv.FormatInt(n, 10)+" "+hex.EncodeToString(h.Sum(nil)))
	}))
	s.Config.ConnState = d.conns.track
	s.Start()
	t.Cleanup(s.Close)
	d.addr = s.Listener.Addr().String()
	return d
}

func digestOf(b []byte) string {
	h := sha256.Sum256(b)
	return strconv.Itoa(len(b)) + " " + hex.EncodeToString(h[:])
}

// spillFiles counts this process's open files named like the router's
// temporary body files (in dir, when given). They are unlinked at once, so
// /proc is the only place they show; -1 where there is no /proc.
func spillFiles(t *testing.T, dir string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return -1
	}
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil || !strings.Contains(filepath.Base(target), "ramjet-body-") {
			continue
		}
		if dir == "" || strings.HasPrefix(target, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}

// waitSpillFiles waits up to two seconds for want open temporary body
// files in dir, and returns how many there were last.
func waitSpillFiles(t *testing.T, dir string, want int) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		n := spillFiles(t, dir)
		if n == want || n < 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// slowUpload sends a request head and body on c: first all but the last
// tail bytes, then gate's signal (ready is told), then the rest.
func slowUpload(c net.Conn, head string, body []byte, tail int, ready func(), gate <-chan struct{}) {
	_, _ = io.WriteString(c, head)
	_, _ = c.Write(body[:len(body)-tail])
	ready()
	<-gate
	_, _ = c.Write(body[len(body)-tail:])
}

// TestSlowUnlimitedBodiesHoldNoBackend: 50 clients send bodies of more
// than 1 MiB to a location with proxy-body-size "0", slowly, and stop
// just short of the end. nginx reads such a body whole before it connects
// upstream (memory up to client_body_buffer_size, then a temporary file),
// so the backend sees no connection until each body is complete. Before,
// only the first 1 MiB was read ahead and the rest streamed: 50 backend
// connections held open by 50 slow clients. Every body arrives intact,
// and no temporary file outlives its request.
func TestSlowUnlimitedBodiesHoldNoBackend(t *testing.T) {
	be := newDigestBackend(t)
	// The first clients wait for the last at the gate, longer than 30 s
	// on a loaded machine under -race: the body timeout is not what is
	// tested.
	r := newTestRouter(Options{ClientBodyTimeout: 5 * time.Minute})
	b := httpBackend("prod/up:80", be.addr)
	r.Publish(table("d", vhost("", nil, policyRoute("/", b, &match.Policy{MaxBodySize: -1}))))
	defer r.CloseIdleConnections()
	front := httptest.NewServer(r)
	defer front.Close()
	before := spillFiles(t, "")

	const clients = 50
	base := make([]byte, 1<<20+20<<10)
	rng := rand.New(rand.NewPCG(5, 19))
	for i := range base {
		base[i] = byte(rng.Uint32())
	}
	var ready sync.WaitGroup
	ready.Add(clients)
	gate := make(chan struct{})
	results := make([]string, clients)
	wants := make([]string, clients)
	var done sync.WaitGroup
	for i := range clients {
		body := append([]byte(fmt.Sprintf("client %02d ", i)), base[:len(base)-i*37]...)
		wants[i] = "200 " + digestOf(body)
		head := "POST /up HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		if i%2 == 1 {
			// Half of them chunked: a length the router learns only at the end.
			var chunked []byte
			for rest := body; len(rest) > 0; {
				n := min(len(rest), 100<<10)
				chunked = append(chunked, chunk(string(rest[:n]))...)
				rest = rest[n:]
			}
			body = append(chunked, "0\r\n\r\n"...)
			head = "POST /up HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
		}
		done.Add(1)
		go func() {
			defer done.Done()
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			if err != nil {
				ready.Done()
				results[i] = err.Error()
				return
			}
			defer c.Close()
			once := sync.OnceFunc(ready.Done)
			defer once()
			slowUpload(c, head, body, 1000, once, gate)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				results[i] = err.Error()
				return
			}
			got, _ := io.ReadAll(res.Body)
			results[i] = strconv.Itoa(res.StatusCode) + " " + string(got)
		}()
	}
	ready.Wait()
	// Everything but the last 1000 bytes of each body is on its way; give
	// the router time to read it (and, were it streaming, to connect):
	// until each body waits in a temporary file where they can be counted.
	if before >= 0 {
		assert.Eventually(t, func() bool { return spillFiles(t, "")-before == clients }, time.Minute, 10*time.Millisecond,
			"each body over the memory buffer waits in a temporary file")
	} else {
		time.Sleep(300 * time.Millisecond)
	}
	held := be.conns.peak.Load()
	assert.Zero(t, held, "no backend connection while the bodies are incomplete")
	assert.Zero(t, be.inFlight.Load())
	close(gate)
	done.Wait()
	assert.Equal(t, wants, results, "every body arrives intact")
	if n := waitSpillFiles(t, "", before); n >= 0 {
		assert.Equal(t, before, n, "no temporary file outlives its request")
	}
	t.Logf("%d slow clients: backend connections while the bodies were incomplete: %d; at most %d open at once afterwards",
		clients, held, be.conns.peak.Load())
	assert.Zero(t, r.InFlight(be.addr))
}

// TestBodyBufferMemoryThenFile: a body up to client-body-buffer-size
// stays in memory; a longer one, declared or chunked, goes to a temporary
// file in Options.BodyTempDir, on any location (ingress-nginx buffers
// every body by default), and a location's client-body-buffer-size
// overrides the router's. A temporary file that cannot be made answers
// 500 without reaching the backend, as nginx does.
func TestBodyBufferMemoryThenFile(t *testing.T) {
	if spillFiles(t, "") < 0 {
		t.Skip("counts open files through /proc")
	}
	be := newDigestBackend(t)
	dir := t.TempDir()
	rs := newRecords()
	r := newTestRouter(Options{ClientBodyBufferSize: 1 << 10, BodyTempDir: dir, ClientBodyTimeout: 2 * time.Second, Observer: rs.observe})
	b := httpBackend("prod/up:80", be.addr)
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/limited", b),
		policyRoute("/small-buffer", b, &match.Policy{BodyBufferSize: 100}),
		policyRoute("/unlimited", b, &match.Policy{MaxBodySize: -1}),
	)))
	defer r.CloseIdleConnections()
	front := httptest.NewServer(r)
	defer front.Close()

	tests := []struct {
		name    string
		path    string
		size    int
		chunked bool
		files   int // temporary files while the body is incomplete
	}{
		{"under the buffer", "/limited", 1000, false, 0},
		{"at the buffer", "/limited", 1 << 10, true, 0},
		{"declared over the buffer", "/limited", 5000, false, 1},
		{"chunked over the buffer", "/limited", 5000, true, 1},
		{"the location's buffer", "/small-buffer", 500, false, 1},
		{"unlimited", "/unlimited", 300 << 10, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload := []byte(strings.Repeat("0123456789abcdef", tt.size/16+1)[:tt.size])
			send := payload
			head := "POST " + tt.path + " HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\n"
			if tt.chunked {
				send = []byte(chunk(string(payload[:tt.size-10])) + chunk(string(payload[tt.size-10:])) + "0\r\n\r\n")
				head += "Transfer-Encoding: chunked\r\n\r\n"
			} else {
				head += "Content-Length: " + strconv.Itoa(tt.size) + "\r\n\r\n"
			}
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			gate := make(chan struct{})
			ready := make(chan struct{})
			go slowUpload(c, head, send, 20, func() { close(ready) }, gate)
			<-ready
			assert.Equal(t, tt.files, waitSpillFiles(t, dir, tt.files))
			assert.Zero(t, len(be.started), "the backend waits for the whole body")
			close(gate)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, digestOf(payload), body(t, res))
			<-be.started
			<-rs.ch
			assert.Zero(t, waitSpillFiles(t, dir, 0), "the file is closed with its request")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing is left on disk")
		})
	}

	t.Run("no temporary directory", func(t *testing.T) {
		rs := newRecords()
		r := newTestRouter(Options{ClientBodyBufferSize: 1 << 10, BodyTempDir: filepath.Join(dir, "missing"), Observer: rs.observe})
		r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", b))))
		front := httptest.NewServer(r)
		defer front.Close()
		res, err := front.Client().Post(front.URL+"/up", "text/plain", strings.NewReader(strings.Repeat("x", 5000)))
		require.NoError(t, err)
		assert.Equal(t, http.StatusInternalServerError, res.StatusCode)
		body(t, res)
		rec := <-rs.ch
		assert.Equal(t, ReasonBodyTempFile, rec.Reason)
		assert.Empty(t, rec.Endpoint, "refused before any backend")
		res, err = front.Client().Post(front.URL+"/up", "text/plain", strings.NewReader(strings.Repeat("x", 500)))
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, res.StatusCode, "a body that fits in memory needs no file")
		body(t, res)
	})
}

// TestSpillFileGoneOnEveryPath: the temporary file goes whether the
// client gives up halfway through its body, stalls past the body timeout,
// or the backend breaks off its response (the handler ends in a panic).
func TestSpillFileGoneOnEveryPath(t *testing.T) {
	if spillFiles(t, "") < 0 {
		t.Skip("counts open files through /proc")
	}
	dir := t.TempDir()
	breaker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		_, _ = bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
		_ = bw.Flush()
		c.Close()
	}))
	defer breaker.Close()
	rs := newRecords()
	r := newTestRouter(Options{ClientBodyBufferSize: 1 << 10, BodyTempDir: dir, ClientBodyTimeout: 200 * time.Millisecond, Observer: rs.observe})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/broken:80", breaker.Listener.Addr().String())))))
	defer r.CloseIdleConnections()
	front := httptest.NewServer(r)
	defer front.Close()

	upload := func(t *testing.T, then func(net.Conn)) {
		c, err := net.Dial("tcp", front.Listener.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		_, _ = io.WriteString(c, "POST /up HTTP/1.1\r\nHost: h.test\r\nContent-Length: 5000\r\n\r\n"+strings.Repeat("x", 3000))
		assert.Equal(t, 1, waitSpillFiles(t, dir, 1))
		then(c)
	}
	t.Run("client gone", func(t *testing.T) {
		upload(t, func(c net.Conn) { c.Close() })
		assert.Equal(t, 499, (<-rs.ch).Status)
		assert.Zero(t, waitSpillFiles(t, dir, 0))
	})
	t.Run("client stalls", func(t *testing.T) {
		upload(t, func(c net.Conn) {
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusRequestTimeout, res.StatusCode)
		})
		<-rs.ch
		assert.Zero(t, waitSpillFiles(t, dir, 0))
	})
	t.Run("backend breaks off", func(t *testing.T) {
		upload(t, func(c net.Conn) {
			_, _ = io.WriteString(c, strings.Repeat("x", 2000))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err == nil {
				_, err = io.ReadAll(res.Body)
			}
			assert.Error(t, err, "the response is cut short")
		})
		<-rs.ch
		assert.Zero(t, waitSpillFiles(t, dir, 0))
	})
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestRequestBufferingOff: proxy-request-buffering "off" passes the body
// on as it arrives, as nginx does, so the backend starts on it before the
// client has sent it all; nothing is held in a temporary file.
func TestRequestBufferingOff(t *testing.T) {
	be := newDigestBackend(t)
	dir := t.TempDir()
	r := newTestRouter(Options{ClientBodyBufferSize: 1 << 10, BodyTempDir: dir, ClientBodyTimeout: 2 * time.Second})
	b := httpBackend("prod/up:80", be.addr)
	r.Publish(table("d", vhost("", nil, policyRoute("/", b, &match.Policy{MaxBodySize: -1, StreamRequestBody: true}))))
	defer r.CloseIdleConnections()
	front := httptest.NewServer(r)
	defer front.Close()

	payload := []byte(strings.Repeat("streamed", 40<<10))
	c, err := net.Dial("tcp", front.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	gate := make(chan struct{})
	go slowUpload(c, "POST /up HTTP/1.1\r\nHost: h.test\r\nContent-Length: "+strconv.Itoa(len(payload))+"\r\n\r\n",
		payload, 1000, func() {}, gate)
	select {
	case <-be.started:
	case <-time.After(2 * time.Second):
		t.Fatal("the backend saw nothing of a body still arriving")
	}
	assert.Equal(t, 1, int(be.inFlight.Load()))
	if n := spillFiles(t, dir); n >= 0 {
		assert.Zero(t, n)
	}
	close(gate)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, digestOf(payload), body(t, res))
}

// A mirrored copy holding a body's temporary file keeps it readable after
// the request closed it, and the file closes when the copy lets go.
func TestSpillHeldByMirror(t *testing.T) {
	s, err := newSpill(t.TempDir())
	require.NoError(t, err)
	_, err = s.fill([]byte("head-"), strings.NewReader("rest"))
	require.NoError(t, err)
	require.True(t, s.hold())
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "the transport and the handler both close it")
	got, err := io.ReadAll(io.NewSectionReader(s.f, 0, s.size))
	require.NoError(t, err)
	assert.Equal(t, "head-rest", string(got))
	s.release()
	_, err = s.f.ReadAt(make([]byte, 1), 0)
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.False(t, s.hold(), "a closed file is not held again")
}
