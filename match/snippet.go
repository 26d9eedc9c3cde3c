package match

import (
	"net/netip"
	"net/textproto"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match/urltemplate"
	"ramjet.dev/ramjet/match/vars"
)

// Snippet is what a configuration-snippet or server-snippet annotation
// does, translated from its nginx directives into structured steps
// (SPEC §11, doc §11.9): the rewrite-phase answers (return, rewrite, if),
// the header edits in both directions, and allow/deny. A route's Snippet
// holds its host's server-snippet steps first, then its Ingress's
// configuration-snippet's, as nginx runs the server's rewrite phase
// before the location's. Build it with NewSnippet, which compiles the
// regular expressions and checks the variables.
type Snippet struct {
	Ops []SnippetOp
	// Server is how many of Ops, from the start, are the host's
	// server-snippet's: they run in nginx's server rewrite phase, before
	// the location is chosen.
	Server int
	// Relative keeps a redirect's Location that starts with "/" as written
	// in the location's steps, ServerRelative in the server's
	// (relative-redirects: nginx's absolute_redirect off, read from the
	// location that answers; a server-phase answer has the server's).
	Relative, ServerRelative bool
	// Access are the allow/deny rules in order: the first that covers the
	// client decides; none covering it allows.
	Access []AccessRule
}

// SnippetKind is what one SnippetOp does.
type SnippetKind uint8

const (
	// OpIf runs Then when Cond holds (nginx's if).
	OpIf SnippetKind = iota + 1
	// OpReturn answers Code with Text (a body, or the Location of a
	// redirect code) and ends the rewrite phase.
	OpReturn
	// OpRewrite matches Pattern against the URI and replaces it with
	// Value; Flag is "", "last", "break", "redirect" or "permanent".
	OpRewrite
	// Response headers: more_set_headers (Value "" clears),
	// more_clear_headers (Name may end in "*"), add_header (only on
	// Statuses unless Always), expires (Value is the max-age in seconds,
	// "epoch" or "max"), proxy_hide_header.
	OpSetHeader
	OpClearHeader
	OpAddHeader
	OpExpires
	OpHideHeader
	// Request headers to the backend: proxy_set_header (Value "" drops
	// it), more_set_input_headers (Always false: -r, only replace one
	// present), more_clear_input_headers.
	OpSetInput
	OpClearInput
	// OpSetUpstream is proxy_set_header: it sets a header of the request
	// proxied to the backend only, so what runs before the proxying
	// (authentication, the auth service's subrequest, canary rules) reads
	// the client's own, as in nginx. more_set_input_headers (OpSetInput)
	// edits the client's request in the rewrite phase instead.
	OpSetUpstream
)

var kindNames = [...]string{OpIf: "if", OpReturn: "return", OpRewrite: "rewrite", OpSetHeader: "more_set_headers",
	OpClearHeader: "more_clear_headers", OpAddHeader: "add_header", OpExpires: "expires", OpHideHeader: "proxy_hide_header",
	OpSetInput: "set_input_header", OpClearInput: "more_clear_input_headers", OpSetUpstream: "proxy_set_header"}

func (k SnippetKind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "SnippetKind(" + strconv.Itoa(int(k)) + ")"
}

// SnippetOp is one translated directive. Values may hold nginx variables
// ($host, $request_uri, $uri, $scheme, $remote_addr, $args,
// $query_string, $request_method, $http_<name>, and $1…$9 after a
// regular expression matched), expanded per request.
type SnippetOp struct {
	Kind SnippetKind
	Cond *SnippetCond
	Then []SnippetOp
	// Code is return's status.
	Code int
	// Name is a header name; Pattern a rewrite's regular expression.
	Name, Pattern, Value, Flag string
	// Statuses and Types filter more_set_headers and more_clear_headers
	// (-s, -t); for more_set_input_headers Types is -t, the request's
	// Content-Type.
	Statuses []int
	Types    []string
	// Always: add_header … always; for more_set_input_headers, not -r.
	Always bool
	// EscapeCaptures, on a return, writes $1…$9 percent-encoded as path
	// text, as a rewrite's redirect does: a capture of the decoded $uri
	// then leaves the Location the same path (a decoded "%3F" does not
	// start a query). nginx's own return copies captures as they are.
	EscapeCaptures bool
	// Literal: Value is sent as written, no "$" expanded (custom-headers'
	// values, which ingress-nginx writes with each "$" escaped).
	Literal bool
	// ServerOnly: a server-snippet's add_header or proxy_hide_header that
	// the location does not inherit, having its own (nginx inherits them
	// only by a block with none): it applies to the answers of the
	// server's rewrite phase alone, which come before any location.
	ServerOnly bool

	re *regexp.Regexp
	// tmpl is Value parsed (Text for return). A rewrite's is split where
	// nginx splits it when reading the configuration: tmpl before the
	// replacement's first literal '?', args after it (hasArgs).
	tmpl, args template
	hasArgs    bool
}

