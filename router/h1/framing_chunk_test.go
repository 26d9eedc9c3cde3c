package h1

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGuardChunkSizeBound: a chunk size past nginx's bound (chunkSize),
// which net/http's server would take as the start of an enormous chunk,
// is cut at the digit that passes it and followed by the refusal line, so
// that net/http's chunked reader fails the body (the router's 400) as
// router/h1's server does; a size within it passes untouched, however the
// stream is cut into reads.
func TestGuardChunkSizeBound(t *testing.T) {
	head := "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, tc := range []struct{ size, delivered string }{
		{"800000000000000", "80000000000000"},
		{"8000000000000000", "80000000000000"},
		{"0fffffffffffffff", "0ffffffffffffff"},
	} {
		for _, sizes := range [][]byte{nil, {0}, {2, 0, 6}} {
			got, refused := guardRead(t, []byte(head+tc.size+"\r\nhello\r\n0\r\n\r\n"), sizes, 7)
			require.True(t, refused, tc.size)
			assert.Equal(t, head+tc.delivered+rejectLine, string(got), "%s, reads of %v", tc.size, sizes)
		}
	}
	in := head + "7ffffffffffffff\r\nhello"
	got, refused := guardRead(t, []byte(in), nil, 7)
	assert.False(t, refused)
	assert.Equal(t, in, string(got))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
		}
	})}
	go srv.Serve(GuardFraming(ln))
	t.Cleanup(func() { srv.Close() })
	c, br := dial(t, ln.Addr().String())
	io.WriteString(c, head+"8000000000000000\r\nhello\r\n0\r\n\r\n")
	res, _ := readResponse(t, br, "POST")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.False(t, strings.Contains(res.Header.Get("Connection"), "keep-alive"))
}
