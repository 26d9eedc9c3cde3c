package router

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// Tests for the classes of issue 14, each through the real handler behind a
// real http.Server on loopback, so that net/http's own parsing is in the
// path. The expected answers are nginx's.

// TestFragmentEndsPath: nginx's URI parser stops at '#' (the rest never
// reaches $uri), so location matching, the TLS redirect and the ACME
// exemption all see only what comes before it; proxy_pass without a URI
// still sends $request_uri, '#' and all.
func TestFragmentEndsPath(t *testing.T) {
	_, bAddr := echoBackend(t, "b")
	_, cAddr := echoBackend(t, "c")
	b, c := httpBackend("prod/b:80", bAddr), httpBackend("prod/c:80", cAddr)
	tlsHost := vhost("tls.test", nil, &match.Route{Type: match.Prefix, Path: "", Backend: c, SSLRedirect: true})
	tlsHost.TLS, tlsHost.SSLRedirect = true, true
	r := newTestRouter(Options{})
	r.Publish(table("d",
		vhost("h2.test", nil, route(match.Prefix, "/", c), route(match.Prefix, "/admin", b)),
		tlsHost))
	front := httptest.NewServer(r)
	defer front.Close()

	tests := []struct {
		host, target string
		wantStatus   int
		wantBackend  string
		wantLocation string
	}{
		{"h2.test", "/admin#x", 200, "b", ""},
		{"h2.test", "/admin#", 200, "b", ""},
		{"h2.test", "/admin/#/../x", 200, "b", ""},
		{"h2.test", "/x#/../admin", 200, "c", ""},
		{"h2.test", "/admin#x?q=1", 200, "b", ""},
		{"h2.test", "/adm%69n#x", 200, "b", ""},
		{"h2.test", "/%23/../admin", 200, "b", ""}, // a decoded %23 is an ordinary byte
		{"h2.test", "/x#/../../../etc", 200, "c", ""},
		{"tls.test", "/secret#/../.well-known/acme-challenge/x", 308, "", "https://tls.test/secret#/../.well-known/acme-challenge/x"},
		{"tls.test", "/.well-known/acme-challenge/t#/../../../secret", 200, "c", ""},
	}
	for _, tt := range tests {
		t.Run(tt.host+tt.target, func(t *testing.T) {
			res := rawRequest(t, front.Listener.Addr().String(),
				"GET "+tt.target+" HTTP/1.1\r\nHost: "+tt.host+"\r\nConnection: close\r\n\r\n")
			require.Equal(t, tt.wantStatus, res.StatusCode)
			assert.Equal(t, tt.wantBackend, res.Header.Get("X-Backend"))
			assert.Equal(t, tt.wantLocation, res.Header.Get("Location"))
			if tt.wantStatus == http.StatusOK {
				assert.Equal(t, tt.target, res.Header.Get("X-Seen-Uri"), "the backend gets the target byte for byte")
			}
		})
	}
}

