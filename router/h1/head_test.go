package h1

import (
	"bufio"
	"bytes"
	"net/textproto"
	"reflect"
	"strings"
	"testing"
)

var plainHeadSeeds = []string{
	"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /bench?x=1 HTTP/1.1\r\nHost: bench.test\r\nUser-Agent: wrk\r\nAccept: */*\r\nX-Request-Id: 123\r\n\r\n",
	"POST /up HTTP/1.0\r\nhost: a\r\ncontent-length: 3\r\n\r\nabc",
	"GET /a? HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a?? HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a?b#c HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET //x/y;z=1@:$&+,= HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /q?\xff\xfe HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nx-a: 2\r\nX-B:\t two \t\r\nX-Empty:   \r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX-Obs: caf\xc3\xa9\r\n\r\nGET / HTTP/1.1\r\n",
	"GET /a%20b HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a(b) HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET * HTTP/1.1\r\nHost: a\r\n\r\n",
	"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
	"GET / HTTP/1.1\r\n Host: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
	"GET / HTTP/1.1\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\x00\r\n\r\n",
	"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
	"GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
	"G\xc3\xa9T / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n",
	"GET / HTTP/1.1\r\nhost: a\r\nHOST: b\r\n\r\n",
	"GET /many HTTP/1.1\r\nA1: 1\r\nA2: 2\r\nA3: 3\r\nA4: 4\r\nA5: 5\r\nA6: 6\r\nA7: 7\r\nA8: 8\r\nA9: 9\r\n" +
		"A10: 10\r\nA11: 11\r\nA12: 12\r\nA13: 13\r\nA14: 14\r\nA15: 15\r\nA16: 16\r\nx-a17:  17 \r\nHost: h\r\nA1: again\r\nconnection: close\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nconnection: close\r\nPragma: no-cache\r\nTransfer-Encoding: chunked\r\nTrailer: x\r\nexpect: 100-continue\r\nContent-Length: 1\r\n\r\n",
}

// FuzzPlainHead holds parsePlainHead to net/textproto's parse (readHead):
// every head it takes, it takes as that parse does, consuming as much, and
// a scratch reused from another head leaves nothing of it behind.
func FuzzPlainHead(f *testing.F) {
	for _, s := range plainHeadSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s headScratch
		_, _, primed := parsePlainHead([]byte("GET /prime?x HTTP/1.1\r\nHost: p\r\nX-A: prime\r\nX-Prime: 1\r\n\r\n"), -1, &s, false)
		if !primed {
			t.Fatal("the priming head is not plain")
		}
		got, n, ok := parsePlainHead(b, -1, &s, true)
		if !ok {
			return
		}
		// With the end found by the caller (headWhole), the same.
		var s2 headScratch
		known, n2, ok2 := parsePlainHead(b, bytes.Index(b, []byte("\r\n\r\n")), &s2, false)
		if !ok2 || n2 != n || !reflect.DeepEqual(known, got) {
			t.Fatalf("%q: parsed with its end known: %v %d %+v, without %d %+v", b, ok2, n2, known, n, got)
		}
		src := bytes.NewReader(b)
		br := bufio.NewReader(src)
		want, err := readHead(textproto.NewReader(br), new(fieldReader))
		if err != nil {
			t.Fatalf("%q: taken as plain, refused by textproto: %v", b, err)
		}
		if consumed := len(b) - br.Buffered() - src.Len(); n != consumed {
			t.Fatalf("%q: consumed %d, textproto %d", b, n, consumed)
		}
		if got.method != want.method || got.target != want.target || got.proto != want.proto || got.major != want.major || got.minor != want.minor {
			t.Fatalf("%q: line %q %q %q %d.%d, textproto %q %q %q %d.%d", b, got.method, got.target, got.proto, got.major, got.minor,
				want.method, want.target, want.proto, want.major, want.minor)
		}
		if !reflect.DeepEqual(*got.url, *want.url) {
			t.Fatalf("%q: URL %#v, textproto %#v", b, *got.url, *want.url)
		}
		// The plain parse keeps Host out of the map: with it put back,
		// the map is textproto's.
		if got.hostsInHeader || got.header["Host"] != nil {
			t.Fatalf("%q: Host in the header map", b)
		}
		full := got.header.Clone()
		if got.hosts != nil {
			full["Host"] = got.hosts
		}
		if !reflect.DeepEqual(full, want.header) {
			t.Fatalf("%q: header %q and Host %q, textproto %q", b, got.header, got.hosts, want.header)
		}
		for _, k := range []string{"Connection", "Pragma", "Transfer-Encoding", "Content-Length", "Trailer", "Expect"} {
			if _, present := want.header[k]; present != (got.has&fieldBit(k) != 0) {
				t.Fatalf("%q: %s present %v, in the field set %v", b, k, present, !present)
			}
		}
	})
}

