package main

import (
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
