package h1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readHead reads one response head from data as the fast path does.
func readResponseHead(t testing.TB, data, method string) (*Response, *bufio.Reader, error) {
	t.Helper()
	br := bufio.NewReaderSize(strings.NewReader(data), bufferSize)
	h := new(Response)
	budget := MaxResponseHead
	return h, br, h.read(br, method, &budget)
}

// bodyOf reads the body and trailer the head frames, as respond does.
func bodyOf(h *Response, br *bufio.Reader) (body []byte, trailer http.Header, err error) {
	pc := &Conn{br: br, head: *h}
	body, err = io.ReadAll(pc.Body())
	if err != nil {
		return body, nil, err
	}
	trailer, err = pc.Trailer()
	return body, trailer, err
}

// hidden is the router's own policy, which CopyTo is handed.
func hidden(k string) bool { return k == "Server" }

func forwardedHeader(h *Response) http.Header {
	dst := http.Header{}
	h.CopyTo(dst, hidden)
	return dst
}

func TestH1HeadFraming(t *testing.T) {
	for _, tc := range []struct {
		name, method, in string
		status           int
		length           int64
		chunked, close   bool
		header           http.Header
		body             string
		trailer          http.Header
		err              error
	}{
		{name: "length", in: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabcrest",
			status: 200, length: 3, header: http.Header{"Content-Type": {"text/plain"}, "Content-Length": {"3"}}, body: "abc"},
		{name: "chunked with trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-sum\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\nX-Late: 2\r\n\r\n",
			status: 200, length: -1, chunked: true, header: http.Header{}, body: "abc",
			trailer: http.Header{"X-Sum": {"1"}, "X-Late": {"2"}}},
		{name: "until close", in: "HTTP/1.1 200 OK\r\n\r\nall of it",
			status: 200, length: -1, close: true, header: http.Header{}, body: "all of it"},
		{name: "HTTP/1.0 without keep-alive", in: "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n",
			status: 200, close: true, header: http.Header{"Content-Length": {"0"}}},
		{name: "HTTP/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx",
			status: 200, length: 1, header: http.Header{"Content-Length": {"1"}}, body: "x"},
		{name: "HTTP/1.0 with another coding", in: "HTTP/1.0 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nraw", err: errTransferEncoding},
		{name: "HTTP/1.0 chunked", in: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
			status: 200, length: -1, chunked: true, close: true, header: http.Header{}, body: "hello"},
		{name: "close with listed fields", in: "HTTP/1.1 200 OK\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nContent-Length: 0\r\n\r\n",
			status: 200, close: true, header: http.Header{"Content-Length": {"0"}}},
		{name: "HEAD keeps the length field", method: http.MethodHead, in: "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n",
			status: 200, header: http.Header{"Content-Length": {"42"}}},
		{name: "304 has no body", in: "HTTP/1.1 304 Not Modified\r\nEtag: \"a\"\r\n\r\n",
			status: 304, header: http.Header{"Etag": {`"a"`}}},
		{name: "repeated fields", in: "HTTP/1.1 200 OK\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n",
			status: 200, header: http.Header{"Set-Cookie": {"a=1", "b=2"}, "Content-Length": {"0"}}},
		{name: "folding", in: "HTTP/1.1 200 OK\r\nX-Folded: one  \r\n \t two\r\nContent-Length: 0\r\n\r\n", err: errFoldedResponse},
		{name: "folding with a tab", in: "HTTP/1.1 200 OK\r\nX-Folded: one\r\n\tX-Poison: yes\r\nContent-Length: 0\r\n\r\n", err: errFoldedResponse},
		{name: "folding in the trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: a\r\n b\r\n\r\n",
			status: 200, length: -1, chunked: true, header: http.Header{}, err: errFoldedResponse},
		{name: "equal lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length:  2 \r\n\r\nok", err: errContentLength},
		{name: "length beside chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n", err: errLengthAndChunked},
		{name: "length beside chunked, HTTP/1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\nok", err: errLengthAndChunked},
		{name: "Pragma stays a Pragma", in: "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n",
			status: 200, header: http.Header{"Pragma": {"no-cache"}, "Content-Length": {"0"}}},
		{name: "bare LF", in: "HTTP/1.1 204 No Content\nX-A: b\n\n", status: 204, header: http.Header{"X-A": {"b"}}},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
			status: 200, length: 10, header: http.Header{"Content-Length": {"10"}}, body: "short", err: io.ErrUnexpectedEOF},
		{name: "conflicting lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", err: errContentLength},
		{name: "gzip transfer coding", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", err: errTransferEncoding},
		{name: "two transfer codings", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", err: errTransferEncoding},
		{name: "forbidden trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: Content-Length\r\n\r\n", err: errTrailerName},
		{name: "name of no token", in: "HTTP/1.1 200 OK\r\nX@Y: 1\r\nX(a): 2\r\nX-\xffZ: 3\r\nX-A: a\r\nContent-Length: 0\r\n\r\n",
			status: 200, header: http.Header{"X-A": {"a"}, "Content-Length": {"0"}}},
		{name: "space before colon", in: "HTTP/1.1 200 OK\r\nX-A : b\r\n\r\n", err: errMalformedField},
		{name: "no colon", in: "HTTP/1.1 200 OK\r\nX-A\r\n\r\n", err: errMalformedField},
		{name: "control byte", in: "HTTP/1.1 200 OK\r\nX-A: a\x00b\r\n\r\n", err: errMalformedField},
		{name: "continued first line", in: "HTTP/1.1 200 OK\r\n X-A: b\r\n\r\n", err: errFoldedResponse},
		{name: "two-digit status", in: "HTTP/1.1 99 Odd\r\n\r\n", err: errMalformedStatus},
		{name: "status below 100", in: "HTTP/1.1 099 Odd\r\n\r\n", err: errMalformedStatus},
		{name: "no version", in: "200 OK\r\n\r\n", err: errMalformedStatus},
		{name: "truncated head", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n", err: io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			h, br, err := readResponseHead(t, tc.in, method)
			if tc.err != nil && tc.status == 0 {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.status, h.Status)
			assert.Equal(t, tc.length, h.Length)
			assert.Equal(t, tc.chunked, h.Chunked)
			assert.Equal(t, tc.close, h.Close)
			assert.Equal(t, tc.header, forwardedHeader(h))
			body, trailer, err := bodyOf(h, br)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.trailer, trailer)
			}
			assert.Equal(t, tc.body, string(body))
		})
	}
}

