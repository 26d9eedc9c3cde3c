package compile

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"ramjet.dev/ramjet/match"
)

func TestPortMatching(t *testing.T) {
	svc := mkService("prod", "api", "http:80:web", "admin:8081:", ":9090:metrics")
	slices := []runtime.Object{
		mkSlice("prod", "api", "api-web", "http", 8080, "10.0.0.1"),
		mkSlice("prod", "api", "api-admin", "admin", 8081, "10.0.0.2"),
		mkSlice("prod", "api", "api-metrics", "", 9191, "10.0.0.3"),
	}
	tests := []struct {
		name      string
		port      any
		wantID    string
		wantState match.BackendState
		wantEPs   []string
		warn      Reason
	}{
		{name: "by number", port: 80, wantID: "prod/api:80", wantEPs: []string{"10.0.0.1:8080"}},
		{name: "by name", port: "http", wantID: "prod/api:80", wantEPs: []string{"10.0.0.1:8080"}},
		{name: "second port by name", port: "admin", wantID: "prod/api:8081", wantEPs: []string{"10.0.0.2:8081"}},
		{name: "unnamed port by number", port: 9090, wantID: "prod/api:9090", wantEPs: []string{"10.0.0.3:9191"}},
		{name: "targetPort name quirk", port: "web", wantID: "prod/api:80", wantEPs: []string{"10.0.0.1:8080"}, warn: PortMatchedTargetPort},
		{name: "targetPort name quirk, unnamed port", port: "metrics", wantID: "prod/api:9090", wantEPs: []string{"10.0.0.3:9191"}, warn: PortMatchedTargetPort},
		{name: "no such port number", port: 81, wantID: "prod/api:81", wantState: match.PortNotFound, warn: ServicePortNotFound},
		{name: "no such port name", port: "grpc", wantID: "prod/api:grpc", wantState: match.PortNotFound, warn: ServicePortNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mkSnapshot(append(slices, svc,
				mkIngress("prod", "shop", 1, withRules(mkRule("shop.example.com", prefix("/", "api", tt.port)))))...)
			tab, ws := compileOK(t, s, Options{})
			res := tab.Lookup("shop.example.com", "/")
			require.NotNil(t, res.Backend)
			require.Equal(t, tt.wantID, res.Backend.ID)
			require.Equal(t, tt.wantState, res.Backend.State)
			if diff := cmp.Diff(tt.wantEPs, res.Backend.Endpoints); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
			if tt.warn == "" {
				require.Empty(t, ws)
				return
			}
			require.Equal(t, []short{{tt.warn, "Ingress prod/shop", "spec.rules[0].http.paths[0].backend.service.port"}}, shorten(ws))
		})
	}
}

func TestServiceProblems(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkExternalName("prod", "ext"),
		mkService("other", "elsewhere", ":80:"), mkSlice("other", "elsewhere", "e", "", 80, "10.0.0.5"),
		mkIngress("prod", "shop", 1, withRules(mkRule("shop.example.com",
			prefix("/missing", "ghost", 80),
			prefix("/ext", "ext", 80),
			prefix("/port", "web", 81),
			prefix("/elsewhere", "elsewhere", 80), // a Service of another namespace is not visible
			prefix("/", "web", 80),
		))),
	)
	tab, ws := compileOK(t, s, Options{})
	const p = "spec.rules[0].http.paths["
	want := []short{
		{ServiceNotFound, "Ingress prod/shop", p + "0].backend.service.name"},
		{ExternalNameUnsupported, "Ingress prod/shop", p + "1].backend.service.name"},
		{ServicePortNotFound, "Ingress prod/shop", p + "2].backend.service.port"},
		{ServiceNotFound, "Ingress prod/shop", p + "3].backend.service.name"},
	}
	if diff := cmp.Diff(want, shorten(ws)); diff != "" {
		t.Fatalf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
	}
	states := map[string]match.BackendState{}
	for _, path := range []string{"/missing", "/ext", "/port", "/elsewhere", "/ok"} {
		be := tab.Lookup("shop.example.com", path).Backend
		require.NotNil(t, be, path)
		states[path] = be.State
		require.Equal(t, path == "/ok", be.Servable(), path)
	}
	require.Equal(t, map[string]match.BackendState{
		"/missing": match.ServiceNotFound, "/ext": match.ExternalName, "/port": match.PortNotFound,
		"/elsewhere": match.ServiceNotFound, "/ok": match.Serving,
	}, states)
	require.Equal(t, "prod/ext:80", served(tab, "shop.example.com", "/ext"))
	require.Empty(t, tab.Lookup("shop.example.com", "/ext").Backend.Endpoints, "ExternalName is never followed")
}

