package balance

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func mustHashKey(t testing.TB, s string) HashKey {
	t.Helper()
	k, err := ParseHashKey(s)
	require.NoError(t, err)
	return k
}

// owners maps each key to the address the Hash algorithm picks for it.
func owners(t *testing.T, endpoints []string, weights []int, keys []string) map[string]string {
	t.Helper()
	b := NewRegistry().Balancer(Config{ID: "prod/api:80", Endpoints: endpoints, weights: weights, Algorithm: Hash, HashKey: mustHashKey(t, "$request_uri")})
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		e, ok := b.Pick(k)
		require.True(t, ok)
		e.Release()
		out[k] = e.Addr
	}
	return out
}

func hashKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("/api/v1/users/%d?session=%x", i, i*2654435761)
	}
	return keys
}

// TestHashConsistency: 10 endpoints, 10,000 keys. Removing any one endpoint
// moves only that endpoint's keys (at most 15% of all keys), adding one
// moves only the keys the newcomer takes (at most 15%), and the keys spread
// evenly.
func TestHashConsistency(t *testing.T) {
	eps := addrs(10)
	keys := hashKeys(10000)
	before := owners(t, eps, nil, keys)

	load := map[string]int{}
	for _, addr := range before {
		load[addr]++
	}
	require.Len(t, load, len(eps))
	for addr, n := range load {
		require.InDelta(t, 1000, n, 350, "load of %s", addr)
	}

	maxRemoved, maxAdded := 0, 0
	for i, removed := range eps {
		after := owners(t, slices.Delete(slices.Clone(eps), i, i+1), nil, keys)
		moved := 0
		for _, k := range keys {
			if before[k] != after[k] {
				moved++
				require.Equal(t, removed, before[k], "key %s moved although its endpoint stayed", k)
			}
		}
		require.LessOrEqual(t, moved, 1500, "removing %s", removed)
		maxRemoved = max(maxRemoved, moved)
	}

	for _, added := range []string{"10.0.9.9:8080", "10.0.0.0:8080", "192.168.1.1:80"} {
		after := owners(t, append(slices.Clone(eps), added), nil, keys)
		moved := 0
		for _, k := range keys {
			if before[k] != after[k] {
				moved++
				require.Equal(t, added, after[k], "key %s moved to an old endpoint", k)
			}
		}
		require.Positive(t, moved)
		require.LessOrEqual(t, moved, 1500, "adding %s", added)
		maxAdded = max(maxAdded, moved)
	}
	t.Logf("of 10,000 keys: load %v; removing one endpoint moved at most %d, adding one at most %d", load, maxRemoved, maxAdded)
}