func TestH1HeadAnnouncedTrailer(t *testing.T) {
	h, _, err := readResponseHead(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-a, X-B\r\nTrailer: x-a\r\n\r\n", http.MethodGet)
	require.NoError(t, err)
	assert.Equal(t, []string{"X-A", "X-B"}, h.Trailer)
	assert.Empty(t, forwardedHeader(h)["Trailer"], "the announcement is the router's to make")
}

// Lines longer than the connection's buffer are read whole; a head past
// MaxResponseHead is refused.
func TestH1HeadLongLines(t *testing.T) {
	long := strings.Repeat("v", 3*bufferSize)
	h, _, err := readResponseHead(t, "HTTP/1.1 200 "+long+"\r\nX-Long: "+long+"\r\nX-Short: s\r\nContent-Length: 0\r\n\r\n", http.MethodGet)
	require.NoError(t, err)
	assert.Equal(t, long, h.Reason)
	assert.Equal(t, http.Header{"X-Long": {long}, "X-Short": {"s"}, "Content-Length": {"0"}}, forwardedHeader(h))

	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\n")
	for b.Len() <= MaxResponseHead {
		b.WriteString("X-Filler: " + strings.Repeat("f", 1000) + "\r\n")
	}
	b.WriteString("\r\n")
	_, _, err = readResponseHead(t, b.String(), http.MethodGet)
	require.ErrorIs(t, err, errHeadTooLarge)
	_, _, err = readResponseHead(t, "HTTP/1.1 200 OK\r\nX-One: "+strings.Repeat("f", MaxResponseHead)+"\r\n\r\n", http.MethodGet)
	require.ErrorIs(t, err, errHeadTooLarge)
}

// A value the client's header map already holds, say one the router set,
// is added to and never written into through spare capacity.
func TestH1HeadCopyToAppends(t *testing.T) {
	h, _, err := readResponseHead(t, "HTTP/1.1 200 OK\r\nVary: Accept\r\nX-New: 1\r\nContent-Length: 0\r\n\r\n", http.MethodGet)
	require.NoError(t, err)
	shared := make([]string, 1, 4)
	shared[0] = "Origin"
	dst := http.Header{"Vary": shared}
	h.CopyTo(dst, hidden)
	assert.Equal(t, []string{"Origin", "Accept"}, dst["Vary"])
	assert.Equal(t, []string{"Origin"}, shared[:1])
	assert.Equal(t, "", shared[:2][1], "the shared slice's spare capacity was written")
	assert.Equal(t, []string{"1"}, dst["X-New"])
}

// Into an empty map, a repeated field's values are gathered under its
// name in order, in a short head (which skips the lookups of names seen
// first) and a long one alike.
func TestH1HeadCopyToRepeated(t *testing.T) {
	for _, extra := range []int{0, 20} {
		head := "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\nVary: Accept\r\nset-cookie: b=2\r\n"
		for i := range extra {
			head += fmt.Sprintf("X-F%d: %d\r\n", i, i)
		}
		head += "Vary: Origin\r\nContent-Length: 0\r\nSet-Cookie: c=3\r\n\r\n"
		h, _, err := readResponseHead(t, head, http.MethodGet)
		require.NoError(t, err)
		dst := http.Header{}
		h.CopyTo(dst, hidden)
		assert.Equal(t, []string{"a=1", "b=2", "c=3"}, dst["Set-Cookie"], "%d more fields", extra)
		assert.Equal(t, []string{"Accept", "Origin"}, dst["Vary"], "%d more fields", extra)
		assert.Equal(t, []string{"0"}, dst["Content-Length"], "%d more fields", extra)
		assert.Len(t, dst, 3+extra)
		dst["Vary"] = append(dst["Vary"], "X")
		assert.Equal(t, []string{"0"}, dst["Content-Length"], "an append to one value wrote over another")
	}
}

func TestH1HeadAllocations(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: Mon, 30 Nov 2026 15:00:00 GMT\r\nContent-Length: 3\r\nX-Backend: a\r\n\r\n"
	r := strings.NewReader(resp)
	br := bufio.NewReaderSize(r, bufferSize)
	var h Response
	dst := http.Header{}
	// Each head differs from the last (see TestResponseRepeatedHeadAllocs).
	heads := [2]string{resp, strings.Replace(resp, "15:00:00", "15:00:01", 1)}
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		n++
		r.Reset(heads[n%2])
		br.Reset(r)
		clear(dst)
		budget := MaxResponseHead
		if err := h.read(br, http.MethodGet, &budget); err != nil {
			t.Fatal(err)
		}
		h.CopyTo(dst, hidden)
	})
	// One string for every field's bytes, one slice for every value.
	assert.Equal(t, 2.0, allocs)
}

