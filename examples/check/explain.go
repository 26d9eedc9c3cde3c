package main

import (
	"bufio"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
)

// The explain view (-explain): one request against a folder of manifests,
// decided by Router.Lookup (the code ServeHTTP runs), then laid out: the
// virtual host chosen and why, the host's routes in precedence order with
// why each does or does not match, the winner and the answer.

// headerFlags collects repeated -header K:V flags.
type headerFlags []string

func (h *headerFlags) String() string     { return strings.Join(*h, ", ") }
func (h *headerFlags) Set(v string) error { *h = append(*h, v); return nil }

type explainRequest struct {
	host, path, method string
	https              bool
	headers            headerFlags
}

// explanation is the -json form of the explain view.
type explanation struct {
	Request   string           `json:"request"`
	Rewritten string           `json:"rewrittenTo,omitempty"`
	Host      string           `json:"host"`
	Generated string           `json:"digest"`
	VHost     *string          `json:"virtualHost"`
	HostWhy   string           `json:"hostWhy"`
	Routes    []routeVerdict   `json:"routes"`
	Fallback  string           `json:"fallback,omitempty"`
	Winner    string           `json:"winner"`
	Answer    string           `json:"answer"`
	Warnings  []compileWarning `json:"warnings,omitempty"`
}

type routeVerdict struct {
	Route   string `json:"route"`
	Source  string `json:"source"`
	Matches bool   `json:"matches"`
	Winner  bool   `json:"winner"`
	Why     string `json:"why"`
}

type compileWarning = string

func runExplain(paths []string, fs *flag.FlagSet, o *translateOptions, er explainRequest, asJSON bool, stdout, stderr io.Writer) int {
	hostSet := false
	fs.Visit(func(f *flag.Flag) { hostSet = hostSet || f.Name == "host" })
	if !hostSet {
		// -path defaults to /, -host to nothing; a request without a
		// Host is explained only when asked for with -host "".
		fmt.Fprintln(stderr, "check: -explain needs -host (and -path, / by default)")
		return 2
	}
	if er.path == "" {
		er.path = "/"
	}
	if _, err := o.compile(); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return 2
	}
	snap, _, unreadable, err := loadLenient(paths)
	if err != nil {
		for _, e := range messages(err) {
			fmt.Fprintln(stderr, e)
		}
		return 2
	}
	if nothingRead(snap) {
		fmt.Fprintln(stderr, nothingReadMessage(paths))
		writeUnreadable(stderr, unreadable)
		return 2
	}
	// The request is explained with what was read; the rest fails the run.
	code := 0
	if len(unreadable) > 0 {
		code = 2
	}
	writeUnreadable(stderr, unreadable)
	if err := er.check(); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return 2
	}
	req, err := buildExplainRequest(er)
	if err != nil {
		fmt.Fprintln(stderr, "check: the request does not parse:", err)
		return 2
	}
	opts, notes := claimOptions(fs, o, snap)
	for _, n := range notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	res := compile.Compile(*snap, opts)
	r := router.New(router.Options{Logger: slog.New(slog.DiscardHandler)})
	r.Publish(res.Table)
	ex := explain(r.Lookup(req), req, er)
	ex.Generated = res.Table.Digest()
	for _, w := range res.Warnings {
		ex.Warnings = append(ex.Warnings, w.String())
	}
	if asJSON {
		return encode(ex, code, stdout, stderr)
	}
	writeExplanation(stdout, ex)
	return code
}

// buildExplainRequest reads the request as a server would from the wire,
// so the target reaches Lookup exactly as written.
// check refuses flags the request line and header lines they are written
// into could not carry, naming the flag, so that the HTTP parser's
// complaint about the assembled request is never the message.
func (er explainRequest) check() error {
	if er.method == "" || strings.IndexFunc(er.method, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r)
	}) >= 0 {
		return fmt.Errorf("-method %q is not an HTTP method (a token such as GET)", er.method)
	}
	if strings.IndexFunc(er.path, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Errorf("-path %q holds a space or a control character: write it percent-encoded, as a client sends it", er.path)
	}
	if !strings.HasPrefix(er.path, "/") && er.path != "*" && !strings.Contains(er.path, "://") {
		return fmt.Errorf("-path %q is not a request-target: it starts with /, or is * or an absolute URL", er.path)
	}
	control := func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }
	if strings.IndexFunc(er.host, control) >= 0 {
		return fmt.Errorf("-host %q holds a control character", er.host)
	}
	for _, h := range er.headers {
		if strings.IndexFunc(h, control) >= 0 {
			return fmt.Errorf("-header %q holds a control character", h)
		}
	}
	return nil
}

func buildExplainRequest(er explainRequest) (*http.Request, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", er.method, er.path, er.host)
	for _, h := range er.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("-header %q is not NAME:VALUE", h)
		}
		fmt.Fprintf(&b, "%s: %s\r\n", strings.TrimSpace(k), strings.TrimSpace(v))
	}
	b.WriteString("\r\n")
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(b.String())))
	if err != nil {
		return nil, err
	}
	req.RemoteAddr = "192.0.2.1:1234"
	if er.https {
		req.TLS = &tls.ConnectionState{HandshakeComplete: true, ServerName: match.NormalizeHost(er.host)}
	}
	return req, nil
}

