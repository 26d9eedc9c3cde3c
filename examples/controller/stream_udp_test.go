package main

import (
	"bytes"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// A burst of datagrams from one client, sent without waiting, is relayed
// whole (read and written in batches): each question reaches the backend
// once and intact, a 30000-byte one too, and each answer comes back,
// one longer than the answer buffer cut to it.
func TestStreamUDPBurst(t *testing.T) {
	echo, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { echo.Close() })
	_ = echo.SetReadBuffer(4 << 20)
	got := make(chan int, 256)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, from, err := echo.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			got <- n
			echo.WriteToUDPAddrPort(buf[:n], from)
		}
	}()
	_, port, _ := net.SplitHostPort(echo.LocalAddr().String())
	p := streamPort(t, "udp")
	// A short proxy-stream-timeout lets the session end before the
	// controller's shutdown runs out.
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata: {proxy-stream-timeout: \"1\"}\n"
	inst, _, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, port, cm), func(c *config) {
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
	})
	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)

	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()
	_ = client.SetReadBuffer(4 << 20)
	const n = 64
	question := func(i int) []byte {
		if i == 10 {
			return bytes.Repeat([]byte{'x'}, 30000)
		}
		return []byte("question " + strconv.Itoa(i))
	}
	for i := range n {
		_, err := client.WriteToUDP(question(i), to)
		require.NoError(t, err)
	}
	answers := make(map[string]int)
	buf := make([]byte, 64<<10)
	for range n {
		require.NoError(t, client.SetReadDeadline(time.Now().Add(5*time.Second)))
		m, from, err := client.ReadFromUDP(buf)
		require.NoError(t, err, "answers so far: %d", len(answers))
		assert.Equal(t, to.String(), from.String())
		answers[string(buf[:m])]++
	}
	for i := range n {
		q := question(i)
		if len(q) > udpBufferSize {
			q = q[:udpBufferSize]
		}
		assert.Equal(t, 1, answers[string(q)], "answer %d", i)
	}
	sizes := 0
	for range n {
		if <-got == 30000 {
			sizes++
		}
	}
	assert.Equal(t, 1, sizes, "the long question reached the backend whole")
}

// On shutdown a UDP session with no exchange in progress ends at once, as
// nginx's UDP session ends with its answers: a client that asked a minute
// ago does not hold the shutdown for proxy-stream-timeout (600s) and fail
// it at the shutdown timeout.
func TestStreamUDPDrainEndsAnsweredSessions(t *testing.T) {
	dns := startUDPBackend(t, "dns")
	p := streamPort(t, "udp")
	inst, cancel, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, dns, ""), func(c *config) {
		c.shutdownTimeout = 3 * time.Second
	})
	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)
	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()
	answer, _ := udpAsk(t, client, to, "q")
	require.Equal(t, "dns q", answer)

	began := time.Now()
	cancel()
	waited[inst] = true
	require.NoError(t, inst.Wait())
	assert.Less(t, time.Since(began), 2*time.Second)
}
