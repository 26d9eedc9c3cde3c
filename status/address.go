package status

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Source is where the advertised addresses come from (SPEC §1, §16).
type Source struct {
	// Addresses are the --publish-address entries, as ParseAddresses
	// returns them. When any are set they win and Service is ignored
	// (ingress-nginx, like the example controller, refuses both flags
	// together).
	Addresses []string
	// Service is the --publish-service object: nil when that option is
	// unset or the Service is not known (yet).
	Service *corev1.Service
	// Nodes are the nodes running the controller's ready pods, read when
	// neither Addresses nor Service is given: ingress-nginx then
	// advertises those nodes' addresses (a hostNetwork or hostPort install
	// without a publish Service). The caller fills it only when neither
	// option is set, so a publish Service not provisioned yet never falls
	// back to node addresses.
	Nodes []*corev1.Node
	// NodeInternalIP advertises the nodes' InternalIP addresses even
	// where they have ExternalIP ones (--report-node-internal-ip-address).
	NodeInternalIP bool
}

// NodeAddresses returns what ingress-nginx advertises for a node: its
// ExternalIP addresses, else (or with internal set) its InternalIP ones.
func NodeAddresses(node *corev1.Node, internal bool) []string {
	var external, internalIPs []string
	for _, a := range node.Status.Addresses {
		switch {
		case a.Address == "":
		case a.Type == corev1.NodeInternalIP:
			internalIPs = append(internalIPs, a.Address)
		case a.Type == corev1.NodeExternalIP:
			external = append(external, a.Address)
		}
	}
	if internal || len(external) == 0 {
		return internalIPs
	}
	return external
}

// ParseAddresses parses the --publish-address value: comma-separated IP
// addresses and DNS names, spaces around entries allowed. IPs come back in
// canonical form ("2001:db8::1"). An empty value means the option is unset.
// Every entry must be usable in an Ingress status, since the API server
// refuses a whole status over one bad entry.
func ParseAddresses(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]string, 0, len(parts))
	for i, part := range parts {
		a := strings.TrimSpace(part)
		if a == "" {
			return nil, fmt.Errorf("option publish-address %q: entry %d is empty", s, i+1)
		}
		ip, hostname, err := parseAddress(a)
		if err != nil {
			return nil, fmt.Errorf("option publish-address %q: entry %d: %w", s, i+1, err)
		}
		out = append(out, cmp.Or(ip, hostname))
	}
	return out, nil
}

// parseAddress classifies a as an IP (returned canonical) or a host name.
func parseAddress(a string) (ip, hostname string, err error) {
	addr, ipErr := netip.ParseAddr(a)
	switch {
	case ipErr == nil && addr.Zone() != "":
		return "", "", fmt.Errorf("%q is an IP address with a zone, which a status cannot carry", a)
	case ipErr == nil && addr.Is4In6():
		// The API server refuses these since Kubernetes 1.36
		// (StrictIPCIDRValidation), and with them every status write.
		return "", "", fmt.Errorf("%q is an IPv4-mapped IPv6 address, which a status cannot carry: write %s", a, addr.Unmap())
	case ipErr == nil:
		return addr.String(), "", nil
	case strings.Contains(a, ":") || strings.Trim(a, "0123456789.") == "":
		// Written as an IP, so not a name: the API server would read
		// "010.0.0.1" as an IP and refuse it as a host name.
		return "", "", fmt.Errorf("%q is not a valid IP address: %v", a, ipErr)
	}
	if errs := validation.IsDNS1123Subdomain(a); len(errs) > 0 {
		return "", "", fmt.Errorf("%q is neither an IP address nor a DNS-1123 subdomain: %s", a, strings.Join(errs, "; "))
	}
	return "", a, nil
}

// canonicalIP returns s in canonical form, or false when it is not a
// status-worthy IP (empty, "None", malformed, zoned, IPv4-mapped).
func canonicalIP(s string) (string, bool) {
	addr, err := netip.ParseAddr(s)
	if err != nil || addr.Zone() != "" || addr.Is4In6() {
		return "", false
	}
	return addr.String(), true
}

// validHostname reports whether s may stand in a status hostname field.
func validHostname(s string) bool {
	if s == "" {
		return false
	}
	_, hostname, err := parseAddress(s)
	return err == nil && hostname != ""
}

