package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// demoBackends runs one echo server per loopback endpoint named by the
// loaded EndpointSlices, so the demo manifests answer without a cluster.
// Only 127.0.0.0/8 addresses are served: an endpoint anywhere else belongs
// to something real and is left alone.
type demoBackends struct {
	log *slog.Logger

	mu      sync.Mutex
	servers map[netip.AddrPort]*echoServer
	udp     map[netip.AddrPort]*udpEcho
	closed  bool
}

// udpEcho answers each datagram with the service and endpoint it reached
// and then the datagram itself.
type udpEcho struct {
	conn     net.PacketConn
	services atomic.Pointer[string]
}

type echoServer struct {
	srv *http.Server
	// services names what the current manifests route to this address
	// ("demo/api"); replaced on every reload.
	services atomic.Pointer[string]
}

func newDemoBackends(log *slog.Logger) *demoBackends {
	return &demoBackends{log: log, servers: make(map[netip.AddrPort]*echoServer), udp: make(map[netip.AddrPort]*udpEcho)}
}

// demoEndpoints maps each loopback endpoint address in slices to the
// sorted Services ("namespace/name") whose slices list it, for the ports
// of protocol TCP (the default).
func demoEndpoints(endpointSlices []*discoveryv1.EndpointSlice) map[netip.AddrPort][]string {
	return demoEndpointsOf(endpointSlices, corev1.ProtocolTCP)
}

// demoEndpointsOf is demoEndpoints for the slice ports of protocol proto.
func demoEndpointsOf(endpointSlices []*discoveryv1.EndpointSlice, proto corev1.Protocol) map[netip.AddrPort][]string {
	out := make(map[netip.AddrPort][]string)
	for _, s := range endpointSlices {
		if s == nil || s.AddressType == discoveryv1.AddressTypeFQDN {
			continue
		}
		svc := s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				addr, err := netip.ParseAddr(a)
				if err != nil || !addr.Is4() || !addr.IsLoopback() {
					continue
				}
				for _, p := range s.Ports {
					if p.Port == nil || *p.Port < 1 || *p.Port > 65535 {
						continue
					}
					pp := corev1.ProtocolTCP
					if p.Protocol != nil && *p.Protocol != "" {
						pp = *p.Protocol
					}
					if pp != proto {
						continue
					}
					ap := netip.AddrPortFrom(addr, uint16(*p.Port))
					if !slices.Contains(out[ap], svc) {
						out[ap] = append(out[ap], svc)
					}
				}
			}
		}
	}
	for _, svcs := range out {
		slices.Sort(svcs)
	}
	return out
}

// ensure starts an echo server for every loopback endpoint in slices that
// has none yet and relabels the running ones. Servers for endpoints that
// disappeared keep running: nothing routes to them any more, and an edit
// that brings the endpoint back finds it already listening. An endpoint
// it cannot listen on (another process has the port) is an error, every
// such endpoint named: the demo would proxy into that process, so the
// caller publishes nothing (the controller does not start, or a reload
// keeps the table it serves).
func (d *demoBackends) ensure(endpointSlices []*discoveryv1.EndpointSlice) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	var errs []error
	wanted := demoEndpoints(endpointSlices)
	for _, ap := range slices.SortedFunc(maps.Keys(wanted), netip.AddrPort.Compare) {
		names := strings.Join(wanted[ap], ", ")
		if es, ok := d.servers[ap]; ok {
			es.services.Store(&names)
			continue
		}
		ln, err := net.Listen("tcp", ap.String())
		if err != nil {
			errs = append(errs, fmt.Errorf("-demo-backends: cannot start the echo server of %s on %s (%w); requests for it would reach whatever else listens there: stop that process or change the EndpointSlice's port", names, ap, err))
			continue
		}
		es := &echoServer{}
		es.services.Store(&names)
		es.srv = &http.Server{Handler: echoHandler(ap.String(), &es.services), ReadHeaderTimeout: 10 * time.Second}
		d.servers[ap] = es
		go func() {
			if err := es.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				d.log.Warn("demo backend stopped", "endpoint", ap.String(), "err", err)
			}
		}()
		d.log.Info("demo backend listening", "endpoint", ap.String(), "service", names)
	}
	udpWanted := demoEndpointsOf(endpointSlices, corev1.ProtocolUDP)
	for _, ap := range slices.SortedFunc(maps.Keys(udpWanted), netip.AddrPort.Compare) {
		names := strings.Join(udpWanted[ap], ", ")
		if ue, ok := d.udp[ap]; ok {
			ue.services.Store(&names)
			continue
		}
		pc, err := net.ListenPacket("udp", ap.String())
		if err != nil {
			errs = append(errs, fmt.Errorf("-demo-backends: cannot start the UDP echo server of %s on %s (%w); datagrams for it would reach whatever else listens there: stop that process or change the EndpointSlice's port", names, ap, err))
			continue
		}
		ue := &udpEcho{conn: pc}
		ue.services.Store(&names)
		d.udp[ap] = ue
		go ue.serve("udp/" + ap.String())
		d.log.Info("demo backend listening", "endpoint", "udp/"+ap.String(), "service", names)
	}
	return errors.Join(errs...)
}

func (u *udpEcho) serve(endpoint string) {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := u.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		reply := fmt.Appendf(nil, "service:  %s\nendpoint: %s\n", *u.services.Load(), endpoint)
		_, _ = u.conn.WriteTo(append(reply, buf[:n]...), from)
	}
}

// close stops every echo server.
func (d *demoBackends) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), defaultShutdownTimeout)
	defer cancel()
	for _, es := range d.servers {
		if err := es.srv.Shutdown(ctx); err != nil {
			es.srv.Close()
		}
	}
	for _, ue := range d.udp {
		ue.conn.Close()
	}
}

// echoHandler answers with what a backend behind ramjet receives: the
// request-target byte for byte, the Host, and every header as it arrived
// (the client's and those the router added), sorted by name, values in
// order; then the body's length. The X-Demo-* response headers name the
// answering service and endpoint for scripts.
func echoHandler(endpoint string, services *atomic.Pointer[string]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		svc := *services.Load()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Demo-Service", svc)
		w.Header().Set("X-Demo-Endpoint", endpoint)
		var b strings.Builder
		fmt.Fprintf(&b, "service:  %s\n", svc)
		fmt.Fprintf(&b, "endpoint: %s\n", endpoint)
		fmt.Fprintf(&b, "method:   %s\n", r.Method)
		fmt.Fprintf(&b, "target:   %s\n", r.RequestURI)
		fmt.Fprintf(&b, "host:     %s\n", r.Host)
		fmt.Fprintf(&b, "proto:    %s\n", r.Proto)
		for _, name := range slices.Sorted(maps.Keys(r.Header)) {
			for _, v := range r.Header[name] {
				fmt.Fprintf(&b, "%s: %s\n", name, v)
			}
		}
		var n int64
		if r.Body != nil { // a server's request always has one; a test's may not
			n, _ = io.Copy(io.Discard, r.Body)
		}
		if n > 0 || len(r.TransferEncoding) > 0 {
			fmt.Fprintf(&b, "body:     %d bytes", n)
			if len(r.TransferEncoding) > 0 {
				fmt.Fprintf(&b, " (Transfer-Encoding: %s)", strings.Join(r.TransferEncoding, ", "))
			}
			b.WriteString("\n")
		}
		_, _ = w.Write([]byte(b.String()))
	})
}
