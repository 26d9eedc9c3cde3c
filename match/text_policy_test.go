package match

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/balance"
)

// A backend line names its policy only when it is not the default.
func TestWriteTextPolicies(t *testing.T) {
	key, err := balance.ParseHashKey("$cookie_session")
	require.NoError(t, err)
	rr := &Backend{ID: "prod/a:80", Namespace: "prod", Name: "a", Port: 80, Endpoints: []string{"10.0.0.1:80"}}
	lc := &Backend{ID: "prod/b:80", Namespace: "prod", Name: "b", Port: 80, Algorithm: balance.LeastConn}
	hashed := &Backend{ID: "prod/c:80", Namespace: "prod", Name: "c", Port: 80, Protocol: GRPC, Algorithm: balance.Hash, HashKey: key}
	tab := mustNew(t, Spec{Backends: []*Backend{hashed, lc, rr}})
	want := "digest " + tab.Digest() + "\n" +
		"host * catch-all\n" +
		"  fallback none (404)\n" +
		"backend prod/a:80 HTTP Serving\n" +
		"  endpoint 10.0.0.1:80\n" +
		"backend prod/b:80 HTTP Serving least_conn\n" +
		"  no ready endpoints\n" +
		"backend prod/c:80 GRPC Serving hash $cookie_session\n" +
		"  no ready endpoints\n"
	if diff := cmp.Diff(want, tab.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