// TestRefusedLikeNginx: requests nginx answers 400 itself never reach a
// backend. nginx refuses a decoded NUL in the path
// (ngx_http_parse_complex_uri), userinfo in an absolute-form target, and an
// HTTP/1.1 or HTTP/2 request with no host ("client sent HTTP/1.1 request
// without Host header"); HTTP/1.0 may omit it and gets the default server.
func TestRefusedLikeNginx(t *testing.T) {
	_, addr := echoBackend(t, "c")
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/c:80", addr)))))
	front := h1AndH2CServer(t, r)
	frontAddr := front.Listener.Addr().String()

	tests := []struct {
		name, raw  string
		wantStatus int
	}{
		{"decoded NUL", "GET /admin%00 HTTP/1.1\r\nHost: h.test\r\n\r\n", 400},
		{"decoded NUL before dot segments", "GET /%00/../admin HTTP/1.1\r\nHost: h.test\r\n\r\n", 400},
		{"encoded percent then 00 is not a NUL", "GET /a%2500 HTTP/1.1\r\nHost: h.test\r\n\r\n", 200},
		{"NUL in the query is the backend's business", "GET /a?x=%00 HTTP/1.1\r\nHost: h.test\r\n\r\n", 200},
		{"userinfo", "GET http://user@h.test/admin HTTP/1.1\r\nHost: h.test\r\n\r\n", 400},
		{"userinfo with password", "GET http://u:p@h.test HTTP/1.1\r\nHost: h.test\r\n\r\n", 400},
		{"absolute form without userinfo", "GET http://h.test/admin?a@b HTTP/1.1\r\nHost: h.test\r\n\r\n", 200},
		// nginx's host state takes no '#' (ngx_http_parse_request_line);
		// after the authority, '#' ends the path.
		{"fragment in the authority", "GET http://h.test#f HTTP/1.1\r\nHost: h.test\r\n\r\n", 400},
		{"fragment in the authority, then a path", "GET http://h.test#f/admin HTTP/1.1\r\nHost: h.test\r\n\r\n", 400},
		{"fragment after the port", "GET http://h.test:80#f HTTP/1.1\r\nHost: h.test\r\n\r\n", 400},
		{"fragment in an absolute form's path", "GET http://h.test/a#f HTTP/1.1\r\nHost: h.test\r\n\r\n", 200},
		{"fragment after an absolute form's query", "GET http://h.test?q#f HTTP/1.1\r\nHost: h.test\r\n\r\n", 200},
		{"empty Host", "GET /x HTTP/1.1\r\nHost: \r\n\r\n", 400},
		{"missing Host", "GET /x HTTP/1.1\r\n\r\n", 400},
		{"HTTP/1.0 without Host", "GET /x HTTP/1.0\r\n\r\n", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := rawRequest(t, frontAddr, tt.raw[:len(tt.raw)-2]+"Connection: close\r\n\r\n")
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			if tt.wantStatus != http.StatusOK {
				assert.Empty(t, res.Header.Get("X-Backend"), "refused before any backend")
			}
		})
	}

	t.Run("HTTP/2 without :authority", func(t *testing.T) {
		assert.Equal(t, 400, h2Status(t, frontAddr, false))
	})
	t.Run("HTTP/2 with :authority", func(t *testing.T) {
		assert.Equal(t, 200, h2Status(t, frontAddr, true))
	})
}

// h2Status sends one HTTP/2 GET with prior knowledge, by hand because Go's
// client always sends :authority, and returns the response's status.
func h2Status(t *testing.T, addr string, authority bool) int {
	t.Helper()
	if authority {
		return h2StatusAuthority(t, addr, "h.test")
	}
	return h2StatusAuthority(t, addr, "")
}

// h2StatusAuthority is h2Status with the given :authority, none when "".
func h2StatusAuthority(t *testing.T, addr string, authority string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	// HPACK literal fields without indexing, new name, no Huffman.
	var block []byte
	field := func(name, value string) {
		block = append(block, 0, byte(len(name)))
		block = append(block, name...)
		block = append(block, byte(len(value)))
		block = append(block, value...)
	}
	field(":method", "GET")
	field(":scheme", "http")
	field(":path", "/x")
	if authority != "" {
		field(":authority", authority)
	}
	frame := func(typ, flags byte, stream uint32, payload []byte) []byte {
		n := len(payload)
		f := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags,
			byte(stream >> 24), byte(stream >> 16), byte(stream >> 8), byte(stream)}
		return append(f, payload...)
	}
	out := []byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	out = append(out, frame(0x4, 0, 0, nil)...)     // SETTINGS
	out = append(out, frame(0x1, 0x5, 1, block)...) // HEADERS, END_STREAM|END_HEADERS
	_, err = c.Write(out)
	require.NoError(t, err)
	br := bufio.NewReader(c)
	for {
		var hdr [9]byte
		_, err := io.ReadFull(br, hdr[:])
		require.NoError(t, err)
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		payload := make([]byte, n)
		_, err = io.ReadFull(br, payload)
		require.NoError(t, err)
		stream := binary.BigEndian.Uint32(hdr[5:]) & 0x7fffffff
		if hdr[3] != 0x1 || stream != 1 {
			continue
		}
		if hdr[4]&0x8 != 0 { // PADDED
			payload = payload[1 : len(payload)-int(payload[0])]
		}
		if hdr[4]&0x20 != 0 { // PRIORITY
			payload = payload[5:]
		}
		// net/http's encoder sends :status first, indexed in the static table.
		statuses := map[byte]int{0x88: 200, 0x89: 204, 0x8a: 206, 0x8b: 304, 0x8c: 400, 0x8d: 404, 0x8e: 500}
		s, ok := statuses[payload[0]]
		require.True(t, ok, "status field %#x not indexed", payload[0])
		return s
	}
}

