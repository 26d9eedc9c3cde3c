package compile

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAliasLookup: an alias reaches its host's routes; a real host's name
// is never taken over by an alias.
func TestAliasLookup(t *testing.T) {
	s := mkSnapshot(
		mkService("prod", "api", ":80:"), mkSlice("prod", "api", "a", "", 80, "10.0.0.1"),
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "a", "", 80, "10.0.0.2"),
		mkIngress("prod", "shop", 1, withAnnotations(NginxPrefix+"server-alias", "shop.example.org, *.shop.example.net, web.example.com"),
			withRules(mkRule("shop.example.com", prefix("/", "api", 80)))),
		mkIngress("prod", "web", 2, withRules(mkRule("web.example.com", prefix("/", "web", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	require.Equal(t, "prod/api:80", served(tab, "shop.example.org", "/x"))
	require.Equal(t, "prod/api:80", served(tab, "eu.shop.example.net", "/x"))
	require.Equal(t, "404", served(tab, "a.eu.shop.example.net", "/x"))
	require.Equal(t, "prod/web:80", served(tab, "web.example.com", "/x"))
	w := findWarning(t, ws, AnnotationConflict, "metadata.annotations["+NginxPrefix+"server-alias]")
	require.Equal(t, "Ingress prod/web", w.Winner.String())
	require.True(t, strings.Contains(tab.String(), "  alias shop.example.org\n"), tab.String())
}

// ingress-nginx inserts a host's default location first, and a "/" path
// that is not Exact takes its place: among equal paths insertion decides
// the app-root, so a newer Prefix "/" answers before an older Exact "/"
// (controller.go getBackendServers, stable sorts on Location.Path).
func TestAppRootReplacedDefaultLocationFirst(t *testing.T) {
	s := mkSnapshot(
		mkClass("ramjet", "ramjet.dev/ingress"),
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkIngress("prod", "exact-root", 1, withAnnotations(NginxPrefix+"app-root", "/e"),
			withRules(mkRule("rank.example.com", exact("/", "web", 80)))),
		mkIngress("prod", "prefix-root", 2, withAnnotations(NginxPrefix+"app-root", "/p"),
			withRules(mkRule("rank.example.com", prefix("/", "web", 80)))),
	)
	tab, ws := compileOK(t, s, Options{})
	vh := tab.VirtualHostByName("rank.example.com")
	require.NotNil(t, vh.Actions)
	require.Equal(t, "/p", vh.Actions.AppRoot)
	require.Len(t, ws, 1, warningText(ws))
	require.Equal(t, AnnotationConflict, ws[0].Reason)
	require.Equal(t, "exact-root", ws[0].Object.Name)
}
