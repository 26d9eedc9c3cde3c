// Package urltemplate parses the URL templates an Ingress writes and the
// router fills in per request: the rewrite targets and x-forwarded-prefix
// values of a route (Rewrite), with references to the path's captures, and
// the auth-url and auth-signin values of external authentication
// (AuthURL), with nginx's request variables. compile parses them once;
// the router writes them for each request from what was parsed, so a
// template is never parsed at serve time.
package urltemplate

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match/vars"
)

// Rewrite is a parsed rewrite target (rewrite-target) or header value
// (x-forwarded-prefix): literal text and references to the route's
// captures, the request's scheme and its host. Parse it once with
// ParseRewrite or ParseHeader; write it per request with Write and
// WriteQuery. The zero value writes nothing.
type Rewrite struct {
	// absolute: the target is an http or https URL (scheme, authority and
	// path parts); otherwise path holds the path part.
	absolute bool
	path     []part
	// hasQuery: the target has a '?'; query is what follows it, dropArgs
	// that nothing follows it (nginx's trailing '?': the request's own
	// arguments are dropped).
	hasQuery bool
	query    []part
	dropArgs bool
	captures bool
}

type partKind uint8

const (
	litPart partKind = iota
	capturePart
	schemePart
	hostPart
)

type part struct {
	kind partKind
	lit  string
	n    int
	// escape is how inserted text is escaped: pathSafe, querySafe or
	// hostSafe.
	escape *[256]bool
	// embedded: a $host with other host bytes beside it ("www.$host"),
	// where an IPv6 address cannot stand in brackets.
	embedded bool
}

// Literal reports a template without references or query: what it writes
// is the text it was parsed from.
func (t *Rewrite) Literal() bool {
	return !t.captures && !t.hasQuery && len(t.path) <= 1 && (len(t.path) == 0 || t.path[0].kind == litPart)
}

// Absolute reports a target that is an http or https URL.
func (t *Rewrite) Absolute() bool { return t.absolute }

// HasQuery reports a target with a '?'; DropArgs one where nothing follows
// it (nginx's trailing '?': the request's own arguments are dropped).
func (t *Rewrite) HasQuery() bool { return t.hasQuery }

// DropArgs: see HasQuery.
func (t *Rewrite) DropArgs() bool { return t.dropArgs }

// Captures reports a template that refers to a capture, so the route's
// pattern must be matched again to write it.
func (t *Rewrite) Captures() bool { return t.captures }

// Write writes the path parts of t to b (for an absolute target, the
// scheme and authority too): path is the request path the captures index
// (caps, as regexp's submatch indexes), scheme and host the request's. It
// returns false, with b left partly written, once b is longer than limit. A
// part is checked before it is written (escaping only lengthens it) and b
// after, so b never grows past the bound by more than one escaped part.
func (t *Rewrite) Write(b *strings.Builder, path string, caps []int, scheme, host string, limit int) bool {
	return writeParts(b, t.path, path, caps, scheme, host, limit)
}

// WriteQuery writes what follows the target's '?', as Write does.
func (t *Rewrite) WriteQuery(b *strings.Builder, path string, caps []int, scheme, host string, limit int) bool {
	return writeParts(b, t.query, path, caps, scheme, host, limit)
}

func writeParts(b *strings.Builder, parts []part, path string, caps []int, scheme, host string, limit int) bool {
	for i := range parts {
		if !parts[i].write(b, path, caps, scheme, host, limit) || b.Len() > limit {
			return false
		}
	}
	return true
}

// write writes p; false, writing nothing, when its text alone would take b
// past limit.
func (p *part) write(b *strings.Builder, path string, caps []int, scheme, host string, limit int) bool {
	switch p.kind {
	case litPart:
		b.WriteString(p.lit)
	case capturePart:
		if 2*p.n+1 < len(caps) && caps[2*p.n] >= 0 {
			c := path[caps[2*p.n]:caps[2*p.n+1]]
			if b.Len()+len(c) > limit {
				return false
			}
			escapeTo(b, c, p.escape)
		}
	case schemePart:
		if scheme == "https" {
			b.WriteString("https")
		} else {
			b.WriteString("http")
		}
	case hostPart:
		h := hostText(host)
		if p.embedded && strings.HasPrefix(h, "[") {
			// An IPv6 address inside a longer name: its colons would read
			// as a port and brackets are not allowed there.
			h = strings.ReplaceAll(h[1:len(h)-1], ":", "-")
		}
		if b.Len()+len(h) > limit {
			return false
		}
		escapeTo(b, h, p.escape)
	}
	return true
}

