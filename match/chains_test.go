package match

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanRoutes is LookupRequest's route for a host without Regex routes,
// found by scanning the host's sorted routes key by key: the whole path's
// Exact routes, then its Prefix ones, then the shorter Prefix keys
// longest first, then the root Prefix; within a key, the first route
// whose conditions q meets.
func scanRoutes(vh *VirtualHost, path string, q *Request) *Route {
	first := func(typ PathType, key string) *Route {
		for _, r := range vh.Routes {
			if r.Type == typ && r.Path == key && r.When.Matches(q) {
				return r
			}
		}
		return nil
	}
	if r := first(Exact, path); r != nil {
		return r
	}
	if r := first(Prefix, path); r != nil {
		return r
	}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '/' {
			if r := first(Prefix, path[:i]); r != nil {
				return r
			}
		}
	}
	return first(Prefix, "")
}

// TestChainsAgreeWithScan: hosts of a few keys (found in their chains'
// own key list) and of many (found in the path table), their routes with
// and without conditions of every kind, choose for each request the route
// a scan of their sorted routes chooses.
func TestChainsAgreeWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 7))
	keys := []string{"/a", "/a/b", "/a/b/c", "/b", "/b/", "/c/d", "/e", "/e/f/g", "/h", "/i/j"}
	headers := []string{"Version", "Color", "Host", "X-A"}
	values := []string{"1", "2", "h.test"}
	params := []string{"q", "a=b", "r"}
	cond := func() *Conditions {
		if rng.IntN(4) == 0 {
			return nil
		}
		c := &Conditions{}
		if rng.IntN(3) == 0 {
			c.Method = []string{"GET", "POST", "PURGE"}[rng.IntN(3)]
		}
		for range rng.IntN(3) {
			v := ValueMatch{Name: headers[rng.IntN(len(headers))], Value: values[rng.IntN(len(values))]}
			if rng.IntN(3) == 0 {
				v.Value, v.Regex = "^"+v.Value, true
			}
			c.Headers = append(c.Headers, v)
		}
		for range rng.IntN(3) {
			v := ValueMatch{Name: params[rng.IntN(len(params))], Value: values[rng.IntN(len(values))]}
			if rng.IntN(3) == 0 {
				v.Value, v.Regex = v.Value+"$", true
			}
			c.Query = append(c.Query, v)
		}
		return c
	}
	var hosts []*VirtualHost
	for h := range 60 {
		vh := &VirtualHost{Name: fmt.Sprintf("h%d.test", h)}
		n := 1 + h%len(keys) // distinct keys: some hosts list them, some probe the path table
		for i, k := range rng.Perm(len(keys))[:n] {
			for j := range 1 + rng.IntN(3) {
				typ := []PathType{Exact, Prefix}[rng.IntN(2)]
				path := keys[k]
				if typ == Prefix {
					path = strings.TrimSuffix(path, "/")
				}
				vh.Routes = append(vh.Routes, condRoute(typ, path, 10*i+j, cond()))
			}
		}
		if rng.IntN(2) == 0 {
			vh.Routes = append(vh.Routes, condRoute(Prefix, "", 1000, cond()))
		}
		hosts = append(hosts, vh)
	}
	tab := mustNew(t, Spec{VirtualHosts: hosts})
	byKeys, probed := 0, 0
	for _, vh := range hosts {
		hi, ok := tab.exactHosts[vh.Name]
		require.True(t, ok)
		if hi.chains == nil {
			continue
		}
		if hi.chains.byKeys {
			byKeys++
		} else {
			probed++
		}
	}
	assert.Positive(t, byKeys, "hosts whose chains list their keys")
	assert.Positive(t, probed, "hosts whose keys are probed in the path table")
	paths := []string{"/a", "/a/", "/a/b", "/a/b/c/d", "/b/", "/b/x", "/c/d/e", "/e/f/g", "/e/f", "/h/i", "/i/j", "/x"}
	for range 20000 {
		vh := hosts[rng.IntN(len(hosts))]
		path := paths[rng.IntN(len(paths))]
		q := &Request{Method: []string{"GET", "POST", "PURGE", "HEAD"}[rng.IntN(4)], Header: map[string][]string{}, Host: "h.test"}
		for _, name := range headers[:rng.IntN(len(headers)+1)] {
			q.Header[name] = []string{values[rng.IntN(len(values))]}
		}
		var pairs []string
		for range rng.IntN(3) {
			pairs = append(pairs, []string{"q", "a%3Db", "r", "a=b"}[rng.IntN(4)]+"="+values[rng.IntN(len(values))])
		}
		q.Query = strings.Join(pairs, "&")
		if rng.IntN(10) == 0 {
			q = nil
		}
		want := scanRoutes(vh, path, q)
		if got := tab.LookupRequest(vh.Name, path, q).Route; got != want {
			t.Fatalf("%s%s %+v: lookup chose %s, the scan %s", vh.Name, path, q, routeName(got), routeName(want))
		}
	}
}

func routeName(r *Route) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("%v %q order %d%s", r.Type, r.Path, r.Order, conditionsText(r.When))
}

// A route with more header or query parameter conditions than a chain
// entry counts is matched by its Conditions: every one still decides.
func TestChainManyConditions(t *testing.T) {
	c := &Conditions{}
	h := map[string][]string{}
	for i := range 300 {
		name := fmt.Sprintf("X-H%d", i)
		c.Headers = append(c.Headers, ValueMatch{Name: name, Value: "1"})
		h[name] = []string{"1"}
	}
	many := condRoute(Prefix, "/a", 1, c)
	other := condRoute(Prefix, "/a", 2, nil)
	tab := mustNew(t, Spec{VirtualHosts: []*VirtualHost{{Name: "h.test", Routes: []*Route{many, other}}}})
	assert.Same(t, many, tab.LookupRequest("h.test", "/a", &Request{Method: "GET", Header: h}).Route)
	delete(h, "X-H299")
	assert.Same(t, other, tab.LookupRequest("h.test", "/a", &Request{Method: "GET", Header: h}).Route)
	assert.Same(t, other, tab.LookupRequest("h.test", "/a", nil).Route)
}
