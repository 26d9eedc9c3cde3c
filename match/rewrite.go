package match

import (
	"fmt"
	"slices"
	"strings"

	"ramjet.dev/ramjet/match/urltemplate"
	"ramjet.dev/ramjet/match/vars"
)

// Rewrite is what a route does to a request besides choosing its backend
// (SPEC §11.1): rewrite-target, upstream-vhost and x-forwarded-prefix. A
// route without any of them has a nil Rewrite.
type Rewrite struct {
	// Target is the rewrite-target as written; "" leaves the request-target
	// as received (SPEC §13).
	Target string
	// Syntax is how Target and ForwardedPrefix refer to captures.
	Syntax RewriteSyntax
	// Host is the Host header the backend receives (upstream-vhost); ""
	// keeps the client's. It may use $host (or ${host}), the request's
	// host as nginx's $host is: lower case, without the port; and
	// $http_host, the Host field as sent (HostVars).
	Host string
	// ForwardedPrefix is the X-Forwarded-Prefix header the backend receives
	// when ForwardedPrefixSet (x-forwarded-prefix); it may refer to
	// captures like Target.
	ForwardedPrefix    string
	ForwardedPrefixSet bool

	target   urltemplate.Rewrite
	prefix   urltemplate.Rewrite
	redirect bool          // Target is an absolute URL: the answer is a 302 to it
	hostVar  vars.Template // Host when it uses a variable
	// ready: NewRewrite checked the fields and parsed the templates; New
	// prepares a Rewrite written as a literal the same way.
	ready bool
}

// RewriteSyntax says how a rewrite template refers to the route's captures.
type RewriteSyntax uint8

const (
	// NginxSyntax is nginx.ingress.kubernetes.io/'s: $1 to $9, $scheme and
	// $host. The target replaces the whole URI, as nginx's rewrite does.
	NginxSyntax RewriteSyntax = iota
	// NativeSyntax is ramjet.dev/'s: ${0} (the whole match) to ${9},
	// ${scheme} and ${host}. On a Prefix route the target replaces only the
	// matched leading segments.
	NativeSyntax
)

func (s RewriteSyntax) String() string {
	if s == NativeSyntax {
		return "native"
	}
	return "nginx"
}

// RewriteStatus is the status of the answer to a rewrite whose target is
// an absolute URL: nginx's rewrite without a flag answers 302.
const RewriteStatus = 302

// MaxRewriteTarget bounds what a rewrite builds from one request: the new
// request-target (or redirect URL) and the X-Forwarded-Prefix value. A
// template may repeat a capture, so what it builds grows as references ×
// path length ("/$1" 20,000 times made 100 MB of a 5 KB path); past the
// bound Apply stops building and reports Overflow, which answers 500, as
// nginx does when a rewrite cannot be built. 64 KiB is eight times the
// request line nginx accepts (large_client_header_buffers 8k), so any
// target nginx takes, rewritten with a few captures, still fits.
const MaxRewriteTarget = 64 << 10

// MaxRewriteTemplate bounds a rewrite-target or x-forwarded-prefix as
// written. Real ones are a path or a URL, well under a kilobyte; the bound
// keeps the number of references per request small as well, so a request
// over MaxRewriteTarget costs no more than MaxRewriteTarget to refuse.
const MaxRewriteTemplate = 4 << 10

// NewRewrite checks and prepares r's templates. The target must be an
// absolute path, a path without the leading "/" (then one is added), or an
// http/https URL whose authority is literal or ${host}; literal text must be
// what a request-target may carry, and a capture in the authority is
// refused, so every result is an absolute path or a valid absolute URL.
// New checks and prepares a Rewrite written as a literal the same way.
func NewRewrite(r Rewrite) (*Rewrite, error) {
	out := r
	if n := max(len(r.Target), len(r.ForwardedPrefix)); n > MaxRewriteTemplate {
		return nil, fmt.Errorf("the value is %d bytes, over the %d-byte limit for a rewrite template", n, MaxRewriteTemplate)
	}
	if r.Target != "" {
		t, err := urltemplate.ParseRewrite(r.Target, r.Syntax == NativeSyntax)
		if err != nil {
			return nil, fmt.Errorf("rewrite target %q: %w", r.Target, err)
		}
		out.target = t
		out.redirect = t.Absolute()
	}
	if r.ForwardedPrefixSet {
		t, err := urltemplate.ParseHeader(r.ForwardedPrefix, r.Syntax == NativeSyntax)
		if err != nil {
			return nil, fmt.Errorf("x-forwarded-prefix %q: %w", r.ForwardedPrefix, err)
		}
		out.prefix = t
	}
	if r.Host != "" {
		// Each variable stands for a host name; any other "$" is no host.
		t, err := upstreamHostPlace.Parse(r.Host)
		if err != nil || !urltemplate.ValidHostHeader(expandHost(t, HostVars{"h", "h"})) {
			return nil, fmt.Errorf("upstream host %q is not a host name or address with an optional port", r.Host)
		}
		if out.hostVar = nil; !t.Literal() {
			out.hostVar = t
		}
	}
	out.ready = true
	return &out, nil
}

