package compile

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
)

// resolution is what one Service port, as a declaration writes it,
// resolved to. Resolving is memoized; the warnings are emitted per referring
// declaration, each on its own field.
type resolution struct {
	port string // as written

	backend *backendInfo
	// next is the Service's next resolution (serviceEntry.refs).
	next *resolution
	// why is nil when the port resolved cleanly, as nearly every one does.
	why *resolveIssue
}

// resolveIssue is what is wrong with a resolution.
type resolveIssue struct {
	// problem is "", ServiceNotFound, ServicePortNotFound or
	// ExternalNameUnsupported; message explains it, without the consequence.
	problem Reason
	message string
	// targetMsg is set when the port matched only a targetPort
	// (ingress-nginx's quirk).
	targetMsg string
}

// issue returns what is wrong with r, the zero value when nothing is.
func (r *resolution) issue() resolveIssue {
	if r.why == nil {
		return resolveIssue{}
	}
	return *r.why
}

// backendInfo is one backend under construction.
type backendInfo struct {
	b *match.Backend
	// written is the port as first written, which identifies a backend
	// whose port did not resolve.
	written string
	// used: a route or a fallback serves it, so the table lists it.
	used bool
	// claims are the Ingresses serving it, for the protocol and balancing
	// decisions; an Ingress appears once per run of consecutive references
	// until orderClaims sorts them and drops repeats.
	claims    []*ingress
	claimsBuf [1]*ingress
	// port is the Service port it resolved to, nil for none; its
	// appProtocol decides how a route source's backend is dialled
	// (appprotocol.go).
	port *corev1.ServicePort
}

// servicePort renders an Ingress's Service port as written: the number, or
// the port name when no number is given. "" when neither is set.
func servicePort(p networkingv1.ServiceBackendPort) string {
	if p.Number != 0 {
		return strconv.Itoa(int(p.Number))
	}
	return p.Name
}

// portName is how a declaration that resolved to be wrote its port, as
// a match PortName: 0 for a number, else the name's place in
// be.PortNames, which it joins. ingress-nginx's upstream names and
// $service_port spell the port so (controller/util.go upstreamName).
func portName(be *match.Backend, p networkingv1.ServiceBackendPort) uint8 {
	if p.Number != 0 || p.Name == "" {
		return 0
	}
	i := slices.Index(be.PortNames, p.Name)
	if i < 0 {
		if len(be.PortNames) == math.MaxUint8 {
			return 0 // more names than a Service has ports: the number
		}
		be.PortNames = append(be.PortNames, p.Name)
		i = len(be.PortNames) - 1
	}
	return uint8(i + 1)
}

// useBackend resolves a declaration's Service port (SPEC §8), warns on the
// declaration's field (field+suffix, e.g. "spec.defaultBackend"+".service")
// about anything wrong with it, and, when used, records the reference so
// that the table lists the backend and the declaring Ingress has a say in
// its protocol.
func (b *builder) useBackend(ing *ingress, svc *networkingv1.IngressServiceBackend, field, suffix string, used bool) *match.Backend {
	r := b.resolve(ing.obj.Namespace, svc.Name, servicePort(svc.Port))
	switch r.issue().problem {
	case ServiceNotFound, ExternalNameUnsupported:
		b.warn(r.issue().problem, ing.ref(), field+suffix+".name", r.issue().message+"; requests answer 503")
	case ServicePortNotFound:
		b.warn(r.issue().problem, ing.ref(), field+suffix+".port", r.issue().message+"; requests answer 503")
	}
	if r.issue().targetMsg != "" {
		b.warn(PortMatchedTargetPort, ing.ref(), field+suffix+".port", r.issue().targetMsg)
	}
	if p := svc.Port; p.Number != 0 && p.Name != "" {
		// The API server refuses both, but files and hand-built objects
		// reach Compile unvalidated; the number decides, as written.
		if s := b.serviceEntry(ing.obj.Namespace, svc.Name).svc; s != nil {
			byNumber, _ := findServicePort(s, strconv.Itoa(int(p.Number)))
			byName, _ := findServicePort(s, p.Name)
			if byNumber != byName {
				b.warn(ServicePortConflict, ing.ref(), field+suffix+".port",
					"port number "+strconv.Itoa(int(p.Number))+" and name "+strconv.Quote(p.Name)+
						" do not name the same port of Service "+ing.obj.Namespace+"/"+svc.Name+"; the number is used")
			}
		}
	}
	if used {
		bi := r.backend
		bi.used = true
		if n := len(bi.claims); n == 0 || bi.claims[n-1] != ing {
			if bi.claims == nil {
				bi.claims = bi.claimsBuf[:0]
			}
			bi.claims = append(bi.claims, ing)
		}
	}
	return r.backend.b
}

