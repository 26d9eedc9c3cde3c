package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/match"
)

// TestStreamAccessLogKeys: the stream access log is on by default in
// ingress-nginx's log-format-stream; log-format-stream, disable-access-log,
// disable-stream-access-log and stream-access-log-path are read as
// nginx.tmpl writes them, unwarned, but for what ramjet cannot do.
func TestStreamAccessLogKeys(t *testing.T) {
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rec := streamRecord{proto: match.TCP, port: 9000, client: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4444},
		start: start, end: start.Add(1234 * time.Millisecond), status: streamOK, sent: 40, received: 4}
	const line = "[192.0.2.1] [04/Mar/2026:05:06:08 +0000] TCP 200 40 4 1.234\n"
	for _, tc := range []struct {
		data   map[string]string
		want   string
		warned []string
	}{
		{map[string]string{}, line, nil},
		{map[string]string{"disable-stream-access-log": "true"}, "", nil},
		{map[string]string{"disable-access-log": "true"}, "", nil},
		{map[string]string{"disable-http-access-log": "true"}, line, nil},
		{map[string]string{"disable-stream-access-log": "false"}, line, nil},
		{map[string]string{"log-format-stream": "$remote_port $server_port $protocol $upstream_addr \"$msec\""}, "4444 9000 TCP - \"1772600768.234\"\n", nil},
		{map[string]string{"log-format-stream": "$remote_addr $nope"}, line, []string{"log-format-stream"}},
		{map[string]string{"stream-access-log-path": "/dev/stdout"}, line, nil},
		{map[string]string{"stream-access-log-path": "/var/log/nginx/access.log"}, line, nil},
		{map[string]string{"stream-access-log-path": "relative.log"}, line, []string{"stream-access-log-path"}},
		{map[string]string{"stream-access-log-path": "/nonexistent-dir/stream.log"}, line, []string{"stream-access-log-path"}},
		{map[string]string{"stream-access-log-path": "syslog:server=10.0.0.1"}, line, []string{"stream-access-log-path"}},
	} {
		c := flagsWith(t)
		var warned []string
		for _, w := range applyConfigMap(&c, cmData(tc.data), c.flagsSet) {
			warned = append(warned, w.key)
		}
		assert.Equal(t, tc.warned, warned, "%v", tc.data)
		var out bytes.Buffer
		c.accessLogOut = &out
		c.accessLog = &liveAccessLog{out: &out, format: c.accessLogFormat}
		requestObserver(c, nil)
		if log := streamAccessLog(c); log != nil {
			r := rec
			log(&r)
		}
		assert.Equal(t, tc.want, out.String(), "%v", tc.data)
	}

	// Without a ConfigMap, the default line; -enable-access-log=false
	// turns it off too.
	c := flagsWith(t)
	var out bytes.Buffer
	c.accessLogOut = &out
	streamAccessLog(c)(&rec)
	assert.Equal(t, line, out.String())
	c.enableAccessLog = false
	assert.Nil(t, streamAccessLog(c))
}

// TestStreamAccessLogSessions: each TCP connection and each UDP session
// is logged once it ends, with the $status nginx's stream module gives
// it: 200 served, 400 a PROXY header that does not parse, 502 no
// endpoint reached or a UDP answer that never came.
func TestStreamAccessLogSessions(t *testing.T) {
	live := startTCPBackend(t, "live", false)
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	_, silentPort, _ := net.SplitHostPort(silent.LocalAddr().String())
	echo, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { echo.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := echo.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			echo.WriteToUDPAddrPort(append([]byte("answer to "), buf[:n]...), from)
		}
	}()
	_, echoPort, _ := net.SplitHostPort(echo.LocalAddr().String())
	pOK, pProxy, pDead, pUDP, pEcho := streamPort(t, "tcp"), streamPort(t, "tcp"), streamPort(t, "tcp"), streamPort(t, "udp"), streamPort(t, "udp")
	dead := fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: dead, namespace: default}
