package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestGatewayStatusOfRecreatedRoute: a route deleted and created again
// under a name whose status was written lately is a new object, not a
// status someone else changed: its status is written at once.
func TestGatewayStatusOfRecreatedRoute(t *testing.T) {
	written := map[string]statusWrite{}
	var updates int
	update := func(_ context.Context, r *gwv1.HTTPRoute, _ metav1.UpdateOptions) (*gwv1.HTTPRoute, error) {
		updates++
		return r, nil
	}
	get := func(context.Context, string, metav1.GetOptions) (*gwv1.HTTPRoute, error) {
		t.Fatal("no conflict, no read")
		return nil, nil
	}
	redecide := func(r *gwv1.HTTPRoute) (*gwv1.HTTPRoute, bool) { return r, true }
	route := func(uid string) *gwv1.HTTPRoute {
		r := &gwv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: k8stypes.UID(uid)}}
		r.Status.Parents = []gwv1.RouteParentStatus{{ParentRef: gwv1.ParentReference{Name: "gw"}, ControllerName: "ramjet.dev/gateway"}}
		return r
	}
	ok, err := writeStatus(context.Background(), written, route("first"), update, get, redecide)
	require.NoError(t, err)
	require.True(t, ok)

	ok, err = writeStatus(context.Background(), written, route("first"), update, get, redecide)
	require.ErrorIs(t, err, errRewriteDeferred, "the same object's status changed since by someone else")
	require.False(t, ok)

	ok, err = writeStatus(context.Background(), written, route("second"), update, get, redecide)
	require.NoError(t, err, "a route created again is written at once")
	require.True(t, ok)
	require.Equal(t, 2, updates)
}
