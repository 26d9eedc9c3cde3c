package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"k8s.io/apimachinery/pkg/types"
)

// The traffic listeners with ingress-nginx's large-client-header-buffers
// and client-header-buffer-size (config.go NewDefault "4 8k" and "1k";
// nginx.tmpl's large_client_header_buffers and client_header_buffer_size).
// nginx docs (ngx_http_core_module, large_client_header_buffers): "A
// request line cannot exceed the size of one buffer, or the 414
// (Request-URI Too Large) error is returned to the client. A request
// header field cannot exceed the size of one buffer as well, or the 400
// (Bad Request) error is returned". Under the controller's own HTTP/1
// loop (router/h1.HeaderBuffers, whose tests cover the packing) those are
// the answers; under -http1-server net/http and over HTTP/2, net/http's,
// bounded at number×size: 431.
func TestHeaderBuffersListeners(t *testing.T) {
	line := func(n int) string {
		return "GET /" + strings.Repeat("a", n-len("GET / HTTP/1.1\r\n")) + " HTTP/1.1\r\n"
	}
	field := func(name string, n int) string { return name + ": " + strings.Repeat("v", n-len(name)-4) + "\r\n" }
	host := "Host: a.test\r\n"
	get := func(line string, fields ...string) string { return line + host + strings.Join(fields, "") + "\r\n" }
	for _, tc := range []struct {
		name   string
		server string
		keys   string // the ConfigMap's data
		cases  []struct {
			head string
			code int
		}
	}{
		{"ramjet, ingress-nginx's defaults", http1Ramjet, "", []struct {
			head string
			code int
		}{
			{get("GET / HTTP/1.1\r\n"), 404},
			{get(line(8192)), 404},
			{get(line(8193)), 414},
			{get(line(50000)), 414},
			{get("GET / HTTP/1.1\r\n", field("Cookie", 8192)), 404},
			{get("GET / HTTP/1.1\r\n", field("Cookie", 8193)), 400},
			{get("GET / HTTP/1.1\r\n", field("Cookie", 50000)), 400},
			// A buffer each: four fit, the fifth finds none.
			{get("GET / HTTP/1.1\r\n", strings.Repeat(field("X-A", 4100), 4)), 404},
			{get("GET / HTTP/1.1\r\n", strings.Repeat(field("X-A", 4100), 5)), 400},
		}},
		{"ramjet, 2 16k after 16k", http1Ramjet, "{large-client-header-buffers: \"2 16k\", client-header-buffer-size: \"16k\"}", []struct {
			head string
			code int
		}{
			{get(line(16384)), 404},
			{get(line(16385)), 414},
			// The first buffer holds the head's start, two more the rest.
			{get("GET / HTTP/1.1\r\n", strings.Repeat(field("X-A", 10000), 3)), 404},
			{get("GET / HTTP/1.1\r\n", strings.Repeat(field("X-A", 10000), 4)), 400},
		}},
		{"net/http", http1NetHTTP, "", []struct {
			head string
			code int
		}{
			{get(line(8193)), 404},
			{get("GET / HTTP/1.1\r\n", field("Cookie", 8193)), 404},
			// Over number×size and net/http's 4 KiB of slack.
			{get("GET / HTTP/1.1\r\n", field("Cookie", 4*8192+4096+100)), 431},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := config{manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour, http1Server: tc.server}
			if tc.keys != "" {
				cfg.configMap = &types.NamespacedName{Namespace: "ingress", Name: "nginx"}
				cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: ingress}\ndata: " + tc.keys + "\n"
				require.NoError(t, os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte(cm), 0o644))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			for _, c := range tc.cases {
				code, body := sendHead(t, inst.HTTPAddr, c.head)
				assert.Equal(t, c.code, code, "head of %d bytes", len(c.head))
				switch c.code {
				case 400:
					assert.Equal(t, "400 Request Header Or Cookie Too Large\n", body)
				case 414:
					assert.Equal(t, "414 Request-URI Too Large\n", body)
				}
			}
			cancel()
			require.NoError(t, inst.Wait())
		})
	}
}

