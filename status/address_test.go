package status

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type lbi = networkingv1.IngressLoadBalancerIngress

func ip(s string) lbi            { return lbi{IP: s} }
func hostname(s string) lbi      { return lbi{Hostname: s} }
func both(host, addr string) lbi { return lbi{Hostname: host, IP: addr} }

func TestParseAddresses(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: "   ", want: nil},
		{in: "10.0.0.1", want: []string{"10.0.0.1"}},
		{in: "10.0.0.1, lb.example.com ,2001:DB8::1", want: []string{"10.0.0.1", "lb.example.com", "2001:db8::1"}},
		{in: "lb.example.com,lb.example.com", want: []string{"lb.example.com", "lb.example.com"}},
		{in: "1.2.3", want: nil, wantErr: `option publish-address "1.2.3": entry 1: "1.2.3" is not a valid IP address`},
		{in: "10.0.0.1,,lb.example.com", wantErr: `option publish-address "10.0.0.1,,lb.example.com": entry 2 is empty`},
		{in: "10.0.0.1,", wantErr: `entry 2 is empty`},
		{in: "10.0.0.1,lb_1.example.com", wantErr: `option publish-address "10.0.0.1,lb_1.example.com": entry 2: "lb_1.example.com" is neither an IP address nor a DNS-1123 subdomain`},
		{in: "LB.example.com", wantErr: `entry 1: "LB.example.com" is neither an IP address nor a DNS-1123 subdomain`},
		{in: "010.0.0.1", wantErr: `entry 1: "010.0.0.1" is not a valid IP address`},
		{in: "10.0.0.256", wantErr: `entry 1: "10.0.0.256" is not a valid IP address`},
		{in: "2001:db8::g", wantErr: `entry 1: "2001:db8::g" is not a valid IP address`},
		{in: "fe80::1%eth0", wantErr: `entry 1: "fe80::1%eth0" is an IP address with a zone`},
		{in: "10.0.0.1,::ffff:192.0.2.1", wantErr: `entry 2: "::ffff:192.0.2.1" is an IPv4-mapped IPv6 address, which a status cannot carry: write 192.0.2.1`},
		{in: "http://lb.example.com", wantErr: `entry 1: "http://lb.example.com" is not a valid IP address`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseAddresses(tt.in)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Nil(t, got)
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAddresses(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func service(typ corev1.ServiceType, mutate func(*corev1.Service)) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "ramjet"},
		Spec:       corev1.ServiceSpec{Type: typ, ClusterIP: "10.96.0.10"},
	}
	if mutate != nil {
		mutate(svc)
	}
	return svc
}

