package router

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// nginxURI is a reference model of how nginx turns a request-target into
// $uri, the path locations are matched on (ngx_http_parse_request_line and
// ngx_http_parse_complex_uri), written apart from the router's code:
// absolute form loses its scheme and authority (userinfo is refused); the
// path ends at the first '?' or '#'; %XX is decoded once (a bad escape or
// a decoded NUL is refused; a decoded '?', '#' or '%' is an ordinary
// byte); then slashes merge and "." and ".." segments resolve, refusing a
// climb above "/". A backslash, ';' and overlong UTF-8 are ordinary bytes.
// ok is false when nginx answers 400.
func nginxURI(target string) (uri string, ok bool) {
	if rest, found := strings.CutPrefix(target, "http://"); found {
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		if strings.Contains(rest[:end], "@") {
			return "", false
		}
		target = "/" + strings.TrimPrefix(rest[end:], "/")
		if strings.HasPrefix(rest[end:], "?") {
			target = "/" + rest[end:]
		}
	}
	if end := strings.IndexAny(target, "?#"); end >= 0 {
		target = target[:end]
	}
	var decoded []byte
	for i := 0; i < len(target); i++ {
		if target[i] != '%' {
			decoded = append(decoded, target[i])
			continue
		}
		if i+2 >= len(target) || !isHex(target[i+1]) || !isHex(target[i+2]) {
			return "", false
		}
		c := fromHex(target[i+1])<<4 | fromHex(target[i+2])
		if c == 0 {
			return "", false
		}
		decoded = append(decoded, c)
		i += 2
	}
	var stack []string
	segs := strings.Split(string(decoded), "/")
	for i, seg := range segs[1:] {
		last := i == len(segs)-2
		switch seg {
		case "", ".":
			if last {
				stack = append(stack, "")
			}
		case "..":
			if len(stack) > 0 && stack[len(stack)-1] == "" {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 {
				return "", false
			}
			stack = stack[:len(stack)-1]
			if last {
				stack = append(stack, "")
			}
		default:
			if len(stack) > 0 && stack[len(stack)-1] == "" {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, seg)
		}
	}
	return "/" + strings.Join(stack, "/"), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func fromHex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// uriCorpus generates request-targets from path pieces that nginx and
// backends are known to read differently: encodings, dot segments, '#',
// '?', ';', backslashes, overlong UTF-8, %00, absolute form with and
// without userinfo.
func uriCorpus() []string {
	bases := []string{"", "/api", "/admin", "/static", "/API", "//api", "/x"}
	pieces := []string{
		"x", ".", "..", "%2e", "%2E%2e", "%2f", "%2F..", "%5c", `\`, "%00", "%25", "%C0%AE", "%c0%af",
		";x", "a#b", "#", "?q", "%3F", "%23", "", "%zz", "%4", "ad%6din", "admin", "%2e%2e%2fadmin",
	}
	var out []string
	for _, b := range bases {
		for _, p := range pieces {
			out = append(out, b+"/"+p)
			for _, q := range []string{"admin", "..", "x?y", "#/../admin", "%2e"} {
				out = append(out, b+"/"+p+"/"+q)
			}
		}
	}
	for _, p := range []string{"/admin", "/api/x", "/a/../admin?x", "", "?q"} {
		out = append(out, "http://h.test"+p, "http://u@h.test"+p, "http://u:p@h.test"+p)
	}
	return out
}

// TestRequestTargetCorpus: for every generated request-target, the route
// the router chooses is the one nginx would choose for the same target,
// given by looking up the reference model's $uri in the same table; where
// the model says 400, so does the router.
func TestRequestTargetCorpus(t *testing.T) {
	be := func(name string) *match.Backend { return httpBackend("prod/"+name+":80", "192.0.2.1:80") }
	tab := table("d", vhost("h.test", be("default"),
		route(match.Exact, "/admin", be("admin-exact")),
		route(match.Prefix, "/admin/", be("admin")),
		route(match.Prefix, "/api", be("api")),
		route(match.Prefix, "/static/", be("static")),
		route(match.Exact, "/", be("root")),
	))
	r := newTestRouter(Options{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		id, _, _ := EndpointFromContext(req.Context())
		return &http.Response{StatusCode: 200, Header: http.Header{"X-Backend": {id}}, Body: http.NoBody, Request: req}, nil
	})})
	r.Publish(tab)

	corpus := uriCorpus()
	require.GreaterOrEqual(t, len(corpus), 300)
	refused, mismatches := 0, 0
	for _, target := range corpus {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: h.test\r\n\r\n")))
		if err != nil {
			refused++ // net/http refuses it before any handler: a 400 as well
			continue
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		got := w.Header().Get("X-Backend")
		if w.Code == http.StatusBadRequest {
			got = "400"
		}
		want := "400"
		if uri, ok := nginxURI(target); ok {
			want = tab.Lookup("h.test", uri).Backend.ID
		}
		if got != want {
			mismatches++
			t.Errorf("%q: router chose %s, nginx's $uri gives %s", target, got, want)
		}
	}
	require.Less(t, refused, len(corpus)/10, "most of the corpus reaches the handler")
	require.Zero(t, mismatches)
	t.Logf("%d targets, %d refused by net/http, 0 mismatches", len(corpus), refused)
}

// TestNginxURIModel pins the reference model itself down on cases whose
// nginx answers are known.
func TestNginxURIModel(t *testing.T) {
	tests := []struct{ target, want string }{
		{"/a/./b/../c", "/a/c"},
		{"/a/..", "/"},
		{"/a/.", "/a/"},
		{"//a//b/", "/a/b/"},
		{"/a%2Fb", "/a/b"},
		{"/%2e%2e/x", "400"},
		{"/..", "400"},
		{"/a%00", "400"},
		{"/a%zz", "400"},
		{"/admin#x/../../y", "/admin"},
		{"/a?b/../..", "/a"},
		{"/%25", "/%"},
		{"/%3F/x", "/?/x"},
		{`/a\..\b`, `/a\..\b`},
		{"/%C0%AE%C0%AE/x", "/\xc0\xae\xc0\xae/x"},
		{"http://h.test", "/"},
		{"http://h.test/a/../b?c", "/b"},
		{"http://u@h.test/a", "400"},
	}
	for _, tt := range tests {
		got, ok := nginxURI(tt.target)
		if !ok {
			got = "400"
		}
		require.Equal(t, tt.want, got, tt.target)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
