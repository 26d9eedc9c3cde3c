package match

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// listenerTable: an Ingress host and catch-all every listener serves, an
// HTTP listener on port 80 whose catch-all redirects (a route to "web"
// standing for it), and an HTTPS listener on 443 with an app host and
// listeners for example.org, *.example.org and none.
func listenerTable(t testing.TB) *Table {
	web, app, ing, other := backend("web"), backend("app"), backend("ing"), backend("other")
	http := Listener{Port: 80}
	https := Listener{Port: 443, TLS: true}
	return mustNew(t, Spec{
		VirtualHosts: []*VirtualHost{
			{Name: "ingress.example.com", Routes: []*Route{prefix("", ing, 1)}},
			{Name: "", Routes: []*Route{prefix("/ing", ing, 2)}},
			{Name: "", Listener: http, Routes: []*Route{prefix("/ing", ing, 2), prefix("", web, 3)}},
			{Name: "", Listener: https, Routes: []*Route{prefix("/ing", ing, 2)}},
			{Name: "example.org", Listener: https, Routes: []*Route{prefix("", app, 4)}},
			{Name: "*.example.org", Listener: https, DeepWildcard: true, Routes: []*Route{prefix("", other, 5)}},
		},
		Backends: []*Backend{web, app, ing, other},
		Listeners: []ListenerHost{
			{Listener: http}, {Listener: https, Hostname: "example.org"}, {Listener: https, Hostname: "*.example.org"},
			{Listener: https}, {Listener: Listener{Port: 8080}, Hostname: "unused.example.org"},
		},
	})
}

func TestLookupOnListener(t *testing.T) {
	tab := listenerTable(t)
	require.True(t, tab.HasListeners())
	require.Equal(t, []Listener{{Port: 80}, {Port: 443, TLS: true}}, tab.Listeners())
	for _, c := range []struct {
		l          Listener
		host, path string
		want       string // backend name, "" for none
	}{
		{Listener{Port: 80}, "example.org", "/", "web"},                   // the HTTP listener's catch-all
		{Listener{Port: 80}, "ingress.example.com", "/", "ing"},           // Ingresses on every listener
		{Listener{Port: 80}, "x.example.org", "/ing/a", "ing"},            // the Ingress path in the merged catch-all
		{Listener{Port: 443, TLS: true}, "example.org", "/", "app"},       // HTTPS listener's host
		{Listener{Port: 443, TLS: true}, "a.b.example.org", "/", "other"}, // any depth
		{Listener{Port: 443, TLS: true}, "ingress.example.com", "/", "ing"},
		{Listener{Port: 443, TLS: true}, "nothing.test", "/", ""},
		{Listener{Port: 443}, "example.org", "/", ""},        // plain HTTP on 443: no HTTPS listener's route
		{Listener{Port: 8080}, "example.org", "/ing", "ing"}, // no view: the Ingresses only
		{Listener{}, "example.org", "/", ""},
	} {
		got := tab.LookupOn(c.l, c.host, c.path, nil).Backend
		name := ""
		if got != nil {
			name = got.Name
		}
		require.Equal(t, c.want, name, "%v %s%s", c.l, c.host, c.path)
	}
	// Lookup without a listener is the hosts without one.
	require.Nil(t, tab.Lookup("example.org", "/").Backend)
}

func TestMisdirected(t *testing.T) {
	tab := listenerTable(t)
	https := Listener{Port: 443, TLS: true}
	for _, c := range []struct {
		sni, host string
		want      bool
	}{
		{"example.org", "example.org", false},
		{"example.org", "a.example.org", true},
		{"a.example.org", "b.c.example.org", false},
		{"a.example.org", "unknown.test", true},
		{"unknown.test", "other.test", false}, // both the listener without a hostname
		{"", "example.org", false},
	} {
		require.Equal(t, c.want, tab.Misdirected(https, c.sni, c.host), "%s %s", c.sni, c.host)
	}
	require.False(t, tab.Misdirected(Listener{Port: 80}, "example.org", "a.example.org"))
	h, ok := tab.ListenerOf(https, "a.example.org")
	require.True(t, ok)
	require.Equal(t, "*.example.org", h)
}

