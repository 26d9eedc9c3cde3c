package h1_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/h1"
)

// framingBackend answers every request with its method, target and body,
// and keeps the targets it was asked for.
type framingBackend struct {
	mu      sync.Mutex
	targets []string
}

func (b *framingBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") == "test" {
		// A tunnel that echoes what it gets.
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		_ = brw.Flush()
		buf := make([]byte, 4096)
		for {
			n, err := brw.Read(buf)
			if n > 0 {
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	b.targets = append(b.targets, r.RequestURI)
	b.mu.Unlock()
	fmt.Fprintf(w, "%s %s %q", r.Method, r.RequestURI, body)
}

func (b *framingBackend) seen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.targets...)
}

// guardedRouter serves a router in front of a framingBackend on loopback,
// over HTTP/1 and h2c with prior knowledge, its listener guarded or not.
func guardedRouter(t *testing.T, guard bool) (addr string, be *framingBackend) {
	t.Helper()
	be = new(framingBackend)
	front := httptest.NewUnstartedServer(catchAll(t, be, router.Options{}))
	front.Config.Protocols = new(http.Protocols)
	front.Config.Protocols.SetHTTP1(true)
	front.Config.Protocols.SetUnencryptedHTTP2(true)
	if guard {
		front.Listener = h1.GuardFraming(front.Listener)
	}
	front.Start()
	t.Cleanup(front.Close)
	return front.Listener.Addr().String(), be
}

// rawConn dials addr with a deadline that ends a stuck test.
func rawConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	return c, bufio.NewReader(c)
}

// readAnswer reads one response and its body.
func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, string) {
	t.Helper()
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(b)
}

// requireRefused reads a 400 with Connection: close and then the end of
// the connection.
func requireRefused(t *testing.T, br *bufio.Reader) {
	t.Helper()
	res, body := readAnswer(t, br)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.True(t, res.Close, "Connection: close")
	rest, err := io.ReadAll(br)
	assert.NoError(t, err)
	assert.Empty(t, string(rest), "nothing after the 400")
}

var (
	refusedHeads = h1.RefusedHeads
	foldedHeads  = h1.FoldedHeads
	smuggled     = h1.Smuggled
)

// net/http alone serves the same bytes.
func TestGuardFramingRefuses(t *testing.T) {
	addr, be := guardedRouter(t, true)
	plain, _ := guardedRouter(t, false)
	for _, tc := range refusedHeads {
		t.Run(tc.Name, func(t *testing.T) {
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, tc.Req)
			require.NoError(t, err)
			requireRefused(t, br)
			assert.Empty(t, be.seen(), "the backend saw nothing")

			c, br = rawConn(t, plain)
			_, err = io.WriteString(c, tc.Req)
			require.NoError(t, err)
			res, body := readAnswer(t, br)
			assert.Equal(t, http.StatusOK, res.StatusCode, "net/http alone serves it: %s", body)
		})
	}
	// The client is still sending when the server closes: the 400 must
	// not be lost to a reset.
	t.Run("a body larger than what was read", func(t *testing.T) {
		for range 3 {
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 200000\r\nTransfer-Encoding: chunked\r\n\r\n"+strings.Repeat("x", 200000))
			require.NoError(t, err)
			res, body := readAnswer(t, br)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		}
	})
}

// TestGuardFramingRefusesFolded: a head with a folded line answers 400 and
// closes, as nginx does, and nothing of it or after it reaches the
// backend; net/http alone serves it.
func TestGuardFramingRefusesFolded(t *testing.T) {
	addr, be := guardedRouter(t, true)
	plain, _ := guardedRouter(t, false)
	for _, tc := range foldedHeads {
		t.Run(tc.Name, func(t *testing.T) {
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, tc.Req)
			require.NoError(t, err)
			requireRefused(t, br)
			assert.Empty(t, be.seen(), "the backend saw nothing")

			c, br = rawConn(t, plain)
			_, err = io.WriteString(c, tc.Req)
			require.NoError(t, err)
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			res.Body.Close()
			assert.Less(t, res.StatusCode, 400, "net/http alone serves it")
		})
	}
}

// TestGuardFramingPipelined: a good request before a refused one on the
// same connection is answered as usual, then the 400, whether the refused
// head arrives with the good request or after it in pieces.
func TestGuardFramingPipelined(t *testing.T) {
	addr, be := guardedRouter(t, true)
	good := "POST /good HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
	bad := refusedHeads[0].Req
	for _, split := range []int{0, 20, len(bad) - len(smuggled) - 7, len(bad) - len(smuggled) - 6} {
		t.Run(fmt.Sprint("split=", split), func(t *testing.T) {
			before := len(be.seen())
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, good+bad[:split])
			require.NoError(t, err)
			if split > 0 {
				// The first answer comes before the rest is sent, so the
				// refused head starts in an earlier read than it ends.
				res, body := readAnswer(t, br)
				require.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, `POST /good "abc"`, body)
				time.Sleep(20 * time.Millisecond)
			}
			_, err = io.WriteString(c, bad[split:])
			require.NoError(t, err)
			if split == 0 {
				res, body := readAnswer(t, br)
				require.Equal(t, http.StatusOK, res.StatusCode)
				assert.Equal(t, `POST /good "abc"`, body)
			}
			requireRefused(t, br)
			assert.Equal(t, []string{"/good"}, be.seen()[before:])
		})
	}
}