// SnippetCond is an if condition: Var alone (true unless empty or "0"),
// or Var Op Operand with Op one of = != ~ ~* !~ !~*.
type SnippetCond struct {
	Var, Op, Operand string
	re               *regexp.Regexp
	ref              vars.Ref
}

// AccessRule is one allow or deny: All, or a Prefix (an address is a
// full-length prefix).
type AccessRule struct {
	Deny   bool
	All    bool
	Prefix netip.Prefix
}

// SnippetLocation is a location block of a server-snippet: Match is "="
// (exact), "" (prefix), "^~" (prefix that stops the regex search), "~" or
// "~*" (regular expression, case-insensitive with "*").
type SnippetLocation struct {
	Match, Path string
	Snippet     *Snippet
	re          *regexp.Regexp
}

// NewSnippet prepares s: the regular expressions compiled, the values
// parsed. It fails on a pattern Go's regexp cannot compile or a variable
// it does not know, naming the op.
func NewSnippet(s Snippet) (*Snippet, error) {
	out := s
	var err error
	out.Ops, err = prepareOps(s.Ops)
	return &out, err
}

func prepareOps(ops []SnippetOp) ([]SnippetOp, error) {
	out := slices.Clone(ops)
	for i := range out {
		op := &out[i]
		var err error
		if op.Kind == OpRewrite {
			if op.re, err = regexp.Compile(op.Pattern); err != nil {
				return nil, err
			}
		}
		switch {
		case op.Literal && op.Value != "":
			op.tmpl = template{{Lit: op.Value}}
		case op.Literal:
			op.tmpl = nil
		default:
			if op.tmpl, err = snippetPlace.Parse(op.Value); err != nil {
				return nil, err
			}
		}
		if op.Kind == OpRewrite {
			op.tmpl, op.args, op.hasArgs = cutArgs(op.tmpl, strings.TrimSuffix(op.Value, "?") != op.Value)
		}
		if c := op.Cond; c != nil {
			cc := *c
			ref, ok := snippetPlace.Vars.Lookup(cc.Var)
			if !ok {
				return nil, &vars.Error{Place: &snippetPlace, Name: cc.Var}
			}
			cc.ref = ref
			if strings.Contains(cc.Op, "~") {
				p := cc.Operand
				if strings.HasSuffix(cc.Op, "*") {
					p = "(?i)" + p
				}
				if cc.re, err = regexp.Compile(p); err != nil {
					return nil, err
				}
			}
			op.Cond = &cc
		}
		if op.Then, err = prepareOps(op.Then); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NewSnippetLocation prepares l and its Snippet.
func NewSnippetLocation(l SnippetLocation) (*SnippetLocation, error) {
	out := l
	if strings.HasPrefix(l.Match, "~") {
		p := l.Path
		if l.Match == "~*" {
			p = "(?i)" + p
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, err
		}
		out.re = re
	}
	if l.Snippet != nil {
		s, err := NewSnippet(*l.Snippet)
		if err != nil {
			return nil, err
		}
		out.Snippet = s
	}
	return &out, nil
}

// A template is a value split into literal text and variables.
type template = vars.Template

// snippetPlace is where a snippet's values and conditions read their
// variables; headerPlace where a ConfigMap's header values do: no
// regular expression matched there, so no capture.
var (
	snippetPlace = vars.Place{Name: "a snippet", Vars: vars.Of(vars.Host, vars.HTTPHost, vars.ServerName, vars.Scheme,
		vars.RequestURI, vars.URI, vars.DocumentURI, vars.Args, vars.QueryString, vars.RemoteAddr, vars.RequestMethod,
		vars.HTTP, vars.Cookie, vars.Arg, vars.Capture,
		vars.Namespace, vars.IngressName, vars.ServiceName, vars.ServicePort, vars.LocationPath)}
	headerPlace = vars.Place{Name: "a header value", Vars: snippetPlace.Vars.Without(vars.Capture)}
)

// SnippetVariables is the error, naming it, of the first variable in s
// a snippet cannot expand; nil when there is none.
func SnippetVariables(s string) error {
	_, err := snippetPlace.Parse(s)
	return err
}

// HeaderValue is a header value with the variables a snippet's values
// take but the captures, expanded per request: ingress-nginx writes the
// ConfigMap's add-headers and proxy-set-headers values into
// more_set_headers and proxy_set_header, where nginx expands any
// variable. The zero HeaderValue is the empty value.
type HeaderValue struct{ t template }

// ParseHeaderValue parses s. It fails, saying why, on a "$" it cannot
// expand (a capture among them: no regular expression matched).
func ParseHeaderValue(s string) (HeaderValue, error) {
	t, err := headerPlace.Parse(s)
	if err != nil {
		return HeaderValue{}, err
	}
	return HeaderValue{t}, nil
}

// HasVariables reports whether v holds a variable: without one it is the
// text it was parsed from.
func (v HeaderValue) HasVariables() bool {
	return !v.t.Literal()
}

// Expand is v for the request r.
func (v HeaderValue) Expand(r *SnippetRequest) string { return expand(v.t, r) }

// SnippetRequest is what a snippet reads of a request.
type SnippetRequest struct {
	// Host is the request's host (lower-case, no port); URI the
	// normalized path; RequestURI the request-target as received; Args
	// its query.
	Host, URI, RequestURI, Args, Scheme, RemoteAddr, Method string
	Header                                                  map[string][]string
	// HTTPHost is the Host line as sent, case and port kept ($http_host),
	// which net/http keeps in Request.Host and out of Header.
	HTTPHost string
	// ServerName is the name of the server block that serves the request
	// ($server_name): the virtual host's name ("*.example.com" for a
	// wildcard), "_" for the catch-all, as ingress-nginx names them.
	ServerName string
	// UnderscoreNames: nginx keeps header names with '_'
	// (enable-underscores-in-headers), and $http_<name> reads the lines
	// of every spelling (vars.HeaderSpellings).
	UnderscoreNames bool
	// The variables ingress-nginx sets in each location it writes: the
	// Ingress's namespace and name, the backend Service's name and port,
	// and the location's path.
	Namespace, IngressName, ServiceName, ServicePort, LocationPath string
	// Relocated: the request's URI was rewritten and its location searched
	// again, so the server-snippet's rewrite phase already ran; only its
	// header declarations still apply, as nginx merges them into every
	// location.
	Relocated bool
	// caps are the last regular expression's captures, for $1…$9.
	caps []string
}

func (r *SnippetRequest) variable(v vars.Ref) string {
	switch v.Var.Canon() {
	case vars.Host:
		return r.Host
	case vars.ServerName:
		return r.ServerName
	case vars.HTTPHost:
		v, _ := vars.Header(r.Header, r.HTTPHost, "Host")
		return v
	case vars.RequestURI:
		return r.RequestURI
	case vars.URI:
		return r.URI
	case vars.Scheme:
		return r.Scheme
	case vars.RemoteAddr:
		return r.RemoteAddr
	case vars.Args:
		return r.Args
	case vars.RequestMethod:
		return r.Method
	case vars.Namespace:
		return r.Namespace
	case vars.IngressName:
		return r.IngressName
	case vars.ServiceName:
		return r.ServiceName
	case vars.ServicePort:
		return r.ServicePort
	case vars.LocationPath:
		return r.LocationPath
	case vars.Capture:
		if i := int(v.N); i < len(r.caps) {
			return r.caps[i]
		}
	case vars.HTTP:
		name := textproto.CanonicalMIMEHeaderKey(strings.ReplaceAll(v.Name, "_", "-"))
		if r.UnderscoreNames {
			h, _ := vars.HeaderSpellings(r.Header, r.HTTPHost, name)
			return h
		}
		h, _ := vars.Header(r.Header, r.HTTPHost, name)
		return h
	case vars.Cookie:
		c, _ := balance.CookieValue(r.Header["Cookie"], v.Name)
		return c
	case vars.Arg:
		return ArgValue(r.Args, v.Name)
	}
	return ""
}

// cutArgs splits a rewrite's replacement where nginx does when it reads
// it: at the first '?' of its literal text, once a final '?' (which only
// drops the request's arguments) is taken off. A '?' a variable brings
// stays in the URI.
func cutArgs(t template, dropArgs bool) (path, args template, hasArgs bool) {
	t = slices.Clone(t)
	if n := len(t); dropArgs && n > 0 && t[n-1].Ref.Var == vars.None {
		if t[n-1].Lit = strings.TrimSuffix(t[n-1].Lit, "?"); t[n-1].Lit == "" {
			t = t[:n-1]
		}
	}
	for i, p := range t {
		j := strings.IndexByte(p.Lit, '?')
		if p.Ref.Var != vars.None || j < 0 {
			continue
		}
		path = append(slices.Clip(t[:i]), vars.Part{Lit: p.Lit[:j]})
		args = append(template{{Lit: p.Lit[j+1:]}}, t[i+1:]...)
		return path, args, true
	}
	return t, nil, false
}

func expand(t template, r *SnippetRequest) string { return expandCaps(t, r, nil) }

// expandCaps expands t, writing each capture ($1…$9) through esc when it
// is not nil.
func expandCaps(t template, r *SnippetRequest, esc func(*strings.Builder, string)) string {
	if len(t) == 1 && t[0].Ref.Var == vars.None {
		return t[0].Lit
	}
	var b strings.Builder
	for _, p := range t {
		switch {
		case p.Ref.Var == vars.None:
			b.WriteString(p.Lit)
		case esc != nil && p.Ref.Var == vars.Capture:
			esc(&b, r.variable(p.Ref))
		default:
			b.WriteString(r.variable(p.Ref))
		}
		if b.Len() > MaxRewriteTarget {
			// A value repeating a capture grows with the request; cut
			// it where rewrite-target's targets are cut.
			return b.String()[:MaxRewriteTarget]
		}
	}
	return b.String()
}

// SnippetResult is what a snippet does to one request.
type SnippetResult struct {
	// Status, when not 0, answers the request: Location for a redirect,
	// Body otherwise.
	Status         int
	Location, Body string
	// Target is the new request-target for the backend; "" keeps it.
	Target string
	// Request are the request header edits; Response the response's,
	// their values expanded.
	Request, Response []HeaderEdit
	// Relocate: the URI changed where nginx searches the location again
	// (a server-snippet's rewrite; a location's rewrite without break):
	// Target is to be served by the location it lands in, with that
	// location's policies and its snippet run with Relocated set. The
	// header edits are then that location's, so none are returned here.
	Relocate bool
	// ServerPhase: the relocation is the server-snippet's, made in
	// nginx's server rewrite phase, whose later directives (ingress-nginx's
	// app-root "if") then see the new URI; a location's rewrite searches
	// the location again without that phase.
	ServerPhase bool
	// ownAdds: an if that held has add_header of its own.
	ownAdds bool
}

// HeaderEdit is one header edit with its value expanded.
type HeaderEdit struct {
	Kind     SnippetKind
	Name     string
	Value    string
	Statuses []int
	Types    []string
	Always   bool
	// inIf: the edit comes from an if that held.
	inIf bool
}

// IsRedirect reports the codes whose return text is a Location.
func IsRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// Run runs the snippet over r: the server-snippet's rewrite-phase steps
// (RunServer), unless r.Relocated, then the location's, in order until a
// return, a redirect or a rewrite's last or break ends them; the header
// edits of the top level, and of each if that held. Headers are
// declarations in nginx, so one written after a return still applies. A
// rewrite that makes nginx search the location again ends the run with
// Relocate set.
func (s *Snippet) Run(r *SnippetRequest) SnippetResult {
	if !r.Relocated {
		if res := s.RunServer(r); res.Status != 0 || res.Relocate {
			return res
		}
	}
	var res SnippetResult
	uri, args := r.URI, r.Args
	// The server's rewrite phase has run: of its steps, the header
	// declarations of its top level that the location inherits apply (an
	// if's are its own block's, left when the location is chosen).
	for i := range s.Ops[:s.Server] {
		if op := &s.Ops[i]; !op.ServerOnly {
			declare(op, r, &res)
		}
	}
	s.run(s.Ops[s.Server:], r, &res, &uri, &args, false, s.Relative)
	if res.Relocate && res.Status == 0 {
		return relocate(uri, args)
	}
	res.Relocate = false
	dropParentAdds(&res)
	if res.Status == 0 && (uri != r.URI || args != r.Args) {
		res.Target = target(uri, args)
	}
	return res
}

// RunServer runs the server-snippet's steps over r in nginx's server
// rewrite phase, before a location is chosen: a return or redirect there
// answers with the server's header edits alone, none of a location's; a
// URI it changes is to be served by the location it lands in (Relocate,
// ServerPhase). The zero SnippetResult: neither, the location's steps
// come next (Run with r.Relocated).
func (s *Snippet) RunServer(r *SnippetRequest) SnippetResult {
	var res SnippetResult
	uri, args := r.URI, r.Args
	s.run(s.Ops[:s.Server], r, &res, &uri, &args, false, s.ServerRelative)
	if res.Status != 0 {
		res.Relocate = false
		dropParentAdds(&res)
		return res
	}
	if uri != r.URI || args != r.Args {
		// The location is chosen after the server's rewrite phase, for the
		// URI it left; a server-level break or last ends only that phase.
		res := relocate(uri, args)
		res.ServerPhase = true
		return res
	}
	return SnippetResult{}
}

// dropParentAdds applies nginx's add_header inheritance to an if that
// held with add_header of its own: only a block with none inherits its
// parent's, so the if's replace the location's (or the server's).
func dropParentAdds(res *SnippetResult) {
	if res.ownAdds {
		res.Response = slices.DeleteFunc(res.Response, func(e HeaderEdit) bool { return e.Kind == OpAddHeader && !e.inIf })
	}
}

func relocate(uri, args string) SnippetResult {
	return SnippetResult{Relocate: true, Target: target(uri, args)}
}

// target is a rewritten URI as the backend receives it: escaped as nginx's
// proxy escapes a URI it changed.
func target(uri, args string) string {
	t := escapePath(uri)
	if args != "" {
		t += "?" + args
	}
	return t
}

// run walks ops; stopped says the rewrite phase ended, so only header
// declarations of this level are still collected; rel keeps a relative
// redirect relative.
func (s *Snippet) run(ops []SnippetOp, r *SnippetRequest, res *SnippetResult, uri, args *string, stopped, rel bool) bool {
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case OpIf:
			if !stopped && op.Cond.holds(r) {
				n := len(res.Response)
				stopped = s.run(op.Then, r, res, uri, args, false, rel)
				for i := n; i < len(res.Response); i++ {
					res.Response[i].inIf = true
					res.ownAdds = res.ownAdds || res.Response[i].Kind == OpAddHeader
				}
			}
		case OpReturn:
			if !stopped {
				stopped = true
				res.Status = op.Code
				var esc func(*strings.Builder, string)
				if op.EscapeCaptures {
					esc = urltemplate.EscapePath
				}
				text := expandCaps(op.tmpl, r, esc)
				if IsRedirect(op.Code) {
					res.Location = absolute(text, r, rel)
				} else {
					res.Body = text
				}
			}
		case OpRewrite:
			if !stopped {
				stopped = s.rewrite(op, r, res, uri, args, rel)
			}
		default:
			declare(op, r, res)
		}
	}
	return stopped
}

