// Command check runs routing case files (SPEC §18) through ramjet's real
// handler and compares each file's golden table, reaching the same verdict
// as routertest.RunFiles in go test on the same files.
//
//	go run ./examples/check [-json] [-v] [-update] FILE|DIR|GLOB...
//	go run ./examples/check -translate [-to table|gateway [-gateway-namespace NS]] [-json] [options] MANIFEST|DIR...
//	go run ./examples/check -explain -host H -path P [-method M] [-header K:V]... [-https] [-json] [options] MANIFEST|DIR...
//	go run ./examples/check -report [-json] [-strict] [options] MANIFEST|DIR...
//	go run ./examples/check -version
//
// It prints each failing case (its warnings when they differ from what the
// case expects, and each failing request: expected against actual) and
// each golden that differs, then one summary line:
//
//	N passed, M failed; warnings: a passed, b failed; goldens: c passed, d failed
//
// counting requests (a repeated request counts once), cases that list
// their warnings, and case files (each golden). The warnings clause
// appears only when some case lists warnings. With -v it also prints every
// case with its verdict and the warnings it compiled to. With -json it
// prints one JSON document instead: the counts, "ok", each case's result
// with its warnings, and each golden's verdict; when the case files cannot
// be loaded the document has "errors" and nothing else ran. -update
// rewrites goldens that differ, as go test -update does.
//
// It exits 1 when any check fails and 2 when the case files cannot be
// loaded or the arguments are wrong.
//
// With -translate it reads manifests (files or folders, as the example
// controller's -manifests does), compiles them and prints the table and
// warnings: as text (the golden format), or with -json as a stable JSON
// form. It exits 2 when the manifests cannot be loaded or hold no object
// it reads, as every mode does. A document it cannot read (a malformed
// object, a v1beta1 Ingress) is named on stderr ("errors" in the JSON)
// and the rest translated, with exit code 2; -explain and -to gateway do
// the same.
//
// With -translate -to gateway it prints instead the Gateway API objects
// that serve the same as the Ingresses (gatewayapi.FromIngress, what
// ingress2gateway does): Gateways and HTTPRoutes as YAML kubectl apply
// takes, then one comment line per annotation left out and why, and one
// per TCP or UDP service, which its ConfigMap goes on serving; with
// -gateway-namespace one Gateway per IngressClass there, instead of one
// per namespace and class.
//
// With -explain it compiles the manifests and shows how one request is
// routed, as Router.Lookup decides it: the virtual host and why (exact,
// wildcard, catch-all), the host's routes in precedence order with why
// each does or does not match, the winner and the answer.
//
// With -report it prints the migration report: per Ingress and in total,
// each compile warning with its severity (traffic-moves, feature-missing,
// cosmetic) and what ramjet does instead. A document it cannot read is
// listed, and the rest reported. It exits 0, or 3 with -strict when
// anything moves traffic or a document was not read, and 2 when nothing
// can be loaded. It also lists, per Ingress, each snippet directive as
// translated or not; -allow-snippet-annotations and
// -annotations-risk-level Critical say the source cluster applies
// snippets (its ConfigMap's keys), so ramjet does too. Its last section
// lists the annotations with no Gateway API equivalent, with their
// Ingresses.
//
// Every mode reads Gateway API objects (GatewayClass, Gateway, HTTPRoute,
// ReferenceGrant, SPEC §20) beside the Ingresses, in manifests and case
// files alike: check registers compile/gatewayapi's loader extension.
//
// -translate, -explain and -report claim the same Ingresses: unless
// -ingress-class or -controller-name is given, what ingress-nginx claims
// ("nginx", "k8s.io/ingress-nginx"), or ramjet's class when the input is
// written for ramjet; a class the Ingresses name but the input lacks is
// taken as that controller's, with a note.
//
// go run reports every failing exit as 1; the exit codes above are the
// built command's (go build ./examples/check).
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"

	"ramjet.dev/ramjet/router/routertest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// counts tallies one kind of check.