// TestGuardFramingPassesThrough: requests net/http serves are served the
// same through the guard: bodies in both framings, chunk extensions and
// trailers, Expect: 100-continue, a long keep-alive sequence, a tunnel
// after Upgrade (whose bytes are not requests) and h2c with prior
// knowledge.
func TestGuardFramingPassesThrough(t *testing.T) {
	addr, be := guardedRouter(t, true)
	exchange := func(t *testing.T, c net.Conn, br *bufio.Reader, req, want string) {
		t.Helper()
		_, err := io.WriteString(c, req)
		require.NoError(t, err)
		res, body := readAnswer(t, br)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		assert.Equal(t, want, body)
	}
	requests := []struct{ req, want string }{
		{"GET /get HTTP/1.1\r\nHost: h\r\n\r\n", `GET /get ""`},
		{"POST /cl HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world", `POST /cl "hello world"`},
		{"POST /chunked HTTP/1.1\r\nhost: h\r\ntransfer-encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6 \r\n world\r\nA;a=\"q;x\";b\r\n0123456789\r\n0\r\n\r\n", `POST /chunked "hello world0123456789"`},
		{"POST /trailers HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nabc\r\n0;last\r\nX-T: Content-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n", `POST /trailers "abc"`},
		{"POST /zero HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", `POST /zero ""`},
		// After a POST net/http skips a CRLF before the request line.
		{"\r\nGET /crlf HTTP/1.1\r\nHost: h\r\n\r\n", `GET /crlf ""`},
		{"POST /http10 HTTP/1.0\r\nHost: h\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok", `POST /http10 "ok"`},
		// A body that looks like a refused head is a body.
		{"PUT /body HTTP/1.1\r\nHost: h\r\nContent-Length: 68\r\n\r\n" + refusedHeads[0].Req[:68], fmt.Sprintf("PUT /body %q", refusedHeads[0].Req[:68])},
	}
	t.Run("one by one", func(t *testing.T) {
		for _, r := range requests {
			if r.req[0] == '\r' {
				continue
			}
			c, br := rawConn(t, addr)
			exchange(t, c, br, r.req, r.want)
		}
	})
	t.Run("keep-alive, 50 requests", func(t *testing.T) {
		c, br := rawConn(t, addr)
		for i := range 50 {
			r := requests[i%len(requests)]
			if strings.Contains(r.req, "HTTP/1.0") {
				r = requests[0]
			}
			exchange(t, c, br, r.req, r.want)
		}
	})
	t.Run("pipelined", func(t *testing.T) {
		c, br := rawConn(t, addr)
		var all strings.Builder
		for _, r := range requests[:6] {
			all.WriteString(r.req)
		}
		_, err := io.WriteString(c, all.String())
		require.NoError(t, err)
		for _, r := range requests[:6] {
			res, body := readAnswer(t, br)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			assert.Equal(t, r.want, body)
		}
	})
	t.Run("Expect: 100-continue", func(t *testing.T) {
		c, br := rawConn(t, addr)
		_, err := io.WriteString(c, "POST /expect HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusContinue, res.StatusCode)
		exchange(t, c, br, "body", `POST /expect "body"`)
		exchange(t, c, br, requests[2].req, requests[2].want)
	})
	t.Run("Upgrade", func(t *testing.T) {
		c, br := rawConn(t, addr)
		_, err := io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
		// The tunnel's bytes are not requests: they pass as they are.
		tunnel := refusedHeads[0].Req + refusedHeads[2].Req
		_, err = io.WriteString(c, tunnel)
		require.NoError(t, err)
		echoed := make([]byte, len(tunnel))
		_, err = io.ReadFull(br, echoed)
		require.NoError(t, err)
		assert.Equal(t, tunnel, string(echoed))
	})
	t.Run("h2c prior knowledge", func(t *testing.T) {
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr}
		res, err := client.Post("http://"+addr+"/h2c", "text/plain", strings.NewReader("two"))
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, 2, res.ProtoMajor)
		assert.Equal(t, `POST /h2c "two"`, string(b))
	})
	assert.NotContains(t, be.seen(), "/smuggled")
}

// feedConn serves in as a connection that returns at most the given sizes

// TestGuardFramingAfterUpgradeRefused: an Upgrade request the backend does
// not switch (no 101) is an ordinary exchange, and the connection carries
// requests after it: nginx reads them as it reads any (it tunnels only
// after a 101), and refuses a head with both framings with 400. So does
// the guard, which stops looking only once a 101 went out.
func TestGuardFramingAfterUpgradeRefused(t *testing.T) {
	addr, be := guardedRouter(t, true)
	for _, tc := range refusedHeads {
		t.Run(tc.Name, func(t *testing.T) {
			c, br := rawConn(t, addr)
			_, err := io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: other\r\n\r\n")
			require.NoError(t, err)
			res, body := readAnswer(t, br)
			require.Equal(t, http.StatusOK, res.StatusCode, body)
			require.False(t, res.Close, "the connection stays open")
			_, err = io.WriteString(c, tc.Req)
			require.NoError(t, err)
			requireRefused(t, br)
			assert.NotContains(t, be.seen(), "/smuggled")
			assert.NotContains(t, be.seen(), "/a")
		})
	}
}