// declare adds the header edit op declares, if it is one, to res.
func declare(op *SnippetOp, r *SnippetRequest, res *SnippetResult) {
	switch op.Kind {
	case OpSetHeader, OpClearHeader, OpAddHeader, OpExpires, OpHideHeader:
		res.Response = append(res.Response, HeaderEdit{Kind: op.Kind, Name: op.Name, Value: expand(op.tmpl, r),
			Statuses: op.Statuses, Types: op.Types, Always: op.Always})
	case OpSetInput, OpClearInput, OpSetUpstream:
		res.Request = append(res.Request, HeaderEdit{Kind: op.Kind, Name: op.Name, Value: expand(op.tmpl, r),
			Types: op.Types, Always: op.Always})
	}
}

// rewrite applies a rewrite whose pattern matches the URI and reports
// whether it ended the rewrite phase. A match without break leaves the
// URI changed for nginx's location search (res.Relocate); break clears it.
func (s *Snippet) rewrite(op *SnippetOp, r *SnippetRequest, res *SnippetResult, uri, args *string, rel bool) bool {
	re := op.re
	if re == nil {
		var err error
		if re, err = regexp.Compile(op.Pattern); err != nil {
			return false
		}
	}
	m := re.FindStringSubmatch(*uri)
	if m == nil {
		return false
	}
	r.caps = m
	redirect := op.Flag == "redirect" || op.Flag == "permanent" ||
		strings.HasPrefix(op.Value, "http://") || strings.HasPrefix(op.Value, "https://") || strings.HasPrefix(op.Value, "$scheme")
	// A capture is escaped where it lands in the arguments, or in a
	// redirect's Location; in the URI it stays decoded, as nginx keeps it,
	// and is escaped with the URI for the backend.
	var pathEsc func(*strings.Builder, string)
	if redirect {
		pathEsc = urltemplate.EscapePath
	}
	p := expandCaps(op.tmpl, r, pathEsc)
	// The client's query follows the replacement unless it ends in "?".
	q := ""
	if op.hasArgs {
		q = expandCaps(op.args, r, urltemplate.EscapeQuery)
	}
	switch {
	case strings.HasSuffix(op.Value, "?"):
	case op.hasArgs && *args != "":
		q += "&" + *args
	case !op.hasArgs:
		q = *args
	}
	if redirect {
		res.Status = 302
		if op.Flag == "permanent" {
			res.Status = 301
		}
		res.Location = absolute(p, r, rel)
		if q != "" {
			res.Location += "?" + q
		}
		return true
	}
	*uri, *args = p, q
	res.Relocate = op.Flag != "break"
	return op.Flag == "last" || op.Flag == "break"
}

