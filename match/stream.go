package match

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"
)

// L4Protocol is the transport of a TCP or UDP service (SPEC §22).
type L4Protocol uint8

const (
	TCP L4Protocol = iota
	UDP
)

func (p L4Protocol) String() string {
	switch p {
	case TCP:
		return "tcp"
	case UDP:
		return "udp"
	}
	return fmt.Sprintf("L4Protocol(%d)", p)
}

// L4Service is one entry of ingress-nginx's --tcp-services-configmap or
// --udp-services-configmap: a port the controller listens on and the
// Service port its connections (TCP) or datagrams (UDP) go to (SPEC §22).
type L4Service struct {
	Protocol L4Protocol
	// Port is the port listened on (the ConfigMap key).
	Port int32
	// Backend is the Service port, resolved as an HTTP backend is (SPEC
	// §8), its endpoints those of the slice port of this protocol. Its ID
	// is ingress-nginx's upstream name, "tcp-<namespace>-<name>-<port as
	// written>", so that its round-robin cursor is its own; it is not
	// among Table.Backends.
	Backend *Backend
	// ServicePort is the Service port as the entry writes it: a number
	// or a port name.
	ServicePort string
	// DecodeProxyProtocol: every connection starts with a PROXY protocol
	// header (v1 or v2) giving the client's address, the entry's first
	// ":PROXY". EncodeProxyProtocol: each connection to the backend starts
	// with a v1 header naming the client, the second ":PROXY". TCP only.
	DecodeProxyProtocol bool
	EncodeProxyProtocol bool
	// Source is the ConfigMap entry: Kind "ConfigMap", Field "data[<port>]".
	Source Source
}

// StreamSettings are the ingress-nginx ConfigMap's proxy-stream-* keys,
// which every TCP and UDP service follows (nginx's stream proxy
// directives). The zero value means nginx's defaults (DefaultStreamSettings).
type StreamSettings struct {
	// Timeout is proxy-stream-timeout (600s): a connection or UDP session
	// with no bytes moving either way for this long is closed.
	Timeout time.Duration
	// ConnectTimeout bounds each dial of an endpoint: nginx's stream
	// proxy_connect_timeout, which ingress-nginx leaves at 60s.
	ConnectTimeout time.Duration
	// NextUpstream is proxy-stream-next-upstream (true): a connection
	// whose dial fails goes on to another endpoint, at most
	// NextUpstreamTries tries in all (3; 0 no limit) within
	// NextUpstreamTimeout (600s; 0 no limit).
	NextUpstream        bool
	NextUpstreamTries   int
	NextUpstreamTimeout time.Duration
	// Responses is proxy-stream-responses (1): the datagrams a UDP
	// session expects back per datagram it sent; once they came, the
	// session ends. 0: none are expected, the session ends once the
	// datagram is sent.
	Responses int
}

// DefaultStreamSettings are ingress-nginx v1.15's.
var DefaultStreamSettings = StreamSettings{
	Timeout:             600 * time.Second,
	ConnectTimeout:      60 * time.Second,
	NextUpstream:        true,
	NextUpstreamTries:   3,
	NextUpstreamTimeout: 600 * time.Second,
	Responses:           1,
}

// L4Services yields the TCP then UDP services, each by port.
func (t *Table) L4Services() iter.Seq[*L4Service] { return seq(t.l4) }

// L4Service returns the service listening on port for proto, or nil.
func (t *Table) L4Service(proto L4Protocol, port int32) *L4Service {
	i, ok := slices.BinarySearchFunc(t.l4, l4Key{proto, port}, func(s *L4Service, k l4Key) int {
		return cmp.Or(cmp.Compare(s.Protocol, k.proto), cmp.Compare(s.Port, k.port))
	})
	if !ok {
		return nil
	}
	return t.l4[i]
}

// StreamSettings returns the settings the table's L4 services follow.
func (t *Table) StreamSettings() StreamSettings { return t.stream }

type l4Key struct {
	proto L4Protocol
	port  int32
}