func TestPlainHeadTakes(t *testing.T) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST /up HTTP/1.0\r\nhost: a\r\ncontent-length: 3\r\n\r\nabc",
		"GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nx-a: 2\r\nX-B:\t two \t\r\nX-Empty:   \r\n\r\n",
		plainHeadSeeds[len(plainHeadSeeds)-2], // more lines than parsePlainHead keeps spans of
	} {
		if _, _, ok := parsePlainHead([]byte(s), -1, new(headScratch), false); !ok {
			t.Errorf("%q is not taken as plain", s)
		}
	}
	for _, s := range []string{
		"GET /a%20b HTTP/1.1\r\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",
		"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
		"GET / HTTP/1.1\nHost: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\n",
		"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n",
	} {
		if _, _, ok := parsePlainHead([]byte(s), -1, new(headScratch), false); ok {
			t.Errorf("%q is taken as plain", s)
		}
	}
}

// A value slice is capped: a handler's append cannot write over the next
// key's value in the shared backing array.
func TestPlainHeadAppendCopies(t *testing.T) {
	h, _, ok := parsePlainHead([]byte("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nX-B: 2\r\n\r\n"), -1, new(headScratch), false)
	if !ok {
		t.Fatal("not plain")
	}
	h.header["X-A"] = append(h.header["X-A"], "added")
	if got := h.header["X-B"]; len(got) != 1 || got[0] != "2" {
		t.Fatalf("X-B = %q after an append to X-A", got)
	}
}

// One allocation per head once the scratch is there: the head's string
// (each head differs from the last; see TestPlainHeadRepeatedAllocs).
func TestPlainHeadAllocs(t *testing.T) {
	head := []byte("GET /bench?x=1 HTTP/1.1\r\nHost: bench.test\r\nUser-Agent: wrk\r\nAccept: */*\r\nX-Request-Id: 123\r\n\r\n")
	var s headScratch
	parsePlainHead(head, -1, &s, false)
	id := len(head) - 5 // the request ID's last digit
	if n := testing.AllocsPerRun(100, func() { head[id] ^= 1; parsePlainHead(head, -1, &s, true) }); n != 1 {
		t.Fatalf("%v allocations per head, want 1", n)
	}
}

// canonicalRequestKey is textproto.CanonicalMIMEHeaderKey for the names
// it keeps as they are, and for others in any case.
func TestCanonicalRequestKey(t *testing.T) {
	for _, k := range []string{
		"Host", "host", "HOST", "User-Agent", "user-agent", "Accept", "Accept-Encoding",
		"Accept-Language", "Connection", "Content-Length", "Content-Type", "Cookie",
		"Authorization", "Referer", "Origin", "Cache-Control", "Upgrade-Insecure-Requests",
		"X-Forwarded-For", "x-forwarded-for", "X-Request-Id", "X-Request-ID", "If-None-Match",
		"If-Modified-Since", "Pragma", "Priority", "Sec-Fetch-Mode", "x_y", "Te", "TE",
	} {
		if got, want := canonicalRequestKey(k), textproto.CanonicalMIMEHeaderKey(k); got != want {
			t.Errorf("canonicalRequestKey(%q) = %q, want %q", k, got, want)
		}
	}
}

// headWhole is headBuffered for every buffer, and the end it notes is the
// first CRLF CRLF's.
func TestHeadWhole(t *testing.T) {
	extra := []string{"", "\r\n", "\r\nGET / HTTP/1.1\r\n\r\n", "\nGET / HTTP/1.1\n\n", "GET / HTTP/1.1\n\n",
		"GET / HTTP/1.1\r\nHost: a\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\n", "\r\n\r\n", "X\r\n\r\n"}
	for _, in := range append(plainHeadSeeds, extra...) {
		c := &conn{br: bufio.NewReader(strings.NewReader(in)), headEnd: -1}
		_, _ = c.br.Peek(len(in))
		want := headBuffered(c.br)
		if got := c.headWhole(); got != want {
			t.Errorf("%q: headWhole %v, headBuffered %v", in, got, want)
		}
		if c.headEnd >= 0 && c.headEnd != strings.Index(in, "\r\n\r\n") {
			t.Errorf("%q: end %d", in, c.headEnd)
		}
	}
}
