package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ingress(namespace, name string, status ...lbi) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Status: networkingv1.IngressStatus{
			LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: status},
		},
	}
}

func update(namespace, name string, status ...lbi) Update {
	return Update{
		Namespace: namespace,
		Name:      name,
		Status:    networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: status}},
	}
}

func TestUpdates(t *testing.T) {
	desired := []lbi{ip("10.0.0.1"), hostname("lb.example.com")}
	errText := "PortUnreachable"
	tests := []struct {
		name    string
		claimed []*networkingv1.Ingress
		desired []lbi
		enabled bool
		want    []Update
	}{
		{
			name:    "empty status gets the addresses",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop")},
			desired: desired,
			enabled: true,
			want:    []Update{update("prod", "shop", desired...)},
		},
		{
			name:    "identical status: no update",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop", desired...)},
			desired: desired,
			enabled: true,
			want:    nil,
		},
		{
			name:    "same set in another order, with a repeat and another IP spelling: no update",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop", hostname("lb.example.com"), ip("10.0.0.1"), hostname("lb.example.com"))},
			desired: desired,
			enabled: true,
			want:    nil,
		},
		{
			name:    "IPv6 spelled differently: no update",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop", ip("2001:DB8:0::1"))},
			desired: []lbi{ip("2001:db8::1")},
			enabled: true,
			want:    nil,
		},
		{
			name: "differing status: updated, others left alone",
			claimed: []*networkingv1.Ingress{
				ingress("prod", "shop", ip("10.0.0.2")),
				ingress("prod", "cart", desired...),
				ingress("dev", "shop", append([]lbi{ip("10.0.0.9")}, desired...)...),
				ingress("dev", "api", ip("10.0.0.1")),
			},
			desired: desired,
			enabled: true,
			want: []Update{
				update("dev", "api", desired...),
				update("dev", "shop", desired...),
				update("prod", "shop", desired...),
			},
		},
		{
			name: "ports written by someone else differ",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop",
				lbi{IP: "10.0.0.1", Ports: []networkingv1.IngressPortStatus{{Port: 443, Protocol: corev1.ProtocolTCP, Error: &errText}}},
				hostname("lb.example.com"))},
			desired: desired,
			enabled: true,
			want:    []Update{update("prod", "shop", desired...)},
		},
		{
			name:    "desired given unsorted is written sorted and without repeats",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop")},
			desired: []lbi{hostname("lb.example.com"), ip("10.0.0.1"), ip("10.0.0.1")},
			enabled: true,
			want:    []Update{update("prod", "shop", desired...)},
		},
		{
			name:    "disabled: nothing",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop", ip("10.0.0.2"))},
			desired: desired,
			enabled: false,
			want:    nil,
		},
		{
			name:    "nothing to advertise: existing status is kept",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop", ip("10.0.0.2"))},
			desired: nil,
			enabled: true,
			want:    nil,
		},
		{
			name:    "nil entries are skipped",
			claimed: []*networkingv1.Ingress{nil, ingress("prod", "shop"), nil},
			desired: desired,
			enabled: true,
			want:    []Update{update("prod", "shop", desired...)},
		},
		{
			name:    "a key listed twice is written once when either copy differs",
			claimed: []*networkingv1.Ingress{ingress("prod", "shop", desired...), ingress("prod", "shop")},
			desired: desired,
			enabled: true,
			want:    []Update{update("prod", "shop", desired...)},
		},
		{
			name:    "no claimed Ingresses: nothing",
			claimed: nil,
			desired: desired,
			enabled: true,
			want:    nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Updates(tt.claimed, tt.desired, tt.enabled)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Updates (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdatesOnlyClaimed checks that Updates writes exactly the Ingresses it
// is given: unclaimed ones are left out by the caller and never appear.
func TestUpdatesOnlyClaimed(t *testing.T) {
	all := []*networkingv1.Ingress{ingress("prod", "ours"), ingress("prod", "theirs"), ingress("dev", "ours")}
	claimed := []*networkingv1.Ingress{all[2], all[0]}
	got := Updates(claimed, []lbi{ip("10.0.0.1")}, true)
	var keys []string
	for _, u := range got {
		keys = append(keys, u.Namespace+"/"+u.Name)
	}
	if diff := cmp.Diff([]string{"dev/ours", "prod/ours"}, keys); diff != "" {
		t.Errorf("updated Ingresses (-want +got):\n%s", diff)
	}
}

// TestUpdatesCopies checks that the caller may change an Update without
// touching desired, the Ingresses or the other Updates.
func TestUpdatesCopies(t *testing.T) {
	desired := []lbi{{IP: "10.0.0.1", Ports: []networkingv1.IngressPortStatus{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	claimed := []*networkingv1.Ingress{ingress("prod", "a"), ingress("prod", "b")}
	got := Updates(claimed, desired, true)
	require.Len(t, got, 2)
	got[0].Status.LoadBalancer.Ingress[0].IP = "10.0.0.99"
	got[0].Status.LoadBalancer.Ingress[0].Ports[0].Port = 8080
	require.Equal(t, "10.0.0.1", desired[0].IP)
	require.Equal(t, int32(80), desired[0].Ports[0].Port)
	require.Equal(t, "10.0.0.1", got[1].Status.LoadBalancer.Ingress[0].IP)
	require.Equal(t, int32(80), got[1].Status.LoadBalancer.Ingress[0].Ports[0].Port)
	require.Empty(t, claimed[0].Status.LoadBalancer.Ingress)
}

// TestUpdatesConverge checks that applying the updates leaves nothing to do.
func TestUpdatesConverge(t *testing.T) {
	desired := Desired(Source{Addresses: []string{"lb.example.com", "10.0.0.1", "2001:db8::1"}})
	claimed := []*networkingv1.Ingress{ingress("prod", "a"), ingress("prod", "b", ip("10.0.0.1"))}
	ups := Updates(claimed, desired, true)
	require.Len(t, ups, 2)
	for i, u := range ups {
		claimed[i].Status = u.Status
	}
	require.Empty(t, Updates(claimed, desired, true))
}
