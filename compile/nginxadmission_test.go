package compile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Each of ingress-nginx v1.15's webhook refusals of an Ingress on its own,
// and near misses it admits.
func TestNginxRefusal(t *testing.T) {
	rule := withRules(mkRule("a.example.com", prefix("/", "web", 80)))
	snippet := withAnnotations(NginxPrefix+"configuration-snippet", "more_set_headers x;")
	tests := []struct {
		name     string
		ing      *networkingv1.Ingress
		opts     Options
		settings AdmissionSettings
		want     string
	}{
		{"clean", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"load-balance", "ewma", NginxPrefix+"ssl-redirect", "false")),
			Options{}, AdmissionSettings{}, ""},
		{"rejected annotation value", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"load-balance", "random")),
			Options{}, AdmissionSettings{}, "annotation nginx.ingress.kubernetes.io/load-balance contains invalid value"},
		{"values a parser falls back from", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"proxy-read-timeout", "soon", NginxPrefix+"enable-cors", "maybe")),
			Options{}, AdmissionSettings{}, ""},
		{"another prefix is not read", mkIngress("prod", "a", 1, rule, withAnnotations(NativePrefix+"load-balance", "random")),
			Options{}, AdmissionSettings{}, ""},
		{"snippets off", mkIngress("prod", "a", 1, rule, snippet),
			Options{}, AdmissionSettings{}, "nginx.ingress.kubernetes.io/configuration-snippet annotation cannot be used. Snippet directives are disabled by the Ingress administrator"},
		{"snippets on, risk level High", mkIngress("prod", "a", 1, rule, snippet),
			Options{AllowSnippetAnnotations: true}, AdmissionSettings{}, "annotation nginx.ingress.kubernetes.io/configuration-snippet is too risky for environment: it is Critical-risk and annotations-risk-level is High"},
		{"snippets on, risk level Critical", mkIngress("prod", "a", 1, rule, snippet),
			Options{AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"}, AdmissionSettings{}, ""},
		{"risk level Medium refuses a High annotation", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"server-alias", "b.example.com")),
			Options{AnnotationsRiskLevel: "Medium"}, AdmissionSettings{}, "annotation nginx.ingress.kubernetes.io/server-alias is too risky for environment: it is High-risk and annotations-risk-level is Medium"},
		// ingress-nginx's risk check trims the prefix where there is one
		// (CheckAnnotationRisk, TrimAnnotationPrefix), so a key without
		// one is judged by its name.
		{"a key without the prefix has its risk", mkIngress("prod", "a", 1, rule, withAnnotations("configuration-snippet", "more_set_headers x;")),
			Options{AllowSnippetAnnotations: true}, AdmissionSettings{}, "annotation configuration-snippet is too risky for environment: it is Critical-risk and annotations-risk-level is High"},
		{"a key without the prefix has its risk, below the level", mkIngress("prod", "a", 1, rule, withAnnotations("server-alias", "b.example.com", "load-balance", "random")),
			Options{}, AdmissionSettings{}, ""},
		{"strict path type", mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", prefix("/a$", "web", 80)))),
			Options{}, AdmissionSettings{}, "ingress contains invalid paths: path /a$ cannot be used with pathType Prefix"},
		{"strict-validate-path-type false", mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", prefix("/a$", "web", 80)))),
			Options{}, ReadAdmissionSettings(map[string]string{"strict-validate-path-type": "false"}), ""},
		{"ImplementationSpecific is not checked", mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", mkPath("ImplementationSpecific", "/a$", "web", 80)))),
			Options{}, AdmissionSettings{}, ""},
		{"word blocklist", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"rewrite-target", "/load_module")),
			Options{}, ReadAdmissionSettings(map[string]string{"annotation-value-word-blocklist": "load_module, lua_package"}), "nginx.ingress.kubernetes.io/rewrite-target annotation contains invalid word load_module"},
		{"deep inspection", mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", mkPath("ImplementationSpecific", "/etc/passwd", "web", 80)))),
			Options{}, AdmissionSettings{}, "invalid object: invalid rule in ingress prod/a: invalid http path: invalid value found: /etc/passwd"},
		{"a code is read only with its redirect", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"temporal-redirect-code", "abc")),
			Options{}, AdmissionSettings{}, ""},
		{"with its redirect it is", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"temporal-redirect-code", "abc", NginxPrefix+"temporal-redirect", "https://b.example.com/")),
			Options{}, AdmissionSettings{}, "annotation nginx.ingress.kubernetes.io/temporal-redirect-code contains invalid value"},
		{"an alias is read for its key", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"limit-whitelist", "10.0.0.0/33")),
			Options{}, AdmissionSettings{}, "annotation nginx.ingress.kubernetes.io/limit-whitelist contains invalid value"},
		{"a prefix length with a leading zero is a CIDR to net.ParseCIDR", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"limit-allowlist", "10.0.0.0/08, 192.168.0.1")),
			Options{}, AdmissionSettings{}, ""},
		{"an address with a zone is none to net.ParseIP", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"limit-allowlist", "fe80::1%eth0")),
			Options{}, AdmissionSettings{}, "annotation nginx.ingress.kubernetes.io/limit-allowlist contains invalid value"},
		{"nor a range with a zone", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"limit-allowlist", "fe80::1%eth0/64")),
			Options{}, AdmissionSettings{}, "annotation nginx.ingress.kubernetes.io/limit-allowlist contains invalid value"},
		{"an empty value is not validated", mkIngress("prod", "a", 1, rule, withAnnotations(NginxPrefix+"load-balance", "")),
			Options{}, AdmissionSettings{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, NginxRefusal(tt.ing, tt.opts, tt.settings))
		})
	}
}

