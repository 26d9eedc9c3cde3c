package h1

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveLogged is serve with the server's log kept, to show what the loop
// recovered from.
func serveLogged(t *testing.T, s *Server) (string, *lockedBuffer) {
	logBuf := new(lockedBuffer)
	s.ErrorLog = log.New(logBuf, "", 0)
	return serve(t, s), logBuf
}

// lockedBuffer is a bytes.Buffer the server's goroutines may write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// watchingHandler asks for the request context's Done, as any proxy does
// (context.AfterFunc, select), and answers without reading the body.
var watchingHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_ = r.Context().Done()
	io.WriteString(w, "ok")
})

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "\n")
}

// TestEdgeWatchingHandlerUnreadBodyKeepsConnection: a handler that asked
// for its context's Done and answered without reading the body leaves
// the body to the loop, which reads and drops it after the handler
// returned. The watch for the client going away ended with the handler:
// reading the body's end then does not start it again, and the next
// request on the kept-alive connection is read and answered.
func TestEdgeWatchingHandlerUnreadBodyKeepsConnection(t *testing.T) {
	addr, logBuf := serveLogged(t, &Server{Handler: watchingHandler, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second})
	c, br := dial(t, addr)
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "POST /1 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nabcd")
	res, body := readResponse(t, br, "POST")
	if res.StatusCode != 200 || body != "ok" || res.Close {
		t.Fatalf("first: %d %q close=%v", res.StatusCode, body, res.Close)
	}
	time.Sleep(100 * time.Millisecond)
	io.WriteString(c, "GET /2 HTTP/1.1\r\nHost: a\r\n\r\n")
	res2, err := http.ReadResponse(br, &http.Request{Method: "GET"})
	if err != nil {
		time.Sleep(50 * time.Millisecond)
		t.Fatalf("the second request on the kept-alive connection got no answer: %v\nserver log:\n%s", err, firstLines(logBuf.String(), 8))
	}
	res2.Body.Close()
}

// TestEdgeWatchingHandlerUnreadBodyClientCloses: as
// TestEdgeWatchingHandlerUnreadBodyKeepsConnection, with a client that
// closes its connection once it has the answer. Nothing watches the
// connection once the handler returned, so nothing acts on that close
// but the loop, and the process lives on. Run in a child process, whose
// death the test reports.
func TestEdgeWatchingHandlerUnreadBodyClientCloses(t *testing.T) {
	if os.Getenv("H1_EDGE_DRAIN_CHILD") == "1" {
		addr, _ := serveLogged(t, &Server{Handler: watchingHandler, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second})
		for range 100 {
			c, br := dial(t, addr)
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			io.WriteString(c, "POST /1 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nabcd")
			readResponse(t, br, "POST")
			c.Close()
			time.Sleep(5 * time.Millisecond)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestEdgeWatchingHandlerUnreadBodyClientCloses$", "-test.count=1")
	cmd.Env = append(os.Environ(), "H1_EDGE_DRAIN_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the server's process died: %v\n%s", err, firstLines(string(out), 14))
	}
}

// TestEdgeWatchWaitsForThisRequestsBody: the body the loop drained after one
// request's handler is that request's: the next request's handler, which
// asks for its context's Done before it reads its own body, reads that
// body whole, with no watch on the connection until it is read.
func TestEdgeWatchWaitsForThisRequestsBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/read" {
			_ = r.Context().Done()
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			w.Write(b)
			return
		}
		io.WriteString(w, "unread")
	})
	addr, logBuf := serveLogged(t, &Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second})
	c, br := dial(t, addr)
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "POST /skip HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nabcd")
	if res, body := readResponse(t, br, "POST"); res.StatusCode != 200 || body != "unread" || res.Close {
		t.Fatalf("first: %d %q close=%v", res.StatusCode, body, res.Close)
	}
	io.WriteString(c, "POST /read HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n")
	time.Sleep(50 * time.Millisecond) // the handler asks for Done before the body came
	io.WriteString(c, "wxyz")
	res, err := http.ReadResponse(br, &http.Request{Method: "POST"})
	if err != nil {
		time.Sleep(50 * time.Millisecond)
		t.Fatalf("the second request got no answer: %v\nserver log:\n%s", err, firstLines(logBuf.String(), 8))
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || string(b) != "wxyz" {
		t.Fatalf("second: %d %q, want 200 \"wxyz\"", res.StatusCode, b)
	}
}