type counts struct {
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

func (c *counts) add(ok bool) {
	if ok {
		c.Passed++
	} else {
		c.Failed++
	}
}

// report is the -json document.
type report struct {
	// OK reports that the files loaded and every check passed.
	OK bool `json:"ok"`
	// Passed and Failed count requests.
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	// WarningChecks counts cases that list their warnings; GoldenChecks
	// counts case files.
	WarningChecks counts `json:"warningChecks"`
	GoldenChecks  counts `json:"goldenChecks"`
	// Errors are the problems that kept the case files from loading.
	Errors  []string            `json:"errors,omitempty"`
	Results []routertest.Result `json:"results"`
	Goldens []fileGolden        `json:"goldens"`
}

type fileGolden struct {
	File string `json:"file"`
	routertest.Golden
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON document instead of text")
	verbose := fs.Bool("v", false, "print every case with its verdict and compile warnings")
	update := fs.Bool("update", false, "rewrite the golden files that differ")
	translate := fs.Bool("translate", false, "print the table and warnings compiled from manifests instead of running case files")
	migrate := fs.Bool("report", false, "print the migration report for manifests: what does not carry over from ingress-nginx")
	strict := fs.Bool("strict", false, "-report: exit 3 when anything would move traffic")
	to := fs.String("to", toTable, "-translate: print the compiled table (table) or the equivalent Gateway API objects as YAML (gateway)")
	gatewayNS := fs.String("gateway-namespace", "", "-translate -to gateway: one Gateway per IngressClass in this namespace (default: one per namespace and class)")
	explainFlag := fs.Bool("explain", false, "explain how one request (-host, -path, -method, -header) is routed by the manifests")
	var er explainRequest
	fs.StringVar(&er.host, "host", "", "-explain: the request's Host")
	fs.StringVar(&er.path, "path", "/", "-explain: the request-target, with its query")
	fs.StringVar(&er.method, "method", http.MethodGet, "-explain: the request method")
	fs.BoolVar(&er.https, "https", false, "-explain: the request arrives over TLS")
	fs.Var(&er.headers, "header", "-explain: a request header NAME:VALUE (repeatable)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	topts := translateFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: check [-json] [-v] [-update] FILE|DIR|GLOB...")
		fmt.Fprintln(stderr, "       check -translate [-to table|gateway [-gateway-namespace NS]] [-json] [options] MANIFEST|DIR...")
		fmt.Fprintln(stderr, "       check -report [-json] [-strict] [options] MANIFEST|DIR...")
		fmt.Fprintln(stderr, "       check -explain -host H -path P [-method M] [-header K:V]... [-https] [-json] [options] MANIFEST|DIR...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		printVersion(stdout)
		return 0
	}
	if msg := flagAfterFiles(fs, args); msg != "" {
		fmt.Fprintln(stderr, msg)
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	modes := 0
	for _, on := range []bool{*translate, *migrate, *explainFlag} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		fmt.Fprintln(stderr, "check: -translate, -report and -explain are alternatives: give one")
		return 2
	}
	// A mode's own flag without it would otherwise do nothing, silently.
	var stray string
	fs.Visit(func(f *flag.Flag) {
		switch {
		case stray != "":
		case f.Name == "strict" && !*migrate:
			stray = "check: -strict goes with -report"
		case slices.Contains([]string{"host", "path", "method", "header", "https"}, f.Name) && !*explainFlag:
			stray = "check: -" + f.Name + " goes with -explain"
		}
	})
	if stray != "" {
		fmt.Fprintln(stderr, stray)
		return 2
	}
	if *to != toTable && (*to != toGateway || !*translate) || *gatewayNS != "" && *to != toGateway {
		fmt.Fprintln(stderr, "check: -to takes table or gateway, with -translate; -gateway-namespace goes with -to gateway")
		return 2
	}
	if *translate && *to == toGateway {
		return runGateway(fs.Args(), fs, topts, *gatewayNS, *asJSON, stdout, stderr)
	}
	if *translate {
		return runTranslate(fs.Args(), fs, topts, *asJSON, stdout, stderr)
	}
	if *explainFlag {
		return runExplain(fs.Args(), fs, topts, er, *asJSON, stdout, stderr)
	}
	if *migrate {
		return runReport(fs.Args(), fs, topts, *asJSON, *strict, stdout, stderr)
	}
	if topts.set(fs) {
		fmt.Fprintln(stderr, "check: compile options apply to -translate, -explain and -report; case files set their own")
		return 2
	}
	files, errs := load(fs.Args())
	if len(errs) > 0 {
		if *asJSON {
			rep := report{Errors: errs, Results: []routertest.Result{}, Goldens: []fileGolden{}}
			return encode(rep, 2, stdout, stderr)
		}
		for _, e := range errs {
			fmt.Fprintln(stderr, e)
		}
		return 2
	}
	rep := report{Results: []routertest.Result{}, Goldens: []fileGolden{}}
	for _, f := range files {
		fr := routertest.CheckFile(f.name, f.cases, *update)
		for _, res := range fr.Cases {
			rep.Passed += res.Passed()
			rep.Failed += res.Failed()
			if res.Error == "" && caseChecksWarnings(f.cases, res.Case) {
				rep.WarningChecks.add(res.WarningsDiff == "")
			}
			rep.Results = append(rep.Results, res)
			if !*asJSON {
				printCase(stdout, res, *verbose)
			}
		}
		rep.GoldenChecks.add(fr.Golden.Match)
		rep.Goldens = append(rep.Goldens, fileGolden{File: f.name, Golden: fr.Golden})
		if !*asJSON {
			switch {
			case fr.Golden.Updated:
				fmt.Fprintf(stdout, "updated %s\n", fr.Golden.Path)
			case !fr.Golden.Match:
				fmt.Fprintln(stdout, fr.Golden.Problem)
				fmt.Fprintln(stdout)
			}
		}
	}
	rep.OK = rep.Failed == 0 && rep.WarningChecks.Failed == 0 && rep.GoldenChecks.Failed == 0
	for _, res := range rep.Results {
		rep.OK = rep.OK && res.OK()
	}
	code := 0
	if !rep.OK {
		code = 1
	}
	if *asJSON {
		return encode(rep, code, stdout, stderr)
	}
	fmt.Fprintln(stdout, summary(rep))
	return code
}

// flagAfterFiles is the usage error for a flag written after the files,
// which the flag package leaves among them: "" when there is none. An
// argument that names an existing file is a file, whatever its name.
func flagAfterFiles(fs *flag.FlagSet, args []string) string {
	rest := fs.Args()
	var moved, files []string
	misplaced := ""
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if !strings.HasPrefix(a, "-") || f == nil {
			files = append(files, a)
			continue
		}
		if _, err := os.Stat(a); err == nil {
			files = append(files, a)
			continue
		}
		if misplaced == "" {
			misplaced = a
		}
		moved = append(moved, a)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); (!ok || !b.IsBoolFlag()) && !hasValue && i+1 < len(rest) {
			i++
			moved = append(moved, rest[i])
		}
	}
	if misplaced == "" {
		return ""
	}
	given := args[:len(args)-len(rest)]
	if len(given) > 0 && given[len(given)-1] == "--" {
		given = given[:len(given)-1]
	}
	command := append(append(append([]string{"check"}, given...), moved...), files...)
	return fmt.Sprintf("check: flag %s after the files: flags go first (%s)", misplaced, strings.Join(command, " "))
}