// absolute makes a redirect's relative Location absolute, as nginx does
// with absolute_redirect on; rel (absolute_redirect off) keeps it.
func absolute(loc string, r *SnippetRequest, rel bool) string {
	if !rel && strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") {
		return r.Scheme + "://" + r.Host + loc
	}
	return loc
}

func escapePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= ' ' || c >= 0x7f || c == '?' || c == '#' || c == '%' {
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)+strconv.FormatUint(uint64(c)&15, 16)))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (c *SnippetCond) holds(r *SnippetRequest) bool {
	v := r.variable(c.ref)
	switch c.Op {
	case "":
		return v != "" && v != "0"
	case "=":
		return v == c.Operand
	case "!=":
		return v != c.Operand
	}
	re := c.re
	if re == nil {
		p := c.Operand
		if strings.HasSuffix(c.Op, "*") {
			p = "(?i)" + p
		}
		var err error
		if re, err = regexp.Compile(p); err != nil {
			return false
		}
	}
	m := re.FindStringSubmatch(v)
	if strings.HasPrefix(c.Op, "!") {
		return m == nil
	}
	if m != nil {
		r.caps = m
	}
	return m != nil
}

// Allows reports whether the snippet's allow/deny rules let addr in.
func (s *Snippet) Allows(addr netip.Addr) bool {
	addr = addr.Unmap().WithZone("") // as Policy.Admits
	for _, a := range s.Access {
		if a.All || a.Prefix.Contains(addr) {
			return !a.Deny
		}
	}
	return true
}