// TestForwardedHeaderNames: nginx drops request headers whose names hold
// '_' (underscores_in_headers off, its default), so CGI-style frameworks
// never read a client's X_Forwarded_For as X-Forwarded-For; ingress-nginx
// sets X-Request-ID once, from $req_id: the client's first value if it is
// not empty, else a generated one.
func TestForwardedHeaderNames(t *testing.T) {
	_, addr := echoBackend(t, "web")
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	front := httptest.NewServer(r)
	defer front.Close()

	generated := regexp.MustCompile(`^[0-9a-f]{32}$`)
	tests := []struct {
		name    string
		headers string
		wantID  *regexp.Regexp
		wantXFF string
	}{
		{"underscored forwarding headers", "X_Forwarded_For: 6.6.6.6\r\nX-Real_IP: 6.6.6.6\r\nX_Real_Ip: 6.6.6.6\r\n", generated, "127.0.0.1"},
		{"any underscored name", "X-Custom_Header: v\r\n_: v\r\nX-Custom-Header: kept\r\n", generated, "127.0.0.1"},
		{"two request IDs: the first", "X-Request-ID: first\r\nX-Request-ID: second\r\n", regexp.MustCompile(`^first$`), "127.0.0.1"},
		{"empty first request ID: generated", "X-Request-ID: \r\nX-Request-ID: second\r\n", generated, "127.0.0.1"},
		{"real forwarding header passed as the original", "X-Forwarded-For: 192.0.2.1\r\nX_Forwarded_For: 6.6.6.6\r\n", generated, "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := rawRequest(t, front.Listener.Addr().String(),
				"GET /p HTTP/1.1\r\nHost: h.test\r\n"+tt.headers+"Connection: close\r\n\r\n")
			require.Equal(t, http.StatusOK, res.StatusCode)
			for k := range res.Header {
				assert.NotContains(t, k, "_", "the backend saw %s", k)
			}
			ids := res.Header.Values("Seen-X-Request-Id")
			require.Len(t, ids, 1, "exactly one X-Request-ID")
			assert.Regexp(t, tt.wantID, ids[0])
			assert.Equal(t, []string{tt.wantXFF}, res.Header.Values("Seen-X-Forwarded-For"))
			assert.Equal(t, []string{"127.0.0.1"}, res.Header.Values("Seen-X-Real-Ip"))
			if strings.Contains(tt.headers, "X-Forwarded-For: 192.0.2.1") {
				assert.Equal(t, []string{"192.0.2.1"}, res.Header.Values("Seen-X-Original-Forwarded-For"))
			}
			if strings.Contains(tt.headers, "X-Custom-Header: kept") {
				assert.Equal(t, []string{"kept"}, res.Header.Values("Seen-X-Custom-Header"))
			}
		})
	}
}

