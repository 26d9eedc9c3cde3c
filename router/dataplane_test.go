package router

import (
	"bufio"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// websocketAccept is the Sec-WebSocket-Accept value for a key (RFC 6455 §4.2.2).
func websocketAccept(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// websocketEcho completes the WebSocket handshake itself and then echoes
// every byte it receives, frames included, until the client closes.
func websocketEcho(t testing.TB) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "websocket only", http.StatusUpgradeRequired)
			return
		}
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Accept: " + websocketAccept(r.Header.Get("Sec-WebSocket-Key")) + "\r\n" +
			"X-Seen-Forwarded-For: " + r.Header.Get("X-Forwarded-For") + "\r\n\r\n")
		_ = rw.Flush()
		buf := make([]byte, 512)
		for {
			n, err := rw.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}

// A masked text frame "hello" (RFC 6455 §5.7).
var helloFrame = []byte{0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58}

func TestWebSocketTunnelled(t *testing.T) {
	addr := websocketEcho(t)
	cert := testCert(t, "ws.example.com")
	for _, scheme := range []string{"ws", "wss"} {
		t.Run(scheme, func(t *testing.T) {
			rs := newRecords()
			r := newTestRouter(Options{Observer: rs.observe})
			r.Publish(mustTable(match.Spec{
				VirtualHosts: []*match.VirtualHost{vhost("ws.example.com", nil, route(match.Prefix, "/", httpBackend("prod/ws:80", addr)))},
				Certificates: []*match.Certificate{{Secret: "prod/ws-tls", Hosts: []string{"ws.example.com"}, Cert: cert}},
			}))
			front := httptest.NewUnstartedServer(r)
			var c net.Conn
			var err error
			if scheme == "wss" {
				front.TLS = r.TLSConfig()
				front.StartTLS()
				pool := x509.NewCertPool()
				pool.AddCert(cert.Leaf)
				// WebSocket over TLS is HTTP/1.1: the client offers nothing else.
				c, err = tls.Dial("tcp", front.Listener.Addr().String(),
					&tls.Config{RootCAs: pool, ServerName: "ws.example.com", NextProtos: []string{"http/1.1"}})
			} else {
				front.Start()
				c, err = net.Dial("tcp", front.Listener.Addr().String())
			}
			defer front.Close()
			require.NoError(t, err)
			defer c.Close()

			key := "dGhlIHNhbXBsZSBub25jZQ=="
			_, err = io.WriteString(c, "GET /chat?room=1 HTTP/1.1\r\nHost: ws.example.com\r\nUpgrade: websocket\r\n"+
				"Connection: Upgrade\r\nSec-WebSocket-Key: "+key+"\r\nSec-WebSocket-Version: 13\r\n\r\n")
			require.NoError(t, err)
			br := bufio.NewReader(c)
			res, err := http.ReadResponse(br, nil)
			require.NoError(t, err)
			require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
			assert.Equal(t, websocketAccept(key), res.Header.Get("Sec-WebSocket-Accept"))
			assert.Equal(t, "websocket", res.Header.Get("Upgrade"))
			assert.Equal(t, "127.0.0.1", res.Header.Get("X-Seen-Forwarded-For"), "forwarded headers reach the backend")

			for range 3 {
				_, err = c.Write(helloFrame)
				require.NoError(t, err)
				got := make([]byte, len(helloFrame))
				_, err = io.ReadFull(br, got)
				require.NoError(t, err)
				assert.Equal(t, helloFrame, got)
			}
			assert.Equal(t, int64(1), r.InFlight(addr), "an open tunnel is in flight")

			require.NoError(t, c.Close())
			select {
			case rec := <-rs.ch:
				assert.Equal(t, http.StatusSwitchingProtocols, rec.Status)
				assert.Equal(t, "/chat?room=1", rec.Path)
			case <-time.After(5 * time.Second):
				t.Fatal("the tunnel did not end with the client")
			}
			assert.Zero(t, r.InFlight(addr))
		})
	}
}