// FuzzH1Head holds the parser to http.ReadResponse: whatever both read,
// they read alike (status, framing, the fields passed on, body, trailer
// and where the next response starts), and what only net/http reads is
// one of the documented refusals.
func FuzzH1Head(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n3\r\nabc\r\n0\r\nX-T: v\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n1;ext=1\r\na\r\n0\r\n\r\nnext",
		"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
		"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/0.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
		"HTTP/1.1 200 OK\r\nConnection: close, X-A\r\nX-A: 1\r\nPragma: no-cache\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-F: a\r\n  b \r\n\tc\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000000003 x\r\nabc\r\n800000000000000\r\n",
		"HTTP/1.1 200  OK\nX: y\n\n",
		"HTTP/1.1 200 OK\r\nX : y\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX@Y: 1\r\nContent-Length: 0\r\n\r\n",
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, data string, head bool) {
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		for _, budget := range []int{MaxResponseHead, len(data) / 2} {
			bufferedLikeLines(t, data, method, budget)
		}
		gbr := bufio.NewReaderSize(strings.NewReader(data), bufferSize)
		want, werr := http.ReadResponse(gbr, &http.Request{Method: method})
		h, br, err := readResponseHead(t, data, method)
		if werr != nil {
			if err == nil {
				// The router drops a field name nginx reads but no
				// token is, where net/http refuses the head.
				require.True(t, hasDroppedName(data), "net/http refused what the router read: %v", werr)
			}
			return
		}
		if err != nil {
			// The refusals net/http does not make: a status below 100, a
			// space before a colon, obs-fold, which net/textproto
			// joins, and nginx's of a repeated Content-Length (net/http
			// merges equal ones) or one beside Transfer-Encoding.
			cl, te := headFields(data, "content-length"), headFields(data, "transfer-encoding")
			refused := want.StatusCode < 100 || errors.Is(err, errFoldedResponse) && folded(data) ||
				errors.Is(err, errContentLength) && cl > 1 || errors.Is(err, errLengthAndChunked) && cl > 0 && te > 0 ||
				errors.Is(err, errTransferEncoding) && te > 0 && ignoresTE(want)
			for k := range want.Header {
				refused = refused || strings.ContainsAny(k, " ")
			}
			for k := range want.Trailer {
				refused = refused || strings.ContainsAny(k, " ")
			}
			require.True(t, refused, "the router refused what net/http read: %v", err)
			return
		}
		if headFields(data, "transfer-encoding") > 0 && ignoresTE(want) {
			// The router reads the chunks, as nginx does
			// (TestRouterReadsHTTP10Chunks).
			return
		}
		require.Equal(t, want.StatusCode, h.Status)
		require.Equal(t, want.ProtoMajor, h.major)
		require.Equal(t, want.ProtoMinor, h.minor)
		require.Equal(t, want.Close, h.Close, "close")
		require.Equal(t, want.TransferEncoding != nil, h.Chunked, "chunked")
		if want.Body == http.NoBody {
			require.Zero(t, h.Length, "length")
		} else {
			require.NotZero(t, h.Length, "length")
			require.Equal(t, want.ContentLength, h.Length, "length")
		}
		var announced []string
		for k := range want.Trailer {
			announced = append(announced, k)
		}
		require.ElementsMatch(t, announced, h.Trailer, "announced trailer")

		// The fields passed on: net/http's, less the hop-by-hop ones and
		// those the Connection field names, without the Cache-Control it
		// makes of a Pragma.
		conn := h.connection(new([1]string))
		if c, ok := want.Header["Connection"]; ok {
			require.Equal(t, c, conn)
		}
		if h.Get("Cache-Control") == "" {
			delete(want.Header, "Cache-Control")
		}
		wantHeader := http.Header{}
		for k, vs := range want.Header {
			if !(HopByHop(k) || hidden(k)) && !ListsToken(conn, k) {
				wantHeader[k] = vs
			}
		}
		if len(wantHeader) == 0 {
			wantHeader = http.Header{}
		}
		require.Equal(t, wantHeader, forwardedHeader(h))

		wantBody, wantBodyErr := io.ReadAll(want.Body)
		body, trailer, bodyErr := bodyOf(h, br)
		if wantBodyErr != nil {
			// net/http wants CRLF (CRLF CRLF after fields) to end a
			// trailer; the router also ends one at a bare LF, as it ends
			// a head. Chunk-size lines are read as nginx reads them.
			if !strings.Contains(wantBodyErr.Error(), "trailer") && !hasNginxChunkLine(data) && !hasDroppedName(data) {
				require.Error(t, bodyErr, "net/http refused the body the router read")
			}
			return
		}
		if bodyErr != nil {
			refused := errors.Is(bodyErr, errFoldedResponse) && folded(data) || hasNginxChunkLine(data)
			for k := range want.Trailer {
				refused = refused || strings.ContainsAny(k, " ")
			}
			require.True(t, refused, "the router refused a body net/http read: %v", bodyErr)
			return
		}
		require.Equal(t, wantBody, body)
		wantTrailer := http.Header{}
		for k, vs := range want.Trailer {
			if vs != nil {
				wantTrailer[k] = vs
			}
		}
		gotTrailer := http.Header{}
		for k, vs := range trailer {
			gotTrailer[k] = vs
		}
		require.Equal(t, wantTrailer, gotTrailer, "trailer")
		if want.Close {
			return // what follows is no response's
		}
		rest, _ := io.ReadAll(br)
		wantRest, _ := io.ReadAll(gbr)
		require.True(t, bytes.Equal(wantRest, rest), "the next response starts elsewhere")
	})
}