// HostVars are a request's values of the variables an upstream Host may
// use: $host (lower case, no port) and $http_host (the Host field as
// sent, "" without one).
type HostVars struct{ Host, HTTPHost string }

// HostVaries reports whether the upstream Host uses a variable, so that
// UpstreamHost needs the request's HostVars.
func (rw *Rewrite) HostVaries() bool { return rw.hostVar != nil }

// UpstreamHost is the Host the backend receives for a request whose
// variables are v: Host with them expanded. It allocates only when Host
// uses a variable. A value that expands to "" is "": nginx would send no
// Host field at all, an HTTP/1.1 request backends refuse, so the caller
// keeps the client's Host.
func (rw *Rewrite) UpstreamHost(v HostVars) string {
	if rw.hostVar == nil {
		return rw.Host
	}
	return expandHost(rw.hostVar, v)
}

// upstreamHostPlace is where the router expands an upstream Host: only
// the request's host variables are left once compile expanded the
// build-time ones.
var upstreamHostPlace = vars.Place{Name: "upstream-vhost", Vars: vars.Of(vars.Host, vars.HTTPHost)}

func expandHost(t vars.Template, v HostVars) string {
	if t.Literal() {
		if len(t) == 0 {
			return ""
		}
		return t[0].Lit
	}
	var b strings.Builder
	t.Expand(&b, func(r vars.Ref) string {
		if r.Var == vars.HTTPHost {
			return v.HTTPHost
		}
		return v.Host
	})
	return b.String()
}

// Redirect reports that the target is an absolute URL, which the client is
// redirected to (RewriteStatus) instead of being proxied.
func (rw *Rewrite) Redirect() bool { return rw.redirect }

// Rewritten is what a Rewrite does to one request.
type Rewritten struct {
	// Target is the new request-target (path and query), or the Location
	// when Redirect; "" when the target is unchanged.
	Target   string
	Redirect bool
	// Prefix is the X-Forwarded-Prefix value when PrefixSet.
	Prefix    string
	PrefixSet bool
	// Overflow: the target or the prefix would be longer than
	// MaxRewriteTarget; nothing else is set and the request answers 500.
	Overflow bool
}

// Apply rewrites a request that r matched. path is the normalized path r
// was matched on, query the query as received (without '?'), scheme the
// client's ("http" or "https") and host the normalized request host.
// Captures come from r's pattern matched against path; a group the
// pattern does not have, or that did not take part in the match, is
// empty. A nil r is the host's fallback, which ingress-nginx serves as a
// Prefix "/" location: nothing is captured. Captured text is
// percent-encoded where a request-target or a header could not carry it as
// is. It allocates the new target and, for a
// pattern on the linear engine, the capture indexes. What it builds is
// bounded by MaxRewriteTarget (see Overflow); building stops at the first
// part past the bound, so the memory and time a request can make it spend
// are too.
func (rw *Rewrite) Apply(r *Route, path, query, scheme, host string) Rewritten {
	var out Rewritten
	if rw == nil {
		return out
	}
	var caps []int
	if rw.target.Captures() || rw.prefix.Captures() {
		caps = captures(r, path)
	}
	if rw.Target != "" {
		target, ok := rw.rewriteTarget(r, path, query, scheme, host, caps)
		if !ok {
			return Rewritten{Overflow: true}
		}
		out.Target, out.Redirect = target, rw.redirect
	}
	if rw.ForwardedPrefixSet {
		out.PrefixSet = true
		if rw.prefix.Literal() {
			out.Prefix = rw.ForwardedPrefix
		} else {
			var b strings.Builder
			if !rw.prefix.Write(&b, path, caps, scheme, host, MaxRewriteTarget) {
				return Rewritten{Overflow: true}
			}
			out.Prefix = b.String()
		}
	}
	return out
}