// TestStreamingFlushed: each chunk reaches the client while the backend is
// still writing, for a chunked response and for server-sent events.
func TestStreamingFlushed(t *testing.T) {
	for _, contentType := range []string{"application/octet-stream", "text/event-stream"} {
		t.Run(contentType, func(t *testing.T) {
			next := make(chan struct{})
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", contentType)
				for i := range 3 {
					_, _ = io.WriteString(w, "chunk "+string(rune('0'+i))+"\n")
					_ = http.NewResponseController(w).Flush()
					select {
					case <-next: // the client saw the chunk
					case <-r.Context().Done():
						return
					}
				}
			}))
			defer backend.Close()
			addr := backend.Listener.Addr().String()
			r := newTestRouter(Options{})
			r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/stream:80", addr)))))
			front := httptest.NewServer(r)
			defer front.Close()

			res, err := front.Client().Get(front.URL + "/events")
			require.NoError(t, err)
			defer res.Body.Close()
			require.Equal(t, http.StatusOK, res.StatusCode)
			br := bufio.NewReader(res.Body)
			for i := range 3 {
				lines := make(chan string, 1)
				go func() {
					l, _ := br.ReadString('\n')
					lines <- l
				}()
				select {
				case l := <-lines:
					assert.Equal(t, "chunk "+string(rune('0'+i))+"\n", l)
				case <-time.After(5 * time.Second):
					t.Fatalf("chunk %d did not arrive while the backend waited", i)
				}
				next <- struct{}{}
			}
			rest, err := io.ReadAll(br)
			require.NoError(t, err)
			assert.Empty(t, rest)
			assert.Zero(t, r.InFlight(addr))
		})
	}
}

// TestBackendNeverAnswers: no response headers within ReadTimeout is 504;
// the backend's request is cancelled and nothing stays in flight.
func TestBackendNeverAnswers(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		cancelled <- struct{}{}
	}))
	defer backend.Close()
	addr := backend.Listener.Addr().String()
	rs := newRecords()
	r := newTestRouter(Options{Observer: rs.observe, ReadTimeout: 150 * time.Millisecond})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/slow:80", addr)))))

	start := time.Now()
	res := serve(r, http.MethodGet, "web", "/", nil)
	got := body(t, res)
	elapsed := time.Since(start)
	assert.Equal(t, http.StatusGatewayTimeout, res.StatusCode)
	assert.Contains(t, got, "did not answer in time")
	assert.GreaterOrEqual(t, elapsed, 150*time.Millisecond)
	assert.Less(t, elapsed, 5*time.Second)
	rec := rs.last(t)
	assert.Equal(t, ReasonUpstreamTimeout, rec.Reason)
	assert.Equal(t, 1, rec.Tries, "a timeout after connecting is not retried")
	waitFor(t, cancelled)
	assert.Zero(t, r.InFlight(addr))
}

// TestCleartextHTTP2: an embedder enables HTTP/2 with prior knowledge on a
// plain listener through http.Server.Protocols, and the handler serves it
// like any other request: plain HTTP and gRPC-shaped requests with
// trailers.
func TestCleartextHTTP2(t *testing.T) {
	_, web := echoBackend(t, "web")
	grpcBackend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status, Grpc-Message")
		_, _ = w.Write([]byte{0, 0, 0, 0, 0})
		w.Header().Set("Grpc-Status", "5")
		w.Header().Set("Grpc-Message", "no such thing")
	}))
	grpcBackend.Config.Protocols = new(http.Protocols)
	grpcBackend.Config.Protocols.SetUnencryptedHTTP2(true)
	grpcBackend.Start()
	defer grpcBackend.Close()
	grpcAddr := grpcBackend.Listener.Addr().String()

	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/", httpBackend("prod/web:80", web)),
		route(match.Prefix, "/pkg.Svc", backend("prod/grpc:50051", match.GRPC, match.Serving, grpcAddr)))))
	front := h1AndH2CServer(t, r)

	tr := h2cTransport(t)
	client := &http.Client{Transport: tr}

	res, err := client.Get(front.URL + "/page?x=1")
	require.NoError(t, err)
	assert.Equal(t, "web\n", body(t, res))
	assert.Equal(t, 2, res.ProtoMajor, "prior-knowledge HTTP/2")
	assert.Equal(t, "/page?x=1", res.Header.Get("X-Seen-Uri"))
	assert.Equal(t, "http", res.Header.Get("Seen-X-Forwarded-Proto"))

	req, err := http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	res, err = client.Do(req)
	require.NoError(t, err)
	assert.Equal(t, "\x00\x00\x00\x00\x00", body(t, res))
	assert.Equal(t, "5", res.Trailer.Get("Grpc-Status"))
	assert.Equal(t, "no such thing", res.Trailer.Get("Grpc-Message"))

	// The same client to a gRPC route whose backend is plain HTTP gets the
	// trailers-only 502 with the fix in grpc-message.
	r.Publish(table("d2", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", web)))))
	req, err = http.NewRequest(http.MethodPost, front.URL+"/pkg.Svc/Get", strings.NewReader("\x00\x00\x00\x00\x00"))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/grpc")
	res, err = client.Do(req)
	require.NoError(t, err)
	assert.Empty(t, body(t, res))
	assert.Equal(t, http.StatusBadGateway, res.StatusCode)
	assert.Equal(t, "14", res.Header.Get("Grpc-Status"))
	assert.Contains(t, res.Header.Get("Grpc-Message"), "backend-protocol: GRPC")
	assert.Zero(t, r.InFlight(web))
	assert.Zero(t, r.InFlight(grpcAddr))
}
