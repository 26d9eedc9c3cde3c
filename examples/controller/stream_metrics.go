package main

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"ramjet.dev/ramjet/match"
)

// Metrics of the TCP and UDP services. ingress-nginx exports no series
// per stream service (its collectors count HTTP requests, and nginx's
// connection counts for the whole process), so these are ramjet's, with
// ingress-nginx's label names for the Service (namespace, service) beside
// the protocol and the port listened on:
//
//	ramjet_stream_connections_total  TCP connections proxied, UDP exchanges started
//	ramjet_stream_active_connections TCP connections and UDP exchanges in progress
//	ramjet_stream_bytes_total        bytes relayed, direction "in" (from clients) or "out" (to them)
//	ramjet_stream_errors_total       by reason: no_service, no_endpoint, connect, proxy_protocol, reset, sessions_full, socket, timeout (a UDP exchange unanswered for proxy-stream-timeout)
//
// The series are bounded by the ConfigMaps' entries, whatever clients
// send; those of an entry that went are removed with the table that drops
// it (keep), as the request series of an Ingress that went are.
type streamMetrics struct {
	connections *prometheus.CounterVec
	active      *prometheus.GaugeVec
	bytes       *prometheus.CounterVec
	errors      *prometheus.CounterVec

	mu  sync.Mutex
	svc map[*match.L4Service]*serviceMetrics
	// seen are the services with series: protocol, port, namespace and
	// service.
	seen map[[4]string]bool
}

// streamMetrics registers the stream series; nil when metrics are off.
func (m *metrics) streamMetrics() *streamMetrics {
	if m == nil {
		return nil
	}
	labels := []string{"protocol", "port", "namespace", "service"}
	c := m.id.labels()
	sm := &streamMetrics{
		connections: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ramjet_stream_connections_total", Help: "TCP connections proxied and UDP exchanges started, per TCP or UDP service", ConstLabels: c}, labels),
		active:      prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "ramjet_stream_active_connections", Help: "TCP connections and UDP exchanges in progress, per TCP or UDP service", ConstLabels: c}, labels),
		bytes:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ramjet_stream_bytes_total", Help: "Bytes relayed per TCP or UDP service, direction in (from clients) or out (to clients)", ConstLabels: c}, append(labels, "direction")),
		errors:      prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ramjet_stream_errors_total", Help: "Connections and datagrams a TCP or UDP service could not proxy, by reason", ConstLabels: c}, append(labels, "reason")),
		svc:         make(map[*match.L4Service]*serviceMetrics),
		seen:        make(map[[4]string]bool),
	}
	m.registry.MustRegister(sm.connections, sm.active, sm.bytes, sm.errors)
	return sm
}

// serviceMetrics are one service's series, resolved once per table
// entry so that counting a chunk or a datagram is an atomic addition. A
// nil *serviceMetrics counts nothing.
type serviceMetrics struct {
	sm                *streamMetrics
	labels            []string
	conns             prometheus.Counter
	active            prometheus.Gauge
	bytesIn, bytesOut prometheus.Counter
}

func (sm *streamMetrics) service(svc *match.L4Service) *serviceMetrics {
	if sm == nil {
		return nil
	}
	sm.mu.Lock()
	defer sm.mu.Unlock()
	if m := sm.svc[svc]; m != nil {
		return m
	}
	if len(sm.svc) > 4096 {
		clear(sm.svc) // entries of tables long gone
	}
	k := serviceKey(svc)
	sm.seen[k] = true
	l := k[:]
	m := &serviceMetrics{
		sm: sm, labels: l,
		conns:    sm.connections.WithLabelValues(l...),
		active:   sm.active.WithLabelValues(l...),
		bytesIn:  sm.bytes.WithLabelValues(append(l[:4:4], "in")...),
		bytesOut: sm.bytes.WithLabelValues(append(l[:4:4], "out")...),
	}
	sm.svc[svc] = m
	return m
}

func serviceKey(svc *match.L4Service) [4]string {
	return [4]string{svc.Protocol.String(), strconv.Itoa(int(svc.Port)), svc.Backend.Namespace, svc.Backend.Name}
}

// keep removes the series of the services t no longer has: what the
// connections a removed TCP port still serves move is no longer counted,
// and a service back later starts its series anew.
func (sm *streamMetrics) keep(t *match.Table) {
	if sm == nil || t == nil {
		return
	}
	want := make(map[[4]string]bool)
	for svc := range t.L4Services() {
		want[serviceKey(svc)] = true
	}
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for k := range sm.seen {
		if want[k] {
			continue
		}
		gone := prometheus.Labels{"protocol": k[0], "port": k[1], "namespace": k[2], "service": k[3]}
		sm.connections.DeletePartialMatch(gone)
		sm.active.DeletePartialMatch(gone)
		sm.bytes.DeletePartialMatch(gone)
		sm.errors.DeletePartialMatch(gone)
		delete(sm.seen, k)
	}
	for svc, m := range sm.svc {
		if !want[[4]string(m.labels)] {
			delete(sm.svc, svc)
		}
	}
}

// error counts a failure before any service was found (labels empty
// but for protocol and port) or of svc's.
func (sm *streamMetrics) error(proto match.L4Protocol, port int32, svc *match.L4Service, reason string) {
	if sm == nil {
		return
	}
	if svc != nil {
		sm.service(svc).failed(reason)
		return
	}
	sm.errors.WithLabelValues(proto.String(), strconv.Itoa(int(port)), "", "", reason).Inc()
}

func (m *serviceMetrics) accepted() {
	if m != nil {
		m.conns.Inc()
		m.active.Inc()
	}
}

func (m *serviceMetrics) closed() {
	if m != nil {
		m.active.Dec()
	}
}

func (m *serviceMetrics) failed(reason string) {
	if m != nil {
		m.sm.errors.WithLabelValues(append(m.labels[:4:4], reason)...).Inc()
	}
}

func (m *serviceMetrics) in(n int) {
	if m != nil {
		m.bytesIn.Add(float64(n))
	}
}

func (m *serviceMetrics) out(n int) {
	if m != nil {
		m.bytesOut.Add(float64(n))
	}
}