// rewriteTarget builds the new target; false when it would be longer than
// MaxRewriteTarget.
func (rw *Rewrite) rewriteTarget(r *Route, path, query, scheme, host string, caps []int) (string, bool) {
	t := &rw.target
	var b strings.Builder
	b.Grow(min(len(rw.Target)+len(path)+len(query)+8, MaxRewriteTarget))
	if !t.Write(&b, path, caps, scheme, host, MaxRewriteTarget) {
		return "", false
	}
	if rw.Syntax == NativeSyntax && (r == nil || r.Type == Prefix) && !t.Absolute() {
		// Only the matched leading segments are replaced: the rest of the
		// path follows, without doubling the slash between them. A nil
		// route is the host's fallback, a Prefix "/" that matched nothing.
		rest := path
		if r != nil {
			rest = ""
			if len(r.Path) <= len(path) {
				rest = path[len(r.Path):]
			}
		}
		if strings.HasSuffix(b.String(), "/") && strings.HasPrefix(rest, "/") {
			rest = rest[1:]
		}
		urltemplate.EscapePath(&b, rest)
	}
	switch {
	case t.DropArgs():
		// A trailing '?': neither it nor the client's arguments.
	case t.HasQuery():
		b.WriteByte('?')
		if !t.WriteQuery(&b, path, caps, scheme, host, MaxRewriteTarget) {
			return "", false
		}
		if query != "" {
			b.WriteByte('&')
			b.WriteString(query)
		}
	case query != "":
		b.WriteByte('?')
		b.WriteString(query)
	}
	s := b.String()
	if !t.Absolute() && !strings.HasPrefix(s, "/") {
		// A target like "$1" whose capture does not begin with "/": the
		// backend is sent an absolute path all the same.
		s = "/" + s
	}
	return s, len(s) <= MaxRewriteTarget
}

// captures returns the submatch indexes of r's pattern on path, nil when r
// has no pattern or it does not match (a timeout included).
func captures(r *Route, path string) []int {
	if r == nil {
		// The host's fallback: its location is a Prefix "/".
		return []int{0, 0}
	}
	if r.Regexp == nil {
		// Exact and Prefix: ${0} is the matched part.
		if r.Type == Prefix {
			return []int{0, min(len(r.Path), len(path))}
		}
		return []int{0, len(path)}
	}
	re := r.Regexp
	// Matching folded the path (asciiFoldInput), which only ever makes it
	// match less: the original matches wherever the folded one did, and
	// its captures are the text the client sent.
	if re.linear != nil && (re.backtrk == nil || strings.IndexByte(path, '\n') < 0) {
		return re.linear.FindStringSubmatchIndex(path)
	}
	m, err := re.backtrk.FindStringMatch(path)
	if err != nil || m == nil {
		return nil
	}
	// regexp2 reports rune offsets; the groups' strings are what is needed.
	groups := m.Groups()
	caps := make([]int, 0, 2*len(groups))
	for _, g := range groups {
		if len(g.Captures) == 0 {
			caps = append(caps, -1, -1)
			continue
		}
		s := g.String()
		// The group's text sits at its rune index; find its byte offset.
		start := byteOffset(path, g.Index)
		if start < 0 || start+len(s) > len(path) || path[start:start+len(s)] != s {
			caps = append(caps, -1, -1)
			continue
		}
		caps = append(caps, start, start+len(s))
	}
	return caps
}

// byteOffset returns the byte offset of the n-th rune of s, -1 past it.
func byteOffset(s string, n int) int {
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	if i == n {
		return len(s)
	}
	return -1
}

// String renders the rewrite for the table text: the parts that are set.
func (rw *Rewrite) String() string {
	if rw == nil {
		return ""
	}
	var parts []string
	if rw.Target != "" {
		kind := "rewrite"
		if rw.redirect {
			kind = "rewrite-redirect"
		}
		parts = append(parts, kind+" "+rw.Syntax.String()+" "+quoteText(rw.Target, false))
	}
	if rw.Host != "" {
		parts = append(parts, "upstream-vhost "+quoteText(rw.Host, false))
	}
	if rw.ForwardedPrefixSet {
		parts = append(parts, "x-forwarded-prefix "+quoteText(rw.ForwardedPrefix, false))
	}
	return strings.Join(parts, " ")
}

// rewriteText is the route line's suffix for its rewrite.
func rewriteText(rw *Rewrite) string {
	if rw == nil {
		return ""
	}
	return " " + rw.String()
}

// rewriteSection is what a route or fallback changes in the request besides
// choosing the backend: the target, the Host header, X-Forwarded-Prefix.
var rewriteSection = section{
	name:     "rewrite",
	location: []string{"Rewrite"},
	digest: []digestPart{{
		tag: "rewrite",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackLocation.Rewrite != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Rewrite != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.rewrite(vh.FallbackLocation.Rewrite) },
		route: func(e *encoder, r *Route) { e.rewrite(r.Rewrite) },
	}},
	text: textParts{
		at: 40,
		fallbackSuffix: func(b *strings.Builder, vh *VirtualHost) {
			b.WriteString(rewriteText(vh.FallbackLocation.Rewrite))
		},
		routeSuffix: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			b.WriteString(rewriteText(r.Rewrite))
		},
	},
}

func (e *encoder) rewrite(rw *Rewrite) {
	e.flag(rw != nil)
	if rw == nil {
		return
	}
	e.str(rw.Target)
	e.num(int(rw.Syntax))
	e.str(rw.Host)
	e.flag(rw.ForwardedPrefixSet)
	e.str(rw.ForwardedPrefix)
}