// addHeaderStatus reports the statuses nginx's add_header and expires
// apply to without always.
func addHeaderStatus(status int) bool {
	switch status {
	case 200, 201, 204, 206, 301, 302, 303, 304, 307, 308:
		return true
	}
	return false
}

// ApplyResponse makes the response edits on h for an answer of status;
// backend is false for the router's own answers, which proxy_hide_header
// has nothing to hide in.
func ApplyResponse(edits []HeaderEdit, h map[string][]string, status int) {
	for _, e := range edits {
		name := textproto.CanonicalMIMEHeaderKey(e.Name)
		switch e.Kind {
		case OpSetHeader, OpClearHeader:
			if len(e.Statuses) > 0 && !slices.Contains(e.Statuses, status) || len(e.Types) > 0 && !typeIn(h["Content-Type"], e.Types) {
				continue
			}
			if e.Kind == OpSetHeader && e.Value != "" {
				h[name] = []string{e.Value}
				continue
			}
			clearHeader(h, e.Name)
		case OpHideHeader:
			delete(h, name)
		case OpAddHeader:
			if e.Value != "" && (e.Always || addHeaderStatus(status)) {
				h[name] = append(h[name], e.Value)
			}
		case OpExpires:
			if addHeaderStatus(status) {
				setExpires(h, e.Value)
			}
		}
	}
}

