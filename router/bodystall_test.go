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

// TestGRPCBodyStall: a gRPC backend's answer that stalls between two
// reads for the read timeout ends the call through router/h2's client too,
// and one whose messages keep coming is served whole.
func TestGRPCBodyStall(t *testing.T) {
	for _, stall := range []bool{false, true} {
		// Trickling, each gap is a tenth of the timeout, so a starved
		// machine stretching one does not look like a stall, and the
		// messages take longer than the timeout in all.
		read, messages := time.Second, 14
		if stall {
			read = 400 * time.Millisecond
		}
		t.Run(map[bool]string{false: "trickling", true: "stalled"}[stall], func(t *testing.T) {
			release := make(chan struct{})
			s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/grpc")
				for i := range messages {
					if i > 0 {
						time.Sleep(read / 10)
					}
					_, _ = w.Write([]byte{0, 0, 0, 0, 1, byte('a' + i)})
					w.(http.Flusher).Flush()
					if stall {
						select {
						case <-release:
						case <-r.Context().Done():
						}
						return
					}
				}
				w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
			}))
			s.Config.Protocols = new(http.Protocols)
			s.Config.Protocols.SetUnencryptedHTTP2(true)
			s.Start()
			t.Cleanup(s.Close)
			t.Cleanup(func() { close(release) })
			r := newTestRouter(Options{ReadTimeout: read})
			r.Publish(table("d", vhost("", nil,
				route(match.Prefix, "/", backend("prod/grpc:50051", match.GRPC, match.Serving, s.Listener.Addr().String())))))
			t.Cleanup(r.CloseIdleConnections)
			front := h1AndH2CServer(t, r)
			client := &http.Client{Transport: h2cTransport(t)}
			req, _ := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Watch", bytes.NewReader([]byte{0, 0, 0, 0, 0}))
			req.Header.Set("Content-Type", "application/grpc")
			req.Header.Set("Te", "trailers")
			start := time.Now()
			res, err := client.Do(req)
			var body []byte
			if err == nil {
				body, err = io.ReadAll(res.Body)
				res.Body.Close()
			}
			took := time.Since(start)
			if !stall {
				assert.NoError(t, err)
				assert.Len(t, body, 6*messages)
				assert.Equal(t, "0", res.Trailer.Get("Grpc-Status"))
				assert.Greater(t, took, read, "the messages took longer than the timeout in all")
				return
			}
			if err == nil && res.Trailer.Get("Grpc-Status") == "0" {
				t.Fatalf("a stalled answer ended as a success after %v", took)
			}
			assert.Less(t, took, 10*read, "the stall ended the call")
		})
	}
}
