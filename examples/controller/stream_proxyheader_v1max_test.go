package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// nginx reads a v1 header of at most 107 bytes, CRLF included
// (NGX_PROXY_PROTOCOL_V1_MAX_HEADER): a longer line is broken, whatever
// it holds.
func TestReadProxyHeaderV1AtMost107Bytes(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"PROXY UNKNOWN " + strings.Repeat("x", 91) + "\r\n", true},
		{"PROXY UNKNOWN " + strings.Repeat("x", 92) + "\r\n", false},
		{"PROXY TCP4 203.0.113.7 192.0.2.1 " + strings.Repeat("0", 65) + "4444 80\r\n", true},
		{"PROXY TCP4 203.0.113.7 192.0.2.1 " + strings.Repeat("0", 66) + "4444 80\r\n", false},
	} {
		c := &bytesConn{r: bytes.NewReader([]byte(tc.line + "data"))}
		_, _, err := readProxyHeader(c, time.Second)
		if tc.ok {
			assert.NoError(t, err, "%d bytes", len(tc.line))
		} else {
			assert.Error(t, err, "%d bytes", len(tc.line))
		}
	}
}