// clearHeader deletes name, or with a trailing "*" every header it
// begins (more_clear_headers' wildcard).
func clearHeader(h map[string][]string, name string) {
	prefix, wild := strings.CutSuffix(name, "*")
	if !wild {
		delete(h, textproto.CanonicalMIMEHeaderKey(name))
		return
	}
	for k := range h {
		if len(k) >= len(prefix) && EqualFoldASCII(k[:len(prefix)], prefix) {
			delete(h, k)
		}
	}
}

// typeIn reports whether the Content-Type's media type is in types.
func typeIn(ct []string, types []string) bool {
	if len(ct) == 0 {
		return false
	}
	mt, _, _ := strings.Cut(ct[0], ";")
	mt = strings.TrimSpace(mt)
	return slices.ContainsFunc(types, func(t string) bool { return EqualFoldASCII(t, mt) })
}

// setExpires writes expires' headers: "epoch" and "max" as nginx writes
// them; seconds otherwise (negative: no-cache). The Expires date is
// relative to the answer, so only Cache-Control is exact; Expires follows
// the Date the server sends.
func setExpires(h map[string][]string, v string) {
	switch v {
	case "epoch":
		h["Expires"] = []string{"Thu, 01 Jan 1970 00:00:01 GMT"}
		h["Cache-Control"] = []string{"no-cache"}
		return
	case "max":
		h["Expires"] = []string{"Thu, 31 Dec 2037 23:55:55 GMT"}
		h["Cache-Control"] = []string{"max-age=315360000"}
		return
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return
	}
	if n < 0 {
		h["Cache-Control"] = []string{"no-cache"}
	} else {
		h["Cache-Control"] = []string{"max-age=" + v}
	}
	h["Expires"] = []string{expiresAt(n)}
}

// ApplyRequest makes the request header edits on h (a copy the caller
// owns) and returns the Host the backend gets ("" to keep it). A value
// that is no valid header value once expanded (ValidHeaderValue: $uri is
// the decoded path, so a client puts CR and LF in it with %0d%0a) is
// dropped, and counted in dropped: nginx would write it as it is, adding
// lines, or a whole request, to the head the backend reads. The header
// is then not sent at all, the client's of that name included; a dropped
// Host keeps the client's.
func ApplyRequest(edits []HeaderEdit, h map[string][]string) (host string, dropped int) {
	for _, e := range edits {
		name := textproto.CanonicalMIMEHeaderKey(e.Name)
		switch {
		case e.Kind == OpClearInput:
			clearHeader(h, e.Name)
		case len(e.Types) > 0 && !typeIn(h["Content-Type"], e.Types):
		case !e.Always && h[name] == nil:
			// more_set_input_headers -r: only replace one present.
		case !ValidHeaderValue(e.Value):
			dropped++
			if name == "Host" {
				host = ""
			} else {
				delete(h, name)
			}
		case name == "Host":
			host = e.Value
		case e.Value == "":
			delete(h, name)
		default:
			h[name] = []string{e.Value}
		}
	}
	return host, dropped
}

// ValidHeaderValue reports whether v may be sent as a header field value:
// no control byte but a tab (RFC 9110 section 5.5). A value that fails it
// is dropped rather than sent, wherever ramjet makes one.
func ValidHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// Match reports whether the location matches path, and how: exact,
// regex, or the length of its prefix.
func (l *SnippetLocation) matchPath(path string) (exact, regex bool, prefix int) {
	switch l.Match {
	case "=":
		return path == l.Path, false, -1
	case "~", "~*":
		re := l.re
		if re == nil {
			return false, false, -1
		}
		return false, re.MatchString(path), -1
	}
	if strings.HasPrefix(path, l.Path) {
		return false, false, len(l.Path)
	}
	return false, false, -1
}

