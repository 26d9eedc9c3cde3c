package gatewayapi

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
)

// TestOrderIndependent reads the manifests of every conformance test with
// their documents shuffled, through the loader and the Extension, and
// requires the same table, warnings and digest (SPEC §15): Translate and
// compile must not depend on the order objects arrive in.
func TestOrderIndependent(t *testing.T) {
	Register()
	tests, err := filepath.Glob("testdata/conformance/*route-*.yaml")
	if err != nil || len(tests) == 0 {
		t.Fatalf("no conformance manifests: %v", err)
	}
	tests = slices.DeleteFunc(tests, func(f string) bool { return strings.HasPrefix(filepath.Base(f), "tlsroute-") })
	tlsTests, err := filepath.Glob("testdata/conformance/tlsroute-*.yaml")
	if err != nil || len(tlsTests) == 0 {
		t.Fatalf("no TLSRoute conformance manifests: %v", err)
	}
	for _, f := range tlsTests {
		// A lone TLS listener without a hostname, which the base's HTTPS
		// listener of another Gateway takes: nothing is served to order.
		if filepath.Base(f) != "tlsroute-listener-passthrough-supported-kinds.yaml" {
			tests = append(tests, f)
		}
	}
	rng := rand.New(rand.NewPCG(27, 20))
	for _, test := range tests {
		t.Run(filepath.Base(test), func(t *testing.T) {
			var docs [][]byte
			for _, f := range []string{"testdata/suite/gatewayclass.yaml", "testdata/suite/endpoints.yaml", "testdata/conformance/base.yaml", test} {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				docs = append(docs, bytes.Split(data, []byte("\n---"))...)
			}
			want := compileDocs(t, docs)
			for range 4 {
				rng.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
				got := compileDocs(t, docs)
				if got.Table.Digest() != want.Table.Digest() {
					t.Errorf("digest depends on document order")
				}
				if d := cmp.Diff(want.String(), got.String()); d != "" {
					t.Fatalf("table or warnings depend on document order (-want +got):\n%s", d)
				}
			}
		})
	}
}

func compileDocs(t *testing.T, docs [][]byte) compile.Result {
	t.Helper()
	snap, _, err := manifest.Decode("shuffled", bytes.Join(docs, []byte("\n---\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.HTTPRoutes) == 0 && len(snap.TLSRoutes) == 0 && len(snap.PassthroughListeners) == 0 && len(snap.Warnings) == 0 {
		t.Fatal("the Extension read no route")
	}
	return compile.Compile(*snap, compile.Options{})
}
