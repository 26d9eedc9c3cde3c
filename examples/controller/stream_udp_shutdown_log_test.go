package main

import (
	"net"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A UDP exchange still waiting for its answer when the shutdown timeout
// runs out is logged 200, as nginx logs the session its
// worker_shutdown_timeout ends ("shutdown timeout", NGX_STREAM_OK), not
// 502, which is an exchange that timed out short of its answers.
func TestStreamUDPCutByShutdownLogged200(t *testing.T) {
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	got := make(chan struct{}, 1)
	go func() {
		buf := make([]byte, 512)
		for {
			if _, _, err := silent.ReadFromUDP(buf); err != nil {
				return
			}
			select {
			case got <- struct{}{}:
			default:
			}
		}
	}()
	_, port, _ := net.SplitHostPort(silent.LocalAddr().String())
	p := streamPort(t, "udp")
	var out syncBuffer
	inst, cancel, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, port, ""), func(c *config) {
		c.enableAccessLog, c.accessLogOut = true, &out
		c.shutdownTimeout = 300 * time.Millisecond
	})
	client, err := net.Dial("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)
	defer client.Close()
	_, err = client.Write([]byte("question"))
	require.NoError(t, err)
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the datagram was not relayed")
	}

	cancel()
	waited[inst] = true
	_ = inst.Wait() // an error: the exchange was still open
	assert.Regexp(t, regexp.MustCompile(`(?m)^\[127\.0\.0\.1\] \S+ \S+\] UDP 200 0 8 `), out.String())
	assert.NotContains(t, out.String(), " 502 ")
}