func TestHashIsStable(t *testing.T) {
	eps := addrs(7)
	keys := hashKeys(500)
	first := owners(t, eps, nil, keys)

	// The same key goes to the same endpoint on every pick and in another
	// registry (another replica).
	again := owners(t, eps, nil, keys)
	require.Empty(t, cmp.Diff(first, again))

	// The ring depends on the addresses, not their order.
	shuffled := slices.Clone(eps)
	rand.New(rand.NewPCG(5, 6)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	require.Empty(t, cmp.Diff(first, owners(t, shuffled, nil, keys)))

	// The hash function is part of the contract between replicas and
	// versions: pin it.
	got := []uint64{hashString(""), hashString("a"), hashString("10.0.0.1"), hashString("/api/v1/users/42?x=1")}
	want := []uint64{0x0, 0x25c92dcfaac0ee86, 0xca8e71d941858c98, 0x21c2e2b3bbef1a2c}
	require.Empty(t, cmp.Diff(want, got))
}

func TestHashWeighted(t *testing.T) {
	eps := addrs(3)
	keys := hashKeys(6000)
	got := owners(t, eps, []int{1, 0, 3}, keys)
	load := map[string]int{}
	for _, addr := range got {
		load[addr]++
	}
	require.NotContains(t, load, eps[1], "weight 0 gets no keys")
	require.InDelta(t, 1500, load[eps[0]], 450)
	require.InDelta(t, 4500, load[eps[2]], 450)
}

// TestHashWithoutKey: a request without the key carries no affinity, so it
// is served round-robin rather than piling onto one endpoint.
func TestHashWithoutKey(t *testing.T) {
	r := NewRegistry()
	b := r.Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1", "c:1"}, Algorithm: Hash, HashKey: mustHashKey(t, "$http_x_user")})
	var got []string
	for range 4 {
		e, ok := b.Pick(b.Key(&http.Request{Header: http.Header{}}))
		require.True(t, ok)
		got = append(got, e.Addr)
		e.Release()
	}
	require.Empty(t, cmp.Diff([]string{"a:1", "b:1", "c:1", "a:1"}, got))

	noExpr := r.Balancer(Config{ID: "prod/nokey:80", Endpoints: []string{"a:1", "b:1"}, Algorithm: Hash})
	require.Empty(t, noExpr.Key(&http.Request{RequestURI: "/x"}))

	rr := r.Balancer(Config{ID: "prod/rr:80", Endpoints: []string{"a:1"}, HashKey: mustHashKey(t, "$request_uri")})
	require.Empty(t, rr.Key(&http.Request{RequestURI: "/x"}), "only the Hash algorithm extracts a key")
}

func TestParseAlgorithm(t *testing.T) {
	tests := []struct {
		in          string
		want        Algorithm
		substituted bool
		err         string
	}{
		{in: "round_robin", want: RoundRobin},
		{in: "least_conn", want: LeastConn},
		{in: "hash", want: Hash},
		{in: "ewma", want: LeastConn, substituted: true},
		{in: "", err: `load-balance "": want round_robin, least_conn, hash or ewma`},
		{in: "Round_Robin", err: `load-balance "Round_Robin": want round_robin, least_conn, hash or ewma`},
		{in: "random", err: `load-balance "random": want round_robin, least_conn, hash or ewma`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, substituted, err := ParseAlgorithm(tt.in)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, p)
			require.Equal(t, tt.substituted, substituted)
			if !substituted {
				require.Equal(t, tt.in, p.String())
			}
		})
	}
	require.Equal(t, "Policy(9)", Algorithm(9).String())
}

func TestParseHashKey(t *testing.T) {
	const want = "; want one of $remote_addr, $request_uri, $http_<name>, $cookie_<name>"
	tests := []struct {
		in     string
		source keySource
		name   string
		err    string
	}{
		{in: "$remote_addr", source: remoteAddrKey},
		{in: "$REMOTE_ADDR", source: remoteAddrKey},
		{in: "$request_uri", source: requestURIKey},
		{in: "$http_x_user_id", source: headerKey, name: "X-User-Id"},
		{in: "$HTTP_Authorization", source: headerKey, name: "Authorization"},
		{in: "$cookie_SessionID", source: cookieKey, name: "SessionID"},
		{in: "${request_uri}", source: requestURIKey},
		{in: "${http_x_user_id}", source: headerKey, name: "X-User-Id"},
		{in: "${request_uri", err: `upstream-hash-by "${request_uri": '{' cannot appear in a variable name (only one variable is supported)` + want},
		{in: "${request_uri}-x", err: `upstream-hash-by "${request_uri}-x": '{' cannot appear in a variable name (only one variable is supported)` + want},
		{in: "${}", err: `upstream-hash-by "${}": '{' cannot appear in a variable name (only one variable is supported)` + want},
		{in: "", err: `upstream-hash-by "": not a variable` + want},
		{in: "remote_addr", err: `upstream-hash-by "remote_addr": not a variable` + want},
		{in: "$", err: `upstream-hash-by "$": empty variable name` + want},
		{in: "$request_uri$host", err: `upstream-hash-by "$request_uri$host": '$' cannot appear in a variable name (only one variable is supported)` + want},
		{in: "$remote_addr ", err: `upstream-hash-by "$remote_addr ": ' ' cannot appear in a variable name (only one variable is supported)` + want},
		{in: "$host", err: `upstream-hash-by "$host": unsupported variable $host` + want},
		{in: "$http_", err: `upstream-hash-by "$http_": unsupported variable $http_` + want},
		{in: "$cookie_", err: `upstream-hash-by "$cookie_": unsupported variable $cookie_` + want},
		{in: "$binary_remote_addr", err: `upstream-hash-by "$binary_remote_addr": unsupported variable $binary_remote_addr` + want},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			k, err := ParseHashKey(tt.in)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				require.True(t, k.IsZero())
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.source, k.source)
			require.Equal(t, tt.name, k.name)
			require.Equal(t, tt.in, k.String())
			require.False(t, k.IsZero())
		})
	}
}