type caseFile struct {
	name  string
	cases []routertest.Case
}

// load reads every case file, or returns every problem: nothing runs
// unless all of them load, as go test would fail on any of them.
func load(paths []string) ([]caseFile, []string) {
	names, err := routertest.CaseFiles(paths...)
	if err != nil {
		return nil, messages(err)
	}
	var files []caseFile
	var errs []string
	for _, n := range names {
		cases, err := routertest.LoadFile(n)
		if err != nil {
			errs = append(errs, messages(err)...)
			continue
		}
		files = append(files, caseFile{n, cases})
	}
	return files, errs
}

// messages lists the problems of a joined error one by one.
func messages(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, messages(e)...)
		}
		return out
	}
	return []string{err.Error()}
}

func caseChecksWarnings(cases []routertest.Case, name string) bool {
	for _, c := range cases {
		if c.Name == name {
			return c.CheckWarnings
		}
	}
	return false
}

// printCase prints a failing case's report; with verbose, every case's
// verdict and warnings.
func printCase(w io.Writer, res routertest.Result, verbose bool) {
	if verbose {
		verdict := "ok  "
		if !res.OK() {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%s case %q (%s): %d requests passed, %d failed\n", verdict, res.Case, res.File, res.Passed(), res.Failed())
		for _, wa := range res.Warnings {
			fmt.Fprintf(w, "  warning %s\n", wa)
		}
	}
	if res.OK() && res.Unclaimed != "" && (verbose || res.NothingClaimed) {
		// A case whose Ingresses are all another class's passes on 404s.
		fmt.Fprintf(w, "warning: case %q (%s): %s\n", res.Case, res.File, res.Unclaimed)
	}
	if !res.OK() {
		fmt.Fprintln(w, res.Report())
	}
}

func summary(rep report) string {
	s := fmt.Sprintf("%d passed, %d failed", rep.Passed, rep.Failed)
	if c := rep.WarningChecks; c.Passed+c.Failed > 0 {
		s += fmt.Sprintf("; warnings: %d passed, %d failed", c.Passed, c.Failed)
	}
	c := rep.GoldenChecks
	return s + fmt.Sprintf("; goldens: %d passed, %d failed", c.Passed, c.Failed)
}

func encode(v any, code int, stdout, stderr io.Writer) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	return code
}
