package router

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"ramjet.dev/ramjet/match"
)

// reasonConstants reads the package's Reason constants from its source:
// name by value.
func reasonConstants(t *testing.T) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Reason") {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: %s is not a string literal", fset.Position(id.Pos()), id.Name)
					}
					v, _ := strconv.Unquote(lit.Value)
					consts[v] = id.Name
				}
			}
		}
	}
	return consts
}

// Every answer the router can give has its Reason constant declared by
// exactly one step (ReasonRefused is the HTTP/1 server's) (decide and the proxy included), so Lookup's account
// of what only serving decides (Decision.LeavesToServing) cannot miss a
// reason a step gained, and no step declares a reason that does not
// exist.
func TestReasonsDeclared(t *testing.T) {
	consts := reasonConstants(t)
	if len(consts) < 30 {
		t.Fatalf("found %d Reason constants; is the source read?", len(consts))
	}
	steps := append([]*step{&stepDecide}, requestSteps[:]...)
	steps = append(steps, &stepProxy)
	owners := map[string][]string{}
	for _, st := range steps {
		for _, r := range st.reasons {
			owners[r] = append(owners[r], st.name)
			if _, ok := consts[r]; !ok {
				t.Errorf("step %q declares %q, which is no Reason constant", st.name, r)
			}
		}
	}
	var names []string
	for v, name := range consts {
		if v == ReasonRefused {
			continue // the HTTP/1 server's, through Refused: no step gives it
		}
		switch len(owners[v]) {
		case 0:
			names = append(names, name)
		case 1:
		default:
			t.Errorf("%s is declared by more than one step: %v", name, owners[v])
		}
	}
	sort.Strings(names)
	for _, name := range names {
		t.Errorf("%s is declared by no step: add it to the reasons of the step that answers with it", name)
	}
}

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

// Every step run calls a function for has a kind of its own, and the
// decided steps none.
func TestStepKinds(t *testing.T) {
	seen := map[stepKind]string{}
	for _, st := range requestSteps {
		if st.decided {
			if st.kind != kindNone {
				t.Errorf("decided step %q has kind %d", st.name, st.kind)
			}
			continue
		}
		if st.kind == kindNone {
			t.Errorf("step %q has no kind: run has no case for it", st.name)
		}
		if other, dup := seen[st.kind]; dup {
			t.Errorf("steps %q and %q share kind %d", st.name, other, st.kind)
		}
		seen[st.kind] = st.name
	}
}
