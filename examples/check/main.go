// Command check runs routing case files (SPEC §18) through ramjet's real
// handler and reports every request whose outcome differs from what its
// case expects.
//
//	go run ./examples/check [-json] FILE|DIR|GLOB...
//
// It prints each failing request (case, request, expected against actual)
// and ends with "N passed, M failed", counting requests (a repeated request
// counts once). With -json it prints one JSON document with every
// request's result instead. It exits 1 when any request fails and 2 when
// the case files cannot be loaded.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"ramjet.dev/ramjet/router/routertest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// report is the -json document.
type report struct {
	Passed  int                 `json:"passed"`
	Failed  int                 `json:"failed"`
	Results []routertest.Result `json:"results"`
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON document with every request's result")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: check [-json] FILE|DIR|GLOB...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	cases, err := routertest.LoadCases(fs.Args()...)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	rep := report{Results: make([]routertest.Result, 0, len(cases))}
	for _, c := range cases {
		res := routertest.Run(c)
		rep.Passed += res.Passed()
		rep.Failed += res.Failed()
		rep.Results = append(rep.Results, res)
		if !*asJSON && !res.OK() {
			fmt.Fprintln(stdout, res.Report())
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	} else {
		fmt.Fprintf(stdout, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	}
	if rep.Failed > 0 {
		return 1
	}
	return 0
}
