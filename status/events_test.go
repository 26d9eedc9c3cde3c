package status

import (
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
)

var (
	svcMissing = compile.Warning{
		Reason:  compile.ServiceNotFound,
		Object:  compile.Ref{Kind: "Ingress", Namespace: "prod", Name: "shop"},
		Field:   "spec.rules[0].http.paths[1].backend.service.name",
		Message: "Service prod/api not found; requests answer 503",
	}
	routeConflict = compile.Warning{
		Reason:  compile.RouteConflict,
		Object:  compile.Ref{Kind: "Ingress", Namespace: "prod", Name: "cart"},
		Field:   "spec.rules[0].http.paths[0]",
		Message: "shop.example.com Prefix /cart is declared earlier",
		Winner:  compile.Ref{Kind: "Ingress", Namespace: "prod", Name: "a"}, WinnerField: "spec.rules[0].http.paths[0]",
	}
	classNotFound = compile.Warning{
		Reason:  compile.ClassNotFound,
		Object:  compile.Ref{Kind: "Ingress", Namespace: "dev", Name: "blog"},
		Field:   "spec.ingressClassName",
		Message: `IngressClass "nginx" not found`,
	}
	globalDefault = compile.Warning{
		Reason:  compile.DefaultBackendUnavailable,
		Object:  compile.Ref{Kind: "Service", Namespace: "demo", Name: "missing"},
		Field:   "--default-backend",
		Message: "global default backend demo/missing:80: Service demo/missing not found; unmatched requests answer 404",
	}
)

var (
	evSvcMissing = Event{Kind: "Ingress", Namespace: "prod", Name: "shop", Reason: "ServiceNotFound",
		Message: "spec.rules[0].http.paths[1].backend.service.name: Service prod/api not found; requests answer 503", Warning: svcMissing}
	evRouteConflict = Event{Kind: "Ingress", Namespace: "prod", Name: "cart", Reason: "RouteConflict",
		Message: "spec.rules[0].http.paths[0]: shop.example.com Prefix /cart is declared earlier (winner: Ingress prod/a spec.rules[0].http.paths[0])", Warning: routeConflict}
	evClassNotFound = Event{Kind: "Ingress", Namespace: "dev", Name: "blog", Reason: "ClassNotFound",
		Message: `spec.ingressClassName: IngressClass "nginx" not found`, Warning: classNotFound}
)

func TestEventDeduperSequence(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	portMissing := compile.Warning{
		Reason:  compile.ServicePortNotFound,
		Object:  compile.Ref{Kind: "Ingress", Namespace: "prod", Name: "shop"},
		Field:   "spec.rules[0].http.paths[1].backend.service.port",
		Message: "Service prod/api has no port 8080; requests answer 503",
	}
	evPortMissing := Event{Kind: "Ingress", Namespace: "prod", Name: "shop", Reason: "ServicePortNotFound",
		Message: "spec.rules[0].http.paths[1].backend.service.port: Service prod/api has no port 8080; requests answer 503", Warning: portMissing}

	type step struct {
		name     string
		now      time.Time
		warnings []compile.Warning
		want     []Event
	}
	steps := []step{
		{"first rebuild posts every Ingress problem, sorted, and skips the Service one",
			at(0), []compile.Warning{svcMissing, globalDefault, routeConflict, classNotFound, svcMissing},
			[]Event{evClassNotFound, evRouteConflict, evSvcMissing}},
		{"unchanged 200 ms later: nothing", at(200 * time.Millisecond),
			[]compile.Warning{routeConflict, classNotFound, svcMissing, globalDefault}, nil},
		{"unchanged in another order: nothing", at(time.Second),
			[]compile.Warning{svcMissing, classNotFound, routeConflict}, nil},
		{"one resolved: nothing", at(2 * time.Second),
			[]compile.Warning{classNotFound, routeConflict}, nil},
		{"a new problem: posted", at(3 * time.Second),
			[]compile.Warning{classNotFound, routeConflict, portMissing}, []Event{evPortMissing}},
		{"the resolved one comes back: posted again", at(4 * time.Second),
			[]compile.Warning{classNotFound, routeConflict, portMissing, svcMissing}, []Event{evSvcMissing}},
		{"just before the re-post interval: nothing", at(50*time.Minute - time.Millisecond),
			[]compile.Warning{classNotFound, routeConflict, portMissing, svcMissing}, nil},
		{"at the interval: the problems posted at first are posted again", at(50 * time.Minute),
			[]compile.Warning{classNotFound, routeConflict, portMissing, svcMissing}, []Event{evClassNotFound, evRouteConflict}},
		{"the later ones follow at their own interval", at(50*time.Minute + 4*time.Second),
			[]compile.Warning{classNotFound, routeConflict, portMissing, svcMissing}, []Event{evSvcMissing, evPortMissing}},
		{"all resolved: nothing", at(51 * time.Minute), nil, nil},
		{"all back: all posted", at(51*time.Minute + time.Second),
			[]compile.Warning{routeConflict, classNotFound}, []Event{evClassNotFound, evRouteConflict}},
	}

	d := NewEventDeduper(DefaultRepostAfter)
	for _, s := range steps {
		got := d.Filter(s.warnings, s.now)
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Fatalf("step %q: Filter (-want +got):\n%s", s.name, diff)
		}
	}
}

