package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// version is the release, set at build time with
// -ldflags "-X main.version=v1.2.3"; empty, the module's version from the
// build information stands in ("(devel)" for a build from a checkout).
var version string

// revision is the source revision, set at build time with
// -ldflags "-X main.revision=<commit>" where the build information has
// none: a container build sees no .git (the Dockerfile's REVISION
// argument passes it).
var revision string

// versionRequested reports whether the command line asks for the version,
// as ingress-nginx's --version does: anywhere among the flags, alone or as
// -version=true.
func versionRequested(args []string) bool {
	for _, a := range args {
		if a == "--" || !strings.HasPrefix(a, "-") {
			return false
		}
		switch strings.TrimLeft(a, "-") {
		case "version", "version=true":
			return true
		}
	}
	return false
}

// printVersion writes the release, the source revision and the Go version,
// in the shape of ingress-nginx's banner. The revision is the build
// information's (go build in a checkout), else the one given at build
// time (revision), else "unknown".
func printVersion(w io.Writer) {
	release, rev, built, modified := version, "", "", false
	goVersion := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if release == "" {
			release = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				built = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if rev == "" {
		rev = cmp.Or(revision, "unknown")
	}
	if release == "" {
		release = "(devel)"
	}
	if modified {
		rev += " (modified)"
	}
	if built != "" {
		rev += " " + built
	}
	line := strings.Repeat("-", 79)
	fmt.Fprintf(w, "%s\nramjet Ingress controller\n  Release:    %s\n  Build:      %s\n  Go:         %s\n%s\n", line, release, rev, goVersion, line)
}