// sendHead sends head on a new connection and reads the answer.
func sendHead(t *testing.T, addr, head string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, head)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// Over HTTP/2 (cleartext, prior knowledge) the limit is net/http's: it
// advertises SETTINGS_MAX_HEADER_LIST_SIZE of number×size plus 320 (RFC
// 9113's 32 bytes a field for ten fields) and answers a longer list 431;
// a field longer than one buffer, which nginx refuses (ngx_http_v2.c:
// "client sent too large header field", GOAWAY ENHANCE_YOUR_CALM), is
// served.
func TestHeaderBuffersHTTP2(t *testing.T) {
	cfg := config{manifests: t.TempDir(), httpAddr: "127.0.0.1:0", pollInterval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)

	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: h2c}}
	req, err := http.NewRequest(http.MethodGet, "http://"+inst.HTTPAddr+"/", nil)
	require.NoError(t, err)
	req.Host = "a.test"
	req.Header.Set("Cookie", strings.Repeat("c", 9000))
	res, err := client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, 2, res.ProtoMajor)
	assert.Equal(t, 404, res.StatusCode, "a field over one buffer")
	client.CloseIdleConnections()

	// A list over the advertised size, sent as a client that ignores it.
	c, err := net.Dial("tcp", inst.HTTPAddr)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = io.WriteString(c, http2.ClientPreface)
	require.NoError(t, err)
	fr := http2.NewFramer(c, c)
	require.NoError(t, fr.WriteSettings())
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "a.test"}, {":path", "/"}} {
		require.NoError(t, enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}))
	}
	for _, name := range []string{"x-a", "x-b", "x-c", "x-d", "x-e"} {
		require.NoError(t, enc.WriteField(hpack.HeaderField{Name: name, Value: strings.Repeat("a", 6700)}))
	}
	b := block.Bytes()
	const frame = 16 << 10
	first := b[:min(len(b), frame)]
	require.NoError(t, fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: first, EndStream: true, EndHeaders: len(b) <= frame}))
	for b = b[len(first):]; len(b) > 0; {
		n := min(len(b), frame)
		require.NoError(t, fr.WriteContinuation(1, n == len(b), b[:n]))
		b = b[n:]
	}
	var settings uint32
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		require.NoError(t, err)
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if v, ok := f.Value(http2.SettingMaxHeaderListSize); ok {
				settings = v
			}
		case *http2.HeadersFrame:
			fields, err := dec.DecodeFull(f.HeaderBlockFragment())
			require.NoError(t, err)
			assert.Equal(t, uint32(4*8192+320), settings, "SETTINGS_MAX_HEADER_LIST_SIZE")
			assert.Equal(t, ":status", fields[0].Name)
			assert.Equal(t, "431", fields[0].Value)
			cancel()
			require.NoError(t, inst.Wait())
			return
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY %v", f.ErrCode)
		}
	}
}

// The HTTP/2 servers advertise ingress-nginx's http2-max-concurrent-streams
// (config.go NewDefault 128; nginx.tmpl's http2_max_concurrent_streams),
// or the ConfigMap's: a client opening more streams at once has the
// excess refused (REFUSED_STREAM), as nginx refuses them.
func TestHTTP2MaxConcurrentStreams(t *testing.T) {
	for _, tc := range []struct {
		server, keys string
		want         uint32
	}{
		{http1Ramjet, "", 128},
		{http1Ramjet, `{http2-max-concurrent-streams: "16"}`, 16},
		{http1NetHTTP, "", 128},
		{http1NetHTTP, `{http2-max-concurrent-streams: "16"}`, 16},
	} {
		t.Run(tc.server+" "+tc.keys, func(t *testing.T) {
			dir := t.TempDir()
			cfg := config{manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour, http2Server: tc.server}
			if tc.keys != "" {
				cfg.configMap = &types.NamespacedName{Namespace: "ingress", Name: "nginx"}
				cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: ingress}\ndata: " + tc.keys + "\n"
				require.NoError(t, os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte(cm), 0o644))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			c, err := net.Dial("tcp", inst.HTTPAddr)
			require.NoError(t, err)
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, err = io.WriteString(c, http2.ClientPreface)
			require.NoError(t, err)
			fr := http2.NewFramer(c, c)
			require.NoError(t, fr.WriteSettings())
			f, err := fr.ReadFrame()
			require.NoError(t, err)
			sf, ok := f.(*http2.SettingsFrame)
			require.True(t, ok, "the server's first frame is %v", f)
			v, ok := sf.Value(http2.SettingMaxConcurrentStreams)
			assert.True(t, ok, "SETTINGS_MAX_CONCURRENT_STREAMS sent")
			assert.Equal(t, tc.want, v)
			cancel()
			require.NoError(t, inst.Wait())
		})
	}
}

// use-http2 "false" takes "http2 on" out of every server block of
// nginx.tmpl, and nginx's "http2 on" is what lets a cleartext listener
// read the HTTP/2 preface (prior knowledge) too: the HTTP listener then
// serves HTTP/1 only, as the HTTPS one does.
func TestUseHTTP2FalseCleartext(t *testing.T) {
	for _, tc := range []struct {
		server, keys string
		h2           bool
	}{
		{http1Ramjet, "", true},
		{http1Ramjet, `{use-http2: "false"}`, false},
		{http1NetHTTP, `{use-http2: "false"}`, false},
	} {
		t.Run(tc.server+" "+tc.keys, func(t *testing.T) {
			dir := t.TempDir()
			cfg := config{manifests: dir, httpAddr: "127.0.0.1:0", pollInterval: time.Hour, http1Server: tc.server}
			if tc.keys != "" {
				cfg.configMap = &types.NamespacedName{Namespace: "ingress", Name: "nginx"}
				cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: ingress}\ndata: " + tc.keys + "\n"
				require.NoError(t, os.WriteFile(filepath.Join(dir, "configmap.yaml"), []byte(cm), 0o644))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inst, err := start(ctx, cfg, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			c, err := net.Dial("tcp", inst.HTTPAddr)
			require.NoError(t, err)
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			_, err = io.WriteString(c, http2.ClientPreface)
			require.NoError(t, err)
			fr := http2.NewFramer(c, c)
			require.NoError(t, fr.WriteSettings())
			f, err := fr.ReadFrame()
			_, settings := f.(*http2.SettingsFrame)
			assert.Equal(t, tc.h2, err == nil && settings, "served as HTTP/2: %v %v", f, err)
			cancel()
			require.NoError(t, inst.Wait())
		})
	}
}