func TestEndpoints(t *testing.T) {
	fqdn := mkSlice("prod", "api", "api-fqdn", "http", 8080, "10.0.0.99")
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	fqdn.Endpoints[0].Addresses = []string{"pod.example.com"}
	noPort := mkSlice("prod", "api", "api-noport", "other", 8080, "10.0.0.98")
	wrongNS := mkSlice("other", "api", "api-other", "http", 8080, "10.0.0.97")
	unlabelled := mkSlice("prod", "api", "api-unlabelled", "http", 8080, "10.0.0.96")
	unlabelled.Labels = nil
	garbage := mkSlice("prod", "api", "api-garbage", "http", 8080, "not-an-ip")

	s := mkSnapshot(
		mkService("prod", "api", "http:80:web"),
		mkSlice("prod", "api", "api-a", "http", 8080, "10.0.0.3", "!10.0.0.4", "?10.0.0.1", "10.0.0.10"),
		mkSlice("prod", "api", "api-b", "http", 8080, "10.0.0.3", "10.0.0.2"), // duplicate 10.0.0.3 collapses
		mkSlice("prod", "api", "api-v6", "http", 8080, "fd00::1", "!fd00::2"),
		mkSlice("prod", "api", "api-v6-again", "http", 8080, "fd00:0:0::1"), // the same address, spelled differently
		fqdn, noPort, wrongNS, unlabelled, garbage,
		mkIngress("prod", "shop", 1, withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Empty(t, ws)
	want := []string{"10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080", "10.0.0.10:8080", "[fd00::1]:8080"}
	if diff := cmp.Diff(want, tab.Lookup("shop.example.com", "/").Backend.Endpoints); diff != "" {
		t.Errorf("endpoints (-want +got):\n%s", diff)
	}
}

// Paths naming the same Service port, by number or by name, from one or
// several Ingresses, share one backend (SPEC §8).
func TestBackendsShared(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "api", "http:80:"), mkSlice("prod", "api", "a", "http", 80, "10.0.0.1"),
		mkIngress("prod", "one", 1, withRules(mkRule("a.example.com", prefix("/x", "api", 80), prefix("/y", "api", "http")))),
		mkIngress("prod", "two", 2, withDefault("api", "http"), withRules(mkRule("b.example.com", exact("/z", "api", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Empty(t, ws)
	backends := slices.Collect(tab.Backends())
	require.Len(t, backends, 1)
	be := backends[0]
	require.Equal(t, "prod/api:80", be.ID)
	require.Equal(t, int32(80), be.Port)
	require.Equal(t, "prod", be.Namespace)
	require.Equal(t, "api", be.Name)
	for _, probe := range [][2]string{{"a.example.com", "/x"}, {"a.example.com", "/y"}, {"b.example.com", "/z"}, {"b.example.com", "/other"}} {
		require.Same(t, be, tab.Lookup(probe[0], probe[1]).Backend, probe)
	}
}

// TestEndpointRejected: addresses that can never be a pod are dropped with
// EndpointRejected naming the slice and the address (SPEC §8); ingress-nginx
// dials whatever a hand-written EndpointSlice names, the cloud metadata
// address included. Loopback is kept only with AllowLoopbackEndpoints.
func TestEndpointRejected(t *testing.T) {
	tests := []struct {
		addr          string
		why           string // "" when kept
		allowLoopback bool
	}{
		{"10.0.0.1", "", false},
		{"fd00::1", "", false},
		{"169.254.169.254", "link-local", false},
		{"169.254.0.1", "link-local", false},
		{"0.0.0.0", "unspecified", false},
		{"::", "unspecified", false},
		{"255.255.255.255", "broadcast", false},
		{"224.0.0.1", "multicast", false},
		{"ff02::1", "multicast", false},
		{"fe80::1", "link-local", false},
		{"fe80::1%eth0", "link-local", false},
		{"febf::1", "link-local", false},
		{"fd00::1%eth0", "scoped to an interface", false},
		{"::ffff:169.254.169.254", "link-local", false},
		{"127.0.0.1", "loopback", false},
		{"127.1.2.3", "loopback", false},
		{"::1", "loopback", false},
		{"::ffff:127.0.0.1", "loopback", false},
		{"127.0.0.1", "", true},
		{"::1", "", true},
		{"169.254.169.254", "link-local", true},
		{"0.0.0.0", "unspecified", true},
		// The cloud metadata services outside link-local, and the other
		// spellings of them that still reach them (issue 19).
		{"169.254.169.254", "metadata service of AWS, GCP, Azure, Oracle", false},
		{"fd00:ec2::254", "AWS instance metadata", false},
		{"fd00:0ec2:0000::0254", "AWS instance metadata", false},
		{"fd20:ce::254", "GCP metadata", false},
		{"168.63.129.16", "Azure WireServer", false},
		{"100.100.100.200", "Alibaba Cloud metadata", false},
		{"192.0.0.192", "Oracle Cloud metadata", false},
		{"::ffff:100.100.100.200", "Alibaba Cloud metadata", false},
		{"::a9fe:a9fe", "IPv4-compatible spelling of 169.254.169.254, which is the metadata service", false},
		{"::169.254.169.254", "IPv4-compatible spelling of 169.254.169.254", false},
		{"::6464:64c8", "IPv4-compatible spelling of 100.100.100.200, which is the Alibaba", false},
		{"::ffff:0:a9fe:a9fe", "IPv4-translated (SIIT) spelling of 169.254.169.254", false},
		{"64:ff9b::a9fe:a9fe", "NAT64 spelling of 169.254.169.254", false},
		{"64:ff9b::168.63.129.16", "NAT64 spelling of 168.63.129.16, which is the Azure", false},
		{"64:ff9b::7f00:1", "NAT64 spelling of 127.0.0.1, which is loopback", false},
		{"64:ff9b::7f00:1", "NAT64 spelling of 127.0.0.1, which is loopback", true},
		{"64:ff9b:1::a9fe:a9fe", "local-use NAT64 spelling of 169.254.169.254", false},
		{"64:ff9b:1:a9fe:a9:fea9:fe00:0", "local-use NAT64 spelling of 169.254.169.254", false}, // /48
		{"64:ff9b:1:0:a9:fea9:fe00:0", "local-use NAT64 spelling of 169.254.169.254", false},    // /64
		{"64:ff9b:1::a00:1", "", false},
		{"2002:a9fe:a9fe::1", "6to4 spelling of 169.254.169.254", false},
		{"2002:6464:64c8::", "6to4 spelling of 100.100.100.200", false},
		{"2001:0:4136:e378:8000:63bf:5601:5601", "Teredo spelling of 169.254.169.254", false},
		// Other addresses in those forms, and near the metadata addresses,
		// are not refused for that.
		{"::a00:1", "", false},
		{"64:ff9b::a00:1", "", false},
		{"2002:a00:1::1", "", false},
		{"fd00:ec2::253:1", "", false},
		{"100.100.100.201", "", false},
		{"fd00:ec3::254", "", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s allowLoopback=%v", tt.addr, tt.allowLoopback), func(t *testing.T) {
			s := mkSnapshot(
				mkService("prod", "api", "http:80:web"),
				mkSlice("prod", "api", "api-ok", "http", 8080, "10.9.9.9"),
				mkSlice("prod", "api", "api-hand", "http", 8080, tt.addr),
				mkIngress("prod", "shop", 1, withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
			)
			tab, ws := compileOK(t, s, Options{AllowLoopbackEndpoints: tt.allowLoopback})
			eps := tab.Lookup("shop.example.com", "/").Backend.Endpoints
			if tt.why == "" {
				require.Empty(t, ws)
				require.Len(t, eps, 2)
				return
			}
			if diff := cmp.Diff([]string{"10.9.9.9:8080"}, eps); diff != "" {
				t.Errorf("endpoints (-want +got):\n%s", diff)
			}
			want := []short{{EndpointRejected, "EndpointSlice prod/api-hand", "endpoints[0].addresses[0]"}}
			if diff := cmp.Diff(want, shorten(ws)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			require.Len(t, ws, 1)
			assert.Contains(t, ws[0].Message, tt.addr)
			assert.Contains(t, ws[0].Message, tt.why)
		})
	}
}
