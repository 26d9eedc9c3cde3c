package main

import (
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

// relayDatagram hands the relay's session s one client datagram from
// client, as the relay's read loop does once it looked s up.
func relayDatagram(r *udpRelay, s *udpSession, client netip.AddrPort, data string) {
	b := newUDPBatch(2048)
	b.n, b.lens[0], b.addrs[0] = 1, copy(b.bufs[0], data), client
	s.send(b, 0, 1, time.Now().UnixNano(), newUDPOut())
}

// A datagram the relay looked up its session for just as the session
// idled out (its answer loop ended it meanwhile) starts no exchange on
// the ended session: one would hold its endpoint in flight for ever, the
// count shared with the HTTP requests to that address (least_conn).
func TestUDPSessionEndedTakesNoExchange(t *testing.T) {
	dns := startUDPBackend(t, "dns")
	p := streamPort(t, "udp")
	inst, _, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, dns, ""), nil)
	relay := inst.streams.udp[int32(p)]
	require.NotNil(t, relay)
	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)
	client, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer client.Close()
	answer, _ := udpAsk(t, client, to, "q")
	require.Equal(t, "dns q", answer)

	from := client.LocalAddr().(*net.UDPAddr).AddrPort()
	relay.mu.Lock()
	s := relay.sessions[from]
	relay.mu.Unlock()
	require.NotNil(t, s)
	// The session ends as an idle one does: its answer loop returns.
	s.up.conn.Close()
	require.Eventually(t, func() bool { return relay.Sessions() == 0 }, 2*time.Second, 5*time.Millisecond)

	relayDatagram(relay, s, from, "late")
	endpoint := "127.0.0.1:" + dns
	assert.Zero(t, inst.router.InFlight(endpoint), "an exchange began on the ended session")
	s.mu.Lock()
	assert.False(t, s.active)
	s.mu.Unlock()
}

// A UDP port's session table full of sessions whose exchanges were
// answered takes a new client in place of one of them: nginx's UDP
// session ends with its proxy-stream-responses answers, so what it holds
// is the exchanges in progress, not every client of the last
// proxy-stream-timeout (600s: with -udp-max-sessions 1024, a DNS service
// would drop the 1025th client of any ten minutes). A new client is
// dropped only when every session has an exchange in progress.
func TestUDPFullTableTakesNewClientsInPlaceOfAnswered(t *testing.T) {
	// Answers every datagram but those starting "silent".
	backend, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	t.Cleanup(func() { backend.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := backend.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if !strings.HasPrefix(string(buf[:n]), "silent") {
				backend.WriteToUDPAddrPort(append([]byte("dns "), buf[:n]...), from)
			}
		}
	}()
	_, port, _ := net.SplitHostPort(backend.LocalAddr().String())
	p := streamPort(t, "udp")
	cm := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: ingress-nginx}\ndata: {proxy-stream-timeout: \"20\"}\n"
	inst, _, _ := startStreams(t, streamManifests(nil, map[int]string{p: "default/echo:53"}, nil, port, cm), func(c *config) {
		c.configMap = &types.NamespacedName{Namespace: "ingress-nginx", Name: "cfg"}
		c.udpMaxSessions = 2
		c.shutdownTimeout = time.Second // the silent exchanges are cut then
	})
	relay := inst.streams.udp[int32(p)]
	require.NotNil(t, relay)
	to, err := net.ResolveUDPAddr("udp", inst.streams.Addrs()["udp/"+strconv.Itoa(p)])
	require.NoError(t, err)
	client := func() *net.UDPConn {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}

	for i := range 5 {
		q := "q" + strconv.Itoa(i)
		answer, _ := udpAsk(t, client(), to, q)
		assert.Equal(t, "dns "+q, answer, "client %d", i)
		assert.LessOrEqual(t, relay.Sessions(), 2)
	}

	// Two exchanges in progress fill the table: a new client waits.
	for range 2 {
		_, err := client().WriteToUDP([]byte("silent"), to)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		relay.mu.Lock()
		defer relay.mu.Unlock()
		busy := 0
		for _, s := range relay.sessions {
			s.mu.Lock()
			if s.active {
				busy++
			}
			s.mu.Unlock()
		}
		return busy == 2
	}, 2*time.Second, 5*time.Millisecond)
	late := client()
	_, err = late.WriteToUDP([]byte("late"), to)
	require.NoError(t, err)
	require.NoError(t, late.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	_, _, err = late.ReadFromUDP(make([]byte, 100))
	assert.Error(t, err, "a client beyond the sessions with exchanges in progress is dropped")
	assert.Equal(t, 2, relay.Sessions())
}
