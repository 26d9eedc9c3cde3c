package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime/debug"
)

// version and revision are the release and source revision, set at build
// time with -ldflags "-X main.version=v1.2.3 -X main.revision=<commit>";
// empty, the build information stands in (go build in a checkout records
// its revision), else "(devel)" and "unknown".
var version, revision string

// printVersion writes what --version prints: the release, the source
// revision, the Go version, and the ingress-nginx version whose behaviour
// the reports and translations follow.
func printVersion(w io.Writer) {
	release, rev, modified := version, "", false
	goVersion := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if release == "" && info.Main.Version != "" {
			release = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	rev = cmp.Or(rev, revision, "unknown")
	if modified {
		rev += " (modified)"
	}
	fmt.Fprintf(w, "ramjet check\n  Release:        %s\n  Build:          %s\n  Go:             %s\n  ingress-nginx:  v1.15 (the behaviour it compares with)\n",
		cmp.Or(release, "(devel)"), rev, goVersion)
}
