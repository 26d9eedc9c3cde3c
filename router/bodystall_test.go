package router

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"ramjet.dev/ramjet/match"
)

// TestBackendBodyStall: a backend's body that stalls between two reads for
// the read timeout (proxy-read-timeout) ends the exchange, as nginx's
// proxy_read_timeout does between two reads (SPEC §13); one that keeps
// coming, each piece within the timeout, is served whole however long it
// takes in all. On both ways out.
func TestBackendBodyStall(t *testing.T) {
	const read = 400 * time.Millisecond
	for _, p := range upstreamPaths {
		for _, tt := range []struct {
			name   string
			head   string
			pieces []string
			gap    time.Duration // between pieces
			whole  bool
		}{
			{"length, trickling", "Content-Length: 5\r\n", []string{"a", "b", "c", "d", "e"}, read / 3, true},
			{"length, stalled", "Content-Length: 5\r\n", []string{"ab"}, 0, false},
			{"chunked, stalled", "Transfer-Encoding: chunked\r\n", []string{"2\r\nab\r\n"}, 0, false},
			{"until close, stalled", "Connection: close\r\n", []string{"ab"}, 0, false},
		} {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				release := make(chan struct{})
				addr := rawServer(t, func(c net.Conn) {
					br := bufio.NewReader(c)
					for {
						line, err := br.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(bytes.TrimRight(line, "\r\n")) == 0 {
							break
						}
					}
					_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n"+tt.head+"\r\n")
					for i, piece := range tt.pieces {
						if i > 0 {
							time.Sleep(tt.gap)
						}
						_, _ = io.WriteString(c, piece)
					}
					if !tt.whole {
						<-release // stalls, the connection held open
					}
				})
				t.Cleanup(func() { close(release) }) // before rawServer's cleanup waits for the backend
				r := newPathRouter(Options{ReadTimeout: read}, p.netHTTP)
				r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
				t.Cleanup(r.CloseIdleConnections)
				front := httptest.NewServer(r)
				t.Cleanup(front.Close)

				start := time.Now()
				var body []byte
				res, err := http.Get(front.URL + "/")
				if err == nil {
					body, err = io.ReadAll(res.Body)
					res.Body.Close()
				}
				took := time.Since(start)
				if tt.whole {
					assert.NoError(t, err)
					assert.Equal(t, "abcde", string(body))
					assert.Greater(t, took, read, "the pieces took longer than the timeout in all")
					return
				}
				// The client's connection is cut: before the head when the router
				// had not flushed it yet, else in the body.
				assert.Error(t, err, "a stalled body is cut, not ended cleanly")
				assert.Less(t, took, 10*read, "the stall ended the exchange")
			})
		}
	}
}