// The host/path check: a path string another Ingress serves on the host
// is refused, whatever the two path types, unless exactly one is a canary.
func TestReviewOverlap(t *testing.T) {
	older := mkIngress("prod", "old", 1, withRules(mkRule("a.example.com", prefix("/api", "web", 80))))
	catchAll := mkIngress("prod", "catch-all", 2, withDefault("web", 80))
	s := mkSnapshot(mkService("prod", "web", ":80:"), older, catchAll)
	r := NewReviewer(s, Options{}, AdmissionSettings{})
	review := func(ing *networkingv1.Ingress) string { return r.Review(ing).Refusal }

	require.Equal(t, `host "a.example.com" and path "/api" is already defined in ingress prod/old`,
		review(mkIngress("prod", "new", 3, withRules(mkRule("a.example.com", exact("/api", "web", 80))))))
	require.Empty(t, review(mkIngress("prod", "new", 3, withRules(mkRule("a.example.com", prefix("/api/", "web", 80))))), "another path string")
	require.Empty(t, review(mkIngress("prod", "new", 3, withRules(mkRule("b.example.com", prefix("/api", "web", 80))))), "another host")
	require.Empty(t, review(mkIngress("prod", "new", 3, withAnnotations(NginxPrefix+"canary", "true"), withRules(mkRule("a.example.com", prefix("/api", "web", 80))))), "a canary")
	require.Empty(t, review(mkIngress("prod", "new", 3, withAnnotations(NginxPrefix+"canary", "false"), withRules(mkRule("a.example.com", prefix("/api", "web", 80))))),
		"canary false is not the annotation missing")
	require.Empty(t, review(mkIngress("prod", "old", 1, withRules(mkRule("a.example.com", prefix("/api", "web", 80))))), "its own old version is replaced")
	require.Equal(t, `host "_" and path "/" is already defined in ingress prod/catch-all`,
		review(mkIngress("prod", "new", 3, withRules(mkRule("", prefix("/", "web", 80))))), "the catch-all Ingress owns the default server's root")
	require.Empty(t, review(mkIngress("prod", "new", 3, withRules(mkRule("a.example.com", prefix("/", "web", 80))))), "a host's root is the default backend's")

	other := mkIngress("prod", "other", 3, withClassName("nginx"), withRules(mkRule("a.example.com", prefix("/api", "web", 80))))
	require.Equal(t, Review{}, r.Review(other), "another class's Ingress is admitted untouched")

	// An Ingress ingress-nginx does not store (a refused annotation) owns
	// nothing.
	refused := mkIngress("prod", "old", 1, withAnnotations(NginxPrefix+"load-balance", "random"), withRules(mkRule("a.example.com", prefix("/api", "web", 80))))
	r = NewReviewer(mkSnapshot(mkService("prod", "web", ":80:"), refused), Options{}, AdmissionSettings{})
	require.Empty(t, review(mkIngress("prod", "new", 3, withRules(mkRule("a.example.com", prefix("/api", "web", 80))))))
}

