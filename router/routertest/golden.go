package routertest

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RunFiles runs every case of the case files named by paths (files, globs
// or directories, as for LoadCases) and checks each file's golden table.
// With a *testing.T each file and each case is a subtest; other TBs report
// failures directly.
//
// The golden of x.yaml is x.golden beside it: the text rendering of each
// case's compiled table (RenderTable), each headed by "# case: <name>". A
// missing or different golden fails the test. When the test binary defines
// a boolean flag named "update" and it is set, the goldens are rewritten
// instead; this package registers no flags itself.
func RunFiles(t testing.TB, paths ...string) {
	t.Helper()
	files, err := caseFiles(paths)
	if err != nil {
		t.Fatal(err)
		return
	}
	for _, f := range files {
		if tt, ok := t.(*testing.T); ok {
			tt.Run(strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)), func(t *testing.T) {
				t.Helper()
				runFile(t, f)
			})
			continue
		}
		runFile(t, f)
	}
}

func runFile(t testing.TB, file string) {
	t.Helper()
	cases, err := loadFile(file)
	if err != nil {
		t.Error(err)
		return
	}
	for _, c := range cases {
		if tt, ok := t.(*testing.T); ok {
			tt.Run(c.Name, func(t *testing.T) {
				t.Helper()
				if res := Run(c); !res.OK() {
					t.Error("\n" + res.Report())
				}
			})
			continue
		}
		if res := Run(c); !res.OK() {
			t.Error("\n" + res.Report())
		}
	}
	checkGolden(t, file, cases)
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
	if d := lineDiff(string(want), got); d != "" {
		t.Errorf("%s: compiled tables differ from the golden (-golden +got); if the change is intended, run go test with -update:\n%s", path, d)
	}
}

// updating reports whether the test binary's "update" flag is set.
func updating() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	if g, ok := f.Value.(flag.Getter); ok {
		b, ok := g.Get().(bool)
		return ok && b
	}
	return f.Value.String() == "true"
}

// lineDiff is a line-by-line diff of two texts ("" when equal): a table
// is read one fact per line, so whole lines are what a reviewer compares.
// Lines are prefixed "-" (only in want), "+" (only in got) or " ", with
// two lines of context around each change.
func lineDiff(want, got string) string {
	if want == got {
		return ""
	}
	a := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	b := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	// Longest common subsequence by dynamic programming; tables are small.
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', a[i]})
			i++
		default:
			lines = append(lines, line{'+', b[j]})
			j++
		}
	}
	const context = 2
	var out strings.Builder
	last := -1 // index of the last line written
	for k, l := range lines {
		if l.op == ' ' {
			continue
		}
		start := max(k-context, last+1)
		if last >= 0 && start > last+1 {
			out.WriteString("  ...\n")
		}
		for c := start; c < k; c++ {
			out.WriteString("  " + lines[c].text + "\n")
		}
		out.WriteString(string(l.op) + " " + l.text + "\n")
		last = k
		// Trailing context is written when the next change or the end comes.
		end := k + 1
		for end < len(lines) && end <= k+context && lines[end].op == ' ' {
			end++
		}
		next := end < len(lines) && lines[end].op != ' '
		if !next {
			for c := k + 1; c < end; c++ {
				out.WriteString("  " + lines[c].text + "\n")
			}
			last = end - 1
		}
	}
	if out.Len() == 0 {
		return "(the texts differ only in a final newline)\n"
	}
	return out.String()
}