func TestDesired(t *testing.T) {
	tests := []struct {
		name string
		src  Source
		want []lbi
	}{
		{name: "nothing configured", src: Source{}, want: nil},
		{
			name: "addresses: IPs as ip, names as hostname, sorted",
			src:  Source{Addresses: []string{"lb.example.com", "10.0.0.10", "2001:db8::1", "10.0.0.9", "a.example.com"}},
			want: []lbi{ip("10.0.0.9"), ip("10.0.0.10"), ip("2001:db8::1"), hostname("a.example.com"), hostname("lb.example.com")},
		},
		{
			name: "addresses: repeats and spellings of one IP collapse",
			src:  Source{Addresses: []string{"2001:DB8::1", "lb.example.com", "2001:db8:0::1", "lb.example.com"}},
			want: []lbi{ip("2001:db8::1"), hostname("lb.example.com")},
		},
		{
			name: "addresses: entries ParseAddresses would refuse are left out",
			src:  Source{Addresses: []string{"10.0.0.1", "", "bad_name", "010.0.0.1"}},
			want: []lbi{ip("10.0.0.1")},
		},
		{
			name: "addresses win over the service",
			src:  Source{Addresses: []string{"10.0.0.1"}, Service: service(corev1.ServiceTypeClusterIP, nil)},
			want: []lbi{ip("10.0.0.1")},
		},
		{name: "service not known yet", src: Source{Service: nil}, want: nil},
		{
			name: "ClusterIP: cluster IP",
			src:  Source{Service: service(corev1.ServiceTypeClusterIP, nil)},
			want: []lbi{ip("10.96.0.10")},
		},
		{
			name: "no type: cluster IP",
			src:  Source{Service: service("", nil)},
			want: []lbi{ip("10.96.0.10")},
		},
		{
			name: "ClusterIP: external IPs are not advertised",
			src: Source{Service: service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"192.0.2.1"}
			})},
			want: []lbi{ip("10.96.0.10")},
		},
		{
			name: "headless ClusterIP: nothing",
			src: Source{Service: service(corev1.ServiceTypeClusterIP, func(s *corev1.Service) {
				s.Spec.ClusterIP = corev1.ClusterIPNone
			})},
			want: nil,
		},
		{
			name: "NodePort without external IPs: cluster IP",
			src:  Source{Service: service(corev1.ServiceTypeNodePort, nil)},
			want: []lbi{ip("10.96.0.10")},
		},
		{
			name: "NodePort with external IPs: only those",
			src: Source{Service: service(corev1.ServiceTypeNodePort, func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"192.0.2.20", "192.0.2.3", "192.0.2.20"}
			})},
			want: []lbi{ip("192.0.2.3"), ip("192.0.2.20")},
		},
		{
			name: "NodePort whose external IPs are all unusable: cluster IP",
			src: Source{Service: service(corev1.ServiceTypeNodePort, func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"not-an-ip"}
			})},
			want: []lbi{ip("10.96.0.10")},
		},
		{
			name: "LoadBalancer not provisioned: nothing, not the cluster IP",
			src:  Source{Service: service(corev1.ServiceTypeLoadBalancer, nil)},
			want: nil,
		},
		{
			name: "LoadBalancer: status ingress plus external IPs",
			src: Source{Service: service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"192.0.2.9", "203.0.113.7"}
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
					{Hostname: "b.elb.example.com"},
					{IP: "203.0.113.7"},
					{Hostname: "a.elb.example.com", IP: "198.51.100.1", Ports: []corev1.PortStatus{{Port: 80, Protocol: corev1.ProtocolTCP}}},
				}
			})},
			want: []lbi{ip("192.0.2.9"), ip("203.0.113.7"), both("a.elb.example.com", "198.51.100.1"), hostname("b.elb.example.com")},
		},
		{
			name: "LoadBalancer: an external IP the cloud already reports with a hostname is not repeated",
			src: Source{Service: service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"198.51.100.1"}
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
					{Hostname: "a.elb.example.com", IP: "198.51.100.1"},
					{Hostname: "a.elb.example.com"},
				}
			})},
			want: []lbi{both("a.elb.example.com", "198.51.100.1")},
		},
		{
			name: "LoadBalancer: unusable halves are dropped, usable halves kept",
			src: Source{Service: service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
					{Hostname: "Bad_Name", IP: "198.51.100.2"},
					{Hostname: "ok.example.com", IP: "198.51.100.300"},
					{Hostname: "Bad_Name"},
				}
			})},
			want: []lbi{ip("198.51.100.2"), hostname("ok.example.com")},
		},
		{
			name: "ExternalName: its name as hostname",
			src: Source{Service: service(corev1.ServiceTypeExternalName, func(s *corev1.Service) {
				s.Spec.ClusterIP = ""
				s.Spec.ExternalName = "lb.example.com."
			})},
			want: []lbi{hostname("lb.example.com")},
		},
		{
			name: "IPv4-mapped IPv6 addresses, which the API server refuses in a status, are left out",
			src: Source{Service: service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"::ffff:192.0.2.9"}
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
					{IP: "::ffff:198.51.100.1"}, {Hostname: "a.elb.example.com", IP: "::ffff:198.51.100.2"}, {IP: "198.51.100.3"},
				}
			})},
			want: []lbi{ip("198.51.100.3"), hostname("a.elb.example.com")},
		},
		{
			name: "NodePort whose external IPs are IPv4-mapped: cluster IP",
			src: Source{Service: service(corev1.ServiceTypeNodePort, func(s *corev1.Service) {
				s.Spec.ExternalIPs = []string{"::ffff:192.0.2.9"}
			})},
			want: []lbi{ip("10.96.0.10")},
		},
		{
			name: "nodes: external addresses, internal where a node has none, repeats once",
			src: Source{Nodes: []*corev1.Node{
				node("a", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.1"}, corev1.NodeAddress{Type: corev1.NodeHostName, Address: "a"}),
				node("b", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.2"}, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "fd00::2"}),
				node("a", corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.1"}),
			}},
			want: []lbi{ip("10.1.0.2"), ip("203.0.113.1"), ip("fd00::2")},
		},
		{
			name: "nodes: internal addresses when asked",
			src: Source{NodeInternalIP: true, Nodes: []*corev1.Node{
				node("a", corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.1.0.1"}, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.1"}),
				node("c", corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.3"}),
			}},
			want: []lbi{ip("10.1.0.1")},
		},
		{
			name: "nodes: a publish Service wins, and an address a status cannot carry is left out",
			src: Source{Service: service(corev1.ServiceTypeClusterIP, nil), Nodes: []*corev1.Node{
				node("a", corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.1"}),
			}},
			want: []lbi{ip("10.96.0.10")},
		},
		{
			name: "nodes: an IPv4-mapped address is left out",
			src: Source{Nodes: []*corev1.Node{
				node("a", corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "::ffff:203.0.113.1"}, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.2"}),
			}},
			want: []lbi{ip("203.0.113.2")},
		},
		{
			name: "mixed IPv4 and IPv6 in address order",
			src: Source{Service: service(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
				s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{
					{IP: "2001:db8::10"}, {IP: "2001:db8::9"}, {IP: "9.9.9.9"}, {IP: "10.0.0.1"},
				}
			})},
			want: []lbi{ip("9.9.9.9"), ip("10.0.0.1"), ip("2001:db8::9"), ip("2001:db8::10")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Desired(tt.src)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Desired (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDesiredOrderIndependent checks that shuffled inputs give one result.
func TestDesiredOrderIndependent(t *testing.T) {
	addrs := []string{"lb.example.com", "10.0.0.10", "2001:db8::1", "10.0.0.9", "a.example.com", "10.0.0.9", "b.example.com"}
	want := Desired(Source{Addresses: addrs})
	require.Len(t, want, 6)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		shuffled := append([]string(nil), addrs...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if diff := cmp.Diff(want, Desired(Source{Addresses: shuffled})); diff != "" {
			t.Fatalf("Desired(%q) (-want +got):\n%s", shuffled, diff)
		}
	}
}

func TestCompareEntry(t *testing.T) {
	empty, refused := "", "refused"
	port := func(n int32, proto corev1.Protocol, err *string) networkingv1.IngressPortStatus {
		return networkingv1.IngressPortStatus{Port: n, Protocol: proto, Error: err}
	}
	withPorts := func(e lbi, ps ...networkingv1.IngressPortStatus) lbi { e.Ports = ps; return e }
	tests := []struct {
		name string
		a, b lbi
		want int
	}{
		{"IP-only before hostname", ip("203.0.113.1"), hostname("a.example.com"), -1},
		{"hostname first", both("a.example.com", "203.0.113.9"), both("b.example.com", "10.0.0.1"), -1},
		{"same hostname: hostname-only first", both("a.example.com", "10.0.0.1"), hostname("a.example.com"), 1},
		{"IPs by address", ip("10.0.0.9"), ip("10.0.0.10"), -1},
		{"IPv4 before IPv6", ip("255.255.255.255"), ip("::1"), -1},
		{"spellings of one IPv6 address are equal", ip("2001:DB8::1"), ip("2001:db8:0:0::1"), 0},
		{"an address before an unparsable string", ip("2001:db8::1"), ip("bogus"), -1},
		{"unparsable strings in byte order", ip("bogus-b"), ip("bogus-a"), 1},
		{"no ports before ports", ip("10.0.0.1"), withPorts(ip("10.0.0.1"), port(80, corev1.ProtocolTCP, nil)), -1},
		{"nil and empty ports are equal", withPorts(ip("10.0.0.1")), lbi{IP: "10.0.0.1", Ports: []networkingv1.IngressPortStatus{}}, 0},
		{"ports by number", withPorts(ip("10.0.0.1"), port(443, corev1.ProtocolTCP, nil)), withPorts(ip("10.0.0.1"), port(80, corev1.ProtocolTCP, nil)), 1},
		{"ports by protocol", withPorts(ip("10.0.0.1"), port(53, corev1.ProtocolTCP, nil)), withPorts(ip("10.0.0.1"), port(53, corev1.ProtocolUDP, nil)), -1},
		{"unset error before an empty one", withPorts(ip("10.0.0.1"), port(80, corev1.ProtocolTCP, nil)), withPorts(ip("10.0.0.1"), port(80, corev1.ProtocolTCP, &empty)), -1},
		{"errors by text", withPorts(ip("10.0.0.1"), port(80, corev1.ProtocolTCP, &refused)), withPorts(ip("10.0.0.1"), port(80, corev1.ProtocolTCP, &empty)), 1},
		{"equal errors", withPorts(ip("10.0.0.1"), port(80, corev1.ProtocolTCP, &refused)), withPorts(ip("10.0.0.1"), port(80, corev1.ProtocolTCP, new("refused"))), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, compareEntry(tt.a, tt.b), "compareEntry(a, b)")
			require.Equal(t, -tt.want, compareEntry(tt.b, tt.a), "compareEntry(b, a)")
		})
	}
}

func node(name string, addrs ...corev1.NodeAddress) *corev1.Node {
	n := &corev1.Node{}
	n.Name = name
	n.Status.Addresses = addrs
	return n
}
