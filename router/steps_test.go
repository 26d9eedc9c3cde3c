package router

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"ramjet.dev/ramjet/match"
)

// The steps' names are distinct, a step writing decide's answer declares
// no answer of its own (decide declares them) and every other step
// declares its answers and has a case in run.
func TestRequestSteps(t *testing.T) {
	seen := map[string]bool{stepDecide.name: true, stepProxy.name: true}
	for _, st := range requestSteps {
		if seen[st.name] {
			t.Errorf("step name %q twice", st.name)
		}
		seen[st.name] = true
		if st.decided && len(st.reasons) > 0 {
			t.Errorf("step %q writes decide's answer but declares reasons %v", st.name, st.reasons)
		}
		if !st.decided && len(st.reasons) == 0 {
			t.Errorf("step %q declares no answer", st.name)
		}
	}
	// A request with nothing to answer (no policies, no body, no canary,
	// no hook) passes every step; a step run has no case for panics.
	r := newTestRouter(Options{})
	for _, st := range requestSteps {
		s := requestState{w: httptest.NewRecorder(), req: httptest.NewRequest(http.MethodGet, "/", nil),
			d: decision{st: &serving{}, backend: &match.Backend{}}}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("step %q: %v", st.name, p)
				}
			}()
			if r.run(st, &s) {
				t.Errorf("step %q answered a request it has nothing to answer", st.name)
			}
		}()
	}
}