// TestLookupWithoutListenersUnchanged: a table without listener hosts has
// no views, and LookupOn answers as LookupRequest for every listener.
func TestLookupWithoutListenersUnchanged(t *testing.T) {
	tab := lookupTable(t)
	require.False(t, tab.HasListeners())
	for _, host := range []string{"shop.example.com", "x.example.com", ""} {
		require.Equal(t, tab.LookupRequest(host, "/", nil), tab.LookupOn(Listener{Port: 443, TLS: true}, host, "/", nil))
	}
}

// listenerBenchTable is the benchmark table of 10,000 routes (1,000 hosts
// of ten) with every host on Listener :80, under one listener without a
// hostname, or two: "*.prod.example.com" for the even hosts and none for
// the odd, whose names are then under another domain.
func listenerBenchTable(tb testing.TB, two bool) (*Table, []benchRequest) {
	fx := newBenchFixture(tb, 10000)
	l := Listener{Port: 80}
	var hosts []*VirtualHost
	var backends []*Backend
	rename := func(i int, name string) string {
		if two && i%2 == 1 {
			return strings.Replace(name, ".prod.", ".odd.", 1)
		}
		return name
	}
	index := map[string]int{}
	for i, vh := range fx.table.hosts[1:] { // past the catch-all
		nvh := &VirtualHost{Name: rename(i, vh.Name), Listener: l}
		index[vh.Name] = i
		for _, r := range vh.Routes {
			c := *r
			nvh.Routes = append(nvh.Routes, &c)
		}
		hosts = append(hosts, nvh)
		backends = append(backends, vh.Routes[0].Backend)
	}
	ls := []ListenerHost{{Listener: l}}
	if two {
		ls = append(ls, ListenerHost{Listener: l, Hostname: "*.prod.example.com"})
	}
	tab := mustNew(tb, Spec{VirtualHosts: hosts, Backends: backends, Listeners: ls})
	reqs := make([]benchRequest, len(fx.reqs))
	for i, r := range fx.reqs {
		reqs[i] = benchRequest{host: rename(index[r.host], r.host), path: r.path}
		reqs[i].want = tab.LookupOn(l, reqs[i].host, r.path, nil).Route
		if reqs[i].want == nil || reqs[i].want.Path != r.want.Path {
			tb.Fatalf("%s%s: no route", reqs[i].host, r.path)
		}
	}
	return tab, reqs
}

// BenchmarkLookupListeners: a lookup on a listener's view, with one and
// with two listeners on the port (SPEC §20's budget: within 5% of one),
// and LookupOn on a table without listeners.
func BenchmarkLookupListeners(b *testing.B) {
	run := func(b *testing.B, tab *Table, reqs []benchRequest) {
		b.ReportAllocs()
		l := Listener{Port: 80}
		i := 0
		for b.Loop() {
			r := &reqs[i&4095]
			if tab.LookupOn(l, r.host, r.path, nil).Route != r.want {
				b.Fatal("wrong route")
			}
			i++
		}
	}
	b.Run("listeners=0", func(b *testing.B) {
		fx := newBenchFixture(b, 10000)
		run(b, fx.table, fx.reqs)
	})
	b.Run("listeners=1", func(b *testing.B) {
		tab, reqs := listenerBenchTable(b, false)
		run(b, tab, reqs)
	})
	b.Run("listeners=2", func(b *testing.B) {
		tab, reqs := listenerBenchTable(b, true)
		run(b, tab, reqs)
	})
}

// TestListenerBenchTable runs the benchmark tables' checks in ordinary
// test runs.
func TestListenerBenchTable(t *testing.T) {
	for _, two := range []bool{false, true} {
		tab, _ := listenerBenchTable(t, two)
		require.True(t, tab.HasListeners())
	}
}
