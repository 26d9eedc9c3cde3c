package gatewayapi

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/gateway-api/pkg/features"

	"ramjet.dev/ramjet/router/routertest"
)

// notesRE reads what a conformance case file's notes say: the suite
// test's features, how many of its requests are not served yet, how many
// the file checks in part, and how many a Go test of this package serves
// instead (conformance_test.go: a mirror's copies, a slow backend, a
// ReferenceGrant deleted), which pass when that test does.
var notesRE = regexp.MustCompile(`^features: ([A-Za-z0-9, ]+?)(?:; not served: (\d+) \([^)]*\))?(?:; partly checked: (\d+) \([^)]*\))?(?:; in Go: (\d+) \([^)]*\))?$`)

// TestFeatureReport runs the conformance case files (httproute-*.yaml and
// grpcroute-*.yaml,
// one per test of the suite, its features in notes) and renders which of
// the suite's Gateway, ReferenceGrant and HTTPRoute features they cover,
// each passing or with requests not served yet; doc.go §20 must hold that
// text. A feature's case file that is missing or fails fails the test.
// Features the suite's tests list for their other route kinds (TLSRoute
// in httproute-disallowed-kind) are not ramjet's to claim and are left out.
func TestFeatureReport(t *testing.T) {
	Register()
	files, err := filepath.Glob("testdata/cases/httproute-*.yaml")
	grpc, _ := filepath.Glob("testdata/cases/grpcroute-*.yaml")
	files = append(files, grpc...)
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance case files: %v", err)
	}
	level := map[features.FeatureName]string{}
	for _, s := range []struct {
		set   sets.Set[features.Feature]
		level string
	}{
		{features.GatewayCoreFeatures, "Core"}, {features.ReferenceGrantCoreFeatures, "Core"}, {features.HTTPRouteCoreFeatures, "Core"},
		{features.GatewayExtendedFeatures, "Extended"}, {features.HTTPRouteExtendedFeatures, "Extended"},
		{features.GRPCRouteCoreFeatures, "Core"}, {features.GRPCRouteExtendedFeatures, "Extended"},
	} {
		for f := range s.set {
			level[f.Name] = s.level
		}
	}
	type tally struct{ tests, notServed, partly, inGo int }
	byFeature := map[features.FeatureName]*tally{}
	requests, notServed, partly, inGo, tests := 0, 0, 0, 0, 0
	for _, f := range files {
		test := strings.TrimSuffix(filepath.Base(f), ".yaml")
		cases, err := routertest.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if fr := routertest.CheckFile(f, cases, false); !fr.OK() {
			t.Errorf("%s fails (TestCases says how)", f)
		}
		if len(cases) != 1 || cases[0].Source != "sigs.k8s.io/gateway-api/conformance/tests/"+test+".go" {
			t.Errorf("%s: want one case citing its suite test, %s.go", f, test)
			continue
		}
		m := notesRE.FindStringSubmatch(cases[0].Notes)
		if m == nil {
			t.Errorf("%s: notes %q do not say the test's features", f, cases[0].Notes)
			continue
		}
		n, _ := strconv.Atoi(cmp.Or(m[2], "0"))
		p, _ := strconv.Atoi(cmp.Or(m[3], "0"))
		g, _ := strconv.Atoi(cmp.Or(m[4], "0"))
		partly += p
		inGo += g
		requests += g
		tests++
		for _, r := range cases[0].Requests {
			// A request a file adds to the suite's (an unattached route
			// serving nothing) is not the suite's to count.
			if !strings.HasPrefix(r.Scenario, "ramjet's own check") {
				requests++
			}
		}
		notServed += n
		for name := range strings.SplitSeq(m[1], ", ") {
			fn := features.FeatureName(name)
			if features.GetFeature(fn).Name != fn {
				t.Errorf("%s: %q is not a feature of the suite", f, name)
			}
			if level[fn] == "" {
				continue
			}
			if byFeature[fn] == nil {
				byFeature[fn] = &tally{}
			}
			byFeature[fn].tests++
			byFeature[fn].notServed += n
			byFeature[fn].partly += p
			byFeature[fn].inGo += g
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// %d suite tests are case files: %d of their requests pass (%d of them\n// checked in part, %d checked by Go tests beside the case files) and %d\n// are not served yet.\n", tests, requests, partly, inGo, notServed)
	b.WriteString("// The suite's features these tests cover, each passing in every\n// request of its tests that is served:\n//\n")
	for _, fn := range slices.Sorted(func(yield func(features.FeatureName) bool) {
		for fn := range byFeature {
			if !yield(fn) {
				return
			}
		}
	}) {
		tl := byFeature[fn]
		line := fmt.Sprintf("//   - %s (%s): %s", fn, level[fn], plural(tl.tests, "test"))
		if tl.partly > 0 {
			line += fmt.Sprintf(", %d requests checked in part", tl.partly)
		}
		if tl.inGo > 0 {
			line += fmt.Sprintf(", %s checked by Go tests", plural(tl.inGo, "request"))
		}
		if tl.notServed > 0 {
			line += fmt.Sprintf(", %s not served yet", plural(tl.notServed, "request"))
		}
		b.WriteString(line + "\n")
	}
	t.Logf("conformance: %d requests pass in %d case files (%d checked in part, %d by Go tests), %d requests not served", requests, tests, partly, inGo, notServed)
	doc, err := os.ReadFile("../../doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), b.String()) {
		t.Errorf("doc.go §20 does not hold the feature report; want:\n%s", b.String())
	}
}

func plural(n int, s string) string {
	if n == 1 {
		return "1 " + s
	}
	return strconv.Itoa(n) + " " + s + "s"
}
