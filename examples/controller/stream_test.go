package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// streamPort returns a port no listener of proto holds on 127.0.0.1 now.
func streamPort(t testing.TB, proto string) int {
	t.Helper()
	// Below Linux's ephemeral range (32768 and up), so that no listener a
	// test binds on port 0 meanwhile (the controller's -debug-addr) takes
	// it between this check and the controller's bind.
	for range 1000 {
		port := 20000 + int(nextStreamPort.Add(1)%12000)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		if proto == "udp" {
			c, err := net.ListenPacket("udp", addr)
			if err != nil {
				continue
			}
			c.Close()
			return port
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		return port
	}
	t.Fatal("no free port between 20000 and 32000")
	return 0
}

// nextStreamPort walks the ports streamPort hands out, from a random start
// so that test binaries running at once rarely meet.
var nextStreamPort = func() *atomic.Uint32 {
	var n atomic.Uint32
	n.Store(uint32(rand.IntN(12000)))
	return &n
}()

// tcpBackend answers each connection with its name, then echoes every
// line it reads, prefixed with what a PROXY header said (when one came).
type tcpBackend struct {
	name  string
	addr  string
	ln    net.Listener
	proxy bool
	mu    sync.Mutex
	conns int
}

func startTCPBackend(t *testing.T, name string, proxy bool) *tcpBackend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	b := &tcpBackend{name: name, addr: ln.Addr().String(), ln: ln, proxy: proxy}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns++
			b.mu.Unlock()
			go b.serve(c)
		}
	}()
	return b
}

func (b *tcpBackend) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	from := ""
	if b.proxy {
		h, err := proxyproto.Read(br)
		if err != nil {
			fmt.Fprintf(c, "no proxy header: %v\n", err)
			return
		}
		from = h.SourceAddr.String()
	}
	fmt.Fprintf(c, "hello from %s %s\n", b.name, from)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			fmt.Fprintf(c, "%s: %s", b.name, line)
		}
		if err != nil {
			// The client half-closed: one more line says so.
			fmt.Fprintf(c, "%s: bye\n", b.name)
			return
		}
	}
}

func (b *tcpBackend) port() string { _, p, _ := net.SplitHostPort(b.addr); return p }

// streamManifests is a Service "echo" (TCP port 9000, UDP port 53) whose
// endpoints are the given loopback ports, and the services ConfigMaps.
func streamManifests(tcpEntries, udpEntries map[int]string, tcpPorts []string, udpPort string, extra string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec: {ports: [{name: tcp, port: 9000, protocol: TCP}, {name: dns, port: 53, protocol: UDP}]}
`)
	for i, p := range tcpPorts {
		fmt.Fprintf(&b, `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: echo-tcp-%d, namespace: default, labels: {kubernetes.io/service-name: echo}}
addressType: IPv4
ports: [{name: tcp, port: %s, protocol: TCP}]
endpoints: [{addresses: [127.0.0.%d]}]
`, i, p, 1)
	}
	if udpPort != "" {
		fmt.Fprintf(&b, `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: echo-udp, namespace: default, labels: {kubernetes.io/service-name: echo}}
addressType: IPv4
ports: [{name: dns, port: %s, protocol: UDP}]
endpoints: [{addresses: [127.0.0.1]}]
`, udpPort)
	}
	for _, cm := range []struct {
		name    string
		entries map[int]string
	}{{"tcp-services", tcpEntries}, {"udp-services", udpEntries}} {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: ingress-nginx}\ndata:\n", cm.name)
		for port, v := range cm.entries {
			fmt.Fprintf(&b, "  %q: %q\n", strconv.Itoa(port), v)
		}
	}
	b.WriteString(extra)
	return b.String()
}

// startStreams serves manifests offline with the services ConfigMaps.
// The instance is stopped at the test's end unless the test waited for
// it (waited).
func startStreams(t testing.TB, manifests string, tweak func(*config)) (*instance, context.CancelFunc, string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.yaml"), []byte(manifests), 0o644))
	cfg := config{
		manifests:    dir,
		httpAddr:     "127.0.0.1:0",
		debugAddr:    "127.0.0.1:0",
		pollInterval: 20 * time.Millisecond,
	}
	cfg.options.TCPServices = "ingress-nginx/tcp-services"
	cfg.options.UDPServices = "ingress-nginx/udp-services"
	if tweak != nil {
		tweak(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		if !waited[inst] {
			_ = inst.Wait()
		}
	})
	return inst, cancel, dir
}

// waited are the instances a test waited for itself.
var waited = map[*instance]bool{}

func dialLine(t *testing.T, addr string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
	br := bufio.NewReader(c)
	hello, err := br.ReadString('\n')
	require.NoError(t, err)
	return c, br, hello
}

// A TCP service splices both ways, passes a half-close on, and, with
// the entry's PROXY parts, reads the client's header and sends its own.
func TestStreamTCPSplice(t *testing.T) {
	plain := startTCPBackend(t, "plain", false)
	withProxy := startTCPBackend(t, "proxied", true)
	pPlain, pIn, pOut, pBoth := streamPort(t, "tcp"), streamPort(t, "tcp"), streamPort(t, "tcp"), streamPort(t, "tcp")
	extra := fmt.Sprintf(`---
