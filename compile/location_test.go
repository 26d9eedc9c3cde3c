package compile

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/match"
)

// routeFieldsLeftZero are the match.Route fields an Ingress that sets every
// location annotation may still leave zero, each with why.
var routeFieldsLeftZero = map[string]string{
	"Order":            "the first declaration ranks 0",
	"Regexp":           "set for Regex routes only; the Prefix route here has none",
	"OrderPath":        "set for Regex routes only, where it places them",
	"NoAffinityCookie": "set only on a backend with affinity, for the routes of Ingresses without it",
	"CookieSlash":      "set only on a backend with affinity, for a Prefix path declared with its trailing slash",
	"When":             "an HTTPRoute's method, header and query matches; no Ingress sets them",
	"Split":            "an HTTPRoute's weighted backendRefs; an Ingress's canary split lives on its backend",
	"CaseSensitive":    "an HTTPRoute's RegularExpression; an Ingress's patterns fold case",
	"PortName":         "set for a Service port given by name; the path here gives the number",
}

// routeFieldsWithoutFallback are the match.Route fields outside its
// Location: route features a fallback has none of, or holds elsewhere,
// each with where the fallback's comes from.
var routeFieldsWithoutFallback = map[string]string{
	"Type": "", "Path": "", "Backend": "VirtualHost.Fallback", "Source": "VirtualHost.FallbackSource", "Order": "", "Regexp": "", "OrderPath": "",
	"SSLRedirect": "VirtualHost.SSLRedirect", "ForceSSLRedirect": "VirtualHost.ForceSSLRedirect",
	"PreserveTrailingSlash": "VirtualHost.PreserveTrailingSlash",
	"UsePortInRedirects":    "VirtualHost.UsePortInRedirects",
	"Redirect":              "VirtualHost.Actions (the creator's redirect for unmatched requests)",
	"Extensions":            "a Hook reads a route's; requests no route matches carry none",
	"NoAffinityCookie":      "the fallback's backend sets its cookie as its affinity says",
	"CookieSlash":           "a fallback's cookie is for \"/\"",
	"When":                  "a route's conditions pass a request on; the fallback takes what no route took",
	"Split":                 "an HTTPRoute's; the fallback has one backend",
	"CaseSensitive":         "a Regex route's; a fallback matches no path",
	"PortName":              "VirtualHost.FallbackPortName",
	"NginxLocation":         "a regex-mode Regex route's; a fallback's auth location is the server's \"/\" Prefix",
}

// TestEveryLocationFeatureReachesRoutesAndFallbacks compiles an Ingress
// that sets every location annotation and checks, by reflection, that each
// field of match.Route is filled on its route, and each field of its
// Location on the fallback of the host it creates too (SPEC §6): a
// feature added to match.Location that compile never fills, or fills for
// routes but not for fallbacks, fails here, and so does a route feature
// added outside Location without a word on why a fallback has none.
func TestEveryLocationFeatureReachesRoutesAndFallbacks(t *testing.T) {
	htpasswd := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "htpasswd"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"auth": []byte("eve:{PLAIN}plain\n")},
	}
	ing := mkIngress("prod", "app", 1,
		withRules(mkRule("app.example.com", prefix("/app", "web", 80))),
		withDefault("web", 80),
		withTLS("app-tls", "app.example.com"),
		withAnnotations(
			"nginx.ingress.kubernetes.io/rewrite-target", "/",
			"nginx.ingress.kubernetes.io/upstream-vhost", "internal.example.com",
			"nginx.ingress.kubernetes.io/enable-cors", "true",
			"nginx.ingress.kubernetes.io/auth-type", "basic",
			"nginx.ingress.kubernetes.io/auth-secret", "htpasswd",
			"nginx.ingress.kubernetes.io/limit-rps", "5",
			"nginx.ingress.kubernetes.io/proxy-body-size", "1m",
			"nginx.ingress.kubernetes.io/force-ssl-redirect", "true",
			"nginx.ingress.kubernetes.io/preserve-trailing-slash", "true",
			"nginx.ingress.kubernetes.io/use-port-in-redirects", "true",
			"nginx.ingress.kubernetes.io/permanent-redirect", "https://elsewhere.example.com/",
			"nginx.ingress.kubernetes.io/proxy-ssl-secret", "prod/upstream-ca",
			"nginx.ingress.kubernetes.io/limit-rate", "100",
			"nginx.ingress.kubernetes.io/configuration-snippet", "add_header X-A 1;",
			"nginx.ingress.kubernetes.io/enable-opentelemetry", "true",
			"example.com/team", "shop",
		))
	upstreamCA := mkSecret("prod", "upstream-ca", "a")
	upstreamCA.Data["ca.crt"] = upstreamCA.Data[corev1.TLSCertKey]
	s := mkSnapshot(ing, htpasswd, upstreamCA, mkSecret("prod", "app-tls", "app"),
		mkService("prod", "web", "http:80:8080"), mkSlice("prod", "web", "web-1", "http", 8080, "10.0.0.1"))
	tab, ws := compileOK(t, s, Options{ExtensionPrefixes: []string{"example.com/"},
		AllowSnippetAnnotations: true, AnnotationsRiskLevel: "Critical"})

	var vh *match.VirtualHost
	for h := range tab.VirtualHosts() {
		if h.Name == "app.example.com" {
			vh = h
		}
	}
	require.NotNil(t, vh, "host app.example.com; warnings:\n%s", warningText(ws))
	require.Len(t, vh.Routes, 1)

	route := reflect.ValueOf(vh.Routes[0]).Elem()
	for i := range route.NumField() {
		f := route.Type().Field(i)
		if !f.IsExported() || f.Type == reflect.TypeFor[match.Location]() {
			continue
		}
		if _, ok := routeFieldsLeftZero[f.Name]; !ok {
			require.False(t, route.Field(i).IsZero(), "Route.%s: compile never fills it from the annotations here; warnings:\n%s", f.Name, warningText(ws))
		}
		_, ok := routeFieldsWithoutFallback[f.Name]
		require.True(t, ok, "Route.%s is outside Route.Location: a location feature guards requests no route matches too (SPEC §6); move it into match.Location, or list it in routeFieldsWithoutFallback with why", f.Name)
	}
	for name := range routeFieldsWithoutFallback {
		_, ok := route.Type().FieldByName(name)
		require.True(t, ok, "routeFieldsWithoutFallback names Route.%s, which does not exist", name)
	}

	routeLoc, fallbackLoc := reflect.ValueOf(vh.Routes[0].Location), reflect.ValueOf(vh.FallbackLocation)
	for i := range routeLoc.NumField() {
		name := routeLoc.Type().Field(i).Name
		require.False(t, routeLoc.Field(i).IsZero(), "Route.%s: compile never fills it from the annotations here; warnings:\n%s", name, warningText(ws))
		require.False(t, fallbackLoc.Field(i).IsZero(), "VirtualHost.FallbackLocation.%s: compile does not fill it from the Ingress that created the host", name)
	}
}
