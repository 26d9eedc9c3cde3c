package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
)

// /debug/warnings lists the last compile's warnings, one line each, with
// newlines in messages escaped so that a line is a warning, and its
// severity in brackets.
func TestDebugWarnings(t *testing.T) {
	var last atomic.Pointer[compile.Result]
	mux := debugMux(router.New(router.Options{Logger: slog.New(slog.DiscardHandler)}), "/healthz", func() bool { return true }, new(atomic.Bool), &last, nil, nil, nil)
	get := func() string {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/warnings", nil))
		require.Equal(t, http.StatusOK, rec.Code)
		body, err := io.ReadAll(rec.Body)
		require.NoError(t, err)
		return string(body)
	}
	require.Equal(t, "no compile yet\n", get())

	shop := compile.Ref{Kind: "Ingress", Namespace: "prod", Name: "shop"}
	last.Store(&compile.Result{Warnings: []compile.Warning{
		{Reason: compile.ServiceNotFound, Object: shop, Field: "spec.rules[0]", Message: "Service prod/api not found\nanswers 503"},
		{Reason: compile.RouteConflict, Object: shop, Field: "spec.rules[1]", Message: "lost", Winner: shop, WinnerField: "spec.rules[0]"},
	}})
	require.Equal(t,
		"ServiceNotFound Ingress prod/shop spec.rules[0]: Service prod/api not found\\nanswers 503 [cosmetic]\n"+
			"RouteConflict Ingress prod/shop spec.rules[1]: lost (winner: Ingress prod/shop spec.rules[0]) [traffic-moves]\n",
		get())
}
