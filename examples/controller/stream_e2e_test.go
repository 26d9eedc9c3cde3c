package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStreamE2E serves a TCP service from --tcp-services-configmap against
// a real API server: an endpoint change sends new connections to the new
// endpoint while one opened before keeps its own (SPEC §22).
func TestStreamE2E(t *testing.T) {
	e := startE2E(t)
	ns := e.namespace(t, "streams")
	ctx := context.Background()
	a := startTCPBackend(t, "a", false)
	b := startTCPBackend(t, "b", false)
	listen := streamPort(t, "tcp")

	_, err := e.client.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "db", Port: 5432, Protocol: corev1.ProtocolTCP}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	slice := newSlice(ns, "db", "db-1", backendPort(t, a.port()))
	name := "db"
	slice.Ports[0].Name = &name
	_, err = e.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = e.client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tcp-services"},
		Data:       map[string]string{strconv.Itoa(listen): ns + "/db:5432"},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	tc := e.startController(t, ns, func(c *config) {
		c.options.TCPServices = ns + "/tcp-services"
		c.streamEndpoint = func(addr string) string {
			host, port, _ := net.SplitHostPort(addr)
			if host != testEndpoint {
				return "0.0.0.0:0" // never a test endpoint: refused
			}
			return net.JoinHostPort("127.0.0.1", port)
		}
	})
	addr := tc.streams.Addrs()["tcp/"+strconv.Itoa(listen)]
	require.NotEmpty(t, addr, "the port is bound at the first table")
	hello := func() (net.Conn, *bufio.Reader, string) {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		line, _ := br.ReadString('\n')
		return c, br, line
	}
	old, oldReader, line := hello()
	require.Equal(t, "hello from a \n", line)

	// The endpoint moves to b's port.
	cur, err := e.client.DiscoveryV1().EndpointSlices(ns).Get(ctx, "db-1", metav1.GetOptions{})
	require.NoError(t, err)
	port := backendPort(t, b.port())
	cur.Ports = []discoveryv1.EndpointPort{{Name: &name, Port: &port, Protocol: cur.Ports[0].Protocol}}
	_, err = e.client.DiscoveryV1().EndpointSlices(ns).Update(ctx, cur, metav1.UpdateOptions{})
	require.NoError(t, err)
	var last string
	waitFor(t, 10*time.Second, "new connections to reach the new endpoint", func() bool {
		c, _, line := hello()
		c.Close()
		last = line
		return line == "hello from b \n"
	}, func() string { return "last greeting " + strings.TrimSpace(last) })
	for range 5 {
		c, _, line := hello()
		assert.Equal(t, "hello from b \n", line)
		c.Close()
	}
	fmt.Fprintf(old, "still there\n")
	line, err = oldReader.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "a: still there\n", line, "the connection opened before keeps its endpoint")
	old.Close()
}