func TestHashKeyExtract(t *testing.T) {
	req := func(remote, uri string, header http.Header) *http.Request {
		if header == nil {
			header = http.Header{}
		}
		return &http.Request{RemoteAddr: remote, RequestURI: uri, Header: header}
	}
	tests := []struct {
		name string
		expr string
		req  *http.Request
		want string
	}{
		{"remote IPv4", "$remote_addr", req("192.0.2.7:51234", "", nil), "192.0.2.7"},
		{"remote IPv6", "$remote_addr", req("[2001:db8::1]:443", "", nil), "2001:db8::1"},
		{"remote without port", "$remote_addr", req("192.0.2.7", "", nil), "192.0.2.7"},
		{"remote bare IPv6", "$remote_addr", req("2001:db8::1", "", nil), "2001:db8::1"},
		{"remote unset", "$remote_addr", req("", "", nil), ""},
		{"request uri with query", "$request_uri", req("", "/a/b?c=1", nil), "/a/b?c=1"},
		// nginx's $request_uri for an absolute-form target starts at its path.
		{"request uri absolute form", "$request_uri", req("", "http://a.example.com/a/b?c=1", nil), "/a/b?c=1"},
		{"request uri absolute form without path", "$request_uri", req("", "http://a.example.com?c=1", nil), "?c=1"},
		{"header", "$http_x_user_id", req("", "", http.Header{"X-User-Id": {"u-42"}}), "u-42"},
		{"header lines joined", "$http_x_user_id", req("", "", http.Header{"X-User-Id": {"u-42", "u-43"}}), "u-42, u-43"},
		{"cookie lines joined", "$http_cookie", req("", "", http.Header{"Cookie": {"a=1", "b=2"}}), "a=1; b=2"},
		{"missing header", "$http_x_user_id", req("", "", http.Header{"X-User": {"u"}}), ""},
		// net/http takes Host out of the header into Request.Host.
		{"host header", "$http_host", &http.Request{Host: "a.example.com:8080", Header: http.Header{}}, "a.example.com:8080"},
		{"host header in any case", "$HTTP_HOST", &http.Request{Host: "a.example.com", Header: http.Header{}}, "a.example.com"},
		{"no host", "$http_host", req("", "", nil), ""},
		{"cookie among several", "$cookie_session", req("", "", http.Header{"Cookie": {"theme=dark; session=abc123; lang=en"}}), "abc123"},
		{"cookie in a later line", "$cookie_session", req("", "", http.Header{"Cookie": {"theme=dark", "lang=en;session=xyz"}}), "xyz"},
		{"cookie name case-insensitive", "$cookie_SESSION", req("", "", http.Header{"Cookie": {"Session=abc"}}), "abc"},
		{"cookie spaces", "$cookie_session", req("", "", http.Header{"Cookie": {"session =  abc ;x=1"}}), "abc "},
		{"cookie after a comma", "$cookie_session", req("", "", http.Header{"Cookie": {"a=1, session=abc"}}), "abc"},
		{"cookie first wins", "$cookie_session", req("", "", http.Header{"Cookie": {"session=1; session=2"}}), "1"},
		{"cookie prefix is not a match", "$cookie_session", req("", "", http.Header{"Cookie": {"session_id=1; xsession=2"}}), ""},
		{"cookie without value", "$cookie_session", req("", "", http.Header{"Cookie": {"session; a=b"}}), ""},
		{"cookie empty value", "$cookie_session", req("", "", http.Header{"Cookie": {"session=; a=b"}}), ""},
		{"no cookie header", "$cookie_session", req("", "", nil), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := mustHashKey(t, tt.expr)
			require.Equal(t, tt.want, k.extract(tt.req))
			if !strings.HasSuffix(tt.name, "joined") {
				require.Zero(t, testing.AllocsPerRun(20, func() { k.extract(tt.req) }))
			}
		})
	}
	require.Empty(t, HashKey{}.extract(req("1.2.3.4:5", "/x", nil)))
}