// TestMalformedChunkedBody: nginx's chunked parser answers 400 to a chunk
// size that overflows or a size line not ended by CRLF
// (ngx_http_parse_chunked), blaming the client; the router answered 502
// and logged a warning about the backend.
func TestMalformedChunkedBody(t *testing.T) {
	addr := bodyEcho(t)
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelWarn}))
	rs := newRecords()
	r := newTestRouter(Options{Logger: logger, Observer: rs.observe})
	r.Publish(table("d", vhost("", nil, route(match.Prefix, "/", httpBackend("prod/web:80", addr)))))
	front := httptest.NewServer(r)
	defer front.Close()

	tests := []struct {
		name, body string
		wantStatus int
	}{
		{"well-formed", "5\r\nhello\r\n0\r\n\r\n", 200},
		{"size overflows", "ffffffffffffffffff1\r\nhello\r\n0\r\n\r\n", 400},
		{"bare LF after the size", "5\nhello\r\n0\r\n\r\n", 400},
		{"not hex", "zz\r\nhello\r\n0\r\n\r\n", 400},
		{"data longer than the size", "2\r\nhello\r\n0\r\n\r\n", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := rawRequest(t, front.Listener.Addr().String(),
				"POST /up HTTP/1.1\r\nHost: h.test\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"+tt.body)
			assert.Equal(t, tt.wantStatus, res.StatusCode)
			if tt.wantStatus == http.StatusBadRequest {
				assert.Equal(t, ReasonBadBody, (<-rs.ch).Reason)
			} else {
				<-rs.ch
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, logs.String(), "a client's malformed body is not a backend failure")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestDoubleSlashTargetVerbatim: nginx's proxy_pass without a URI sends the
// client's request-target unchanged, so "//a\b" reaches the backend as
// "//a\b"; net/http alone would send "//a%5Cb".
func TestDoubleSlashTargetVerbatim(t *testing.T) {
	_, addr := echoBackend(t, "web")
	up := bodyEcho(t)
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/", httpBackend("prod/web:80", addr)),
		route(match.Prefix, "/up", httpBackend("prod/up:80", up)))))
	front := httptest.NewServer(r)
	defer front.Close()

	for _, target := range []string{`//a\b`, `//a\b?q=\x`, `//a"b{c}|d^e`, "//caf\xc3\xa9", `//a%5Cb`, `//x/../y\z`, `//`} {
		t.Run(target, func(t *testing.T) {
			res := rawRequest(t, front.Listener.Addr().String(),
				"GET "+target+" HTTP/1.1\r\nHost: h.test\r\nX-Kept: yes\r\nConnection: close\r\n\r\n")
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, target, res.Header.Get("X-Seen-Uri"))
			assert.Equal(t, "h.test", res.Header.Get("X-Seen-Host"))
			assert.Equal(t, "yes", res.Header.Get("Seen-X-Kept"))
			assert.Len(t, res.Header.Values("Seen-X-Request-Id"), 1)
		})
	}
	for _, framing := range []string{"Content-Length: 5\r\n\r\nhello", "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"} {
		t.Run("body "+framing[:4], func(t *testing.T) {
			c, err := net.Dial("tcp", front.Listener.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			_, err = io.WriteString(c, "POST //up/\\load HTTP/1.1\r\nHost: h.test\r\nConnection: close\r\n"+framing)
			require.NoError(t, err)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "hello", body(t, res))
		})
	}
	assert.Zero(t, r.InFlight(addr))
}

// regexRoute is a Regex route compiled as compile does.
func regexRoute(t testing.TB, pattern string, b *match.Backend) *match.Route {
	t.Helper()
	re, err := match.CompileRegex(pattern, 0)
	require.NoError(t, err)
	r := route(match.Regex, pattern, b)
	r.Regexp = re
	return r
}