// resolve finds the Service port and its endpoints. Paths naming the same
// Service port, by number or by name, share one backend.
func (b *builder) resolve(ns, name, port string) *resolution {
	e := b.serviceEntry(ns, name)
	for r := e.refs; r != nil; r = r.next {
		if r.port == port {
			return r
		}
	}
	r := b.resolveSlab.new()
	r.port = port
	portLabel := func() string {
		if port == "" {
			return "(none given)"
		}
		return strconv.Quote(port)
	}

	svc := e.svc
	state := match.Serving
	var sp *corev1.ServicePort
	var why resolveIssue
	switch {
	case svc == nil:
		state = match.ServiceNotFound
		why.problem = ServiceNotFound
		why.message = "Service " + ns + "/" + name + " not found"
	default:
		var viaTargetPort bool
		sp, viaTargetPort = findServicePort(svc, port)
		if viaTargetPort {
			why.targetMsg = "port " + portLabel() + " is not a port number or name of Service " + ns + "/" + name +
				"; it matched the targetPort of port " + strconv.Itoa(int(sp.Port)) + " (ingress-nginx compatibility), which is used"
		}
		switch {
		case svc.Spec.Type == corev1.ServiceTypeExternalName:
			state = match.ExternalName
			why.problem = ExternalNameUnsupported
			why.message = "Service " + ns + "/" + name + " is of type ExternalName, which is not followed"
		case sp == nil:
			state = match.PortNotFound
			why.problem = ServicePortNotFound
			why.message = "Service " + ns + "/" + name + " has no port " + portLabel()
		}
	}
	if why != (resolveIssue{}) {
		issue := why
		r.why = &issue
	}

	// A resolved port is identified by its number, so "80" and "http"
	// share a backend; an unresolved one by the port as written. The
	// Service's backends are those of its resolutions so far.
	var number int32
	if sp != nil {
		number = sp.Port
	}
	for q := e.refs; q != nil; q = q.next {
		if bi := q.backend; bi.b.Port == number && (number != 0 || bi.written == port) {
			r.backend = bi
			r.next, e.refs = e.refs, r
			return r
		}
	}
	be := b.backendSlab.new()
	*be = match.Backend{Namespace: ns, Name: name, Port: number, State: state}
	if sp != nil {
		var num [10]byte
		be.ID = b.strs.concat(ns, "/", name, ":", string(strconv.AppendInt(num[:0], int64(number), 10)))
		if state == match.Serving {
			be.Endpoints = b.endpoints(e, sp.Name)
		}
	} else {
		be.ID = ns + "/" + name + ":" + port
	}
	bi := b.infoSlab.new()
	bi.b, bi.written, bi.port = be, port, sp
	b.backendList = append(b.backendList, bi)
	r.backend = bi
	r.next, e.refs = e.refs, r
	return r
}

// findServicePort matches port against the Service's port numbers, then
// its port names, then (ingress-nginx's quirk) its targetPorts written as
// strings.
func findServicePort(svc *corev1.Service, port string) (sp *corev1.ServicePort, viaTargetPort bool) {
	if port == "" {
		return nil, false
	}
	ports := svc.Spec.Ports
	if n, ok := decimal(port); ok {
		for i := range ports {
			if int(ports[i].Port) == n {
				return &ports[i], false
			}
		}
	}
	for i := range ports {
		if ports[i].Name == port {
			return &ports[i], false
		}
	}
	for i := range ports {
		if ports[i].TargetPort.String() == port {
			return &ports[i], true
		}
	}
	return nil, false
}