// hostText is what $host stands for: the request's host with only the
// bytes a host name may have, an IPv6 address in brackets, and "localhost"
// for a request that named none, so a redirect's URL always has a host.
func hostText(host string) string {
	clean := true
	for i := 0; i < len(host); i++ {
		clean = clean && hostSafe[host[i]] && host[i] != '[' && host[i] != ']'
	}
	if !clean {
		var b strings.Builder
		for i := 0; i < len(host); i++ {
			if c := host[i]; hostSafe[c] && c != '[' && c != ']' {
				b.WriteByte(c)
			}
		}
		host = b.String()
	}
	if strings.IndexByte(host, ':') >= 0 {
		if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
			return "[" + host + "]"
		}
		// Not an address: a colon would read as a port.
		host = strings.ReplaceAll(host, ":", "")
	}
	if host == "" {
		return "localhost"
	}
	return host
}

// The bytes a request-target's path, its query, and a host may carry
// unescaped (RFC 3986 pchar, query, reg-name with a port and brackets).
var pathSafe, querySafe, hostSafe = safeSet("-._~!$&'()*+,;=:@/"), safeSet("-._~!$'()*,:@/?"), safeSet("-.:[]")

func safeSet(extra string) *[256]bool {
	var s [256]bool
	for c := '0'; c <= '9'; c++ {
		s[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		s[c] = true
		s[c-'a'+'A'] = true
	}
	for i := 0; i < len(extra); i++ {
		s[extra[i]] = true
	}
	return &s
}

// EscapePath writes s to b with every byte a request path may not carry
// unescaped percent-encoded.
func EscapePath(b *strings.Builder, s string) { escapeTo(b, s, pathSafe) }

// EscapeQuery writes s to b with every byte a query may not carry
// unescaped, and the ones that would split it ('&', '=', '+', '#'),
// percent-encoded.
func EscapeQuery(b *strings.Builder, s string) { escapeTo(b, s, querySafe) }

func escapeTo(b *strings.Builder, s string, safe *[256]bool) {
	const hex = "0123456789ABCDEF"
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; !safe[c] {
			b.WriteString(s[start:i])
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			start = i + 1
		}
	}
	b.WriteString(s[start:])
}

// ParseRewrite parses a rewrite target in nginx's syntax ($1 to $9,
// $scheme, $host) or, when native, ramjet's (${0} to ${9}, ${scheme},
// ${host}). The target must be a path or an http/https URL whose authority
// is literal or the request's host; literal text must be what a
// request-target may carry.
func ParseRewrite(s string, native bool) (Rewrite, error) {
	var t Rewrite
	rest := s
	if scheme, after, ok := cutScheme(s, native); ok {
		t.absolute = true
		// The authority: literal host-name bytes or the request's host.
		auth, tail, _ := cutAny(after, "/?")
		parts, err := parseParts(auth, native, hostSafe)
		if err != nil {
			return t, err
		}
		if auth == "" {
			return t, errors.New("the URL has no host")
		}
		for i, p := range parts {
			if p.kind == capturePart || p.kind == schemePart {
				return t, errors.New("the URL's host may not come from a capture")
			}
			if p.kind == hostPart && (i > 0 || i+1 < len(parts) && (parts[i+1].kind != litPart || !strings.HasPrefix(parts[i+1].lit, ":"))) {
				parts[i].embedded = true
			}
			if p.kind == litPart && !allSafe(p.lit, hostSafe) {
				return t, fmt.Errorf("the URL's host %q has a byte a host name may not have", p.lit)
			}
		}
		// With $host standing for a plain name, the authority must parse as
		// a host and an optional port.
		var sample strings.Builder
		for _, p := range parts {
			if p.kind == hostPart {
				sample.WriteString("h")
			} else {
				sample.WriteString(p.lit)
			}
		}
		if u, err := url.Parse("http://" + sample.String() + "/"); err != nil || u.Hostname() == "" {
			return t, fmt.Errorf("the URL's authority %q is not a host with an optional port", auth)
		}
		t.path = append(scheme, part{kind: litPart, lit: "://"})
		t.path = append(t.path, parts...)
		rest = tail
	}
	pathPart, query, hasQuery := strings.Cut(rest, "?")
	parts, err := parseParts(pathPart, native, pathSafe)
	if err != nil {
		return t, err
	}
	for _, p := range parts {
		if p.kind == litPart && !validEscaped(p.lit, pathSafe) {
			return t, fmt.Errorf("%q is not what a request path may carry (unescaped space, '#', '%%' or control byte)", p.lit)
		}
	}
	t.path = append(t.path, parts...)
	if hasQuery {
		t.hasQuery, t.dropArgs = true, query == ""
		if t.query, err = parseParts(query, native, querySafe); err != nil {
			return t, err
		}
		for _, p := range t.query {
			if p.kind == litPart && !validEscaped(p.lit, queryLiteral) {
				return t, fmt.Errorf("%q is not what a query may carry", p.lit)
			}
		}
	}
	for _, ps := range [][]part{t.path, t.query} {
		for _, p := range ps {
			t.captures = t.captures || p.kind == capturePart
		}
	}
	return t, nil
}