// FuzzReview reviews every Ingress of a fuzzed snapshot: the warnings are
// the whole compile's about it, and neither they nor the refusal depend on
// the snapshot's order.
func FuzzReview(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 0, 0, 0, 1, 1, 2, 1, 1, 0, 1, 1, 1, 2, 1, 3, 2, 1, 0, 1, 1, 2, 0, 0, 1, 1, 1, 0})
	f.Add([]byte{0, 0, 1, 1, 0, 1, 2, 2, 0, 1, 0, 0, 0, 3, 0x83, 'a', '/', 'b', 1, 1, 0x84, '[', '(', '*', ')', 3, 2, 1, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, o := fuzzSnapshot(data)
		whole := Compile(s, o).Warnings
		r, rev := NewReviewer(s, o, AdmissionSettings{}), NewReviewer(reversedSnapshot(s), o, AdmissionSettings{})
		count := map[objKey]int{}
		for _, ing := range s.Ingresses {
			count[objKey{ing.Namespace, ing.Name}]++
		}
		for _, ing := range s.Ingresses {
			if count[objKey{ing.Namespace, ing.Name}] > 1 {
				continue // a review replaces the one the compile keeps
			}
			got := r.Review(ing)
			if diff := cmp.Diff(got, rev.Review(ing)); diff != "" {
				t.Fatalf("review of %s/%s depends on order (-first +reversed):\n%s", ing.Namespace, ing.Name, diff)
			}
			if !got.Claimed {
				continue
			}
			if diff := cmp.Diff(warningsAbout(whole, ingressRef(ing.Namespace, ing.Name)), got.Warnings); diff != "" {
				t.Fatalf("review of %s/%s differs from the whole compile (-whole +review):\n%s", ing.Namespace, ing.Name, diff)
			}
		}
	})
}

// FuzzNginxRefusal judges arbitrary annotations: never a panic, and the
// same verdict for the same object.
func FuzzNginxRefusal(f *testing.F) {
	for _, seed := range [][2]string{{"load-balance", "ewma"}, {"limit-whitelist", "10.0.0.0/8, ::1"}, {"auth-tls-match-cn", "CN=(a"},
		{"server-alias", "a.b, ~^x$"}, {"configuration-snippet", "x;"}, {"temporal-redirect", "https://x/\n"}} {
		f.Add(seed[0], seed[1], "/a")
	}
	f.Fuzz(func(t *testing.T, key, value, path string) {
		ing := mkIngress("prod", "a", 1, withRules(mkRule("a.example.com", prefix(path, "web", 80))),
			withAnnotations(NginxPrefix+key, value, NginxPrefix+"auth-tls-secret", "prod/ca", NginxPrefix+"auth-type", "basic"))
		first := NginxRefusal(ing, Options{}, AdmissionSettings{})
		if again := NginxRefusal(ing, Options{}, AdmissionSettings{}); again != first {
			t.Fatalf("verdicts differ: %q, %q", first, again)
		}
	})
}

