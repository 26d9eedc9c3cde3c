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
// failures directly.
//
// The golden of x.yaml is x.golden beside it: the text rendering of each
// case's compiled table (RenderTable), each headed by "# case: <name>". A
// missing or different golden fails the test; with -update, or UpdateEnv
// set, the goldens are rewritten instead (see the package documentation).
func RunFiles(t testing.TB, paths ...string) {
	t.Helper()
	files, err := caseFiles(paths)
	if err != nil {
		t.Fatal(err)
		return
	}
	for _, f := range files {
		subtest(t, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), func(t testing.TB) {
			t.Helper()
			cases, err := loadFile(f)
			if err != nil {
				t.Error(err)
				return
			}
			for _, c := range cases {
				subtest(t, c.Name, func(t testing.TB) {
					t.Helper()
					if res := Run(c); !res.OK() {
						t.Error("\n" + res.Report())
					}
				})
			}
			checkGolden(t, f, cases)
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

func checkGolden(t testing.TB, file string, cases []Case) {
	t.Helper()
	path := GoldenPath(file)
	got, err := RenderGolden(cases)
	if err != nil {
		t.Errorf("%s: %v", file, err)
		return
	}
	want, readErr := os.ReadFile(path)
	if updating() {
		if readErr == nil && string(want) == got {
			return
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Errorf("updating golden: %v", err)
			return
		}
		t.Logf("updated %s", path)
		return
	}
	if errors.Is(readErr, fs.ErrNotExist) {
		t.Errorf("%s: golden table missing; run go test with -update to create it", path)
		return
	}
	if readErr != nil {
		t.Errorf("golden: %v", readErr)
		return
	}
	if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n"), wholeLines); d != "" {
		t.Errorf("%s: compiled tables differ from the golden (-golden +got); if the change is intended, run go test with -update:\n%s", path, d)
	}
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