// TestRegexFoldsASCIIOnly: nginx compiles ImplementationSpecific paths
// with PCRE without UTF mode, so (?i) folds ASCII letters only and \d, \w,
// \s are ASCII: "ſ" (U+017F) is not "s", the Kelvin sign is not "k", "١"
// is not a digit. On either engine the router folded them, so a request
// could reach a route its path does not spell.
func TestRegexFoldsASCIIOnly(t *testing.T) {
	_, bAddr := echoBackend(t, "b")
	_, cAddr := echoBackend(t, "c")
	b, c := httpBackend("prod/b:80", bAddr), httpBackend("prod/c:80", cAddr)
	var routes []*match.Route
	for _, p := range []string{
		`/api/v[0-9]+/users`, // linear
		`/kube`,              // linear
		`/bt/users(?=$)`,     // backtracking (look-ahead)
		`/d/\d+(?=x)`,        // backtracking
		`/w/\w+(?=$)`,        // backtracking
		`/s/a\sb(?=$)`,       // backtracking
		`/i/id(?=$)`,         // backtracking
		`/cls/[\d]+(?=$)`,    // backtracking, class
		`/café$`,             // linear, non-ASCII letter
		`/bt/café(?=$)`,      // backtracking, non-ASCII letter
	} {
		routes = append(routes, regexRoute(t, p, b))
	}
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("re.test", c, routes...)))
	front := httptest.NewServer(r)
	defer front.Close()

	tests := []struct{ target, want string }{
		{"/api/v1/USERS", "b"},
		{"/api/v1/u%C5%BFers", "c"},
		{"/api/v1/U%C5%BFERS", "c"},
		{"/KUBE", "b"},
		{"/%E2%84%AAube", "c"},
		{"/bt/USERS", "b"},
		{"/bt/u%C5%BFers", "c"},
		{"/BT/USERS", "b"},
		{"/d/12x", "b"},
		{"/d/%D9%A1x", "c"}, // ARABIC-INDIC DIGIT ONE
		{"/w/abc_1", "b"},
		{"/w/%C3%A9t%C3%A9", "c"},
		{"/s/a%09b", "b"},
		{"/s/a%C2%A0b", "c"}, // NO-BREAK SPACE
		{"/i/ID", "b"},
		{"/i/%C4%B0d", "c"}, // LATIN CAPITAL LETTER I WITH DOT ABOVE
		{"/cls/42", "b"},
		{"/cls/%D9%A1", "c"},
		{"/CAF%C3%A9", "b"},
		{"/caf%C3%89", "c"}, // É is not é to PCRE without UTF mode
		{"/bt/CAF%C3%A9", "b"},
		{"/bt/caf%C3%89", "c"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			res := rawRequest(t, front.Listener.Addr().String(),
				"GET "+tt.target+" HTTP/1.1\r\nHost: re.test\r\nConnection: close\r\n\r\n")
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, tt.want, res.Header.Get("X-Backend"))
		})
	}
}

// TestRegexBudgetPerRequest: however many catastrophic patterns a host
// has, one request spends at most the match budget in them and then
// answers 404 as unmatched (SPEC §13; nginx's PCRE stops a match at its
// backtracking limit and treats it as no match). It is counted in Stats
// and logged, and another host is unaffected. Before the budget, 20 such
// patterns cost one request seconds.
func TestRegexBudgetPerRequest(t *testing.T) {
	_, addr := echoBackend(t, "web")
	web := httpBackend("prod/web:80", addr)
	var routes []*match.Route
	for i := range 20 {
		routes = append(routes, regexRoute(t, fmt.Sprintf("/(a+)+(?=b%d)", i), web))
	}
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	rs := newRecords()
	r := newTestRouter(Options{Logger: logger, Observer: rs.observe})
	r.Publish(table("d",
		vhost("slow.test", web, routes...),
		vhost("fast.test", nil, route(match.Prefix, "/", web))))
	front := httptest.NewServer(r)
	defer front.Close()

	start := time.Now()
	res := rawRequest(t, front.Listener.Addr().String(),
		"GET /"+strings.Repeat("a", 40)+" HTTP/1.1\r\nHost: slow.test\r\nConnection: close\r\n\r\n")
	elapsed := time.Since(start)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "unmatched, and not the host's fallback")
	// Wall time is only a loose bound (a loaded machine stretches it); the
	// Stats below say the budget, not the patterns, ended the matching.
	assert.Less(t, elapsed, 10*match.RegexBudget, "the budget bounds the request")
	rec := <-rs.ch
	assert.Equal(t, ReasonRegexBudget, rec.Reason)
	s := r.Stats()
	assert.Equal(t, uint64(1), s.RegexBudgetExceeded)
	assert.Equal(t, uint64(1), s.RegexTimeouts)
	mu.Lock()
	assert.Contains(t, logs.String(), "regex path matching timed out")
	mu.Unlock()

	res = rawRequest(t, front.Listener.Addr().String(), "GET /x HTTP/1.1\r\nHost: fast.test\r\nConnection: close\r\n\r\n")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	res = rawRequest(t, front.Listener.Addr().String(), "GET /b0 HTTP/1.1\r\nHost: slow.test\r\nConnection: close\r\n\r\n")
	assert.Equal(t, http.StatusOK, res.StatusCode, "a path that matches nothing quickly still gets the fallback")
	assert.Equal(t, uint64(1), r.Stats().RegexBudgetExceeded)
}

