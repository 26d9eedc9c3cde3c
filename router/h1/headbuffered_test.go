package h1

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// headBufferedByContains is headBuffered's rule as first written: the
// buffer past any leading empty lines holds "\n\r\n" or "\n\n".
func headBufferedByContains(b []byte) bool {
	b = bytes.TrimLeft(b, "\r\n")
	return bytes.Contains(b, []byte("\n\r\n")) || bytes.Contains(b, []byte("\n\n"))
}

// buffered is a reader holding all of s.
func buffered(t testing.TB, s string) *bufio.Reader {
	br := bufio.NewReaderSize(strings.NewReader(s), max(16, len(s)))
	if len(s) > 0 {
		if _, err := br.Peek(len(s)); err != nil {
			t.Fatal(err)
		}
	}
	return br
}

func TestHeadBuffered(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"\r\n\r\n", false},
		{"GET / HTTP/1.1\r\nHost: a\r\n", false},
		{"GET / HTTP/1.1\r\nHost: a\r\n\r", false},
		{"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true},
		{"GET / HTTP/1.1\nHost: a\n\n", true},
		{"\r\n\nGET / HTTP/1.1\r\n\r\n", true},
		{"\r\n\r\nGET / HTTP/1.1\r\n", false},
		{"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde", true},
		{"HTTP/1.1 200 OK\r\nX: \r\r\n", false},
		{"HTTP/1.1 200 OK\r\n\n", true},
	} {
		if got := headBuffered(buffered(t, tc.in)); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
		if ref := headBufferedByContains([]byte(tc.in)); ref != tc.want {
			t.Errorf("%q: the reference says %v", tc.in, ref)
		}
	}
}

func FuzzHeadBuffered(f *testing.F) {
	for _, s := range []string{"", "\r\n", "GET / HTTP/1.1\r\n\r\n", "a\n\r\n", "\n\na\n\n", "a\r\n\r", "a\nb\r\nc\n\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := headBuffered(buffered(t, s)), headBufferedByContains([]byte(s)); got != want {
			t.Fatalf("%q: %v, the rule says %v", s, got, want)
		}
	})
}
