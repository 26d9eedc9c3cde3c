package main

import (
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// An EndpointSlice port of protocol UDP (a udp-services ConfigMap's
// backend) gets a UDP echo server, so the offline walkthrough's UDP
// service answers; a TCP server on that port would leave every datagram
// unanswered.
func TestDemoBackendsEchoUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	port := pc.LocalAddr().(*net.UDPAddr).Port
	require.NoError(t, pc.Close())

	s := slice("data", "dns", discoveryv1.AddressTypeIPv4, []int32{int32(port)}, "127.0.0.1")
	udp := corev1.ProtocolUDP
	s.Ports[0].Protocol = &udp
	d := newDemoBackends(slog.New(slog.DiscardHandler))
	defer d.close()
	require.NoError(t, d.ensure([]*discoveryv1.EndpointSlice{s}))

	addr := "127.0.0.1:" + strconv.Itoa(port)
	c, err := net.Dial("udp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("ping"))
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	buf := make([]byte, 1024)
	n, err := c.Read(buf)
	require.NoError(t, err, "the UDP endpoint answers")
	require.Equal(t, "service:  data/dns\nendpoint: udp/"+addr+"\nping", string(buf[:n]))

	// The port stays free for TCP: nothing listens there but the UDP echo.
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "no TCP echo server on a UDP-only port")
	ln.Close()

	// A reload that renames the Service relabels the running echo.
	s2 := slice("data", "dns-v2", discoveryv1.AddressTypeIPv4, []int32{int32(port)}, "127.0.0.1")
	s2.Ports[0].Protocol = &udp
	require.NoError(t, d.ensure([]*discoveryv1.EndpointSlice{s2}))
	_, err = c.Write([]byte("again"))
	require.NoError(t, err)
	n, err = c.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "service:  data/dns-v2\nendpoint: udp/"+addr+"\nagain", string(buf[:n]))
}
