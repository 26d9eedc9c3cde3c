package match

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Rewrite is what a route does to a request besides choosing its backend
// (SPEC §11): rewrite-target, upstream-vhost and x-forwarded-prefix. A
// route without any of them has a nil Rewrite.
type Rewrite struct {
	// Target is the rewrite-target as written; "" leaves the request-target
	// as received (SPEC §13).
	Target string
	// Syntax is how Target and ForwardedPrefix refer to captures.
	Syntax RewriteSyntax
	// Host is the Host header the backend receives (upstream-vhost); ""
	// keeps the client's.
	Host string
	// ForwardedPrefix is the X-Forwarded-Prefix header the backend receives
	// when ForwardedPrefixSet (x-forwarded-prefix); it may refer to
	// captures like Target.
	ForwardedPrefix    string
	ForwardedPrefixSet bool

	target   template
	prefix   template
	redirect bool // Target is an absolute URL: the answer is a 302 to it
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
func NewRewrite(r Rewrite) (*Rewrite, error) {
	out := r
	if n := max(len(r.Target), len(r.ForwardedPrefix)); n > MaxRewriteTemplate {
		return nil, fmt.Errorf("the value is %d bytes, over the %d-byte limit for a rewrite template", n, MaxRewriteTemplate)
	}
	if r.Target != "" {
		t, err := parseTemplate(r.Target, r.Syntax)
		if err != nil {
			return nil, fmt.Errorf("rewrite target %q: %w", r.Target, err)
		}
		out.target = t
		out.redirect = t.absolute
	}
	if r.ForwardedPrefixSet {
		t, err := parseHeaderTemplate(r.ForwardedPrefix, r.Syntax)
		if err != nil {
			return nil, fmt.Errorf("x-forwarded-prefix %q: %w", r.ForwardedPrefix, err)
		}
		out.prefix = t
	}
	if r.Host != "" && !validHostHeader(r.Host) {
		return nil, fmt.Errorf("upstream host %q is not a host name or address with an optional port", r.Host)
	}
	return &out, nil
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
	if rw.target.captures || rw.prefix.captures {
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
		if rw.prefix.literal() {
			out.Prefix = rw.ForwardedPrefix
		} else {
			var b strings.Builder
			if !rw.prefix.write(&b, path, caps, scheme, host) {
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
	if !t.write(&b, path, caps, scheme, host) {
		return "", false
	}
	if rw.Syntax == NativeSyntax && (r == nil || r.Type == Prefix) && !t.absolute {
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
		escapeTo(&b, rest, pathSafe)
	}
	switch {
	case t.dropArgs:
		// A trailing '?': neither it nor the client's arguments.
	case t.hasQuery:
		b.WriteByte('?')
		if !t.writeQuery(&b, path, caps, scheme, host) {
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
	if !t.absolute && !strings.HasPrefix(s, "/") {
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

// template is a parsed rewrite target or header value.
type template struct {
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

func (t *template) literal() bool {
	return !t.captures && !t.hasQuery && len(t.path) <= 1 && (len(t.path) == 0 || t.path[0].kind == litPart)
}

// write writes the path parts of t to b; false, with b left partly
// written, once b is longer than MaxRewriteTarget. A part is checked before
// it is written (escaping only lengthens it) and b after, so b never grows
// past the bound by more than one escaped part.
func (t *template) write(b *strings.Builder, path string, caps []int, scheme, host string) bool {
	return writeParts(b, t.path, path, caps, scheme, host)
}

func (t *template) writeQuery(b *strings.Builder, path string, caps []int, scheme, host string) bool {
	return writeParts(b, t.query, path, caps, scheme, host)
}

func writeParts(b *strings.Builder, parts []part, path string, caps []int, scheme, host string) bool {
	for i := range parts {
		if !parts[i].write(b, path, caps, scheme, host) || b.Len() > MaxRewriteTarget {
			return false
		}
	}
	return true
}

// write writes p; false, writing nothing, when its text alone would take b
// past MaxRewriteTarget.
func (p *part) write(b *strings.Builder, path string, caps []int, scheme, host string) bool {
	switch p.kind {
	case litPart:
		b.WriteString(p.lit)
	case capturePart:
		if 2*p.n+1 < len(caps) && caps[2*p.n] >= 0 {
			c := path[caps[2*p.n]:caps[2*p.n+1]]
			if b.Len()+len(c) > MaxRewriteTarget {
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
		if b.Len()+len(h) > MaxRewriteTarget {
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

var errDollar = errors.New("a $ must start a capture ($1 to $9), $scheme or $host")

// parseTemplate parses a rewrite target.
func parseTemplate(s string, syntax RewriteSyntax) (template, error) {
	var t template
	rest := s
	if scheme, after, ok := cutScheme(s, syntax); ok {
		t.absolute = true
		// The authority: literal host-name bytes or the request's host.
		auth, tail, _ := cutAny(after, "/?")
		parts, err := parseParts(auth, syntax, hostSafe)
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
	parts, err := parseParts(pathPart, syntax, pathSafe)
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
		if t.query, err = parseParts(query, syntax, querySafe); err != nil {
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

// parseHeaderTemplate parses an x-forwarded-prefix value: literal text
// without control bytes, and captures, which are escaped like a path.
func parseHeaderTemplate(s string, syntax RewriteSyntax) (template, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c == 0x7f {
			return template{}, errors.New("it has a control character")
		}
	}
	parts, err := parseParts(s, syntax, pathSafe)
	if err != nil {
		return template{}, err
	}
	t := template{path: parts}
	for _, p := range parts {
		t.captures = t.captures || p.kind == capturePart
	}
	return t, nil
}

func cutScheme(s string, syntax RewriteSyntax) ([]part, string, bool) {
	lower := strings.ToLower(s)
	for _, p := range []string{"http://", "https://"} {
		if strings.HasPrefix(lower, p) {
			return []part{{kind: litPart, lit: p[:len(p)-3]}}, s[len(p):], true
		}
	}
	v := "$scheme://"
	if syntax == NativeSyntax {
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

// parseParts splits s into literal text and references.
func parseParts(s string, syntax RewriteSyntax, escape *[256]bool) ([]part, error) {
	var parts []part
	lit := 0
	flush := func(end int) {
		if end > lit {
			parts = append(parts, part{kind: litPart, lit: s[lit:end]})
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		flush(i)
		p, n, err := parseRef(s[i:], syntax)
		if err != nil {
			return nil, err
		}
		p.escape = escape
		parts = append(parts, p)
		i += n - 1
		lit = i + 1
	}
	flush(len(s))
	return parts, nil
}

// parseRef parses the reference at the start of s (which begins with '$')
// and returns it with its length.
func parseRef(s string, syntax RewriteSyntax) (part, int, error) {
	if syntax == NativeSyntax {
		end := strings.IndexByte(s, '}')
		if len(s) < 2 || s[1] != '{' || end < 0 {
			return part{}, 0, errors.New("a $ must start a capture ${0} to ${9}, ${scheme} or ${host}")
		}
		name := s[2:end]
		switch {
		case name == "scheme":
			return part{kind: schemePart}, end + 1, nil
		case name == "host":
			return part{kind: hostPart}, end + 1, nil
		case len(name) == 1 && name[0] >= '0' && name[0] <= '9':
			return part{kind: capturePart, n: int(name[0] - '0')}, end + 1, nil
		}
		return part{}, 0, fmt.Errorf("${%s} is not a capture ${0} to ${9}, ${scheme} or ${host}", name)
	}
	if len(s) >= 2 && s[1] >= '1' && s[1] <= '9' {
		// nginx reads one digit: "$12" is capture 1, then "2".
		return part{kind: capturePart, n: int(s[1] - '0')}, 2, nil
	}
	n := 1
	for n < len(s) && (isAlnum(s[n]) || s[n] == '_') {
		n++
	}
	switch s[1:n] {
	case "scheme":
		return part{kind: schemePart}, n, nil
	case "host":
		return part{kind: hostPart}, n, nil
	case "":
		return part{}, 0, errDollar
	}
	return part{}, 0, fmt.Errorf("the nginx variable $%s is not supported, only captures $1 to $9, $scheme and $host", s[1:n])
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

// validHostHeader accepts a host name or IP address, optionally with a
// port: what a Host header carries.
func validHostHeader(h string) bool {
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
	name:  "rewrite",
	route: []string{"Rewrite"},
	host:  []string{"FallbackRewrite"},
	digest: []digestPart{{
		tag: "rewrite",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackRewrite != nil || slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Rewrite != nil })
		},
		host:  func(e *encoder, vh *VirtualHost) { e.rewrite(vh.FallbackRewrite) },
		route: func(e *encoder, r *Route) { e.rewrite(r.Rewrite) },
	}},
	text: textParts{
		at: 40,
		fallbackSuffix: func(b *strings.Builder, vh *VirtualHost) {
			b.WriteString(rewriteText(vh.FallbackRewrite))
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