// The ConfigMap keys only the webhook reads are implemented keys of the
// ConfigMap: strict-validate-path-type changes no answer, in ingress-nginx
// either, and is not reported as missing; a value that does not parse is
// (the webhook keeps the strict default). The word blocklist's webhook
// half is served, its sync half (ingress-nginx leaves out an Ingress
// already holding a word) is not, which its warning says.
func TestAdmissionConfigMapKeys(t *testing.T) {
	warnings := func(data map[string]string) []string {
		var out []string
		for _, w := range ParseConfigMap(mkConfigMap("ingress", "nginx", data)).Warnings() {
			out = append(out, string(w.Reason)+" "+w.Field+" "+string(w.Severity())+": "+w.Message)
		}
		return out
	}
	require.Empty(t, warnings(map[string]string{"strict-validate-path-type": "false"}))
	require.Empty(t, warnings(map[string]string{"strict-validate-path-type": "true"}))
	require.Equal(t, []string{`ConfigMapKeyRejected data[strict-validate-path-type] traffic-moves: value "maybe": want true or false; ingress-nginx's default is kept`},
		warnings(map[string]string{"strict-validate-path-type": "maybe"}))
	require.False(t, ReadAdmissionSettings(map[string]string{"strict-validate-path-type": "maybe"}).LaxPathType, "the webhook keeps the default too")
	require.Contains(t, ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"strict-validate-path-type": "false"})).Keys, "strict-validate-path-type")

	require.Equal(t, []string{"ConfigMapKeyIgnored data[annotation-value-word-blocklist] cosmetic: empty; ignored"},
		warnings(map[string]string{"annotation-value-word-blocklist": ""}))
	require.Equal(t, []string{"ConfigMapKeyUnsupported data[annotation-value-word-blocklist] traffic-moves: " +
		"the validating webhook refuses an Ingress with one of these words in an nginx.ingress.kubernetes.io/ value, as ingress-nginx's does; " +
		"an Ingress that already holds one is still served, where ingress-nginx's sync leaves it out"},
		warnings(map[string]string{"annotation-value-word-blocklist": "load_module,lua_package"}))
}

// auth-realm and the auth-tls-* keys after auth-tls-secret are validated
// only once ingress-nginx's parser has found the Secret: auth's in the
// Ingress's namespace, auth-tls's named namespace/name there and holding
// a CA or key pair (auth/main.go, authtls/main.go). Without it the
// location is denied and the Ingress admitted and stored.
func TestReviewAuthValuesNeedTheirSecret(t *testing.T) {
	rule := withRules(mkRule("a.example.com", prefix("/api", "web", 80)))
	realm := func(secret string) ingressOpt {
		return withAnnotations(NginxPrefix+"auth-type", "basic", NginxPrefix+"auth-secret", secret, NginxPrefix+"auth-realm", "Log in!")
	}
	matchCN := func(secret string) ingressOpt {
		return withAnnotations(NginxPrefix+"auth-tls-secret", secret, NginxPrefix+"auth-tls-match-cn", "CN=(a")
	}
	realmRefused := "annotation nginx.ingress.kubernetes.io/auth-realm contains invalid value"
	cnRefused := "annotation nginx.ingress.kubernetes.io/auth-tls-match-cn contains invalid value"
	tests := []struct {
		name    string
		ing     *networkingv1.Ingress
		secrets []runtime.Object
		want    string
	}{
		{"realm, Secret found", mkIngress("prod", "a", 1, rule, realm("htpasswd")), []runtime.Object{mkSecret("prod", "htpasswd", "a")}, realmRefused},
		{"realm, Secret named with its namespace", mkIngress("prod", "a", 1, rule, realm(" prod/htpasswd")), []runtime.Object{mkSecret("prod", "htpasswd", "a")}, realmRefused},
		{"realm, Secret missing", mkIngress("prod", "a", 1, rule, realm("htpasswd")), nil, ""},
		{"realm, Secret in another namespace", mkIngress("prod", "a", 1, rule, realm("other/htpasswd")), []runtime.Object{mkSecret("other", "htpasswd", "a")}, ""},
		{"realm, Secret name not namespace/name", mkIngress("prod", "a", 1, rule, realm("prod/htpasswd/x")), []runtime.Object{mkSecret("prod", "htpasswd", "a")}, ""},
		{"match-cn, Secret found", mkIngress("prod", "a", 1, rule, matchCN("prod/ca")), []runtime.Object{mkSecret("prod", "ca", "a")}, cnRefused},
		{"match-cn, Secret missing", mkIngress("prod", "a", 1, rule, matchCN("prod/ca")), nil, ""},
		{"match-cn, Secret without namespace", mkIngress("prod", "a", 1, rule, matchCN("ca")), []runtime.Object{mkSecret("prod", "ca", "a")}, ""},
		{"match-cn, Secret in another namespace", mkIngress("prod", "a", 1, rule, matchCN("other/ca")), []runtime.Object{mkSecret("other", "ca", "a")}, ""},
		{"match-cn, Secret holding neither CA nor key pair", mkIngress("prod", "a", 1, rule, matchCN("prod/ca")),
			[]runtime.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "ca"}, Data: map[string][]byte{"other": []byte("x")}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReviewer(mkSnapshot(append([]runtime.Object{mkService("prod", "web", ":80:")}, tt.secrets...)...), Options{}, AdmissionSettings{})
			require.Equal(t, tt.want, r.Review(tt.ing).Refusal)
			require.Equal(t, tt.want, r.Refusal(tt.ing))
		})
	}

	// With allow-cross-namespace-resources the parsers pass another
	// namespace's Secret and validate what follows it.
	cross := Options{ConfigMap: ParseConfigMap(mkConfigMap("ingress", "nginx", map[string]string{"allow-cross-namespace-resources": "true"}))}
	for ing, want := range map[*networkingv1.Ingress]string{
		mkIngress("prod", "a", 1, rule, realm("other/htpasswd")): realmRefused,
		mkIngress("prod", "a", 1, rule, matchCN("other/ca")):     cnRefused,
	} {
		r := NewReviewer(mkSnapshot(mkService("prod", "web", ":80:"), mkSecret("other", "htpasswd", "a"), mkSecret("other", "ca", "a")), cross, AdmissionSettings{})
		require.Equal(t, want, r.Review(ing).Refusal)
		require.Equal(t, want, NginxRefusal(ing, cross, AdmissionSettings{}))
	}

	// Admitted without its Secret, the Ingress is stored and owns its path.
	older := mkIngress("prod", "old", 1, rule, realm("htpasswd"))
	r := NewReviewer(mkSnapshot(mkService("prod", "web", ":80:"), older), Options{}, AdmissionSettings{})
	require.Equal(t, `host "a.example.com" and path "/api" is already defined in ingress prod/old`,
		r.Review(mkIngress("prod", "new", 2, rule)).Refusal)
}