// SnippetLocationFor returns the server-snippet location of vh that
// nginx would choose for path over res, the route the table chose; nil
// when the route keeps it. nginx picks an exact location first, then
// remembers the longest prefix, then tries the regular expressions in
// order (the server-snippet's come first, as ingress-nginx writes the
// snippet before its own locations) unless that prefix was "^~".
func SnippetLocationFor(vh *VirtualHost, res Result, path string) *SnippetLocation {
	if vh == nil || len(vh.SnippetLocations) == 0 {
		return nil
	}
	var best *SnippetLocation
	bestLen := -1
	for _, l := range vh.SnippetLocations {
		if exact, _, n := l.matchPath(path); exact {
			return l
		} else if n > bestLen {
			best, bestLen = l, n
		}
	}
	if r := res.Route; r != nil && r.Type == Exact {
		return nil
	}
	if best == nil || best.Match != "^~" {
		for _, l := range vh.SnippetLocations {
			if _, re, _ := l.matchPath(path); re {
				return l
			}
		}
	}
	if best == nil {
		return nil
	}
	if r := res.Route; r != nil {
		// A route's own regex (ingress-nginx's regex mode) beats a
		// prefix; a Prefix route as nginx writes it ("/p/") competes on
		// length.
		if r.Type == Regex || r.Type == Prefix && len(r.Path)+1 >= bestLen {
			return nil
		}
	}
	return best
}

// MayAnswer reports whether nginx could choose l over r for some path r
// matches, by SnippetLocationFor's rules; where the paths cannot be told
// (a regular expression either side), it answers yes. It is a warning's
// question: which Ingresses a server-snippet's location can take
// requests from.
func (l *SnippetLocation) MayAnswer(r *Route) bool {
	switch l.Match {
	case "=":
		switch r.Type {
		case Exact:
			return r.Path == l.Path
		case Prefix:
			return underPrefix(l.Path, r.Path)
		}
		return r.Regexp == nil || r.Regexp.MatchString(l.Path)
	case "~", "~*":
		if r.Type == Exact {
			return l.re == nil || l.re.MatchString(r.Path)
		}
		// Tried before any prefix route and before the route's own
		// expressions; an anchored literal start bounds what it matches.
		if r.Type != Prefix || l.re == nil || !strings.HasPrefix(l.Path, "^") {
			return true
		}
		lit, _ := l.re.LiteralPrefix()
		return underPrefix(lit, r.Path) || strings.HasPrefix(r.Path, lit)
	}
	switch r.Type {
	case Prefix:
		// The longer prefix wins, and a route's competes as nginx writes
		// it, "/p/".
		return underPrefix(l.Path, r.Path) && len(l.Path) > len(r.Path)+1
	case Regex:
		// Only "^~" keeps the route's regular expression from being tried.
		return l.Match == "^~"
	}
	return false // an exact route is chosen before any prefix
}

// underPrefix reports whether path is matched by the Prefix route key
// prefix ("" for "/"): equal to it, or below it by whole segments.
func underPrefix(path, prefix string) bool {
	return strings.HasPrefix(path, prefix) && (len(path) == len(prefix) || path[len(prefix)] == '/' || prefix == "")
}

func expiresAt(seconds int) string {
	return time.Now().Add(time.Duration(seconds) * time.Second).UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT")
}

// snippetSection is what the snippet annotations translate to: a route's
// and fallback's Snippet, and a host's server-snippet locations.
var snippetSection = section{
	name:     "snippets",
	location: []string{"Snippet"},
	host:     []string{"SnippetLocations"},
	digest: []digestPart{{
		tag: "snippets",
		hostHas: func(vh *VirtualHost) bool {
			return vh.FallbackLocation.Snippet != nil || len(vh.SnippetLocations) > 0 ||
				slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Snippet != nil })
		},
		host: func(e *encoder, vh *VirtualHost) {
			e.snippet(vh.FallbackLocation.Snippet)
			e.num(len(vh.SnippetLocations))
			for _, l := range vh.SnippetLocations {
				e.str(l.Match)
				e.str(l.Path)
				e.snippet(l.Snippet)
			}
		},
		route: func(e *encoder, r *Route) { e.snippet(r.Snippet) },
	}, {
		// Which steps are the server-snippet's joined later, under a tag of
		// its own, so tables without one keep their digest.
		tag: "snippet-server-phase",
		hostHas: func(vh *VirtualHost) bool {
			return serverSteps(vh.FallbackLocation.Snippet) > 0 ||
				slices.ContainsFunc(vh.SnippetLocations, func(l *SnippetLocation) bool { return serverSteps(l.Snippet) > 0 }) ||
				slices.ContainsFunc(vh.Routes, func(r *Route) bool { return serverSteps(r.Snippet) > 0 })
		},
		host: func(e *encoder, vh *VirtualHost) {
			e.num(serverSteps(vh.FallbackLocation.Snippet))
			for _, l := range vh.SnippetLocations {
				e.num(serverSteps(l.Snippet))
			}
		},
		route: func(e *encoder, r *Route) { e.num(serverSteps(r.Snippet)) },
	}},
	text: textParts{
		at: 90,
		fallbackLines: func(b *strings.Builder, vh *VirtualHost) {
			snippetLines(b, "    ", vh.FallbackLocation.Snippet)
			for _, l := range vh.SnippetLocations {
				b.WriteString("    snippet location " + strings.TrimSpace(l.Match+" "+strconv.Quote(l.Path)) + "\n")
				snippetLines(b, "      ", l.Snippet)
			}
		},
		routeLines: func(b *strings.Builder, _ *VirtualHost, r *Route) { snippetLines(b, "    ", r.Snippet) },
	},
}

