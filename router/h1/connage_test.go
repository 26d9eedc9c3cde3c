package h1

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// TestMaxConnAgeNextConnection: the age of a connection is its own. One
// that closed young leaves nothing that ages the next connection served
// (which may reuse its state), and that one still closes once it is past
// MaxConnAge.
func TestMaxConnAgeNextConnection(t *testing.T) {
	const age = 150 * time.Millisecond
	addr := serve(t, &Server{MaxConnAge: age, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})})
	get := func(c io.Writer) {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	}
	for i := range 3 {
		c, br := dial(t, addr)
		get(c)
		if res, _ := readResponse(t, br, "GET"); res.Close {
			t.Fatalf("connection %d: a young connection closed", i)
		}
		c.Close()
		// Past the age of the closed connection, not of the next one.
		time.Sleep(age + 50*time.Millisecond)
	}
	c, br := dial(t, addr)
	get(c)
	if res, _ := readResponse(t, br, "GET"); res.Close {
		t.Fatal("a young connection closed")
	}
	time.Sleep(age + 50*time.Millisecond)
	get(c)
	if res, body := readResponse(t, br, "GET"); !res.Close || body != "ok" {
		t.Fatalf("past MaxConnAge: close %v %q", res.Close, body)
	}
}