// TestEdgeFullDuplexBodyStaysWithHandler: a handler that called
// EnableFullDuplex reads the request body while it writes the response
// (an echo, piece by piece): the response's first flush sends the head
// without draining the body, every byte of which reaches the handler. A
// part it leaves unread is drained once it returned, and the kept-alive
// connection serves the next request.
func TestEdgeFullDuplexBodyStaysWithHandler(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" {
			io.WriteString(w, "next")
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		buf := make([]byte, 4)
		for range 2 {
			if _, err := io.ReadFull(r.Body, buf); err != nil {
				return
			}
			w.Write(buf)
			rc.Flush()
		}
		// The rest is left unread.
	})
	addr, logBuf := serveLogged(t, &Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second})
	c, br := dial(t, addr)
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\naaaa\r\n")
	res, err := http.ReadResponse(br, &http.Request{Method: "POST"})
	if err != nil {
		t.Fatalf("no response head while the client holds back its body: %v\nserver log:\n%s", err, firstLines(logBuf.String(), 8))
	}
	echo := make([]byte, 4)
	if _, err := io.ReadFull(res.Body, echo); err != nil || string(echo) != "aaaa" {
		t.Fatalf("first echo %q, %v", echo, err)
	}
	io.WriteString(c, "4\r\nbbbb\r\n")
	if _, err := io.ReadFull(res.Body, echo); err != nil || string(echo) != "bbbb" {
		t.Fatalf("second echo %q, %v", echo, err)
	}
	io.WriteString(c, "4\r\ncccc\r\n0\r\n\r\n")
	if rest, err := io.ReadAll(res.Body); err != nil || len(rest) != 0 || res.Close {
		t.Fatalf("response end: %q, %v, close=%v", rest, err, res.Close)
	}
	io.WriteString(c, "GET /2 HTTP/1.1\r\nHost: a\r\n\r\n")
	if res, body := readResponse(t, br, "GET"); res.StatusCode != 200 || body != "next" {
		t.Fatalf("next request: %d %q", res.StatusCode, body)
	}
}

// TestEdgeUnreadBodyStallBounded: a handler that answers without reading
// the body (a 404, a redirect) does not wait on a client that stalls
// before sending it: the body is dropped as nginx discards it, each read
// waiting at most nginx's lingering_timeout (5 s), after which the answer
// goes out with Connection: close and the connection ends. A client that
// never sends its body cannot hold the connection, or Shutdown, for good.
func TestEdgeUnreadBodyStallBounded(t *testing.T) {
	s := &Server{Handler: http.HandlerFunc(http.NotFound)}
	addr := serve(t, s)
	c, br := dial(t, addr)
	start := time.Now()
	_, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nabc")
	require.NoError(t, err)
	res, _ := readResponse(t, br, "POST")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.True(t, res.Close, "Connection: close")
	assert.Less(t, time.Since(start), lingeringTimeout+2*time.Second)
	rest, err := io.ReadAll(br)
	require.NoError(t, err, "the connection ends")
	assert.Empty(t, rest)

	// A body that comes whole is dropped, and the connection kept.
	c, br = dial(t, addr)
	_, err = io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: a\r\n\r\n")
	require.NoError(t, err)
	res, _ = readResponse(t, br, "POST")
	assert.False(t, res.Close)
	res, _ = readResponse(t, br, "GET")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}
