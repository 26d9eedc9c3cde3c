package ramjet_test

import (
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// citation matches a section mark; an RFC's own sections ("RFC 9110 §9.2.2")
// are captured in the first group so they can be skipped.
var citation = regexp.MustCompile(`(RFC \d+ )?§(\d+)`)

// citations returns the contract sections src cites, in order of appearance.
func citations(src string) []int {
	var out []int
	for _, m := range citation.FindAllStringSubmatch(src, -1) {
		if m[1] != "" {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err == nil {
			out = append(out, n)
		}
	}
	return out
}

var sectionHeading = regexp.MustCompile(`^(\d+)\. `)

// subCitation matches a subsection mark such as "§11.3"; as with
// citation, an RFC's own ("RFC 9110 §9.2.2") is captured in the first group.
var subCitation = regexp.MustCompile(`(RFC \d+ )?§(\d+\.\d+)`)

// subCitations returns the contract subsections src cites, in order.
func subCitations(src string) []string {
	var out []string
	for _, m := range subCitation.FindAllStringSubmatch(src, -1) {
		if m[1] == "" {
			out = append(out, m[2])
		}
	}
	return out
}

var subsectionHeading = regexp.MustCompile(`^(\d+)\.(\d+) `)

// sectionHeadings returns the numbers of the "# N. Title" headings of a doc
// comment, in order.
func sectionHeadings(doc string) []int {
	var p comment.Parser
	var out []int
	for _, block := range p.Parse(doc).Content {
		h, ok := block.(*comment.Heading)
		if !ok {
			continue
		}
		var title strings.Builder
		for _, t := range h.Text {
			if plain, ok := t.(comment.Plain); ok {
				title.WriteString(string(plain))
			}
		}
		if m := sectionHeading.FindStringSubmatch(title.String()); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
	}
	return out
}

// subsectionHeadings returns the "N.M" of the "# N.M Title" headings of a
// doc comment, in order.
func subsectionHeadings(doc string) []string {
	var p comment.Parser
	var out []string
	for _, block := range p.Parse(doc).Content {
		h, ok := block.(*comment.Heading)
		if !ok {
			continue
		}
		var title strings.Builder
		for _, t := range h.Text {
			if plain, ok := t.(comment.Plain); ok {
				title.WriteString(string(plain))
			}
		}
		if m := subsectionHeading.FindStringSubmatch(title.String()); m != nil {
			out = append(out, m[1]+"."+m[2])
		}
	}
	return out
}

func TestSubsections(t *testing.T) {
	require.Equal(t, []string{"11.2"}, subCitations("// SPEC §11.2, §12 and (RFC 9110 §9.2.2)"))
	require.Equal(t, []string{"11.1", "11.7"}, subCitations("// §11.1–§11.7"))
	require.Equal(t, []string{"11.1", "11.12"},
		subsectionHeadings("# 11. Annotations\n\nText.\n\n# 11.1 Routing\n\nText.\n\n# 11.12 Auth\n\nText.\n"))
	require.Empty(t, subsectionHeadings("Steps:\n\n 11.1 First.\n"))
}

func TestCitations(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []int
	}{
		{"none", "// nothing cited", nil},
		{"one", "// the first step of SPEC §2 decides", []int{2}},
		{"list", "// (SPEC §9, §12, §13)", []int{9, 12, 13}},
		{"range", "// SPEC §1–§15", []int{1, 15}},
		{"RFC sections are not the contract's", "// (RFC 9110 §9.2.2) and SPEC §4", []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, citations(tt.src)); diff != "" {
				t.Errorf("citations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSectionHeadings(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []int
	}{
		{"numbered", "Intro.\n\n# 1. Inputs\n\nText.\n\n# 12. TLS\n\nText.\n", []int{1, 12}},
		{"unnumbered headings are skipped", "# The flow\n\nText.\n\n# 3. Hosts\n\nText.\n", []int{3}},
		{"a numbered list is not a heading", "Steps:\n\n 1. First.\n 2. Second.\n", nil},
		{"a heading needs a blank line around it", "Text\n# 4. Paths\nmore text.\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, sectionHeadings(tt.doc)); diff != "" {
				t.Errorf("headings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContractCitations keeps "SPEC §N" in the library's comments
// followable: every section cited in a .go file (examples excepted, being
// their own modules) must be a "# N." heading of the package documentation
// in doc.go, and the headings are numbered in order, each once.
func TestContractCitations(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	require.NotNil(t, f.Doc, "doc.go has no package comment")
	headings := sectionHeadings(f.Doc.Text())
	subsections := subsectionHeadings(f.Doc.Text())
	next := make(map[string]int) // section → its next subsection number
	for _, h := range subsections {
		section, sub, _ := strings.Cut(h, ".")
		n, _ := strconv.Atoi(sub)
		next[section]++
		require.Equal(t, next[section], n, "subsection %s out of order or numbered twice: %v", h, subsections)
		s, _ := strconv.Atoi(section)
		require.Contains(t, headings, s, "subsection %s of a section with no heading", h)
	}
	require.NotEmpty(t, headings, "doc.go has no numbered section headings")
	require.True(t, slices.IsSorted(headings), "section headings out of order: %v", headings)
	require.Equal(t, len(headings), len(slices.Compact(slices.Clone(headings))), "a section heading repeats: %v", headings)

	citedIn := make(map[int][]string)       // section → files citing it
	subCitedIn := make(map[string][]string) // subsection → files citing it
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "examples" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range citations(string(src)) {
			if files := citedIn[n]; len(files) == 0 || files[len(files)-1] != path {
				citedIn[n] = append(citedIn[n], path)
			}
		}
		for _, n := range subCitations(string(src)) {
			if files := subCitedIn[n]; len(files) == 0 || files[len(files)-1] != path {
				subCitedIn[n] = append(subCitedIn[n], path)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, citedIn, "no SPEC § citations found: is the walk looking in the right place?")

	for _, n := range slices.Sorted(maps.Keys(citedIn)) {
		if !slices.Contains(headings, n) {
			t.Errorf("§%d is cited in %s but doc.go has no heading \"# %d. ...\"", n, strings.Join(citedIn[n], ", "), n)
		}
	}
	// A subsection cited in a subdivided section must be one of its "# N.M"
	// headings. Sections without subsections are not checked, since a
	// line break can part an RFC's "§4.2.4" from the RFC's name.
	for _, n := range slices.Sorted(maps.Keys(subCitedIn)) {
		section, _, _ := strings.Cut(n, ".")
		subdivided := slices.ContainsFunc(subsections, func(h string) bool { return strings.HasPrefix(h, section+".") })
		if subdivided && !slices.Contains(subsections, n) {
			t.Errorf("§%s is cited in %s but doc.go has no heading \"# %s ...\"", n, strings.Join(subCitedIn[n], ", "), n)
		}
	}
}

// TestLibraryImports keeps the library's dependencies to the modules its
// go.mod may name: Kubernetes' API types, go-cmp, testify, regexp2, x/exp
// and x/crypto. Anything else (client-go, x/net, Prometheus, OpenTelemetry)
// belongs in a module of its own under examples/ or compile/gatewayapi.
func TestLibraryImports(t *testing.T) {
	allowed := []string{
		"ramjet.dev/ramjet", "k8s.io/api", "k8s.io/apimachinery",
		"github.com/google/go-cmp", "github.com/stretchr/testify",
		"github.com/dlclark/regexp2", "golang.org/x/exp", "golang.org/x/crypto",
	}
	within := func(path, mod string) bool { return path == mod || strings.HasPrefix(path, mod+"/") }
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if first, _, _ := strings.Cut(p, "/"); !strings.Contains(first, ".") {
				continue // the standard library
			}
			if !slices.ContainsFunc(allowed, func(m string) bool { return within(p, m) }) {
				t.Errorf("%s imports %s: the library's go.mod keeps it out", path, p)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "walked the library's packages")
}

// TestReasonsDocumented keeps every warning reason compile declares in the
// contract's list of reasons (§14) and the README's table, which a user
// reads to learn what a warning they got means.
func TestReasonsDocumented(t *testing.T) {
	decl := regexp.MustCompile(`(?m)^\s+[A-Z]\w*\s+Reason = "(\w+)"`)
	files, err := filepath.Glob("compile/*.go")
	require.NoError(t, err)
	var reasons []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			reasons = append(reasons, m[1])
		}
	}
	require.Greater(t, len(reasons), 30, "found compile's reasons")
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, table, _ := strings.Cut(string(readme), "\n## Warnings\n")
	table, _, _ = strings.Cut(table, "\n## ")
	for _, r := range reasons {
		if !regexp.MustCompile(`(?m)^//\t` + r + `\s`).Match(doc) {
			t.Errorf("doc.go §14 does not list the reason %s", r)
		}
		if !regexp.MustCompile("(?m)^\\| `" + r + "`").MatchString(table) {
			t.Errorf("README's Warnings table does not list the reason %s", r)
		}
	}
}