// folded reports a line of data that starts with a space or a tab: what
// net/textproto reads as the continuation of the field before.
func folded(data string) bool {
	return strings.Contains(data, "\n ") || strings.Contains(data, "\n\t")
}

// Every name of commonResponseFields is found in its slot (the table's
// initialization refuses two in one), as itself; any other name is not.
func TestCommonResponseField(t *testing.T) {
	n := 0
	for _, k := range commonResponseFields {
		if k == "" {
			continue
		}
		n++
		if _, got := commonResponseField([]byte(k)); got != k {
			t.Errorf("commonResponseField(%q) = %q", k, got)
		}
	}
	if n != 48 {
		t.Errorf("%d names in the table, want 48", n)
	}
	for _, k := range []string{"", "A", "Xy", "X-Custom", "Content-Lengths", "Content-Lenght", "Date-", "Vara", "Te-"} {
		if _, got := commonResponseField([]byte(k)); got != "" {
			t.Errorf("commonResponseField(%q) = %q, want none", k, got)
		}
	}
}

// bufferedLikeLines requires a head read from the reader's buffer, as the
// client reads one that came whole, to be the head read a line at a time:
// the same fields, framing, error, budget left and bytes left.
func bufferedLikeLines(t *testing.T, data, method string, budget int) {
	t.Helper()
	lbr := bufio.NewReaderSize(strings.NewReader(data), bufferSize)
	lh, lbudget := new(Response), budget
	lerr := lh.readLines(lbr, method, &lbudget)
	bbr := bufio.NewReaderSize(strings.NewReader(data), bufferSize)
	_, _ = bbr.Peek(min(len(data), bufferSize))
	bh, bbudget := new(Response), budget
	berr := bh.read(bbr, method, &bbudget)
	if fmt.Sprint(lerr) != fmt.Sprint(berr) {
		t.Fatalf("%q: a line at a time: %v; from the buffer: %v", data, lerr, berr)
	}
	if lerr != nil {
		return
	}
	require.Equal(t, lbudget, bbudget, "budget left")
	require.Equal(t, lh.Status, bh.Status)
	require.Equal(t, lh.Reason, bh.Reason)
	require.Equal(t, lh.Fields, bh.Fields)
	require.Equal(t, [2]int{lh.major, lh.minor}, [2]int{bh.major, bh.minor})
	require.Equal(t, []any{lh.Length, lh.Chunked, lh.Close, lh.Trailer},
		[]any{bh.Length, bh.Chunked, bh.Close, bh.Trailer})
	lrest, _ := io.ReadAll(lbr)
	brest, _ := io.ReadAll(bbr)
	require.Equal(t, string(lrest), string(brest), "bytes after the head")
}