// decimal parses a port number written in decimal digits. Unlike
// strconv.Atoi it does not allocate an error for a port name.
func decimal(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + int(c-'0')
	}
	return n, true
}

// endpoints lists the ready "ip:port" addresses of a Service port from the
// Service's EndpointSlices: in each slice the port named like the Service
// port ("" for an unnamed one) gives the number, which is how named
// targetPorts resolve. Not-ready endpoints are left out (absent means
// ready), FQDN slices are ignored, duplicates collapse (an address is
// parsed, so two spellings of one IPv6 address are one endpoint), and the
// list is sorted by address, then port.
func (b *builder) endpoints(e *serviceEntry, portName string) []string {
	return b.endpointsOf(e, portName, "")
}

// endpointsOf is endpoints among the slice ports of protocol proto (TCP
// when a port has none); "" for any, as HTTP backends read them.
func (b *builder) endpointsOf(e *serviceEntry, portName string, proto corev1.Protocol) []string {
	addrs := b.endpointBuf[:0]
	for _, sl := range e.slices {
		if sl.AddressType != discoveryv1.AddressTypeIPv4 && sl.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		port := slicePort(sl, portName, proto)
		if port == 0 {
			continue
		}
		for i := range sl.Endpoints {
			ep := &sl.Endpoints[i]
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for j, a := range ep.Addresses {
				addr, err := netip.ParseAddr(a)
				if err != nil {
					continue // the API server validates addresses; never guess
				}
				if why := b.notPod(addr); why != "" {
					b.warn(EndpointRejected, Ref{Kind: "EndpointSlice", Namespace: sl.Namespace, Name: sl.Name},
						"endpoints["+strconv.Itoa(i)+"].addresses["+strconv.Itoa(j)+"]",
						"address "+a+" is "+why+" and can never be a pod; it is not dialled")
					continue
				}
				addrs = append(addrs, netip.AddrPortFrom(addr, port))
			}
		}
	}
	b.endpointBuf = addrs
	if len(addrs) == 0 {
		return nil
	}
	// Numeric order (IPv4 before IPv6) reads naturally in renderings.
	slices.SortFunc(addrs, netip.AddrPort.Compare)
	addrs = slices.Compact(addrs)
	// One string holds every address; the endpoints are windows on it.
	text := b.textBuf[:0]
	var endsBuf [16]int
	ends := endsBuf[:0]
	for _, a := range addrs {
		text = a.AppendTo(text)
		ends = append(ends, len(text))
	}
	b.textBuf = text
	all := b.strs.bytes(text)
	eps := b.strWindows.take(len(addrs))
	start := 0
	for i, end := range ends {
		eps[i] = all[start:end]
		start = end
	}
	return eps
}

// notPod says why an endpoint address can never be a pod ("" when it
// could be one). A hand-written EndpointSlice is the classic way to make
// an ingress proxy reach the node itself or the cloud metadata service, so
// an IPv6 address that carries an IPv4 one a transition mechanism would
// deliver to (mapped, compatible, SIIT, NAT64, 6to4, Teredo) is judged by
// that IPv4 address too.
func (b *builder) notPod(a netip.Addr) string {
	zoned := a.Zone() != ""
	a = a.WithZone("").Unmap()
	if why := notPodAddr(a, b.opts.AllowLoopbackEndpoints); why != "" {
		return why
	}
	if zoned {
		return "scoped to an interface"
	}
	for _, e := range embeddedIPv4(a) {
		if e.v4.IsUnspecified() {
			// Zeros where a prefix length that is not in use would put
			// the address: nothing is reached through them.
			continue
		}
		// Loopback spelt this way is never how a demo writes it: refused
		// whatever the option says.
		if why := notPodAddr(e.v4, false); why != "" {
			return "the " + e.form + " spelling of " + e.v4.String() + ", which is " + why
		}
	}
	return ""
}

func notPodAddr(a netip.Addr, allowLoopback bool) string {
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		if allowLoopback {
			return ""
		}
		return "loopback"
	case a == metadataIPv4:
		return "the metadata service of AWS, GCP, Azure, Oracle and others (link-local)"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	return cloudMetadata[a]
}

