package compile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

const (
	nginxLB    = NginxPrefix + "load-balance"
	nativeLB   = NativePrefix + "load-balance"
	nginxHash  = NginxPrefix + "upstream-hash-by"
	nativeHash = NativePrefix + "upstream-hash-by"
)

func balancingSnapshot(annotations ...string) Snapshot {
	return mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1", "10.0.0.2"),
		mkIngress("prod", "shop", 1, withAnnotations(annotations...),
			withRules(mkRule("shop.example.com", prefix("/", "api", 80)), mkRule("www.example.com", prefix("/", "api", 80)))),
	)
}

// balancing is a backend's policy as the table renders it.
func balancing(be *match.Backend) string {
	return balancingText(be.Algorithm, be.HashKey, int(be.HashSubset))
}

func TestLoadBalanceAnnotations(t *testing.T) {
	field := func(k string) string { return "metadata.annotations[" + k + "]" }
	tests := []struct {
		name        string
		annotations []string
		want        string
		warnings    []short
		message     string // a substring of the first warning's message
		rated       Severity
	}{
		{name: "default", want: "round_robin"},
		{name: "round_robin", annotations: []string{nginxLB, "round_robin"}, want: "round_robin"},
		// ingress-nginx's validator takes round_robin, ewma and its own
		// balancers only (loadbalancing/main.go): least_conn and hash are
		// ramjet's, under ramjet.dev/.
		{name: "least_conn is not ingress-nginx's", annotations: []string{nginxLB, "least_conn"}, want: "round_robin",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nginxLB)}},
			message:  NativePrefix + `load-balance takes it`},
		{name: "hash is not ingress-nginx's", annotations: []string{nginxLB, "hash", nginxHash, "$remote_addr"}, want: "hash on $remote_addr",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nginxLB)}},
			message:  `not a balancer ingress-nginx accepts`},
		{name: "native least_conn", annotations: []string{nativeLB, "least_conn"}, want: "least_conn"},
		{name: "ewma is substituted", annotations: []string{nginxLB, "ewma"}, want: "least_conn",
			warnings: []short{{AnnotationSubstituted, "Ingress prod/shop", field(nginxLB)}},
			message:  `"ewma" is served as least_conn`},
		{name: "names are exact", annotations: []string{nginxLB, "Least_Conn"}, want: "round_robin",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nginxLB)}},
			message:  NginxPrefix + `load-balance "Least_Conn"`},
		{name: "unknown policy", annotations: []string{nativeLB, "random"}, want: "round_robin",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nativeLB)}},
			message:  "not applied"},
		{name: "hash without a key", annotations: []string{nativeLB, "hash"}, want: "round_robin",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nativeLB)}},
			message:  "needs upstream-hash-by"},
		{name: "hash with a key", annotations: []string{nativeLB, "hash", nginxHash, "$remote_addr"}, want: "hash on $remote_addr"},
		{name: "upstream-hash-by alone selects hash", annotations: []string{nginxHash, "$request_uri"}, want: "hash on $request_uri"},
		{name: "header key", annotations: []string{nativeHash, "$http_x_user"}, want: "hash on $http_x_user"},
		{name: "cookie key", annotations: []string{nginxHash, "$cookie_session"}, want: "hash on $cookie_session"},
		// ingress-nginx: a hash key overrides the load-balance algorithm.
		{name: "upstream-hash-by overrides load-balance", annotations: []string{nativeLB, "least_conn", nginxHash, "$remote_addr"}, want: "hash on $remote_addr"},
		{name: "hash key overrides ewma without substitution", annotations: []string{nginxLB, "ewma", nginxHash, "$remote_addr"}, want: "hash on $remote_addr"},
		{name: "native wins over nginx", annotations: []string{nativeLB, "least_conn", nginxLB, "round_robin"}, want: "least_conn"},
		{name: "native hash key wins over nginx", annotations: []string{nativeHash, "$cookie_a", nginxHash, "$cookie_b"}, want: "hash on $cookie_a"},
		{name: "invalid native shadows a valid nginx one", annotations: []string{nativeLB, "leastconn", nginxLB, "ewma"}, want: "round_robin",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nativeLB)}}},
		{name: "composite hash key", annotations: []string{nginxHash, "$request_uri$host"}, want: "round_robin",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nginxHash)}},
			message:  NginxPrefix + `upstream-hash-by "$request_uri$host"`},
		{name: "dash in a header variable", annotations: []string{nginxHash, "$http_x-user"}, want: "round_robin",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nginxHash)}}},
		{name: "invalid key falls back to load-balance", annotations: []string{nativeLB, "least_conn", nginxHash, "$host"}, want: "least_conn",
			warnings: []short{{AnnotationRejected, "Ingress prod/shop", field(nginxHash)}}},
		{name: "invalid key leaves hash without one", annotations: []string{nativeLB, "hash", nginxHash, "remote_addr"}, want: "round_robin",
			warnings: []short{
				{AnnotationRejected, "Ingress prod/shop", field(nginxHash)},
				{AnnotationRejected, "Ingress prod/shop", field(nativeLB)},
			}},
		{name: "other prefixes are ignored", annotations: []string{"example.com/load-balance", "least_conn"}, want: "round_robin"},
		// ingress-nginx's own balancers (balancer.lua get_implementation):
		// with upstream-hash-by the hash decides, as it picks chash then.
		{name: "chash with a key", annotations: []string{nginxLB, "chash", nginxHash, "$remote_addr"}, want: "hash on $remote_addr"},
		{name: "chashsubset with a key", annotations: []string{nginxLB, "chashsubset", nginxHash, "$http_x_user"}, want: "hash on $http_x_user"},
		{name: "sticky_balanced with a key", annotations: []string{nginxLB, "sticky_balanced", nginxHash, "$cookie_s"}, want: "hash on $cookie_s"},
		{name: "chash alone hashes a constant", annotations: []string{nginxLB, "chash"}, want: "hash on nil",
			warnings: []short{{AnnotationSubstituted, "Ingress prod/shop", field(nginxLB)}},
			message:  "every request goes to one endpoint", rated: Cosmetic},
		{name: "chashsubset alone hashes a constant onto a subset", annotations: []string{nginxLB, "chashsubset", NginxPrefix + "upstream-hash-by-subset-size", "2"},
			want:     "hash on nil onto subsets of 2",
			warnings: []short{{AnnotationSubstituted, "Ingress prod/shop", field(nginxLB)}},
			message:  "one subset of 2 endpoints", rated: Cosmetic},
		// Without affinity the sticky balancers read a cookie of the
		// empty name (the backend's cookieSessionAffinity.name is always
		// sent, "" there), so a "route" cookie is nothing to them.
		{name: "sticky_persistent alone reads no route cookie", annotations: []string{nginxLB, "sticky_persistent"}, want: "round_robin",
			warnings: []short{{AnnotationSubstituted, "Ingress prod/shop", field(nginxLB)}},
			message:  `"sticky_persistent" without affinity sets and reads no cookie`, rated: Cosmetic},
		{name: "affinity overrides chash", annotations: []string{nginxLB, "chash", NginxPrefix + "affinity", "cookie"}, want: "round_robin"},
		{name: "native sticky_balanced", annotations: []string{nativeLB, "sticky_balanced"}, want: "round_robin",
			warnings: []short{{AnnotationSubstituted, "Ingress prod/shop", field(nativeLB)}}, rated: Cosmetic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ws := compileOK(t, balancingSnapshot(tt.annotations...), Options{})
			if diff := cmp.Diff(tt.warnings, shorten(ws), cmpEmpty); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%s", diff, warningText(ws))
			}
			if tt.message != "" {
				require.NotEmpty(t, ws)
				require.Contains(t, ws[0].Message, tt.message)
			}
			if tt.rated != "" {
				require.Equal(t, tt.rated, ws[0].Rated)
			}
			be := tab.Lookup("shop.example.com", "/").Backend
			require.Equal(t, tt.want, balancing(be))
			if be.Algorithm != balance.Hash {
				require.True(t, be.HashKey.IsZero(), "a hash key only with the hash policy")
			}
			require.Equal(t, "prod/api:80", served(tab, "www.example.com", "/"), "the rest still serves")
		})
	}
}

