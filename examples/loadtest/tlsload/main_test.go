package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNewConnections runs the load briefly against a TLS server that
// resumes sessions: every request is a connection of its own, full
// handshakes without -resume and mostly resumed ones with it, and the
// summary reads as wrk's.
func TestNewConnections(t *testing.T) {
	var conns, requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Connection") != "close" || r.Host != "load.example" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("hello"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "https://")
	summary := regexp.MustCompile(`(?m)^  (\d+) requests in [\d.]+s, (\d+) resumed handshakes$`)
	for _, resume := range []bool{false, true} {
		conns.Store(0)
		requests.Store(0)
		var out, errs bytes.Buffer
		args := []string{"-addr", addr, "-c", "2", "-d", "500ms"}
		if resume {
			args = append(args, "-resume")
		}
		require.Equal(t, 0, run(args, &out, &errs), errs.String())
		m := summary.FindStringSubmatch(out.String())
		require.NotNil(t, m, out.String())
		n, _ := strconv.Atoi(m[1])
		resumed, _ := strconv.Atoi(m[2])
		assert.Greater(t, n, 2, out.String())
		assert.Equal(t, requests.Load(), conns.Load(), "one connection per request")
		if resume {
			// Each worker's first handshake is a full one.
			assert.GreaterOrEqual(t, resumed, max(1, (n-2)/2), "most handshakes resumed: %d of %d", resumed, n)
		} else {
			assert.Zero(t, resumed)
		}
		assert.Regexp(t, `(?m)^Requests/sec: [1-9]`, out.String())
		assert.Regexp(t, `(?m)^     99%   [\d.]+ms$`, out.String())
		assert.NotContains(t, out.String(), "Non-2xx")
		assert.NotContains(t, out.String(), "Socket errors")
	}
}

func TestArguments(t *testing.T) {
	for _, args := range [][]string{
		{"-addr", "10.0.0.1:443"},
		{"-addr", "example.com:443"},
		{"-c", "0"},
		{"-d", "11m"},
		{"-no-such-flag"},
	} {
		var out, errs bytes.Buffer
		assert.Equal(t, 2, run(args, &out, &errs), "%v", args)
		assert.Empty(t, out.String())
		assert.NotEmpty(t, errs.String())
	}
}