// queryLiteral is what a query written in a target may carry literally:
// its separators too.
var queryLiteral = safeSet("-._~!$'()*,:@/?&=+;")

// ParseHeader parses an x-forwarded-prefix value, in the syntax
// ParseRewrite takes: literal text without control bytes, and references,
// which are escaped like a path.
func ParseHeader(s string, native bool) (Rewrite, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c == 0x7f {
			return Rewrite{}, errors.New("it has a control character")
		}
	}
	parts, err := parseParts(s, native, pathSafe)
	if err != nil {
		return Rewrite{}, err
	}
	t := Rewrite{path: parts}
	for _, p := range parts {
		t.captures = t.captures || p.kind == capturePart
	}
	return t, nil
}

func cutScheme(s string, native bool) ([]part, string, bool) {
	lower := strings.ToLower(s)
	for _, p := range []string{"http://", "https://"} {
		if strings.HasPrefix(lower, p) {
			return []part{{kind: litPart, lit: p[:len(p)-3]}}, s[len(p):], true
		}
	}
	v := "$scheme://"
	if native {
		v = "${scheme}://"
	}
	if strings.HasPrefix(s, v) {
		return []part{{kind: schemePart}}, s[len(v):], true
	}
	return nil, s, false
}

func cutAny(s, seps string) (before, after string, found bool) {
	if i := strings.IndexAny(s, seps); i >= 0 {
		return s[:i], s[i:], true
	}
	return s, "", false
}

// The places a rewrite target's or prefix's references are read: the
// captures, $scheme and $host, in nginx's syntax or ramjet's.
var (
	rewritePlace       = vars.Place{Name: "a rewrite target", Vars: vars.Of(vars.Host, vars.Scheme, vars.Capture)}
	nativeRewritePlace = vars.Place{Name: rewritePlace.Name, Vars: rewritePlace.Vars, Syntax: vars.Native}
)

// parseParts splits s into literal text and references, each reference
// to be escaped with escape.
func parseParts(s string, native bool, escape *[256]bool) ([]part, error) {
	pl := &rewritePlace
	if native {
		pl = &nativeRewritePlace
	}
	t, err := pl.Parse(s)
	if err != nil {
		return nil, err
	}
	parts := make([]part, 0, len(t))
	for _, p := range t {
		switch p.Ref.Var {
		case vars.None:
			parts = append(parts, part{kind: litPart, lit: p.Lit})
		case vars.Capture:
			parts = append(parts, part{kind: capturePart, n: int(p.Ref.N), escape: escape})
		case vars.Scheme:
			parts = append(parts, part{kind: schemePart, escape: escape})
		case vars.Host:
			parts = append(parts, part{kind: hostPart, escape: escape})
		}
	}
	return parts, nil
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func allSafe(s string, safe *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if !safe[s[i]] {
			return false
		}
	}
	return true
}

// validEscaped reports whether s holds only safe bytes and well-formed
// percent escapes.
func validEscaped(s string, safe *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case safe[c]:
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ValidHostHeader accepts a host name or IP address, optionally with a
// port: what a Host header carries (upstream-vhost).
func ValidHostHeader(h string) bool {
	name, port := h, ""
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return false
		}
		name, port = h[1:end], h[end+1:]
		if !allSafe(name, safeSet(":.")) {
			return false
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 {
		name, port = h[:i], h[i:]
	}
	if port != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(port, ":"))
		if !strings.HasPrefix(port, ":") || err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	if name == "" || len(name) > 253 {
		return false
	}
	if strings.HasPrefix(h, "[") {
		return true
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' && label[i] != '_' {
				return false
			}
		}
	}
	return true
}
