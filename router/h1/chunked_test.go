package h1

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chunkSizeCases are chunk-size lines as nginx 1.27's ngx_http_parse_chunked
// reads them (checked against nginx on loopback): a size past 2^59-1 is
// refused, with as many leading zeros as come; an extension may start
// with a space, tab or ';'.
var chunkSizeCases = []struct {
	line string
	ok   bool
}{
	{"5", true},
	{"5;name=value", true},
	{"5 ", true},
	{"5 ;x", true},
	{"5\t;x", true},
	{"5 anything", true},
	{"00000000000000000000000000000005", true},
	{"7ffffffffffffff", false}, // 2^59-1: read, but no such body comes (see the test)
	{"800000000000000", false},
	{"0000800000000000000", false},
	{"fffffffffffffff", false},
	{"8000000000000000", false},
	{"ffffffffffffffff", false},
	{"10000000000000000", false},
	{"", false},
	{";x", false},
	{"0x5", false},
	{"5x", false},
	{" 5", false},
	{"-5", false},
}

func TestChunkSizeAsNginx(t *testing.T) {
	for _, tc := range chunkSizeCases {
		n, err := chunkSize([]byte(tc.line))
		switch {
		case tc.line == "7ffffffffffffff":
			require.NoError(t, err, tc.line)
			assert.Equal(t, uint64(1<<59-1), n)
		case tc.ok:
			require.NoError(t, err, tc.line)
			assert.Equal(t, uint64(5), n, tc.line)
		default:
			assert.Error(t, err, "%q", tc.line)
		}
	}
}

// TestChunkSizeRequest: the server reads a request's chunk sizes as nginx
// does: one past nginx's bound is the client's malformed body (400 from
// the router), not the start of a 2^63-byte chunk whose "data" is what
// follows; padded with zeros past 16 digits, it is served.
func TestChunkSizeRequest(t *testing.T) {
	addr := serve(t, &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = w.Write(b)
	})})
	for _, tc := range []struct {
		size   string
		status int
	}{
		{"5", 200},
		{"00000000000000000000000000000005", 200},
		{"5 ;ext", 200},
		{"800000000000000", 400},
		{"8000000000000000", 400},
		{"ffffffffffffffff", 400},
	} {
		c, br := dial(t, addr)
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"+tc.size+"\r\nhello\r\n0\r\n\r\n")
		res, body := readResponse(t, br, "POST")
		assert.Equal(t, tc.status, res.StatusCode, tc.size)
		if tc.status == 200 {
			assert.Equal(t, "hello", body, tc.size)
		}
	}
}

// TestChunkSizeResponse: a backend's chunk sizes are read as nginx reads
// them ("upstream sent invalid chunked response" past the bound): the
// bytes after a size past it are not relayed as its data.
func TestChunkSizeResponse(t *testing.T) {
	for _, tc := range chunkSizeCases {
		if tc.line == "7ffffffffffffff" {
			continue
		}
		h, br, err := readResponseHead(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"+tc.line+"\r\nhello\r\n0\r\n\r\n", "GET")
		require.NoError(t, err)
		body, _, err := bodyOf(h, br)
		if tc.ok {
			require.NoError(t, err, tc.line)
			assert.Equal(t, "hello", string(body), tc.line)
		} else {
			assert.Error(t, err, "%q", tc.line)
			assert.False(t, strings.Contains(string(body), "hello"), "%q: relayed %q", tc.line, body)
		}
	}
}