// A ConstantKey sends every request to one endpoint: ingress-nginx's chash
// without upstream-hash-by, which hashes "nil".
func TestConstantKey(t *testing.T) {
	k := ConstantKey("nil")
	require.False(t, k.IsZero())
	require.Equal(t, "nil", k.String())
	require.True(t, k.Same(ConstantKey("nil")))
	require.False(t, k.Same(ConstantKey("NIL")))
	require.False(t, k.Same(mustHashKey(t, "$cookie_nil")))
	b := NewRegistry().Balancer(Config{ID: "prod/api:80", Endpoints: []string{"a:1", "b:1", "c:1"}, Algorithm: Hash, HashKey: k})
	seen := map[string]bool{}
	for _, r := range []*http.Request{{Header: http.Header{}}, {RequestURI: "/x", RemoteAddr: "192.0.2.1:1", Header: http.Header{"X-User": {"u"}}}} {
		for range 3 {
			key := b.Key(r)
			require.Equal(t, "nil", key)
			e, ok := b.Pick(key)
			require.True(t, ok)
			seen[e.Addr] = true
			e.Release()
		}
	}
	require.Len(t, seen, 1)
}

// TestRingSearch checks the bucketed lookup against a plain search of the
// sorted points, for rings of every small size and at the wrap-around.
func TestRingSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 40; n++ {
		eps := addrs(n)
		shares := make([]int, n)
		for i := range shares {
			shares[i] = rng.IntN(3)
		}
		shares[0] = 1
		for _, r := range []*ring{newRing(eps, nil), newRing(eps, shares)} {
			require.True(t, slices.IsSorted(r.points))
			probes := []uint64{0, 1<<64 - 1, r.points[0], r.points[len(r.points)-1], r.points[len(r.points)-1] + 1<<32}
			for range 200 {
				probes = append(probes, rng.Uint64())
			}
			for _, h := range probes {
				want, _ := slices.BinarySearch(r.points, h&^0xFFFFFFFF)
				if want == len(r.points) {
					want = 0
				}
				require.Equal(t, want, r.search(h), "n %d h %#x", n, h)
			}
		}
	}
	require.Nil(t, newRing(addrs(2), []int{0, 0}))
}

func TestRingReused(t *testing.T) {
	r := NewRegistry()
	cfg := Config{ID: "prod/api:80", Endpoints: addrs(5), Algorithm: Hash, HashKey: mustHashKey(t, "$remote_addr")}
	first := r.Balancer(cfg)
	require.NotNil(t, first.ring)
	require.Same(t, first.ring, r.Balancer(cfg).ring, "unchanged endpoints reuse the ring")

	cfg.Endpoints = addrs(6)
	changed := r.Balancer(cfg)
	require.NotSame(t, first.ring, changed.ring)
	cfg.weights = []int{1, 1, 1, 1, 1, 2}
	require.NotSame(t, changed.ring, r.Balancer(cfg).ring, "new weights rebuild the ring")
}

func TestSortPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 1, 255, 256, 1000, 5000} {
		p := make([]uint64, n)
		for i := range p {
			// Few distinct positions, so that ties are common; ranks ascend.
			p[i] = uint64(rng.Uint32N(64))<<58 | uint64(rng.Uint32N(4))<<32 | uint64(i)
		}
		want := slices.Clone(p)
		slices.Sort(want)
		require.Equal(t, want, sortPoints(p), "n %d", n)
	}
}

// FuzzHashKey parses arbitrary upstream-hash-by values and extracts keys
// from arbitrary request fields: parsing either fails or round-trips, and
// extraction returns a substring of the request without panicking.
func FuzzHashKey(f *testing.F) {
	f.Add("$cookie_session", "[::1]:80", "session=1; a=2")
	f.Add("$remote_addr", "[", "")
	f.Add("$http_cookie", "1.2.3.4", ";=")
	f.Fuzz(func(t *testing.T, expr, remote, cookie string) {
		k, err := ParseHashKey(expr)
		if err != nil {
			require.True(t, k.IsZero())
			return
		}
		again, err := ParseHashKey(k.String())
		require.NoError(t, err)
		require.Equal(t, k, again)
		r := &http.Request{RemoteAddr: remote, RequestURI: remote, Header: http.Header{"Cookie": {cookie}}}
		got := k.extract(r)
		require.True(t, strings.Contains(remote, got) || strings.Contains(cookie, got), "%q from %q / %q", got, remote, cookie)
	})
}
