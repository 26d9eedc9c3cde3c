package compile

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The ConfigMap's proxy-redirect-*, proxy-cookie-* keys are location
// defaults read as nginx reads them (ingress-nginx validates only the
// annotations): regular expressions with groups pass; what nginx refuses
// to load, or an nginx variable ramjet cannot expand, is rejected.
func TestHeaderRewriteConfigMapKeys(t *testing.T) {
	for _, tt := range []struct {
		key, value string
		rejected   bool
	}{
		{"proxy-redirect-from", "off", false},
		{"proxy-redirect-from", "default", false},
		{"proxy-redirect-from", "~^http://([^/]+)/", false},
		{"proxy-redirect-to", "https://$1/", false},
		{"proxy-cookie-path", "~*^/(api)(/.*)? /v2/$1$2", false},
		{"proxy-cookie-domain", ".internal example.com", false},
		{"proxy-cookie-domain", "off", false},
		{"proxy-cookie-path", "/a /b /c", true},
		{"proxy-cookie-path", "/a", true},
		{"proxy-cookie-domain", "OFF", true},
		{"proxy-cookie-domain", "internal $host", true},
		{"proxy-cookie-path", "~(unclosed /", true},
		{"proxy-redirect-from", "http://a/ http://b/", true},
		{"proxy-redirect-to", "", true},
	} {
		cm := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "nginx"}, Data: map[string]string{tt.key: tt.value}})
		ws := cm.Warnings()
		if !tt.rejected {
			assert.Empty(t, ws, "%s=%q", tt.key, tt.value)
			continue
		}
		require.Len(t, ws, 1, "%s=%q", tt.key, tt.value)
		assert.Equal(t, ConfigMapKeyRejected, ws[0].Reason, "%s=%q: %s", tt.key, tt.value, ws[0].Message)
	}
}

// A pair nginx would not load warns on both keys, and nothing is
// rewritten: a regular expression's group in a literal's replacement.
func TestHeaderRewriteRedirectPair(t *testing.T) {
	s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "a", 1, withAnnotations(NativePrefix+"proxy-redirect-from", "http://in/", NativePrefix+"proxy-redirect-to", "/$1"),
			withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
	res := Compile(s, Options{})
	findWarning(t, res.Warnings, AnnotationRejected, "metadata.annotations["+NativePrefix+"proxy-redirect-from]")
	findWarning(t, res.Warnings, AnnotationRejected, "metadata.annotations["+NativePrefix+"proxy-redirect-to]")
}

// connection-proxy-header: "close" or "keep-alive" as ingress-nginx's
// validator takes them (spaces removed); anything else warns.
func TestConnectionProxyHeaderAnnotation(t *testing.T) {
	for value, want := range map[string]string{"close": "close", " keep-alive ": "keep-alive", "upgrade": "", "Close": ""} {
		s := mkSnapshot(mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
			mkIngress("prod", "a", 1, withAnnotations(NginxPrefix+"connection-proxy-header", value),
				withRules(mkRule("a.example.com", prefix("/", "web", 80)))))
		res := Compile(s, Options{})
		if want != "" {
			assert.Contains(t, res.Table.String(), "proxying connection="+want+"\n", value)
		} else {
			assert.NotContains(t, res.Table.String(), "connection=", value)
		}
		if want == "" {
			findWarning(t, res.Warnings, AnnotationRejected, "metadata.annotations["+NginxPrefix+"connection-proxy-header]")
		} else {
			assert.Empty(t, res.Warnings, value)
		}
	}
}