// When Ingresses disagree about one backend's balancing, the oldest serving
// Ingress decides and each other one gets AnnotationConflict (SPEC §9).
func TestBalancingConflict(t *testing.T) {
	field := func(k string) string { return "metadata.annotations[" + k + "]" }
	tests := []struct {
		name       string
		old, new   []string
		want       string
		loserField string
		asked      string
	}{
		{name: "agree", old: []string{nativeLB, "least_conn"}, new: []string{nativeLB, "least_conn"}, want: "least_conn"},
		{name: "both default", want: "round_robin"},
		{name: "explicit round_robin agrees with the default", new: []string{nginxLB, "round_robin"}, want: "round_robin"},
		{name: "ewma agrees with least_conn", old: []string{nativeLB, "least_conn"}, new: []string{nginxLB, "ewma"}, want: "least_conn"},
		{name: "hash keys differing only in case agree", old: []string{nginxHash, "$http_x_user"}, new: []string{nginxHash, "$HTTP_X_USER"},
			want: "hash on $http_x_user"},
		{name: "braced and bare variable agree", old: []string{nginxHash, "$request_uri"}, new: []string{nginxHash, "${request_uri}"},
			want: "hash on $request_uri"},
		{name: "braced header variable agrees", old: []string{nginxHash, "${http_x_user}"}, new: []string{nginxHash, "$http_X_User"},
			want: "hash on ${http_x_user}"},
		{name: "rejected value asks for the default", new: []string{nginxLB, "fastest"}, want: "round_robin"},
		{name: "older least_conn, newer default", old: []string{nativeLB, "least_conn"}, want: "least_conn",
			loserField: field(nativeLB), asked: "round_robin (neither load-balance nor upstream-hash-by is set)"},
		{name: "older default, newer hash", new: []string{nginxHash, "$remote_addr"}, want: "round_robin",
			loserField: field(nginxHash), asked: "hash on $remote_addr"},
		{name: "different hash keys", old: []string{nativeHash, "$cookie_session"}, new: []string{nginxHash, "$request_uri"}, want: "hash on $cookie_session",
			loserField: field(nginxHash), asked: "hash on $request_uri"},
		{name: "hash onto subsets, newer hash without", old: []string{nginxHash, "$request_uri", NginxPrefix + "upstream-hash-by-subset", "true"},
			new: []string{nginxHash, "$request_uri"}, want: "hash on $request_uri onto subsets of 3",
			loserField: field(nginxHash), asked: "hash on $request_uri"},
		{name: "subset sizes 0 and 3 agree", old: []string{nginxHash, "$request_uri", NginxPrefix + "upstream-hash-by-subset", "true"},
			new:  []string{nginxHash, "$request_uri", NginxPrefix + "upstream-hash-by-subset", "true", NativePrefix + "upstream-hash-by-subset-size", "0"},
			want: "hash on $request_uri onto subsets of 3"},
		{name: "older hash, newer least_conn", old: []string{nginxHash, "$cookie_session"}, new: []string{nativeLB, "least_conn"}, want: "hash on $cookie_session",
			loserField: field(nativeLB), asked: "least_conn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, ws := compileOK(t, sharedBackendSnapshot(tt.old, tt.new), Options{})
			require.Equal(t, tt.want, balancing(tab.Lookup("b.example.com", "/").Backend))
			var conflicts []Warning
			for _, w := range ws {
				if w.Reason == AnnotationConflict {
					conflicts = append(conflicts, w)
				}
			}
			if tt.loserField == "" {
				require.Empty(t, conflicts, warningText(ws))
				return
			}
			require.Equal(t, []short{{AnnotationConflict, "Ingress prod/new", tt.loserField}}, shorten(conflicts))
			w := conflicts[0]
			require.Equal(t, "Ingress prod/old", w.WinnerText())
			require.Equal(t, "backend prod/api:80 is balanced "+tt.want+
				", as the oldest Ingress serving it decides; this Ingress asks for "+tt.asked, w.Message)
		})
	}
}