func TestEventDeduperNoRepost(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, d := range []*EventDeduper{{}, NewEventDeduper(0), NewEventDeduper(-time.Minute)} {
		require.Equal(t, []Event{evSvcMissing}, d.Filter([]compile.Warning{svcMissing}, t0))
		require.Empty(t, d.Filter([]compile.Warning{svcMissing}, t0.Add(24*time.Hour)))
		_, ok := d.NextRepost()
		require.False(t, ok, "NextRepost with re-posting off")
	}
}

func TestEventDeduperNextRepost(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	d := NewEventDeduper(time.Hour)
	_, ok := d.NextRepost()
	require.False(t, ok, "NextRepost with nothing remembered")

	d.Filter([]compile.Warning{svcMissing}, t0)
	d.Filter([]compile.Warning{svcMissing, classNotFound}, t0.Add(10*time.Minute))
	next, ok := d.NextRepost()
	require.True(t, ok)
	require.Equal(t, t0.Add(time.Hour), next)

	// Calling Filter at NextRepost with the same warnings re-posts the due one.
	require.Equal(t, []Event{evSvcMissing}, d.Filter([]compile.Warning{svcMissing, classNotFound}, next))
	next, ok = d.NextRepost()
	require.True(t, ok)
	require.Equal(t, t0.Add(70*time.Minute), next)

	d.Filter([]compile.Warning{globalDefault}, next)
	_, ok = d.NextRepost()
	require.False(t, ok, "only non-Ingress warnings are left, and they are not remembered")
}

func TestEventDeduperReset(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	d := NewEventDeduper(DefaultRepostAfter)
	ws := []compile.Warning{svcMissing, classNotFound}
	require.Len(t, d.Filter(ws, t0), 2)
	require.Empty(t, d.Filter(ws, t0.Add(time.Second)))
	d.Reset()
	require.Equal(t, []Event{evClassNotFound, evSvcMissing}, d.Filter(ws, t0.Add(2*time.Second)))
}

// TestEventDeduperPosted checks that a problem found posted by someone else
// is not posted again until its own repost is due, and that Posted never
// adds a problem the deduper does not have.
func TestEventDeduperPosted(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	d := NewEventDeduper(DefaultRepostAfter)
	d.Reset()
	evs := d.Filter([]compile.Warning{svcMissing, classNotFound}, t0)
	require.Equal(t, []Event{evClassNotFound, evSvcMissing}, evs)
	// A new leader finds svcMissing posted 40 minutes ago, classNotFound
	// not at all.
	d.Posted(evSvcMissing, t0.Add(-40*time.Minute))
	d.Forget(evClassNotFound)
	unknown := evSvcMissing
	unknown.Warning.Message = "another problem"
	d.Posted(unknown, t0)
	require.Equal(t, []Event{evClassNotFound}, d.Filter([]compile.Warning{svcMissing, classNotFound}, t0.Add(time.Second)))
	at, ok := d.NextRepost()
	require.True(t, ok)
	require.Equal(t, t0.Add(-40*time.Minute+DefaultRepostAfter), at, "due when the found Event is, not a repost period after the takeover")
	require.Equal(t, []Event{evSvcMissing}, d.Filter([]compile.Warning{svcMissing, classNotFound}, at))
	require.Len(t, d.Filter([]compile.Warning{unknown.Warning}, at), 1, "new to the deduper: Posted did not add it")
}

