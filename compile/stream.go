package compile

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// TCP and UDP services (SPEC §22): the ConfigMaps of ingress-nginx's
// --tcp-services-configmap and --udp-services-configmap, read as its
// getStreamServices reads them (internal/ingress/controller/controller.go):
//
//	"<port>": "<namespace>/<service>:<port>[:PROXY][:PROXY]"
//
// The key is the port listened on; the value splits on ":"; the Service
// port is matched by number, else by name, among the Service's ports of
// the protocol; a third part "PROXY" (any case) decodes the PROXY
// protocol from clients, a fourth (of exactly four) sends it to the
// backend, both for TCP only. Endpoints are those of the slice port of
// that name and protocol, with SPEC §8's readiness and address rules.
//
// Where ingress-nginx drops an entry silently or with a log line, ramjet
// drops it with a warning naming the key (L4ServiceRejected); a part it
// ignores is ignored with L4ServicePartIgnored. Unlike ingress-nginx, an
// entry whose Service or port is missing, or that has no ready endpoint,
// stays in the table (its connections are closed at once), so that the
// port is listened on from the start and serves as soon as the Service
// comes: ports are bound once, at start.

// buildL4Services compiles the entries of both ConfigMaps.
func (b *builder) buildL4Services() {
	b.l4 = nil
	b.l4Services(b.opts.TCPServices, match.TCP)
	b.l4Services(b.opts.UDPServices, match.UDP)
	distinctL4IDs(b.l4)
}

// distinctL4IDs renames the backends whose ingress-nginx upstream name
// ("tcp-<namespace>-<service>-<port>") another Service's port shares, as
// "a-b/c:80" and "a/b-c:80" do, to "tcp-<namespace>/<service>:<port>":
// the ID keys the balancer's position, which two Services must not share.
// An unshared name stays ingress-nginx's.
func distinctL4IDs(l4 []*match.L4Service) {
	ref := func(s *match.L4Service) string {
		return s.Backend.Namespace + "/" + s.Backend.Name + ":" + s.ServicePort
	}
	first := make(map[string]string) // ID -> the first entry's ref
	shared := make(map[string]bool)
	for _, s := range l4 {
		id := s.Backend.ID
		if r, ok := first[id]; !ok {
			first[id] = ref(s)
		} else if r != ref(s) {
			shared[id] = true
		}
	}
	for _, s := range l4 {
		if shared[s.Backend.ID] {
			s.Backend.ID = s.Protocol.String() + "-" + ref(s)
		}
	}
}

// l4Services compiles the entries of the ConfigMap ref ("namespace/name",
// "" for none) as proto services, in key order.
func (b *builder) l4Services(ref string, proto match.L4Protocol) {
	if ref == "" {
		return
	}
	ns, name, _ := strings.Cut(ref, "/")
	cm := findConfigMap(b.snap.ConfigMaps, ns, name)
	obj := Ref{Kind: "ConfigMap", Namespace: ns, Name: name}
	if cm == nil {
		b.warn(L4ServicesNotFound, obj, "", "the "+proto.String()+" services ConfigMap is not found; no "+strings.ToUpper(proto.String())+" port is served")
		return
	}
	ports := make(map[int32]string)
	for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
		field := configMapField(key)
		port, err := l4Port(key)
		if err == nil && slices.Contains(b.opts.ReservedPorts, int(port)) {
			err = fmt.Errorf("port %d is the controller's own", port)
		}
		if err != nil {
			b.warn(L4ServiceRejected, obj, field, err.Error()+"; the entry is not served")
			continue
		}
		if first, dup := ports[port]; dup {
			b.conflict(L4ServiceRejected, obj, field, "port "+strconv.Itoa(int(port))+" is already served by another entry; this one is not served", obj, configMapField(first))
			continue
		}
		e, err := parseL4Entry(cm.Data[key], proto)
		if err != nil {
			b.warn(L4ServiceRejected, obj, field, fmt.Sprintf("%q: %v; the entry is not served", cm.Data[key], err))
			continue
		}
		ports[port] = key
		for _, why := range e.ignored {
			b.warn(L4ServicePartIgnored, obj, field, why)
		}
		if e.decode && e.encode && !b.enableRealIP() {
			b.warn(L4ServiceDiffers, obj, field, "the backend's PROXY header names the client its own PROXY header names (from a peer the embedder trusts); ingress-nginx names the connecting peer unless enable-real-ip is on (SPEC §19)")
		}
		src := match.Source{Kind: "ConfigMap", Namespace: ns, Name: name, Field: field}
		b.l4 = append(b.l4, &match.L4Service{
			Protocol: proto, Port: port, ServicePort: e.port, Source: src,
			DecodeProxyProtocol: e.decode, EncodeProxyProtocol: e.encode,
			Backend: b.l4Backend(obj, field, proto, e),
		})
	}
}