// headBackend is a loopback backend that parses what reaches it as a
// stream of requests, each answered 200, and keeps every one: a header
// line or request a proxy injected shows up as one.
type headBackend struct {
	mu   sync.Mutex
	open int
	reqs []*http.Request
	addr string
}

func newHeadBackend(t *testing.T) *headBackend {
	b := new(headBackend)
	b.addr = rawServer(t, func(c net.Conn) {
		b.mu.Lock()
		b.open++
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.open--
			b.mu.Unlock()
		}()
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			b.mu.Lock()
			b.reqs = append(b.reqs, req)
			b.mu.Unlock()
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
		}
	})
	return b
}

// settle waits until every connection to the backend has ended, and
// returns the requests it read.
func (b *headBackend) settle(t *testing.T) []*http.Request {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		open, reqs := b.open, b.reqs
		b.mu.Unlock()
		if open == 0 {
			return reqs
		}
		require.True(t, time.Now().Before(deadline), "backend connections still open")
		time.Sleep(5 * time.Millisecond)
	}
}

// TestVariableHeadersNeverSplit: a request header value that holds CR, LF
// or another control byte once its variables are expanded ($uri is the
// decoded path, so %0d%0a in it is CRLF) is never sent: nginx would write
// it into the head it sends the backend, adding header lines and a whole
// second request past routing and authentication. The header is dropped
// (the client's of that name is not passed on in its place) and counted,
// on the router's own HTTP/1 client and on the net/http transport alike,
// from a snippet (proxy_set_header, more_set_input_headers with and
// without -r, a Host) and from proxy-set-headers; an add-headers value so
// is not sent to the client either.
func TestVariableHeadersNeverSplit(t *testing.T) {
	snippet := func(ops ...match.SnippetOp) *match.Snippet {
		s, err := match.NewSnippet(match.Snippet{Ops: ops})
		require.NoError(t, err)
		return s
	}
	const inject = "a%0d%0aX-Injected:%20yes%0d%0a%0d%0aGET%20/smuggled%20HTTP/1.1%0d%0aHost:%20h.test%0d%0aX-Rest:%20"
	for _, path := range []string{"own HTTP/1 client", "net/http transport"} {
		t.Run(path, func(t *testing.T) {
			be := newHeadBackend(t)
			o := Options{
				ProxySetHeaders: http.Header{"X-Cm": {"a\r\nX-Injected: cm"}, "X-Cm-Ok": {"fine"}, "X-Cm-U": {"$uri"}},
				AddHeaders:      http.Header{"X-Out-U": {"$uri"}},
			}
			if path == "net/http transport" {
				o.Transport = &http.Transport{}
			}
			r := newTestRouter(o)
			b := httpBackend("prod/b:80", be.addr)
			snip := route(match.Prefix, "/snip", b)
			snip.Snippet = snippet(
				match.SnippetOp{Kind: match.OpSetInput, Name: "X-In-U", Value: "$uri", Always: true},
				match.SnippetOp{Kind: match.OpSetInput, Name: "X-In-R", Value: "[$uri]"})
			host := route(match.Prefix, "/host", b)
			host.Snippet = snippet(match.SnippetOp{Kind: match.OpSetInput, Name: "Host", Value: "$uri", Always: true})
			r.Publish(table("d", vhost("h.test", nil, snip, host)))
			front := httptest.NewServer(r)
			defer front.Close()

			for _, target := range []string{"/snip/" + inject, "/host/" + inject, "/snip/ok"} {
				res := rawRequest(t, front.Listener.Addr().String(),
					"GET "+target+" HTTP/1.1\r\nHost: h.test\r\nX-In-R: client\r\nX-Cm-U: client\r\nConnection: close\r\n\r\n")
				require.Equal(t, http.StatusOK, res.StatusCode, target)
				assert.Empty(t, res.Header["X-Injected"])
				if target == "/snip/ok" {
					assert.Equal(t, []string{"/snip/ok"}, res.Header["X-Out-U"])
				} else {
					assert.Empty(t, res.Header["X-Out-U"])
				}
			}
			r.CloseIdleConnections()
			reqs := be.settle(t)
			require.Len(t, reqs, 3, "one request reaches the backend for each sent")
			for _, req := range reqs {
				assert.Empty(t, req.Header["X-Injected"], req.RequestURI)
				assert.Empty(t, req.Header["X-Cm"], "a proxy-set-headers value with CRLF is never sent")
				assert.Equal(t, []string{"fine"}, req.Header["X-Cm-Ok"])
				assert.Equal(t, "h.test", req.Host, req.RequestURI)
				assert.NotEqual(t, "/smuggled", req.RequestURI)
			}
			assert.Equal(t, "/snip/"+inject, reqs[0].RequestURI)
			assert.Empty(t, reqs[0].Header["X-In-U"])
			assert.Empty(t, reqs[0].Header["X-In-R"], "nor the client's in its place")
			assert.Equal(t, []string{"/snip/ok"}, reqs[2].Header["X-In-U"])
			assert.Equal(t, []string{"[/snip/ok]"}, reqs[2].Header["X-In-R"])
			assert.Empty(t, reqs[0].Header["X-Cm-U"])
			assert.Empty(t, reqs[1].Header["X-Cm-U"])
			assert.Equal(t, []string{"/snip/ok"}, reqs[2].Header["X-Cm-U"])
			assert.Equal(t, uint64(3+2*2), r.Stats().HeadersDropped)
		})
	}
}

// TestNoHostNeverEndpointAddress: an HTTP/1.0 request may come without a
// Host (TestRefusedLikeNginx), and its backend then gets an empty Host
// field on either upstream path, never the address it was dialled at
// (SPEC §13), which net/http's transport would put there.
func TestNoHostNeverEndpointAddress(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Host", fmt.Sprintf("%q", r.Host))
	}
	plain := httptest.NewServer(http.HandlerFunc(h))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(h))
	defer secure.Close()
	r := newTestRouter(Options{})
	r.Publish(table("d", vhost("", nil,
		route(match.Prefix, "/plain", httpBackend("prod/web:80", plain.Listener.Addr().String())),
		route(match.Prefix, "/secure", backend("prod/tls:443", match.HTTPS, match.Serving, secure.Listener.Addr().String())))))
	t.Cleanup(r.CloseIdleConnections)
	front := h1AndH2CServer(t, r)
	for _, path := range []string{"/plain", "/secure"} {
		res := rawRequest(t, front.Listener.Addr().String(), "GET "+path+" HTTP/1.0\r\nConnection: close\r\n\r\n")
		assert.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Equal(t, `""`, res.Header.Get("X-Seen-Host"), path)
	}
}
