package routertest

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// RunFiles runs every case of the case files named by paths (files, globs
// or directories, as for LoadCases) and checks each file's golden table.
// With a *testing.T each file and each case is a subtest; other TBs report
// failures directly. It reaches the same verdict as CheckFile, which
// examples/check uses.
//
// The golden of x.yaml is x.golden beside it: the text rendering of each
// case's compiled table and warnings (RenderTable), each headed by
// "# case: <name>". A missing or different golden fails the test; with
// -update, or UpdateEnv set, the goldens are rewritten instead (see the
// package documentation).
func RunFiles(t testing.TB, paths ...string) {
	t.Helper()
	files, err := CaseFiles(paths...)
	if err != nil {
		t.Fatal(err)
		return
	}
	for _, f := range files {
		subtest(t, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), func(t testing.TB) {
			t.Helper()
			cases, err := LoadFile(f)
			if err != nil {
				t.Error(err)
				return
			}
			fr := CheckFile(f, cases, updating())
			for _, res := range fr.Cases {
				subtest(t, res.Case, func(t testing.TB) {
					t.Helper()
					if !res.OK() {
						t.Error("\n" + res.Report())
					} else if res.Unclaimed != "" {
						t.Logf("warning: %s", res.Unclaimed)
					}
				})
			}
			switch g := fr.Golden; {
			case g.Updated:
				t.Logf("updated %s", g.Path)
			case !g.Match:
				t.Error(g.Problem)
			}
		})
	}
}

// subtest runs f as a subtest of a *testing.T, or directly on another TB.
func subtest(t testing.TB, name string, f func(testing.TB)) {
	t.Helper()
	if tt, ok := t.(*testing.T); ok {
		tt.Run(name, func(t *testing.T) { t.Helper(); f(t) })
		return
	}
	f(t)
}

// FileResult is the verdict on one case file: each case's result and the
// comparison with the file's golden.
type FileResult struct {
	File   string   `json:"file"`
	Cases  []Result `json:"cases"`
	Golden Golden   `json:"golden"`
}

// OK reports whether every case passed and the golden matched.
func (f FileResult) OK() bool {
	for _, c := range f.Cases {
		if !c.OK() {
			return false
		}
	}
	return f.Golden.Match
}

// Golden is the comparison of a case file's compiled tables and warnings
// with its golden file.
type Golden struct {
	Path string `json:"path"`
	// Match reports that the golden equals the rendering (after updating,
	// when it was updated).
	Match bool `json:"match"`
	// Updated reports that the golden was written because it differed.
	Updated bool `json:"updated,omitempty"`
	// Problem says why it does not match: missing, unreadable, or the
	// lines that differ (-golden +got).
	Problem string `json:"problem,omitempty"`
}

// CheckFile runs the cases of one case file (as LoadFile returns them) and
// compares the file's golden with what they compile to; with update a
// differing or missing golden is rewritten instead. Each case is compiled
// once, for its requests and for the golden.
func CheckFile(file string, cases []Case, update bool) FileResult {
	fr := FileResult{File: file, Golden: Golden{Path: GoldenPath(file)}}
	var b strings.Builder
	var renderErr error
	for i, c := range cases {
		result, err := compileCase(c)
		fr.Cases = append(fr.Cases, run(c, result, err))
		if err != nil {
			renderErr = errors.Join(renderErr, fmt.Errorf("case %q: %w", c.Name, err))
			continue
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "# case: %s\n%s", c.Name, result.String())
	}
	if renderErr != nil {
		fr.Golden.Problem = fmt.Sprintf("%s: %v", file, renderErr)
		return fr
	}
	fr.Golden = compareGolden(fr.Golden.Path, b.String(), update)
	return fr
}

// GoldenPath is the golden file of a case file: x.yaml → x.golden.
func GoldenPath(caseFile string) string {
	return strings.TrimSuffix(caseFile, filepath.Ext(caseFile)) + ".golden"
}

// RenderGolden is the golden text of a case file's cases.
func RenderGolden(cases []Case) (string, error) {
	var b strings.Builder
	for i, c := range cases {
		text, err := RenderTable(c)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "# case: %s\n%s", c.Name, text)
	}
	return b.String(), nil
}

func compareGolden(path, got string, update bool) Golden {
	g := Golden{Path: path}
	want, readErr := os.ReadFile(path)
	if readErr == nil && string(want) == got {
		g.Match = true
		return g
	}
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			g.Problem = fmt.Sprintf("updating golden: %v", err)
			return g
		}
		g.Match, g.Updated = true, true
		return g
	}
	switch {
	case errors.Is(readErr, fs.ErrNotExist):
		g.Problem = fmt.Sprintf("%s: golden table missing; run go test (or examples/check) with -update to create it", path)
	case readErr != nil:
		g.Problem = fmt.Sprintf("golden: %v", readErr)
	default:
		d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n"), wholeLines)
		g.Problem = fmt.Sprintf("%s: compiled tables differ from the golden (-golden +got); if the change is intended, run go test (or examples/check) with -update:\n%s", path, d)
	}
	return g
}

// wholeLines makes cmp.Diff show changed lines whole rather than the bytes
// that changed within them: a table is read one fact per line.
var wholeLines = cmp.Comparer(func(a, b string) bool { return a == b })

// UpdateEnv is the environment variable that, set to 1 or true, rewrites
// goldens as -update does.
const UpdateEnv = "RAMJET_UPDATE_GOLDEN"

// In a test binary, register -update unless a flag of that name exists:
// a test package that imports routertest need not define it.
func init() {
	if testing.Testing() {
		registerUpdate(flag.CommandLine)
	}
}

func registerUpdate(fs *flag.FlagSet) {
	if fs.Lookup("update") == nil {
		fs.Bool("update", false, "rewrite the golden files of routertest case files")
	}
}

// updating reports whether goldens are to be rewritten: UpdateEnv is set,
// or the boolean flag named "update" is.
func updating() bool {
	if v, _ := strconv.ParseBool(os.Getenv(UpdateEnv)); v {
		return true
	}
	if f := flag.Lookup("update"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			b, _ := g.Get().(bool)
			return b
		}
	}
	return false
}