// metadataIPv4 is the metadata service of most clouds; the rest of
// link-local is refused as well.
var metadataIPv4 = netip.AddrFrom4([4]byte{169, 254, 169, 254})

// cloudMetadata are the clouds' metadata services outside link-local,
// where a pod's request for instance credentials goes.
var cloudMetadata = map[netip.Addr]string{
	netip.MustParseAddr("fd00:ec2::254"):   "the AWS instance metadata service (IPv6)",
	netip.MustParseAddr("fd20:ce::254"):    "the GCP metadata server (IPv6)",
	netip.MustParseAddr("168.63.129.16"):   "the Azure WireServer (platform metadata)",
	netip.MustParseAddr("100.100.100.200"): "the Alibaba Cloud metadata service",
	netip.MustParseAddr("192.0.0.192"):     "the Oracle Cloud metadata service",
}

// embedded is an IPv4 address inside an IPv6 one, and the form that put
// it there.
type embedded struct {
	v4   netip.Addr
	form string
}

// embeddedIPv4 returns the IPv4 addresses a (already unmapped) carries in
// a form that can deliver to them: IPv4-compatible ::/96, SIIT's
// ::ffff:0:0:0/96, NAT64's well-known 64:ff9b::/96 and local-use
// 64:ff9b:1::/48 (RFC 8215; every RFC 6052 prefix length inside it, the
// u octet skipped), 6to4 2002::/16 and Teredo's client 2001::/32 (its bits
// inverted). Nil for other addresses, which is nearly every one.
func embeddedIPv4(a netip.Addr) []embedded {
	if !a.Is6() {
		return nil
	}
	b := a.As16()
	v4 := func(p0, p1, p2, p3 byte) netip.Addr { return netip.AddrFrom4([4]byte{p0, p1, p2, p3}) }
	low := v4(b[12], b[13], b[14], b[15])
	zero := func(bs []byte) bool {
		for _, c := range bs {
			if c != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case zero(b[:12]):
		return []embedded{{low, "IPv4-compatible"}}
	case zero(b[:8]) && b[8] == 0xff && b[9] == 0xff && zero(b[10:12]):
		return []embedded{{low, "IPv4-translated (SIIT)"}}
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(b[4:12]):
		return []embedded{{low, "NAT64"}}
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4] == 0 && b[5] == 1:
		const form = "local-use NAT64"
		return []embedded{
			{v4(b[6], b[7], b[9], b[10]), form},   // /48
			{v4(b[7], b[9], b[10], b[11]), form},  // /56
			{v4(b[9], b[10], b[11], b[12]), form}, // /64
			{low, form},                           // /96
		}
	case b[0] == 0x20 && b[1] == 0x02:
		return []embedded{{v4(b[2], b[3], b[4], b[5]), "6to4"}}
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0:
		return []embedded{{v4(^b[12], ^b[13], ^b[14], ^b[15]), "Teredo"}}
	}
	return nil
}

// slicePort returns the number of the slice port called portName, of
// protocol proto unless that is "", or 0.
func slicePort(sl *discoveryv1.EndpointSlice, portName string, proto corev1.Protocol) uint16 {
	for _, p := range sl.Ports {
		n := ""
		if p.Name != nil {
			n = *p.Name
		}
		if n != portName || proto != "" && slicePortProtocol(p) != proto {
			continue
		}
		if p.Port == nil || *p.Port < 1 || *p.Port > 65535 {
			return 0
		}
		return uint16(*p.Port)
	}
	return 0
}

// orderClaims puts each backend's claims in Ingress order, each Ingress
// once, so that the oldest serving Ingress comes first for the decisions
// that follow. Ranks are unique, so equal elements are the same Ingress.
func (b *builder) orderClaims() {
	for _, bi := range b.backendList {
		slices.SortFunc(bi.claims, func(x, y *ingress) int { return cmp.Compare(x.rank, y.rank) })
		bi.claims = slices.Compact(bi.claims)
	}
}