// The oldest Ingress decides by creation time, whatever order the objects
// come in, and an Ingress that does not serve the backend has no say.
func TestBalancingOwnerIsOldestServing(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.1.1"),
		mkIngress("prod", "c-newest", 30, withAnnotations(nginxLB, "round_robin"), withRules(mkRule("c.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "b-middle", 20, withAnnotations(nginxHash, "$remote_addr"), withRules(mkRule("b.example.com", prefix("/", "api", 80)))),
		// The oldest Ingress serves only web: it says nothing about api.
		mkIngress("prod", "a-oldest", 10, withAnnotations(nativeLB, "least_conn"), withRules(mkRule("a.example.com", prefix("/", "web", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, "hash on $remote_addr", balancing(tab.Lookup("c.example.com", "/").Backend))
	require.Equal(t, "least_conn", balancing(tab.Lookup("a.example.com", "/").Backend))
	require.Equal(t, []short{{AnnotationConflict, "Ingress prod/c-newest", "metadata.annotations[" + nginxLB + "]"}}, shorten(ws))
	require.Equal(t, "Ingress prod/b-middle", ws[0].WinnerText())
}

// A backend's policy and hash key are part of the digest, so changing
// either republishes; a table with no balancing annotations digests as if
// policies did not exist.
func TestBalancingDigest(t *testing.T) {
	digestOf := func(annotations ...string) string {
		tab, _ := compileOK(t, balancingSnapshot(annotations...), Options{})
		return tab.Digest()
	}
	plain := digestOf()
	require.Equal(t, plain, digestOf(nginxLB, "round_robin"), "round_robin is the default")
	seen := map[string]string{plain: "default"}
	for _, ann := range [][]string{
		{nativeLB, "least_conn"},
		{nginxHash, "$remote_addr"},
		{nginxHash, "$request_uri"},
		{nginxHash, "$cookie_a"},
		{nginxHash, "$http_a"},
	} {
		d := digestOf(ann...)
		prev, dup := seen[d]
		require.False(t, dup, "%v digests like %s", ann, prev)
		seen[d] = ann[1]
	}
	require.Equal(t, digestOf(nativeLB, "least_conn"), digestOf(nginxLB, "ewma"), "ewma is served as least_conn")
}