apiVersion: v1
kind: Service
metadata: {name: pp, namespace: default}
spec: {ports: [{port: 9000}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: pp, namespace: default, labels: {kubernetes.io/service-name: pp}}
addressType: IPv4
ports: [{port: %s}]
endpoints: [{addresses: [127.0.0.1]}]
`, withProxy.port())
	m := streamManifests(map[int]string{
		pPlain: "default/echo:9000",
		pIn:    "default/echo:tcp:PROXY",
		pOut:   "default/pp:9000::PROXY",
		pBoth:  "default/pp:9000:PROXY:PROXY",
	}, nil, []string{plain.port()}, "", extra)
	inst, _, _ := startStreams(t, m, nil)
	addr := func(p int) string { return inst.streams.Addrs()["tcp/"+strconv.Itoa(p)] }

	c, br, hello := dialLine(t, addr(pPlain))
	assert.Equal(t, "hello from plain \n", hello)
	fmt.Fprintf(c, "one\n")
	line, _ := br.ReadString('\n')
	assert.Equal(t, "plain: one\n", line)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	line, _ = br.ReadString('\n')
	assert.Equal(t, "plain: bye\n", line, "the half-close reached the backend, whose answer came back")
	c.Close()

	// PROXY from the client: the header is consumed; bytes sent with it
	// are not lost.
	c, err := net.Dial("tcp", addr(pIn))
	require.NoError(t, err)
	hdr := "PROXY TCP4 203.0.113.7 192.0.2.1 4444 80\r\n"
	_, err = io.WriteString(c, hdr+"early\n")
	require.NoError(t, err)
	br = bufio.NewReader(c)
	hello, _ = br.ReadString('\n')
	assert.Equal(t, "hello from plain \n", hello)
	line, _ = br.ReadString('\n')
	assert.Equal(t, "plain: early\n", line)
	c.Close()

	// A client that sends no header on a PROXY port is closed.
	c, err = net.Dial("tcp", addr(pIn))
	require.NoError(t, err)
	io.WriteString(c, "GET / HTTP/1.1\r\n\r\n")
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, err := c.Read(make([]byte, 10))
	assert.Equal(t, 0, n)
	assert.Error(t, err)
	c.Close()

	// PROXY to the backend: it names the client, the peer here.
	c, _, hello = dialLine(t, addr(pOut))
	assert.Regexp(t, `^hello from proxied 127\.0\.0\.1:\d+\n$`, hello)
	c.Close()

	// Both: the backend learns the address the client's header gave.
	c, err = net.Dial("tcp", addr(pBoth))
	require.NoError(t, err)
	io.WriteString(c, hdr)
	br = bufio.NewReader(c)
	hello, _ = br.ReadString('\n')
	assert.Equal(t, "hello from proxied 203.0.113.7:4444\n", hello)
	c.Close()
}

// Dials that fail go on to the next endpoint; a connection counts as in
// flight on its endpoint while open.
func TestStreamTCPRetriesAndInFlight(t *testing.T) {
	live := startTCPBackend(t, "live", false)
	dead := strconv.Itoa(streamPort(t, "tcp"))
	p := streamPort(t, "tcp")
	inst, _, _ := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000"}, nil, []string{dead, live.port()}, "", ""), nil)
	addr := inst.streams.Addrs()["tcp/"+strconv.Itoa(p)]
	var conns []net.Conn
	for range 6 {
		c, _, hello := dialLine(t, addr)
		assert.Equal(t, "hello from live \n", hello)
		conns = append(conns, c)
	}
	assert.Equal(t, int64(6), inst.router.InFlight(live.addr))
	for _, c := range conns {
		c.Close()
	}
	require.Eventually(t, func() bool { return inst.router.InFlight(live.addr) == 0 }, 5*time.Second, 10*time.Millisecond)
}

// proxy-stream-timeout closes a connection idle both ways, not one that
// moves bytes in either direction.
func TestStreamTCPIdleTimeout(t *testing.T) {
	b := startTCPBackend(t, "b", false)
	p := streamPort(t, "tcp")
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata: {proxy-stream-timeout: \"2\"}\n"
	inst, _, _ := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000"}, nil, []string{b.port()}, "", cm), func(c *config) {
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
	})
	addr := inst.streams.Addrs()["tcp/"+strconv.Itoa(p)]

	active, abr, _ := dialLine(t, addr)
	idle, ibr, _ := dialLine(t, addr)
	require.NoError(t, idle.SetDeadline(time.Now().Add(15*time.Second)))
	start := time.Now()
	done := make(chan time.Duration, 1)
	go func() {
		_, err := ibr.ReadString('\n')
		if err != nil {
			done <- time.Since(start)
		}
	}()
	// 4.8 s of traffic, longer than the timeout twice; the 1.7 s between a
	// ping and the timeout leave room for a loaded machine's pauses.
	for range 16 {
		fmt.Fprintf(active, "ping\n")
		_, err := abr.ReadString('\n')
		require.NoError(t, err, "a busy connection is not idle")
		time.Sleep(300 * time.Millisecond)
	}
	select {
	case d := <-done:
		assert.GreaterOrEqual(t, d, 2*time.Second)
		assert.Less(t, d, 4500*time.Millisecond)
	case <-time.After(5 * time.Second):
		t.Fatal("an idle connection stayed open")
	}
	active.Close()
}

// startUDPBackend answers each datagram "<name> <payload>".
func startUDPBackend(t *testing.T, name string) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			c.WriteToUDPAddrPort(append([]byte(name+" "), buf[:n]...), from)
		}
	}()
	_, p, _ := net.SplitHostPort(c.LocalAddr().String())
	return p
}

func udpAsk(t *testing.T, c *net.UDPConn, to *net.UDPAddr, q string) (string, *net.UDPAddr) {
	t.Helper()
	_, err := c.WriteToUDP([]byte(q), to)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(3*time.Second)))
	buf := make([]byte, 2048)
	n, from, err := c.ReadFromUDP(buf)
	require.NoError(t, err)
	return string(buf[:n]), from
}

// A UDP service relays a DNS-like question and its answer, the answer
// coming from the address the question went to; a flood of new client
// addresses stops at the session bound and the sessions idle out.
func TestStreamUDP(t *testing.T) {
	dns := startUDPBackend(t, "dns")
	p := streamPort(t, "udp")
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata: {proxy-stream-timeout: \"1\"}\n"
	inst, _, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, dns, cm), func(c *config) {
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
		c.udpMaxSessions = 16
	})
	relay := inst.streams.udp[int32(p)]
	require.NotNil(t, relay)
	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)

	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()
	for i := range 3 {
		answer, from := udpAsk(t, client, to, "example.com? "+strconv.Itoa(i))
		assert.Equal(t, "dns example.com? "+strconv.Itoa(i), answer)
		assert.Equal(t, to.String(), from.String(), "answers come from the listening address")
	}
	assert.Equal(t, 1, relay.Sessions())

	// The flood: 400 client addresses on 127.0.0.0/8 where the kernel
	// lets a socket bind one, each sending a question.
	sent := 0
	for i := range 400 {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 1, byte(i/250), byte(1+i%250))})
		if err != nil {
			t.Skipf("cannot bind 127.1.x.y: %v", err)
		}
		_, err = c.WriteToUDP([]byte("flood"), to)
		c.Close()
		require.NoError(t, err)
		sent++
		assert.LessOrEqual(t, relay.Sessions(), 16, "the table never exceeds its bound")
	}
	require.Eventually(t, func() bool { return relay.Sessions() == 16 }, 3*time.Second, 10*time.Millisecond)
	// Sessions idle out after proxy-stream-timeout, and a client gets in again.
	require.Eventually(t, func() bool { return relay.Sessions() == 0 }, 5*time.Second, 50*time.Millisecond)
	answer, _ := udpAsk(t, client, to, "after")
	assert.Equal(t, "dns after", answer)
}

// An endpoint rollout: connections opened before it keep their endpoint
// and work on; connections during it all succeed; after it, new ones go
// to the new endpoint. A port added later waits for a restart; one
// removed closes new connections.
func TestStreamTCPRollout(t *testing.T) {
	a := startTCPBackend(t, "a", false)
	b := startTCPBackend(t, "b", false)
	p, added := streamPort(t, "tcp"), streamPort(t, "tcp")
	inst, _, dir := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000"}, nil, []string{a.port()}, "", ""), nil)
	addr := inst.streams.Addrs()["tcp/"+strconv.Itoa(p)]

	type open struct {
		c  net.Conn
		br *bufio.Reader
	}
	var before []open
	for range 5 {
		c, br, hello := dialLine(t, addr)
		require.Equal(t, "hello from a \n", hello)
		require.NoError(t, c.SetDeadline(time.Time{}))
		before = append(before, open{c, br})
	}

	stop := make(chan struct{})
	var failures, dials int
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			dials++
			if err != nil {
				failures++
				continue
			}
			c.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
				failures++
			}
			c.Close()
		}
	})
	writeFile(t, filepath.Join(dir, "app.yaml"), streamManifests(map[int]string{p: "default/echo:9000", added: "default/echo:9000"}, nil, []string{b.port()}, "", ""))
	require.Eventually(t, func() bool {
		c, _, hello := dialLine(t, addr)
		c.Close()
		return hello == "hello from b \n"
	}, 5*time.Second, 20*time.Millisecond)
	close(stop)
	wg.Wait()
	assert.Zero(t, failures, "of %d connections during the rollout", dials)
	for i, o := range before {
		o.c.SetDeadline(time.Now().Add(2 * time.Second))
		fmt.Fprintf(o.c, "still %d\n", i)
		line, err := o.br.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("a: still %d\n", i), line)
		o.c.Close()
	}

	inst.streams.mu.Lock()
	assert.Equal(t, "new", inst.streams.warned[portKey{0, int32(added)}], "a new port warns")
	assert.Nil(t, inst.streams.tcp[int32(added)], "and is not bound until a restart")
	inst.streams.mu.Unlock()

	// The entry goes: its port closes new connections at once.
	writeFile(t, filepath.Join(dir, "app.yaml"), streamManifests(nil, nil, []string{b.port()}, "", ""))
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(time.Second))
		_, err = c.Read(make([]byte, 1))
		return err == io.EOF
	}, 5*time.Second, 20*time.Millisecond)
}

// A port whose entry goes closes new connections at once and serves the
// open ones on for the grace nginx's old workers get after a reload
// (worker-shutdown-timeout), then closes them; the port stays bound.
func TestStreamTCPRemovedPort(t *testing.T) {
	b := startTCPBackend(t, "b", false)
	p := streamPort(t, "tcp")
	inst, _, dir := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000"}, nil, []string{b.port()}, "", ""), nil)
	inst.streams.mu.Lock()
	inst.streams.goneGrace = 500 * time.Millisecond
	inst.streams.mu.Unlock()
	addr := inst.streams.Addrs()["tcp/"+strconv.Itoa(p)]
	c, br, _ := dialLine(t, addr)
	defer c.Close()

	writeFile(t, filepath.Join(dir, "app.yaml"), streamManifests(nil, nil, []string{b.port()}, "", ""))
	require.Eventually(t, func() bool {
		inst.streams.mu.Lock()
		defer inst.streams.mu.Unlock()
		return inst.streams.warned[portKey{match.TCP, int32(p)}] == "gone"
	}, 5*time.Second, 10*time.Millisecond)
	gone := time.Now()
	fmt.Fprintf(c, "after\n")
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "b: after\n", line, "the open connection is served on")

	n, err := net.Dial("tcp", addr)
	require.NoError(t, err, "the port stays bound")
	n.SetReadDeadline(time.Now().Add(time.Second))
	_, err = n.Read(make([]byte, 1))
	assert.Equal(t, io.EOF, err, "a new connection is closed at once")
	n.Close()

	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = br.ReadString('\n')
	require.Error(t, err)
	assert.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the open connection is closed when the grace runs out")
	assert.GreaterOrEqual(t, time.Since(gone), 400*time.Millisecond)
}

// On shutdown the listeners stop accepting; an open connection finishes
// on its own within the shutdown timeout, one that does not is closed
// when it runs out.
func TestStreamDrain(t *testing.T) {
	b := startTCPBackend(t, "b", false)
	p := streamPort(t, "tcp")
	inst, cancel, _ := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000"}, nil, []string{b.port()}, "", ""), func(c *config) {
		c.shutdownTimeout = 3 * time.Second
	})
	addr := inst.streams.Addrs()["tcp/"+strconv.Itoa(p)]
	c, br, _ := dialLine(t, addr)
	cancel()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 2*time.Second, 10*time.Millisecond, "the listener closes")
	fmt.Fprintf(c, "during\n")
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "b: during\n", line, "the open connection is served on")
	began := time.Now()
	first := c
	go func() {
		time.Sleep(200 * time.Millisecond)
		first.Close()
	}()
	waited[inst] = true
	require.NoError(t, inst.Wait())
	assert.Less(t, time.Since(began), 2*time.Second, "shutdown ends once the connection does")

	// A connection that outlives the timeout is closed.
	inst2, cancel2, _ := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000"}, nil, []string{b.port()}, "", ""), func(c *config) {
		c.shutdownTimeout = 500 * time.Millisecond
	})
	c, br, _ = dialLine(t, inst2.streams.Addrs()["tcp/"+strconv.Itoa(p)])
	cancel2()
	waited[inst2] = true
	err = inst2.Wait()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 TCP connections and 0 UDP sessions were still open")
	_, err = br.ReadString('\n')
	assert.Error(t, err, "closed at the timeout")
	c.Close()
}

// The stream series count connections, bytes both ways and errors per
// service.
func TestStreamMetrics(t *testing.T) {
	b := startTCPBackend(t, "b", false)
	p, missing := streamPort(t, "tcp"), streamPort(t, "tcp")
	inst, _, _ := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000", missing: "default/nothing:1"}, nil, []string{b.port()}, "", ""), func(c *config) {
		c.enableMetrics = true
	})
	c, br, _ := dialLine(t, inst.streams.Addrs()["tcp/"+strconv.Itoa(p)])
	fmt.Fprintf(c, "12345\n")
	_, err := br.ReadString('\n')
	require.NoError(t, err)
	c.Close()
	c, err = net.Dial("tcp", inst.streams.Addrs()["tcp/"+strconv.Itoa(missing)])
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = c.Read(make([]byte, 1))
	assert.Error(t, err, "a missing Service's connections are closed")
	c.Close()

	labels := fmt.Sprintf(`namespace="default",port="%d",protocol="tcp",service="echo"`, p)
	var body string
	require.Eventually(t, func() bool {
		resp, err := httpGet("http://" + inst.DebugAddr + "/metrics")
		if err != nil {
			return false
		}
		body = resp
		return strings.Contains(body, `ramjet_stream_bytes_total{controller_class="ramjet.dev/ingress",controller_namespace="",controller_pod="",direction="in",`+labels+`} 6`) &&
			strings.Contains(body, `ramjet_stream_active_connections{controller_class="ramjet.dev/ingress",controller_namespace="",controller_pod="",`+labels+`} 0`)
	}, 5*time.Second, 20*time.Millisecond, "metrics:\n%s", body)
	assert.Contains(t, body, `ramjet_stream_connections_total{controller_class="ramjet.dev/ingress",controller_namespace="",controller_pod="",`+labels+`} 1`)
	assert.Regexp(t, `ramjet_stream_bytes_total\{[^}]*direction="out",`+labels+`\} \d+`, body)
	assert.Contains(t, body, fmt.Sprintf(`ramjet_stream_errors_total{controller_class="ramjet.dev/ingress",controller_namespace="",controller_pod="",namespace="default",port="%d",protocol="tcp",reason="no_endpoint",service="nothing"} 1`, missing))
}

func httpGet(url string) (string, error) {
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// A removed TCP port's open connections are served on for
// worker-shutdown-timeout, as long as nginx's old workers serve theirs
// after the reload that drops the port; unset, its 240 s.
func TestStreamGoneGraceFollowsShutdownTimeout(t *testing.T) {
	var c config
	assert.Equal(t, 240*time.Second, newStreams(c, nil, slog.Default(), nil).goneGrace)
	c.routerKeys, _ = configmap.Parse("ingress", "nginx", map[string]string{"worker-shutdown-timeout": "30s"})
	assert.Equal(t, 30*time.Second, newStreams(c, nil, slog.Default(), nil).goneGrace)
}

// nginx's stub_status, which ingress-nginx's nginx status collector
// reads, counts every connection its event loop accepts, stream ones
// too (ngx_event_accept; ngx_event_recvmsg for a UDP session), as active
// and, being no HTTP request's, as waiting until it closes: the
// nginx_process_connections series count TCP connections and UDP
// exchanges beside the HTTP ones.
func TestStreamConnectionsInNginxStatus(t *testing.T) {
	b := startTCPBackend(t, "b", false)
	dns := startUDPBackend(t, "dns")
	tp, up := streamPort(t, "tcp"), streamPort(t, "udp")
	inst, _, _ := startStreams(t, streamManifests(map[int]string{tp: "default/echo:9000"}, map[int]string{up: "default/echo:53"}, []string{b.port()}, dns, ""), func(c *config) {
		c.enableMetrics = true
	})
	series := func(name, state string) string {
		return `nginx_ingress_controller_nginx_process_` + name + `{controller_class="ramjet.dev/ingress",controller_namespace="",controller_pod="",state="` + state + `"} `
	}
	waitFor := func(want ...string) {
		t.Helper()
		var body string
		require.Eventually(t, func() bool {
			body, _ = httpGet("http://" + inst.DebugAddr + "/metrics")
			for _, w := range want {
				if !strings.Contains(body, w) {
					return false
				}
			}
			return true
		}, 5*time.Second, 20*time.Millisecond, "want %q in:\n%s", want, body)
	}

	c, _, _ := dialLine(t, inst.streams.Addrs()["tcp/"+strconv.Itoa(tp)])
	defer c.Close()
	waitFor(series("connections", "active")+"1", series("connections", "waiting")+"1", series("connections_total", "accepted")+"1")
	c.Close()
	waitFor(series("connections", "active")+"0", series("connections_total", "accepted")+"1")

	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(up)])
	require.NoError(t, err)
	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()
	answer, _ := udpAsk(t, client, to, "q")
	assert.Equal(t, "dns q", answer)
	waitFor(series("connections", "active")+"0", series("connections_total", "accepted")+"2", series("connections_total", "handled")+"2")
}

// A connection waiting for its client's PROXY header is balanced once
// the header came, among the endpoints then served: nginx reads the
// header as the connection starts and picks the peer only when its
// proxy module connects, so an endpoint a rollout removed meanwhile is
// not dialled.
func TestStreamProxyHeaderWaitBalancesAfter(t *testing.T) {
	a := startTCPBackend(t, "a", false)
	b := startTCPBackend(t, "b", false)
	p := streamPort(t, "tcp")
	inst, _, dir := startStreams(t, streamManifests(map[int]string{p: "default/echo:9000:PROXY"}, nil, []string{a.port()}, "", ""), nil)
	addr := inst.streams.Addrs()["tcp/"+strconv.Itoa(p)]
	header := "PROXY TCP4 203.0.113.7 127.0.0.1 4444 " + strconv.Itoa(p) + "\r\n"
	greeting := func(c net.Conn) string {
		t.Helper()
		require.NoError(t, c.SetDeadline(time.Now().Add(5*time.Second)))
		_, err := io.WriteString(c, header)
		require.NoError(t, err)
		hello, err := bufio.NewReader(c).ReadString('\n')
		require.NoError(t, err)
		return hello
	}

	waiting, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	defer waiting.Close()
	writeFile(t, filepath.Join(dir, "app.yaml"), streamManifests(map[int]string{p: "default/echo:9000:PROXY"}, nil, []string{b.port()}, "", ""))
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			return false
		}
		defer c.Close()
		return greeting(c) == "hello from b \n"
	}, 5*time.Second, 20*time.Millisecond, "the rollout is served")
	assert.Equal(t, "hello from b \n", greeting(waiting), "the waiting connection goes to the endpoint served when its header came")
}