// indexL4 sorts the services by protocol and port, keeping the first of a
// repeated port, and fills in the settings' defaults.
func (t *Table) indexL4(svcs []*L4Service, st *StreamSettings) error {
	for _, s := range svcs {
		if s == nil {
			continue
		}
		if s.Backend == nil {
			return fmt.Errorf("match: %s port %d: L4Service.Backend is nil", s.Protocol, s.Port)
		}
		if s.Port < 1 || s.Port > 65535 {
			return fmt.Errorf("match: %s port %d: L4Service.Port out of range 1-65535", s.Protocol, s.Port)
		}
		t.l4 = append(t.l4, s)
	}
	slices.SortStableFunc(t.l4, func(a, b *L4Service) int {
		return cmp.Or(cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
	})
	t.l4 = slices.CompactFunc(t.l4, func(a, b *L4Service) bool { return a.Protocol == b.Protocol && a.Port == b.Port })
	t.stream = DefaultStreamSettings
	if st != nil {
		t.stream = *st
	}
	return nil
}

// streamSection is the TCP and UDP services (SPEC §22): present only in a
// table that has some, so other tables keep their digests. Their settings
// are encoded with them: without a service they change nothing.
var streamSection = section{
	name: "l4-services",
	digest: []digestPart{{
		tag:      "l4-services",
		tableHas: func(t *Table) bool { return len(t.l4) > 0 },
		table: func(e *encoder, t *Table) {
			e.num(len(t.l4))
			for _, s := range t.l4 {
				e.num(int(s.Protocol))
				e.num(int(s.Port))
				e.flag(s.DecodeProxyProtocol)
				e.flag(s.EncodeProxyProtocol)
				e.str(s.ServicePort)
				be := s.Backend
				e.str(be.ID)
				e.str(be.Namespace)
				e.str(be.Name)
				e.num(int(be.Port))
				e.num(int(be.State))
				e.strs(be.Endpoints)
			}
			st := t.stream
			e.num(int(st.Timeout))
			e.num(int(st.ConnectTimeout))
			e.flag(st.NextUpstream)
			e.num(st.NextUpstreamTries)
			e.num(int(st.NextUpstreamTimeout))
			e.num(st.Responses)
		},
	}},
}

// writeL4Text writes the services after the certificates:
//
//	l4 <tcp|udp> <port> -> <namespace/name:port> <state>[ proxy-protocol-in][ proxy-protocol-out] from <source>
//	  endpoint <ip:port>                          or "no ready endpoints"
//	l4-settings timeout <d> connect-timeout <d> next-upstream <on|off> tries <n> next-upstream-timeout <d> responses <n>
func (t *Table) writeL4Text(b *strings.Builder) {
	if len(t.l4) == 0 {
		return
	}
	for _, s := range t.l4 {
		be := s.Backend
		b.WriteString("l4 " + s.Protocol.String() + " " + strconv.Itoa(int(s.Port)) + " -> " +
			be.Namespace + "/" + be.Name + ":" + s.ServicePort + " " + be.State.String())
		if s.DecodeProxyProtocol {
			b.WriteString(" proxy-protocol-in")
		}
		if s.EncodeProxyProtocol {
			b.WriteString(" proxy-protocol-out")
		}
		b.WriteString(sourceText(s.Source) + "\n")
		if len(be.Endpoints) == 0 {
			b.WriteString("  no ready endpoints\n")
		}
		for _, ep := range be.Endpoints {
			b.WriteString("  endpoint " + ep + "\n")
		}
	}
	st := t.stream
	next := "off"
	if st.NextUpstream {
		next = "on"
	}
	b.WriteString("l4-settings timeout " + st.Timeout.String() + " connect-timeout " + st.ConnectTimeout.String() +
		" next-upstream " + next + " tries " + strconv.Itoa(st.NextUpstreamTries) +
		" next-upstream-timeout " + st.NextUpstreamTimeout.String() + " responses " + strconv.Itoa(st.Responses) + "\n")
}