func serverSteps(s *Snippet) int {
	if s == nil {
		return 0
	}
	return s.Server
}

func (e *encoder) snippet(s *Snippet) {
	if s == nil {
		e.flag(false)
		return
	}
	// One byte: a snippet without relative redirects encodes as before.
	e.raw([]byte{byte(1 | boolInt(s.Relative)<<1 | boolInt(s.ServerRelative)<<2)})
	e.ops(s.Ops)
	e.num(len(s.Access))
	for _, a := range s.Access {
		e.flag(a.Deny)
		e.flag(a.All)
		e.str(a.Prefix.String())
	}
}

func (e *encoder) ops(ops []SnippetOp) {
	e.num(len(ops))
	for i := range ops {
		op := &ops[i]
		e.num(int(op.Kind))
		if c := op.Cond; c != nil {
			e.flag(true)
			e.str(c.Var)
			e.str(c.Op)
			e.str(c.Operand)
		} else {
			e.flag(false)
		}
		e.ops(op.Then)
		e.num(op.Code)
		e.str(op.Name)
		e.str(op.Pattern)
		e.str(op.Value)
		e.str(op.Flag)
		e.num(len(op.Statuses))
		for _, s := range op.Statuses {
			e.num(s)
		}
		e.strs(op.Types)
		// One byte for the flags: ops without EscapeCaptures, Literal or
		// ServerOnly encode as they did before them.
		e.raw([]byte{byte(boolInt(op.Always) | boolInt(op.EscapeCaptures)<<1 | boolInt(op.Literal)<<2 | boolInt(op.ServerOnly)<<3)})
	}
}

// snippetLines writes a snippet's steps, one a line, as nginx-like text.
func snippetLines(b *strings.Builder, indent string, s *Snippet) {
	if s == nil {
		return
	}
	opLines(b, indent, s.Ops)
	if s.ServerRelative && s.Server > 0 {
		b.WriteString(indent + "snippet server relative-redirects\n")
	}
	if s.Relative && s.Server < len(s.Ops) {
		b.WriteString(indent + "snippet relative-redirects\n")
	}
	for _, a := range s.Access {
		w := "snippet allow "
		if a.Deny {
			w = "snippet deny "
		}
		if a.All {
			b.WriteString(indent + w + "all\n")
		} else {
			b.WriteString(indent + w + a.Prefix.String() + "\n")
		}
	}
}

func opLines(b *strings.Builder, indent string, ops []SnippetOp) {
	for i := range ops {
		op := &ops[i]
		b.WriteString(indent + "snippet " + opText(op) + "\n")
		if op.Kind == OpIf {
			opLines(b, indent+"  ", op.Then)
		}
	}
}

func opText(op *SnippetOp) string {
	var w []string
	switch op.Kind {
	case OpIf:
		c := op.Cond
		w = append(w, "if", "$"+c.Var)
		if c.Op != "" {
			w = append(w, c.Op, strconv.Quote(c.Operand))
		}
	case OpReturn:
		w = append(w, "return", strconv.Itoa(op.Code))
		if op.Value != "" {
			w = append(w, strconv.Quote(op.Value))
		}
		if op.EscapeCaptures {
			w = append(w, "escaping captures")
		}
	case OpRewrite:
		w = append(w, "rewrite", strconv.Quote(op.Pattern), strconv.Quote(op.Value))
		if op.Flag != "" {
			w = append(w, op.Flag)
		}
	case OpSetInput, OpSetUpstream:
		w = append(w, "set request header", op.Name, strconv.Quote(op.Value))
		if !op.Always {
			w = append(w, "if present")
		}
	case OpClearInput:
		w = append(w, "clear request header", op.Name)
	case OpExpires:
		w = append(w, "expires", op.Value)
	default:
		w = append(w, op.Kind.String(), op.Name)
		if op.Kind != OpClearHeader && op.Kind != OpHideHeader {
			w = append(w, strconv.Quote(op.Value))
		}
		if op.Always {
			w = append(w, "always")
		}
		if op.Literal {
			w = append(w, "literal")
		}
		if op.ServerOnly {
			w = append(w, "server only")
		}
	}
	if len(op.Statuses) > 0 {
		s := make([]string, len(op.Statuses))
		for i, c := range op.Statuses {
			s[i] = strconv.Itoa(c)
		}
		w = append(w, "status "+strings.Join(s, ","))
	}
	if len(op.Types) > 0 {
		w = append(w, "type "+strings.Join(op.Types, ","))
	}
	return strings.Join(w, " ")
}

// ArgValue is $arg_<name> of the query args as nginx's ngx_http_arg reads
// it: the first argument whose name is name in any ASCII case and is
// followed by '=', its value running to the next '&'. An argument without
// '=' names no value.
func ArgValue(args, name string) string {
	for kv := range strings.SplitSeq(args, "&") {
		if k, val, ok := strings.Cut(kv, "="); ok && EqualFoldASCII(k, name) {
			return val
		}
	}
	return ""
}