// decideProtocols sets each backend's protocol (SPEC §8, §11.1). When the
// Ingresses serving one backend disagree, the oldest decides and each other
// one gets AnnotationConflict. An Ingress without backend-protocol asks for
// HTTP, the default. A canary Ingress has no say: ingress-nginx reaches a
// canary through its primary's location, with that location's protocol,
// so a backend only canaries serve is dialled as its first primary is.
func (b *builder) decideProtocols() {
	canaryOnly := map[*match.Backend]*backendInfo{}
	for _, bi := range b.backendList {
		i := slices.IndexFunc(bi.claims, func(ing *ingress) bool { return ing.ann.trafficR().canaryKey == "" })
		if i < 0 {
			if len(bi.claims) > 0 {
				canaryOnly[bi.b] = bi
			}
			continue
		}
		owner := bi.claims[i]
		bi.b.Protocol = owner.ann.protocol
		for _, ing := range bi.claims[i+1:] {
			if ing.ann.protocol == owner.ann.protocol || ing.ann.trafficR().canaryKey != "" {
				continue
			}
			key := ing.ann.protocolKey
			asked := ing.ann.protocol.String()
			if key == "" {
				key = NativePrefix + "backend-protocol"
				asked += " (backend-protocol not set)"
			}
			b.conflict(AnnotationConflict, ing.ref(), annotationField(key),
				"backend "+bi.b.ID+" is dialled as "+owner.ann.protocol.String()+
					", as the oldest Ingress serving it decides; this Ingress asks for "+asked,
				owner.ref(), "")
		}
	}
	for _, bi := range b.backendList {
		if bi.b.Traffic == nil || bi.b.Traffic.Canary == nil {
			continue
		}
		if cb := canaryOnly[bi.b.Traffic.Canary.Backend]; cb != nil {
			cb.b.Protocol = bi.b.Protocol
			delete(canaryOnly, cb.b)
		}
	}
	warned := map[*ingress]bool{}
	for _, bi := range b.backendList {
		for _, ing := range bi.claims {
			key := ing.ann.protocolKey
			if key == "" || ing.ann.trafficR().canaryKey == "" || ing.ann.protocol == bi.b.Protocol || warned[ing] {
				continue
			}
			warned[ing] = true
			b.warn(AnnotationRejected, ing.ref(), annotationField(key),
				key+" has no effect on a canary Ingress: backend "+bi.b.ID+" is dialled as "+bi.b.Protocol.String()+
					", as its primary's backend is, or as an ordinary Ingress serving it decides")
			b.warnings[len(b.warnings)-1].Rated = Cosmetic // ingress-nginx dials it so too
		}
	}
}

// backend-protocol (SPEC §8, §11.1), applied by decideProtocols.
func init() {
	registerAnnotations(map[string]annotationSpec{"backend-protocol": {apply: applyBackendProtocol}})
}

func applyBackendProtocol(v *annotationValues, key, value string) error {
	var p match.Protocol
	switch up := strings.ToUpper(value); up {
	case "HTTP":
		p = match.HTTP
	case "HTTPS":
		p = match.HTTPS
	case "GRPC":
		p = match.GRPC
	case "GRPCS":
		p = match.GRPCS
	case "AUTO_HTTP", "FCGI":
		err := fmt.Errorf("%s %q is not one of HTTP, HTTPS, GRPC, GRPCS; the backend is dialled as HTTP", key, value)
		if native(key) {
			return err
		}
		if up == "AUTO_HTTP" {
			// proxy_pass $scheme://: the client connection's scheme.
			p = match.AutoHTTP
			break
		}
		// ingress-nginx serves it (fastcgi_pass): a backend that expects
		// FastCGI answers otherwise.
		return ratedError{fmt.Errorf("%s %q is served by ingress-nginx (FastCGI) but not by ramjet; the backend is dialled as HTTP",
			key, value), TrafficMoves}
	default:
		return fmt.Errorf("%s %q is not one of HTTP, HTTPS, GRPC, GRPCS; the backend is dialled as HTTP", key, value)
	}
	v.protocol, v.protocolKey = p, key
	return nil
}