// enableRealIP is the ConfigMap's enable-real-ip.
func (b *builder) enableRealIP() bool {
	return b.opts.ConfigMap != nil && b.opts.ConfigMap.Router.EnableRealIP
}

// l4Port reads a ConfigMap key as a port number the way getStreamServices'
// strconv.Atoi does: a sign and leading zeros are accepted.
func l4Port(key string) (int32, error) {
	n, err := strconv.Atoi(key)
	if err != nil {
		return 0, fmt.Errorf("key %q is not a port number", key)
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %d out of range 1-65535", n)
	}
	return int32(n), nil
}

// l4Entry is an entry's value as parsed.
type l4Entry struct {
	namespace, name, port string
	decode, encode        bool
	// ignored says why each part ingress-nginx ignores is ignored.
	ignored []string
}

// parseL4Entry reads "<namespace>/<service>:<port>[:PROXY][:PROXY]".
func parseL4Entry(v string, proto match.L4Protocol) (l4Entry, error) {
	parts := strings.Split(v, ":")
	if len(parts) < 2 {
		return l4Entry{}, errors.New("want namespace/service:port")
	}
	ns, name, ok := strings.Cut(parts[0], "/")
	if !ok || strings.Contains(name, "/") {
		return l4Entry{}, errors.New("want namespace/service:port")
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return l4Entry{}, fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return l4Entry{}, fmt.Errorf("service name %q: %s", name, strings.Join(errs, "; "))
	}
	port := parts[1]
	if n, ok := l4PortNumber(port); ok {
		if n < 1 || n > 65535 {
			return l4Entry{}, fmt.Errorf("service port %d out of range 1-65535", n)
		}
	} else if errs := validation.IsValidPortName(port); len(errs) > 0 {
		return l4Entry{}, fmt.Errorf("service port %q: %s", port, strings.Join(errs, "; "))
	}
	e := l4Entry{namespace: ns, name: name, port: port}
	proxy := parts[2:]
	if proto == match.UDP {
		if slices.ContainsFunc(proxy, func(p string) bool { return p != "" }) {
			e.ignored = append(e.ignored, "the PROXY protocol applies to TCP services only; "+strings.Join(proxy, ":")+" is ignored, as ingress-nginx ignores it")
		}
		return e, nil
	}
	// ingress-nginx: the third part decodes, the fourth encodes only when
	// there are exactly four.
	for i, p := range proxy {
		isProxy := strings.EqualFold(p, "PROXY")
		switch {
		case i == 0 && isProxy:
			e.decode = true
		case i == 1 && isProxy && len(parts) == 4:
			e.encode = true
		case i == 1 && isProxy:
			e.ignored = append(e.ignored, "the second PROXY is ignored when more parts follow it, as ingress-nginx ignores it: the backend gets no PROXY header")
		case p == "" && i < 2:
		default:
			e.ignored = append(e.ignored, fmt.Sprintf("part %d %q is not PROXY; ignored, as ingress-nginx ignores it", i+3, p))
		}
	}
	return e, nil
}

// l4Backend resolves an entry's Service port among those of its protocol,
// warning on the entry about a missing Service or port.
func (b *builder) l4Backend(obj Ref, field string, proto match.L4Protocol, e l4Entry) *match.Backend {
	be := &match.Backend{
		ID:        proto.String() + "-" + e.namespace + "-" + e.name + "-" + e.port,
		Namespace: e.namespace, Name: e.name,
	}
	svc := b.serviceEntry(e.namespace, e.name).svc
	k8sProto := corev1.ProtocolTCP
	if proto == match.UDP {
		k8sProto = corev1.ProtocolUDP
	}
	ref := e.namespace + "/" + e.name
	switch {
	case svc == nil:
		be.State = match.ServiceNotFound
		b.warn(ServiceNotFound, obj, field, "Service "+ref+" not found; "+proto.String()+" connections to this port are closed")
		return be
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		be.State = match.ExternalName
		b.warn(ExternalNameUnsupported, obj, field, "Service "+ref+" is of type ExternalName, which is not followed; "+proto.String()+" connections to this port are closed")
		return be
	}
	sp := l4ServicePort(svc, e.port, k8sProto)
	if sp == nil {
		be.State = match.PortNotFound
		b.warn(ServicePortNotFound, obj, field, "Service "+ref+" has no "+string(k8sProto)+" port "+strconv.Quote(e.port)+"; "+proto.String()+" connections to this port are closed")
		return be
	}
	be.Port = sp.Port
	be.Endpoints = b.endpointsOf(b.serviceEntry(e.namespace, e.name), sp.Name, k8sProto)
	return be
}