// TestEventDeduperBounded checks that only the current problems are kept.
func TestEventDeduperBounded(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	d := NewEventDeduper(DefaultRepostAfter)
	for i := range 1000 {
		w := svcMissing
		w.Message = strings.Repeat("x", i)
		want := 1 // the changed warning; classNotFound only the first time
		if i == 0 {
			want = 2
		}
		require.Len(t, d.Filter([]compile.Warning{w, classNotFound}, t0.Add(time.Duration(i)*time.Second)), want)
	}
	require.Len(t, d.posted, 2)
}

func TestEventFromWarning(t *testing.T) {
	tests := []struct {
		name string
		w    compile.Warning
		want []Event
	}{
		{"no field", compile.Warning{Reason: compile.RuleRejected, Object: compile.Ref{Kind: "Ingress", Namespace: "prod", Name: "shop"}, Message: "rejected"},
			[]Event{{Kind: "Ingress", Namespace: "prod", Name: "shop", Reason: "RuleRejected", Message: "rejected",
				Warning: compile.Warning{Reason: compile.RuleRejected, Object: compile.Ref{Kind: "Ingress", Namespace: "prod", Name: "shop"}, Message: "rejected"}}}},
		{"no object", compile.Warning{Reason: compile.RuleRejected, Message: "rejected"}, nil},
		{"Ingress without a namespace", compile.Warning{Reason: compile.RuleRejected, Object: compile.Ref{Kind: "Ingress", Name: "shop"}, Message: "rejected"}, nil},
		{"Secret", compile.Warning{Reason: compile.SecretInvalid, Object: compile.Ref{Kind: "Secret", Namespace: "prod", Name: "tls"}, Message: "bad"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := new(EventDeduper).Filter([]compile.Warning{tt.w}, time.Time{})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventMessageTruncated(t *testing.T) {
	w := svcMissing
	w.Message = strings.Repeat("é", 2000) // two bytes each: a cut can land mid-rune
	got := new(EventDeduper).Filter([]compile.Warning{w}, time.Time{})
	require.Len(t, got, 1)
	msg := got[0].Message
	require.LessOrEqual(t, len(msg), MaxMessageBytes)
	require.Greater(t, len(msg), MaxMessageBytes-4)
	require.True(t, utf8.ValidString(msg), "message is valid UTF-8")
	require.True(t, strings.HasPrefix(msg, w.Field+": éé"), "message keeps the field path: %q", msg[:80])
	require.True(t, strings.HasSuffix(msg, "é…"), "message ends in an ellipsis")
}

func TestEventDeduperConcurrent(t *testing.T) {
	d := NewEventDeduper(time.Minute)
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	var mu sync.Mutex
	posted := 0
	for i := range 8 {
		wg.Go(func() {
			n := len(d.Filter([]compile.Warning{svcMissing}, t0.Add(time.Duration(i)*time.Millisecond)))
			d.NextRepost()
			mu.Lock()
			posted += n
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Equal(t, 1, posted, "a problem seen by concurrent rebuilds is posted once")
}

// TestEventDeduperForget checks that an Event whose post failed comes back
// on the next Filter instead of waiting for a re-post.
func TestEventDeduperForget(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	d := NewEventDeduper(DefaultRepostAfter)
	ws := []compile.Warning{svcMissing, classNotFound}
	first := d.Filter(ws, t0)
	require.Equal(t, []Event{evClassNotFound, evSvcMissing}, first)
	d.Forget(first[1])
	require.Equal(t, []Event{evSvcMissing}, d.Filter(ws, t0.Add(time.Second)))
	require.Empty(t, d.Filter(ws, t0.Add(2*time.Second)))
}