// Desired returns the addresses every claimed Ingress should advertise
// (SPEC §16):
//   - Addresses: IPs as ip, names as hostname;
//   - else a LoadBalancer Service: its status.loadBalancer.ingress entries
//     (ip and hostname kept together as the cloud reported them) plus its
//     spec.externalIPs;
//   - a NodePort Service: its spec.externalIPs, else its spec.clusterIP;
//   - a ClusterIP Service (or one of no type): its spec.clusterIP, nothing
//     for a headless one;
//   - an ExternalName Service: its spec.externalName as hostname (what
//     ingress-nginx advertises; SPEC §16 does not name the type);
//   - with neither, the addresses of Nodes (NodeAddresses), as
//     ingress-nginx advertises them.
//
// Values the API server would refuse in an Ingress status are left out, so
// one odd field cannot block every status write. The result is sorted by
// hostname, then by IP in address order (IPv4 before IPv6), so entries with
// only an IP come first; exact repeats are dropped, and so is an entry with
// only an IP or only a hostname when another entry carries it together with
// the other half. Ports is always nil. The result is nil when there is
// nothing to advertise.
func Desired(src Source) []networkingv1.IngressLoadBalancerIngress {
	var out []networkingv1.IngressLoadBalancerIngress
	addIP := func(s string) bool {
		ip, ok := canonicalIP(s)
		if ok {
			out = append(out, networkingv1.IngressLoadBalancerIngress{IP: ip})
		}
		return ok
	}
	addHostname := func(s string) {
		if validHostname(s) {
			out = append(out, networkingv1.IngressLoadBalancerIngress{Hostname: s})
		}
	}
	addExternalIPs := func(svc *corev1.Service) bool {
		added := false
		for _, s := range svc.Spec.ExternalIPs {
			added = addIP(s) || added
		}
		return added
	}

	switch svc := src.Service; {
	case len(src.Addresses) > 0:
		for _, a := range src.Addresses {
			if ip, hostname, err := parseAddress(a); err == nil {
				out = append(out, networkingv1.IngressLoadBalancerIngress{IP: ip, Hostname: hostname})
			}
		}
	case svc == nil:
		for _, n := range src.Nodes {
			for _, a := range NodeAddresses(n, src.NodeInternalIP) {
				addIP(a)
			}
		}
	case svc.Spec.Type == corev1.ServiceTypeLoadBalancer:
		for _, lb := range svc.Status.LoadBalancer.Ingress {
			var e networkingv1.IngressLoadBalancerIngress
			e.IP, _ = canonicalIP(lb.IP)
			if validHostname(lb.Hostname) {
				e.Hostname = lb.Hostname
			}
			if e.IP != "" || e.Hostname != "" {
				out = append(out, e)
			}
		}
		addExternalIPs(svc)
	case svc.Spec.Type == corev1.ServiceTypeNodePort:
		if !addExternalIPs(svc) {
			addIP(svc.Spec.ClusterIP)
		}
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		// The API server accepts a trailing dot here but not in a status.
		addHostname(strings.TrimSuffix(svc.Spec.ExternalName, "."))
	default: // ClusterIP, or a type not set by defaulting
		addIP(svc.Spec.ClusterIP)
	}
	if len(out) == 0 {
		return nil
	}
	return dropCovered(normalize(out))
}

// normalize sorts entries with compareEntry and drops exact repeats, in place.
func normalize(es []networkingv1.IngressLoadBalancerIngress) []networkingv1.IngressLoadBalancerIngress {
	slices.SortFunc(es, compareEntry)
	return slices.CompactFunc(es, func(a, b networkingv1.IngressLoadBalancerIngress) bool {
		return compareEntry(a, b) == 0
	})
}

// dropCovered removes an IP-only or hostname-only entry whose value another
// entry already advertises together with the other half: it adds nothing.
func dropCovered(es []networkingv1.IngressLoadBalancerIngress) []networkingv1.IngressLoadBalancerIngress {
	paired := make(map[string]bool)
	for _, e := range es {
		if e.IP != "" && e.Hostname != "" {
			paired["ip:"+e.IP] = true
			paired["hostname:"+e.Hostname] = true
		}
	}
	if len(paired) == 0 {
		return es
	}
	return slices.DeleteFunc(es, func(e networkingv1.IngressLoadBalancerIngress) bool {
		return (e.Hostname == "" && paired["ip:"+e.IP]) || (e.IP == "" && paired["hostname:"+e.Hostname])
	})
}

// compareEntry orders status entries by hostname, then IP, then ports.
func compareEntry(a, b networkingv1.IngressLoadBalancerIngress) int {
	return cmp.Or(
		strings.Compare(a.Hostname, b.Hostname),
		compareIP(a.IP, b.IP),
		slices.CompareFunc(a.Ports, b.Ports, comparePort),
	)
}

// compareIP orders IPs by address, so "10.0.0.9" < "10.0.0.10", IPv4
// before IPv6, and "2001:DB8::1" equals "2001:db8::1". The empty string
// comes first; strings that do not parse come after every address, in byte
// order.
func compareIP(a, b string) int {
	if a == "" || b == "" {
		return strings.Compare(a, b)
	}
	x, errX := netip.ParseAddr(a)
	y, errY := netip.ParseAddr(b)
	switch {
	case errX == nil && errY == nil:
		return x.Compare(y)
	case errX == nil:
		return -1
	case errY == nil:
		return 1
	}
	return strings.Compare(a, b)
}

func comparePort(a, b networkingv1.IngressPortStatus) int {
	var errA, errB string
	if a.Error != nil {
		errA = "\x00" + *a.Error // set sorts after unset, even when empty
	}
	if b.Error != nil {
		errB = "\x00" + *b.Error
	}
	return cmp.Or(
		cmp.Compare(a.Port, b.Port),
		strings.Compare(string(a.Protocol), string(b.Protocol)),
		strings.Compare(errA, errB),
	)
}
