package status

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// brief is a condition without its message and time: what the tests
// compare.
type brief struct {
	Type, Status, Reason string
	Generation           int64
}

func briefs(cs []metav1.Condition) []brief {
	out := make([]brief, len(cs))
	for i, c := range cs {
		out[i] = brief{c.Type, string(c.Status), c.Reason, c.ObservedGeneration}
	}
	return out
}

func TestGatewayConditions(t *testing.T) {
	f := GatewayFacts{Generation: 3, Listeners: []ListenerFacts{
		{Name: "http", AttachedRoutes: 2},
		{Name: "tcp", UnsupportedProtocol: "TCP"},
		{Name: "https", CertificateProblems: []Problem{{ReasonRefNotPermitted, "no grant"}, {ReasonInvalidCertificateRef, "missing"}}},
		{Name: "dup", Conflict: ReasonHostnameConflict},
		{Name: "kinds", InvalidRouteKinds: []string{"TCPRoute"}},
	}}
	gw, ls := GatewayConditions(f)
	want := [][]brief{
		{{"Accepted", "True", "Accepted", 3}, {"Conflicted", "False", "NoConflicts", 3}, {"ResolvedRefs", "True", "ResolvedRefs", 3}, {"Programmed", "True", "Programmed", 3}},
		{{"Accepted", "False", "UnsupportedProtocol", 3}, {"Conflicted", "False", "NoConflicts", 3}, {"ResolvedRefs", "True", "ResolvedRefs", 3}, {"Programmed", "False", "Invalid", 3}},
		{{"Accepted", "True", "Accepted", 3}, {"Conflicted", "False", "NoConflicts", 3}, {"ResolvedRefs", "False", "RefNotPermitted", 3}, {"Programmed", "False", "Invalid", 3}},
		{{"Accepted", "True", "Accepted", 3}, {"Conflicted", "True", "HostnameConflict", 3}, {"ResolvedRefs", "True", "ResolvedRefs", 3}, {"Programmed", "False", "Invalid", 3}},
		{{"Accepted", "True", "Accepted", 3}, {"Conflicted", "False", "NoConflicts", 3}, {"ResolvedRefs", "False", "InvalidRouteKinds", 3}, {"Programmed", "True", "Programmed", 3}},
	}
	if len(ls) != len(want) {
		t.Fatalf("%d listener condition lists, want %d", len(ls), len(want))
	}
	for i := range want {
		if d := cmp.Diff(want[i], briefs(ls[i])); d != "" {
			t.Errorf("listener %s (-want +got):\n%s", f.Listeners[i].Name, d)
		}
	}
	if got := ls[2][2].Message; got != "no grant; missing" {
		t.Errorf("ResolvedRefs message %q, want both problems", got)
	}
	if d := cmp.Diff([]brief{{"Accepted", "True", "ListenersNotValid", 3}, {"Programmed", "True", "Programmed", 3}}, briefs(gw)); d != "" {
		t.Errorf("gateway (-want +got):\n%s", d)
	}

	gw, _ = GatewayConditions(GatewayFacts{Generation: 1, Listeners: []ListenerFacts{{Name: "a"}}})
	if d := cmp.Diff([]brief{{"Accepted", "True", "Accepted", 1}, {"Programmed", "True", "Programmed", 1}}, briefs(gw)); d != "" {
		t.Errorf("healthy gateway (-want +got):\n%s", d)
	}
	gw, _ = GatewayConditions(GatewayFacts{Generation: 1, Listeners: []ListenerFacts{{Name: "a", UnsupportedProtocol: "UDP"}}})
	if d := cmp.Diff([]brief{{"Accepted", "False", "ListenersNotValid", 1}, {"Programmed", "False", "Invalid", 1}}, briefs(gw)); d != "" {
		t.Errorf("gateway without a valid listener (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]brief{{"Accepted", "True", "Accepted", 7}}, briefs(GatewayClassConditions(7, ""))); d != "" {
		t.Errorf("gatewayclass (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]brief{{"Accepted", "False", "InvalidParameters", 7}}, briefs(GatewayClassConditions(7, "spec.parametersRef: none read"))); d != "" {
		t.Errorf("gatewayclass with parameters (-want +got):\n%s", d)
	}
}

// TestGatewayConditionMessages: the messages say what is served. A
// listener whose only problem is a refused certificate is not Programmed,
// but its routes are served (with another certificate for its hosts,
// else the default one), so neither it nor its Gateway says that nothing
// is served; and TLS (passthrough) listeners are served beside HTTP and
// HTTPS.
func TestGatewayConditionMessages(t *testing.T) {
	gw, ls := GatewayConditions(GatewayFacts{Generation: 1, Listeners: []ListenerFacts{
		{Name: "https", CertificateProblems: []Problem{{ReasonInvalidCertificateRef, "missing"}}},
		{Name: "tcp", UnsupportedProtocol: "TCP"},
	}})
	if c := ls[0][3]; c.Type != ConditionProgrammed || strings.Contains(c.Message, "not served") || !strings.Contains(c.Message, "default certificate") {
		t.Errorf("listener https: %s %q, want a message saying its routes are served with another certificate, else the default one", c.Type, c.Message)
	}
	if c := gw[1]; c.Type != ConditionProgrammed || strings.Contains(c.Message, "no listener is served") {
		t.Errorf("gateway: %s %q, want no claim that nothing is served", c.Type, c.Message)
	}
	if c := ls[1][0]; !strings.Contains(c.Message, "TLS") {
		t.Errorf("listener tcp: Accepted %q does not name TLS among the protocols served", c.Message)
	}
}

func TestRouteParentConditions(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    RouteParentFacts
		want []brief
	}{
		{"served", RouteParentFacts{Generation: 2},
			[]brief{{"Accepted", "True", "Accepted", 2}, {"ResolvedRefs", "True", "ResolvedRefs", 2}}},
		{"not allowed, refs still judged", RouteParentFacts{Generation: 2, NotAccepted: &Problem{ReasonNotAllowedByListeners, "ns"}, RefProblems: []Problem{{ReasonBackendNotFound, "svc"}}},
			[]brief{{"Accepted", "False", "NotAllowedByListeners", 2}, {"ResolvedRefs", "False", "BackendNotFound", 2}}},
		{"hostname", RouteParentFacts{Generation: 1, NotAccepted: &Problem{ReasonNoMatchingListenerHostname, "h"}},
			[]brief{{"Accepted", "False", "NoMatchingListenerHostname", 1}, {"ResolvedRefs", "True", "ResolvedRefs", 1}}},
		{"no parent", RouteParentFacts{Generation: 1, NotAccepted: &Problem{ReasonNoMatchingParent, "s"}},
			[]brief{{"Accepted", "False", "NoMatchingParent", 1}, {"ResolvedRefs", "True", "ResolvedRefs", 1}}},
		{"first ref problem decides", RouteParentFacts{Generation: 1, RefProblems: []Problem{{ReasonRefNotPermitted, "a"}, {ReasonInvalidKind, "b"}}},
			[]brief{{"Accepted", "True", "Accepted", 1}, {"ResolvedRefs", "False", "RefNotPermitted", 1}}},
	} {
		if d := cmp.Diff(tc.want, briefs(RouteParentConditions(tc.f))); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	got := RouteParentConditions(RouteParentFacts{Unsupported: []string{"spec.rules[0].timeouts: not applied"}})
	if got[0].Status != metav1.ConditionTrue || got[0].Message != "the route is served, except: spec.rules[0].timeouts: not applied" {
		t.Errorf("partly served route: %+v", got[0])
	}
}

func TestMergeConditions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Hour))
	decided := RouteParentConditions(RouteParentFacts{Generation: 1})

	first, changed := MergeConditions(nil, decided, t0)
	if !changed || !first[0].LastTransitionTime.Equal(&t0) {
		t.Fatalf("first write: changed %v, %+v", changed, first)
	}
	// The same decision later (a resync) writes nothing and keeps the
	// times.
	again, changed := MergeConditions(first, RouteParentConditions(RouteParentFacts{Generation: 1}), t1)
	if changed || !again[0].LastTransitionTime.Equal(&t0) {
		t.Errorf("unchanged decision: changed %v, %+v", changed, again)
	}
	// A new generation with the same statuses is a change, but not a
	// transition.
	gen2, changed := MergeConditions(first, RouteParentConditions(RouteParentFacts{Generation: 2}), t1)
	if !changed || !gen2[0].LastTransitionTime.Equal(&t0) || gen2[0].ObservedGeneration != 2 {
		t.Errorf("new generation: changed %v, %+v", changed, gen2)
	}
	// A status flip is a transition; the other condition keeps its time.
	flip, changed := MergeConditions(first, RouteParentConditions(RouteParentFacts{Generation: 1, RefProblems: []Problem{{ReasonBackendNotFound, "x"}}}), t1)
	if !changed || !flip[1].LastTransitionTime.Equal(&t1) || !flip[0].LastTransitionTime.Equal(&t0) {
		t.Errorf("flip: changed %v, %+v", changed, flip)
	}
	// A condition ramjet does not decide stays.
	other := append(first, metav1.Condition{Type: "example.com/Extra", Status: metav1.ConditionTrue, Reason: "X", LastTransitionTime: t0})
	kept, changed := MergeConditions(other, decided, t1)
	if changed || len(kept) != 3 || kept[2].Type != "example.com/Extra" {
		t.Errorf("foreign condition: changed %v, %+v", changed, kept)
	}
}