// TestH1HeadBuffered: the heads FuzzH1Head starts from, and heads longer
// than the buffer or the budget, read alike from the buffer and a line at
// a time.
func TestH1HeadBuffered(t *testing.T) {
	long := "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("v", 5000) + "\r\nContent-Length: 0\r\n\r\n"
	many := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Field: some value\r\n", 300) + "\r\n"
	for _, data := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n",
		"HTTP/1.1 200 OK\nX: y\n\nbody",
		"HTTP/1.1 200 OK\r\nX: y\r\n\r",
		"HTTP/1.1 200 OK\r\nX : y\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX-F: a\r\n  b\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"\r\nHTTP/1.1 200 OK\r\n\r\n",
		"", long, many,
	} {
		for _, budget := range []int{MaxResponseHead, 40, len(data) - 3, len(data)} {
			for _, method := range []string{"GET", "HEAD"} {
				bufferedLikeLines(t, data, method, budget)
			}
		}
	}
}

// TestFieldKinds: read marks each field with the kind of its name, as
// kindOf gives it, whether the name is a common one sent canonical,
// one sent otherwise, or another.
func TestFieldKinds(t *testing.T) {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\n")
	names := []string{"Proxy-Connection", "Proxy-Authorization", "X-Custom", "content-length", "CONNECTION", "date"}
	for _, k := range commonResponseFields {
		if k != "" && k != "Content-Length" && k != "Transfer-Encoding" {
			names = append(names, k)
		}
	}
	for _, k := range names {
		b.WriteString(k + ": 1\r\n")
	}
	b.WriteString("\r\n")
	h, _, err := readResponseHead(t, b.String(), "GET")
	if err != nil {
		t.Fatal(err)
	}
	var all fieldKind
	for i, f := range h.Fields {
		if got, want := h.spans[i].kind, kindOf(f.Key); got != want {
			t.Errorf("%s: kind %b, want %b", f.Key, got, want)
		}
		if got := h.spans[i].kind&kindHop != 0; got != HopByHop(f.Key) {
			t.Errorf("%s: hop-by-hop %v", f.Key, got)
		}
		all |= h.spans[i].kind
	}
	if h.kinds != all {
		t.Errorf("kinds %b, want %b", h.kinds, all)
	}
}