// An Ingress the deep inspector refuses never reaches ingress-nginx's
// store (store.go's Ingress handlers return before syncIngress), so the
// host/path check finds none of its paths: the path is free, as ramjet's
// compile, which withholds that Ingress, also leaves it.
func TestReviewOverlapSkipsDeepInspected(t *testing.T) {
	inspected := mkIngress("prod", "old", 1, withRules(mkRule("a.example.com",
		prefix("/api", "web", 80), mkPath("ImplementationSpecific", "/x/content_by_lua_block", "web", 80))))
	s := mkSnapshot(mkService("prod", "web", ":80:"), inspected)
	fresh := mkIngress("prod", "new", 3, withRules(mkRule("a.example.com", prefix("/api", "web", 80))))

	rv := NewReviewer(s, Options{}, AdmissionSettings{}).Review(fresh)
	require.Empty(t, rv.Refusal)
	for _, w := range rv.Warnings {
		require.NotEqual(t, RouteConflict, w.Reason, w.Message)
	}

	// With --deep-inspect=false ingress-nginx stores it, and its path is taken.
	require.Equal(t, `host "a.example.com" and path "/api" is already defined in ingress prod/old`,
		NewReviewer(s, Options{}, AdmissionSettings{NoDeepInspect: true}).Review(fresh).Refusal)
}

// Nor does the store hold an Ingress with a word of
// annotation-value-word-blocklist in an nginx value (syncIngress,
// checkBadAnnotationValue), whose words are the list split at commas and
// not trimmed: " lua_package" is looked for with its space.
func TestReviewOverlapSkipsBlocklisted(t *testing.T) {
	settings := ReadAdmissionSettings(map[string]string{"annotation-value-word-blocklist": "load_module, lua_package"})
	fresh := mkIngress("prod", "new", 3, withRules(mkRule("a.example.com", prefix("/api", "web", 80))))
	for _, tt := range []struct {
		value, want string
	}{
		{"/load_module", ""},
		{"/x lua_package", ""},
		{"/lua_package", `host "a.example.com" and path "/api" is already defined in ingress prod/old`},
		{"/other", `host "a.example.com" and path "/api" is already defined in ingress prod/old`},
	} {
		old := mkIngress("prod", "old", 1, withAnnotations(NginxPrefix+"x-forwarded-prefix", tt.value),
			withRules(mkRule("a.example.com", prefix("/api", "web", 80))))
		s := mkSnapshot(mkService("prod", "web", ":80:"), old)
		require.Equal(t, tt.want, NewReviewer(s, Options{}, settings).Review(fresh).Refusal, tt.value)
	}
}
