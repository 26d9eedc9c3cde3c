package h1

import (
	"fmt"
	"io"
	"net/http"
	"testing"
)

// HostField keeps an absolute-form request's Host field, which
// Request.Host does not hold; a request in origin form has none, also
// when the connection's previous request was absolute, and neither has
// a request read by net/http's server.
func TestHostField(t *testing.T) {
	seen := make(chan string, 4)
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, present, ok := HostField(r)
		seen <- fmt.Sprintf("%s %q %v %v", r.Host, f, present, ok)
	})}
	c, br := dial(t, serve(t, s))
	for _, c2 := range []struct{ send, want string }{
		{"GET http://a.example/x HTTP/1.1\r\nHost: b.example:81\r\n\r\n", `a.example "b.example:81" true true`},
		{"GET /y HTTP/1.1\r\nHost: b.example\r\n\r\n", `b.example "" false false`},
		{"GET http://a.example/z HTTP/1.0\r\n\r\n", `a.example "" false true`},
	} {
		io.WriteString(c, c2.send)
		readResponse(t, br, "GET")
		if got := <-seen; got != c2.want {
			t.Errorf("%q: got %s, want %s", c2.send, got, c2.want)
		}
	}
	if _, _, ok := HostField(&http.Request{}); ok {
		t.Error("a request this package did not read")
	}
}
