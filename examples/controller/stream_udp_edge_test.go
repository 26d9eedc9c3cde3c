package main

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// With the listeners on every address (the deployment's --http-addr=:8080),
// a UDP service's answer comes from the address the client sent its
// datagram to: a connected UDP client (every DNS stub resolver) drops a
// datagram from any other source. Here the client asks 127.0.0.2, one of
// the host's addresses, which is not the source the kernel would pick.
func TestUDPAnswerFromAddressAsked(t *testing.T) {
	dns := startUDPBackend(t, "dns")
	p := streamPort(t, "udp")
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata: {proxy-stream-timeout: \"1\"}\n"
	inst, _, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, dns, cm), func(c *config) {
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
		c.httpAddr = ":0" // every address, as deploy/deployment.yaml's :8080
	})
	t.Logf("udp service bound at %s", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])

	// An unconnected socket shows where the answer came from.
	probe, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer probe.Close()
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: p}
	_, err = probe.WriteToUDP([]byte("q1"), to)
	require.NoError(t, err)
	buf := make([]byte, 2048)
	require.NoError(t, probe.SetReadDeadline(time.Now().Add(3*time.Second)))
	n, from, err := probe.ReadFromUDP(buf)
	require.NoError(t, err)
	t.Logf("asked %s, answer %q came from %s", to, buf[:n], from)

	// A connected client, as a stub resolver.
	c, err := net.DialUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)}, to)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("q2"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(2*time.Second)))
	n, err = c.Read(buf)
	require.NoError(t, err, "a connected client asking %s got no answer", to)
	require.Equal(t, "dns q2", string(buf[:n]))
	require.Equal(t, to.String(), from.String(), "the answer's source address")
}

// A UDP client that asks again from the same address (a resolver's
// retry, a forwarder's fixed socket) while its exchange waits on an
// endpoint that never answers is moved to another endpoint once the
// exchange has gone unanswered for proxy-stream-timeout: the endpoint may
// have left the table, or be silent. Here the only endpoint is a dead
// port; the Service then moves to a live one, and the client, asking
// every 100 ms, is answered within a few seconds (proxy-stream-timeout
// 1 s).
func TestUDPExchangeMovesOffSilentEndpoint(t *testing.T) {
	// A port nobody answers on.
	deadConn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	_, dead, _ := net.SplitHostPort(deadConn.LocalAddr().String())
	deadConn.Close()
	live := startUDPBackend(t, "live")

	p := streamPort(t, "udp")
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata: {proxy-stream-timeout: \"1\"}\n"
	inst, _, dir := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, dead, cm), func(c *config) {
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
	})
	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)
	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()

	answered := make(chan string, 100)
	go func() {
		buf := make([]byte, 2048)
		for {
			n, _, err := client.ReadFromUDP(buf)
			if err != nil {
				return
			}
			answered <- string(buf[:n])
		}
	}()
	ask := func(d time.Duration) (got []string) {
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			_, err := client.WriteToUDP([]byte("q"), to)
			require.NoError(t, err)
			time.Sleep(100 * time.Millisecond)
		}
		for {
			select {
			case a := <-answered:
				got = append(got, a)
			default:
				return got
			}
		}
	}
	require.Empty(t, ask(300*time.Millisecond), "the dead endpoint answers nothing")

	// The Service's endpoint moves to the live backend.
	writeFile(t, filepath.Join(dir, "app.yaml"), streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, live, cm))
	// A fresh client address (a new socket each try: an address that
	// asked before the move is stuck itself) is answered by the live one.
	require.Eventually(t, func() bool {
		other, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			return false
		}
		defer other.Close()
		_, _ = other.WriteToUDP([]byte("fresh"), to)
		_ = other.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 100)
		n, _, err := other.ReadFromUDP(buf)
		return err == nil && string(buf[:n]) == "live fresh"
	}, 3*time.Second, 10*time.Millisecond, "the table moved to the live endpoint")

	got := ask(3 * time.Second)
	assert.NotEmpty(t, got, "the retrying client was never answered in 3 s after its endpoint left the table (proxy-stream-timeout 1 s)")
}

// An endpoint that refuses a UDP exchange (ICMP port unreachable: the pod
// is there, its server is not) ends the exchange at once, as nginx's
// session ends on the error its connected upstream socket reads, so that
// the client's next datagram is balanced anew; it is not held on the
// refusing endpoint for proxy-stream-timeout (600 s). Here one of the
// Service's two endpoints refuses, and a client asking again and again
// from one address is answered about every other time.
func TestUDPRefusedExchangeEndsAtOnce(t *testing.T) {
	deadConn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	_, dead, _ := net.SplitHostPort(deadConn.LocalAddr().String())
	deadConn.Close()
	live := startUDPBackend(t, "live")

	p := streamPort(t, "udp")
	second := "---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n" +
		"metadata: {name: echo-udp-2, namespace: default, labels: {kubernetes.io/service-name: echo}}\n" +
		"addressType: IPv4\nports: [{name: dns, port: " + live + ", protocol: UDP}]\nendpoints: [{addresses: [127.0.0.1]}]\n"
	inst, _, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, dead, second), func(c *config) {
		c.shutdownTimeout = 500 * time.Millisecond // an exchange left waiting
	})
	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)
	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()

	answered := 0
	buf := make([]byte, 2048)
	for i := range 10 {
		_, err := client.WriteToUDP([]byte("q"+strconv.Itoa(i)), to)
		require.NoError(t, err)
		require.NoError(t, client.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
		if n, _, err := client.ReadFromUDP(buf); err == nil && strings.HasPrefix(string(buf[:n]), "live ") {
			answered++
		}
	}
	assert.GreaterOrEqual(t, answered, 4, "of 10 questions from one address, with one of two endpoints refusing")
}