spec: {ports: [{port: 9000}]}
---
apiVersion: v1
kind: Service
metadata: {name: answers, namespace: default}
spec: {ports: [{port: 53, protocol: UDP}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: answers, namespace: default, labels: {kubernetes.io/service-name: answers}}
addressType: IPv4
ports: [{port: %s, protocol: UDP}]
endpoints: [{addresses: [127.0.0.1]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: ingress-nginx}
data: {proxy-stream-timeout: "1"}
`, echoPort)
	m := streamManifests(map[int]string{pOK: "default/echo:9000", pProxy: "default/echo:9000:PROXY", pDead: "default/dead:9000"},
		map[int]string{pUDP: "default/echo:53", pEcho: "default/answers:53"}, []string{live.port()}, silentPort, dead)
	var out syncBuffer
	inst, _, _ := startStreams(t, m, func(c *config) {
		c.enableAccessLog, c.accessLogOut = true, &out
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
	})
	addr := func(proto string, p int) string { return inst.streams.Addrs()[proto+"/"+strconv.Itoa(p)] }
	entry := func(proto string, status, sent, received string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^\[127\.0\.0\.1\] \[\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] ` + proto + " " + status + " " + sent + " " + received + ` \d+\.\d{3}$`)
	}
	logged := func(re *regexp.Regexp) {
		t.Helper()
		require.Eventually(t, func() bool { return re.MatchString(out.String()) }, 5*time.Second, 10*time.Millisecond, "%s in:\n%s", re, out.String())
	}

	c, br, hello := dialLine(t, addr("tcp", pOK))
	assert.Equal(t, "hello from live \n", hello)
	fmt.Fprintf(c, "one\n")
	_, _ = br.ReadString('\n')
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	_, _ = br.ReadString('\n')
	c.Close()
	logged(entry("TCP", "200", "37", "4"))

	c, err = net.Dial("tcp", addr("tcp", pProxy))
	require.NoError(t, err)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\n\r\n")
	logged(entry("TCP", "400", "0", "0"))
	c.Close()

	c, err = net.Dial("tcp", addr("tcp", pDead))
	require.NoError(t, err)
	logged(entry("TCP", "502", "0", "0"))
	c.Close()

	client, err := net.Dial("udp", addr("udp", pUDP))
	require.NoError(t, err)
	defer client.Close()
	_, err = client.Write([]byte("question"))
	require.NoError(t, err)
	logged(entry("UDP", "502", "0", "8"))

	answered, err := net.Dial("udp", addr("udp", pEcho))
	require.NoError(t, err)
	defer answered.Close()
	_, err = answered.Write([]byte("question"))
	require.NoError(t, err)
	logged(entry("UDP", "200", "18", "8"))
	assert.Equal(t, 5, bytes.Count([]byte(out.String()), []byte("\n")), out.String())
}

// TestStreamAccessLogFile: stream-access-log-path naming a file appends
// the lines to it, as nginx's access_log does, opened once and kept while
// the path stays; another path, or stdout again, moves the lines.
func TestStreamAccessLogFile(t *testing.T) {
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rec := streamRecord{proto: match.UDP, port: 53, client: &net.UDPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4444},
		start: start, end: start.Add(time.Second), status: streamOK, sent: 40, received: 4}
	dir := t.TempDir()
	path, other := filepath.Join(dir, "stream.log"), filepath.Join(dir, "other.log")
	require.NoError(t, os.WriteFile(path, []byte("kept\n"), 0o644))
	var out bytes.Buffer
	c := flagsWith(t)
	c.accessLogOut = &out
	c.accessLog = &liveAccessLog{out: &out, format: c.accessLogFormat}
	apply := func(data map[string]string) {
		t.Helper()
		require.Empty(t, applyConfigMap(&c, cmData(data), c.flagsSet))
		requestObserver(c, nil)
		r := rec
		streamAccessLog(c)(&r)
	}
	apply(map[string]string{"stream-access-log-path": path})
	apply(map[string]string{"stream-access-log-path": path, "log-format-stream": "$protocol $status"})
	apply(map[string]string{"stream-access-log-path": other})
	apply(map[string]string{})
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "kept\n[192.0.2.1] [04/Mar/2026:05:06:08 +0000] UDP 200 40 4 1.000\nUDP 200\n", string(b), "appended")
	b, err = os.ReadFile(other)
	require.NoError(t, err)
	assert.Equal(t, "[192.0.2.1] [04/Mar/2026:05:06:08 +0000] UDP 200 40 4 1.000\n", string(b))
	assert.Equal(t, "[192.0.2.1] [04/Mar/2026:05:06:08 +0000] UDP 200 40 4 1.000\n", out.String(), "stdout again")

	// Without a live ConfigMap, the path is followed as well.
	c = flagsWith(t)
	require.Empty(t, applyConfigMap(&c, cmData(map[string]string{"stream-access-log-path": other}), c.flagsSet))
	c.accessLogOut = &out
	r := rec
	streamAccessLog(c)(&r)
	b, err = os.ReadFile(other)
	require.NoError(t, err)
	assert.Equal(t, 2, bytes.Count(b, []byte("\n")))
}