func explain(d router.Decision, req *http.Request, er explainRequest) explanation {
	scheme := "http"
	if er.https {
		scheme = "https"
	}
	ex := explanation{Request: fmt.Sprintf("%s %s://%s%s", er.method, scheme, er.host, er.path), Host: d.Host, Routes: []routeVerdict{}}
	if vh := d.VirtualHost; vh != nil {
		name := vh.Name
		ex.VHost = &name
		ex.HostWhy = hostWhy(d.Host, vh.Name)
		target := req.RequestURI
		if d.Target != "" {
			// A snippet's rewrite moved the request: the location is chosen
			// for the new URI.
			target, ex.Rewritten = d.Target, d.Target
		}
		target, _, _ = strings.Cut(target, "?")
		target, _, _ = strings.Cut(target, "#")
		clean, err := match.NormalizePath(target)
		for _, rt := range vh.Routes {
			v := routeVerdict{Route: rt.Type.String() + " " + routeKey(rt), Source: rt.Source.String(), Winner: rt == d.Route}
			if err == nil {
				v.Matches, v.Why = routeMatches(rt, clean)
			}
			if v.Matches && !v.Winner {
				v.Why += "; an earlier route in precedence order wins"
			}
			ex.Routes = append(ex.Routes, v)
		}
		switch {
		case d.Route != nil:
			ex.Winner = d.Route.Type.String() + " " + routeKey(d.Route) + " (" + d.Route.Source.String() + ")"
		case vh.Fallback != nil:
			ex.Winner = "no route matches: the fallback " + vh.Fallback.ID + " (" + vh.FallbackSource.String() + ")"
		default:
			ex.Winner = "no route matches and the host has no fallback"
		}
		if vh.Fallback != nil {
			ex.Fallback = vh.Fallback.ID + " (" + vh.FallbackSource.String() + ")"
		}
	} else {
		ex.HostWhy = "not looked up: the request was answered first"
		ex.Winner = "none"
	}
	switch {
	case d.Proxied():
		b := d.Backend
		ex.Answer = fmt.Sprintf("proxied to %s (%s, %d ready endpoints: %s)", b.ID, b.Protocol, len(b.Endpoints), strings.Join(b.Endpoints, " "))
	case d.Location != "":
		ex.Answer = fmt.Sprintf("%d %s, Location: %s", d.Status, d.Reason, d.Location)
	default:
		ex.Answer = fmt.Sprintf("%d %s", d.Status, d.Reason)
		if d.Backend != nil {
			ex.Answer += " (backend " + d.Backend.ID + ", " + d.Backend.State.String() + ")"
		}
	}
	return ex
}

// hostWhy says why the virtual host named name serves host (SPEC §3, §5).
func hostWhy(host, name string) string {
	switch {
	case name == host:
		return "exact: a virtual host is named " + host
	case strings.HasPrefix(name, "*."):
		return "wildcard: no virtual host is named " + host + "; " + name + " matches exactly one more label"
	}
	if _, rest, ok := strings.Cut(host, "."); ok {
		return "catch-all: no virtual host is named " + host + " and no wildcard *." + rest + " exists"
	}
	return "catch-all: no virtual host is named " + quoteHost(host) + ", which no wildcard can match"
}

func quoteHost(h string) string {
	if h == "" {
		return `""`
	}
	return h
}

// routeKey is the route's path as declared ("/" for the root prefix).
func routeKey(rt *match.Route) string {
	if rt.Type == match.Prefix && rt.Path == "" {
		return "/"
	}
	return rt.Path
}

// routeMatches says whether rt matches the normalized path, and why (SPEC
// §4). It restates the rules for display; the winner is Lookup's.
func routeMatches(rt *match.Route, clean string) (bool, string) {
	switch rt.Type {
	case match.Exact:
		if clean == rt.Path {
			return true, "the path equals it byte for byte"
		}
		return false, "the path is not exactly " + rt.Path
	case match.Prefix:
		switch {
		case rt.Path == "":
			return true, "/ matches every path"
		case clean == rt.Path || strings.HasPrefix(clean, rt.Path+"/"):
			return true, fmt.Sprintf("a prefix of whole path elements (%d bytes)", len(rt.Path))
		case strings.HasPrefix(clean, rt.Path):
			return false, "a prefix of bytes, not of whole path elements"
		}
		return false, "not a prefix of the path"
	case match.Regex:
		if rt.Regexp != nil && rt.Regexp.MatchString(clean) {
			return true, "the case-insensitive pattern ^(?:" + rt.Path + ") matches"
		}
		return false, "the pattern ^(?:" + rt.Path + ") does not match"
	}
	return false, "unknown path type"
}

func writeExplanation(w io.Writer, ex explanation) {
	fmt.Fprintf(w, "request  %s\n", ex.Request)
	fmt.Fprintf(w, "host     %s\n", quoteHost(ex.Host))
	if ex.Rewritten != "" {
		fmt.Fprintf(w, "rewrite  a snippet's rewrite moves the request to %s; the location is chosen for it\n", ex.Rewritten)
	}
	if ex.VHost != nil {
		fmt.Fprintf(w, "vhost    %s: %s\n", quoteHost(*ex.VHost), ex.HostWhy)
	} else {
		fmt.Fprintf(w, "vhost    %s\n", ex.HostWhy)
	}
	if len(ex.Routes) > 0 {
		fmt.Fprintln(w, "routes   in precedence order:")
	}
	for i, v := range ex.Routes {
		mark := "  no "
		switch {
		case v.Winner:
			mark = "  WIN"
		case v.Matches:
			mark = "  yes"
		}
		fmt.Fprintf(w, "  %2d %s %s -> %s: %s\n", i+1, mark, v.Route, v.Source, v.Why)
	}
	if ex.Fallback != "" {
		fmt.Fprintf(w, "fallback %s\n", ex.Fallback)
	}
	fmt.Fprintf(w, "winner   %s\n", ex.Winner)
	fmt.Fprintf(w, "answer   %s\n", ex.Answer)
}
