package main

import (
	"bytes"
	"net"
	"strconv"
	"sync/atomic"
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

// On shutdown nginx closes the listening sockets at once and a UDP session
// still waiting for answers ends at its next event, the answer that comes
// dropped ("disconnected on shutdown", ngx_stream_proxy_process: the
// session's socket to the client is the closed listening one), else at
// proxy-stream-timeout or the shutdown timeout. So here: the client's
// next datagram is not relayed, the slow answer is not sent on, and the
// shutdown ends as it comes, before its timeout.
func TestStreamUDPShutdownEndsExchangeAtNextEvent(t *testing.T) {
	backend, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { backend.Close() })
	var got atomic.Int32
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := backend.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			got.Add(1)
			q := append([]byte("slow "), buf[:n]...)
			time.AfterFunc(600*time.Millisecond, func() { backend.WriteToUDPAddrPort(q, from) })
		}
	}()
	_, port, _ := net.SplitHostPort(backend.LocalAddr().String())
	p := streamPort(t, "udp")
	inst, cancel, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, port, ""), func(c *config) {
		c.shutdownTimeout = 5 * time.Second
	})
	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)
	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()
	_, err = client.WriteToUDP([]byte("q1"), to)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return got.Load() == 1 }, 2*time.Second, 5*time.Millisecond)

	began := time.Now()
	cancel()
	waited[inst] = true
	done := make(chan error, 1)
	go func() { done <- inst.Wait() }()
	time.Sleep(100 * time.Millisecond)
	_, _ = client.WriteToUDP([]byte("q2"), to)
	require.NoError(t, client.SetReadDeadline(time.Now().Add(1500*time.Millisecond)))
	n, _, err := client.ReadFromUDP(make([]byte, 100))
	assert.Error(t, err, "no answer is sent on once the shutdown began (got %d bytes)", n)
	select {
	case err := <-done:
		require.NoError(t, err)
		assert.Less(t, time.Since(began), 3*time.Second, "the session ended as its answer came")
	case <-time.After(4 * time.Second):
		t.Fatal("the shutdown waits for its timeout")
	}
	assert.Equal(t, int32(1), got.Load(), "the datagram sent after the shutdown began is not relayed")
}