// hasNginxChunkLine reports a line of data that nginx's chunk-size
// reading, the router's, and net/http's read differently.
func hasNginxChunkLine(data string) bool {
	for line := range strings.Lines(data) {
		if nginxChunkLine([]byte(line)) {
			return true
		}
	}
	return false
}

// headFields counts the field lines of the first head in data whose name
// is name (lower case), in any case.
func headFields(data, name string) int {
	n, first := 0, true
	for line := range strings.Lines(data) {
		if strings.TrimRight(line, "\r\n") == "" {
			break
		}
		if k, _, ok := strings.Cut(line, ":"); ok && !first && strings.EqualFold(k, name) {
			n++
		}
		first = false
	}
	return n
}

// ignoresTE reports a response whose Transfer-Encoding net/http ignores:
// one before HTTP/1.1 (but "HTTP/0.0", which it reads as 1.1).
func ignoresTE(res *http.Response) bool {
	return !res.ProtoAtLeast(1, 1) && !(res.ProtoMajor == 0 && res.ProtoMinor == 0)
}

// hasDroppedName reports a line of data that is a field line whose name
// nginx reads but is no token (nginxFieldName): the router drops it.
func hasDroppedName(data string) bool {
	for line := range strings.Lines(data) {
		name, _, ok := strings.Cut(line, ":")
		if ok && nginxFieldName([]byte(name)) && !isToken(name) {
			return true
		}
	}
	return false
}