// l4ServicePort finds the port of proto written as port: by number when it
// is one, else by name, as ingress-nginx's getStreamServices matches.
func l4ServicePort(svc *corev1.Service, port string, proto corev1.Protocol) *corev1.ServicePort {
	n, isNumber := l4PortNumber(port)
	for i := range svc.Spec.Ports {
		sp := &svc.Spec.Ports[i]
		if protocolOf(sp.Protocol) != proto {
			continue
		}
		if isNumber && int(sp.Port) == n || !isNumber && sp.Name == port {
			return sp
		}
	}
	return nil
}

// l4PortNumber reads an entry's Service port as a number the way
// getStreamServices' strconv.Atoi does ("+80" and "0080" are 80); not a
// number, it is a port name.
func l4PortNumber(port string) (int, bool) {
	n, err := strconv.Atoi(port)
	return n, err == nil
}

// protocolOf is a port's protocol, TCP when unset (the API server's
// default).
func protocolOf(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// slicePortProtocol is a slice port's protocol, TCP when unset.
func slicePortProtocol(p discoveryv1.EndpointPort) corev1.Protocol {
	if p.Protocol == nil {
		return corev1.ProtocolTCP
	}
	return protocolOf(*p.Protocol)
}

// The proxy-stream-* keys of the ingress-nginx ConfigMap, the settings of
// every TCP and UDP service (match.StreamSettings).
func init() {
	stream := func(set func(s *match.StreamSettings, v string) error) ConfigMapKey {
		return ConfigMapKey{Option: func(o *Options, v string) error {
			s := match.DefaultStreamSettings
			if o.StreamSettings != nil {
				s = *o.StreamSettings
			}
			if err := set(&s, v); err != nil {
				return err
			}
			o.StreamSettings = &s
			return nil
		}}
	}
	ConfigMapKeys["proxy-stream-timeout"] = stream(func(s *match.StreamSettings, v string) (err error) {
		s.Timeout, err = nginxTime(v, false)
		return err
	})
	ConfigMapKeys["proxy-stream-next-upstream"] = stream(func(s *match.StreamSettings, v string) error {
		on, err := strconv.ParseBool(v)
		if v == "" {
			on, err = false, nil // mapstructure's weak typing
		}
		s.NextUpstream = on
		return err
	})
	ConfigMapKeys["proxy-stream-next-upstream-timeout"] = stream(func(s *match.StreamSettings, v string) (err error) {
		s.NextUpstreamTimeout, err = nginxTime(v, true)
		return err
	})
	ConfigMapKeys["proxy-stream-next-upstream-tries"] = stream(func(s *match.StreamSettings, v string) (err error) {
		s.NextUpstreamTries, err = nonNegative(v)
		return err
	})
	// Not a mapstructure field: ingress-nginx's configmap.go reads it
	// with strconv.Atoi, decimal only.
	ConfigMapKeys["proxy-stream-responses"] = stream(func(s *match.StreamSettings, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > math.MaxInt32 {
			return errors.New("want a whole decimal number, 0 or more")
		}
		s.Responses = n
		return nil
	})
}

func nonNegative(v string) (int, error) {
	n, err := strconv.ParseInt(v, 0, 32)
	if err != nil || n < 0 {
		return 0, errors.New("want a whole number, 0 or more")
	}
	return int(n), nil
}

// nginxTime reads an nginx time value as ingress-nginx hands it to a
// stream directive counted in milliseconds (configmap.ParseTime). zero
// allows 0, "no limit".
func nginxTime(v string, zero bool) (time.Duration, error) {
	d, err := configmap.ParseTime(strings.TrimSpace(v), false)
	if err == nil && d == 0 && !zero {
		err = errors.New("a timeout must be more than zero")
	}
	return d, err
}
