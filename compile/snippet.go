package compile

import (
	"cmp"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/compile/nginxconf"
	"ramjet.dev/ramjet/match"
)

// Snippets (SPEC §11, doc §11.9): configuration-snippet and server-snippet
// are read as nginx configuration (package nginxconf), and each directive
// with a structured equivalent is translated into a match.Snippet; every
// other directive warns, naming itself and its line, and does nothing.
// Nothing a snippet says can reach a file, a script or another upstream:
// the translation only ever yields header edits, answers, URI rewrites,
// allow/deny and the settings the annotations already have.

// The warning reasons of snippets, by what ignoring the directive changes.
const (
	// SnippetIgnored: a directive ramjet does not translate, which adds
	// or tunes something under ingress-nginx (a header, a cache, a log).
	SnippetIgnored Reason = "SnippetIgnored"
	// SnippetAnswerIgnored: a directive ramjet does not translate, which
	// answers, refuses or sends requests elsewhere under ingress-nginx; or
	// a snippet ingress-nginx's annotations-risk-level refuses, with its
	// Ingress.
	SnippetAnswerIgnored Reason = "SnippetAnswerIgnored"
	// SnippetNoEffect: the snippet, or a directive, does nothing under
	// ingress-nginx either (allow-snippet-annotations off; a proxy
	// setting each ingress-nginx location sets again).
	SnippetNoEffect Reason = "SnippetNoEffect"
	// SnippetCrossesIngress: a server-snippet's return, rewrite, if or
	// location block can answer paths another Ingress (or route) of the
	// host declares, as under ingress-nginx: its author decides for them.
	SnippetCrossesIngress Reason = "SnippetCrossesIngress"
)

func init() {
	reasonSeverity[SnippetIgnored] = FeatureMissing
	reasonSeverity[SnippetAnswerIgnored] = TrafficMoves
	reasonSeverity[SnippetNoEffect] = Cosmetic
	reasonSeverity[SnippetCrossesIngress] = TrafficMoves
	registerAnnotations(map[string]annotationSpec{
		"configuration-snippet": {apply: func(v *annotationValues, key, value string) error {
			v.snippetW().location = annotationText{key, value}
			return nil
		}},
		"server-snippet": {apply: func(v *annotationValues, key, value string) error {
			v.snippetW().server = annotationText{key, value}
			return nil
		}},
	})
}

type annotationText struct{ key, value string }

// snippetValues are an Ingress's snippets and their translations.
type snippetValues struct {
	location, server annotationText
	// loc is configuration-snippet's translation; srv the server-level
	// part of server-snippet's and locs its location blocks.
	loc, srv *match.Snippet
	locs     []*match.SnippetLocation
}

func (v *annotationValues) snippetW() *snippetValues {
	if v.snippet == nil {
		v.snippet = new(snippetValues)
	}
	return v.snippet
}

// SnippetsEnabled reports whether ingress-nginx v1.15 with these settings
// applies snippet annotations: allow-snippet-annotations on, and an
// annotations-risk-level that accepts Critical annotations ("" is its
// default, High).
func (o Options) SnippetsEnabled() bool {
	return o.AllowSnippetAnnotations && strings.EqualFold(o.AnnotationsRiskLevel, "Critical")
}

// readSnippets translates the Ingress's snippets once its annotations are
// read, so the proxy settings a snippet sets join the annotations'.
func (b *builder) readSnippets(ing *ingress) {
	sv := ing.ann.snippet
	if sv == nil {
		return
	}
	for _, a := range []annotationText{sv.location, sv.server} {
		// An nginx-prefixed snippet is never read when snippets are off:
		// criticalOff warned. These are ramjet.dev/ snippets, which
		// ingress-nginx does not read.
		switch {
		case a.key == "" || strings.TrimSpace(a.value) == "":
		case !b.opts.AllowSnippetAnnotations:
			b.warn(SnippetNoEffect, ing.ref(), annotationField(a.key),
				"snippets are off (allow-snippet-annotations is false, ingress-nginx's default): the snippet does nothing, as under ingress-nginx")
		case !b.opts.SnippetsEnabled():
			level := cmp.Or(b.opts.AnnotationsRiskLevel, "High")
			b.warn(SnippetAnswerIgnored, ing.ref(), annotationField(a.key),
				"snippets are Critical-risk annotations and annotations-risk-level is "+level+": ingress-nginx refuses the whole Ingress; ramjet serves it without the snippet")
		}
	}
	if !b.opts.SnippetsEnabled() {
		return
	}
	if a := sv.location; a.key != "" {
		t := b.translateSnippet(ing, a, false)
		if sv.loc = t.snippet(b, ing, a.key); sv.loc != nil {
			// The annotation's absolute_redirect off is in the location.
			sv.loc.Relative = relativeRedirects(ing) || b.opts.RelativeRedirects
		}
	}
	if a := sv.server; a.key != "" {
		t := b.translateSnippet(ing, a, true)
		if sv.srv = t.snippet(b, ing, a.key); sv.srv != nil {
			sv.srv.Server = len(sv.srv.Ops)
			// A server-phase answer reads the server's absolute_redirect:
			// the ConfigMap key's, never an Ingress's location.
			sv.srv.ServerRelative = b.opts.RelativeRedirects
		}
		sv.locs = t.locs
	}
}

// snippetTranslation is one snippet's translation under way.
type snippetTranslation struct {
	ops    []match.SnippetOp
	access []match.AccessRule
	locs   []*match.SnippetLocation
}

func (t *snippetTranslation) snippet(b *builder, ing *ingress, key string) *match.Snippet {
	if len(t.ops) == 0 && len(t.access) == 0 {
		return nil
	}
	s, err := match.NewSnippet(match.Snippet{Ops: t.ops, Access: t.access})
	if err != nil {
		// translate checked every pattern and variable; this is a bug.
		b.warn(SnippetAnswerIgnored, ing.ref(), annotationField(key), "the snippet could not be prepared ("+err.Error()+"); ramjet does nothing instead")
		return nil
	}
	return s
}

// SnippetDirective is one directive of a snippet as ramjet reads it, for
// the migration report.
type SnippetDirective struct {
	Line int
	Name string
	// Translated: ramjet serves it. Otherwise Reason and Note say what
	// ignoring it changes and why.
	Translated bool
	Reason     Reason
	Note       string
}

// ReadSnippet lists how ramjet reads each directive of a snippet
// annotation's value (server: a server-snippet), nested ones included,
// in source order; a value that is no nginx configuration is one entry
// at the line of the error.
func ReadSnippet(value string, server bool) []SnippetDirective {
	var out []SnippetDirective
	tr := snippetReader{server: server, note: func(d SnippetDirective) { out = append(out, d) }}
	tr.read(value)
	// A block's directives are read before the block is noted.
	slices.SortStableFunc(out, func(a, b SnippetDirective) int { return a.Line - b.Line })
	return out
}

// translateSnippet translates one snippet annotation, warning for each
// directive it ignores.
func (b *builder) translateSnippet(ing *ingress, a annotationText, server bool) *snippetTranslation {
	tr := snippetReader{server: server, ing: ing, b: b, note: func(d SnippetDirective) {
		if !d.Translated {
			b.warn(d.Reason, ing.ref(), annotationField(a.key), "line "+strconv.Itoa(d.Line)+": "+d.Name+": "+d.Note)
		}
	}}
	return tr.read(a.value)
}

// snippetReader walks a snippet's directives. With b set it also applies
// the proxy settings to the Ingress.
type snippetReader struct {
	server bool
	ing    *ingress
	b      *builder
	note   func(SnippetDirective)
}

func (r *snippetReader) read(src string) *snippetTranslation {
	t := &snippetTranslation{}
	ds, err := nginxconf.Parse(src)
	if err != nil {
		// A last directive without its ";" is common in annotations, and
		// ingress-nginx's template follows the snippet with more
		// directives, which nginx then reads as its arguments; ramjet
		// reads the snippet as meant.
		if fixed, again := nginxconf.Parse(src + ";"); again == nil {
			ds, err = fixed, nil
		}
	}
	if err != nil {
		line := 1
		if e, ok := err.(*nginxconf.Error); ok {
			line = e.Line
		}
		r.note(SnippetDirective{Line: line, Name: "(syntax)", Reason: SnippetAnswerIgnored,
			Note: "the snippet is not nginx configuration (" + err.Error() + "): ingress-nginx's reload fails on it; ramjet ignores the whole snippet"})
		return t
	}
	scope := scopeLocation
	if r.server {
		scope = scopeServer
	}
	t.ops, t.access = r.block(ds, scope, t)
	return t
}

type snippetScope uint8

const (
	scopeServer snippetScope = iota
	scopeLocation
	scopeSnippetLocation // a location block in a server-snippet
	scopeIf
	scopeServerIf // an if at server level, where nginx takes fewer directives
)

// inIf reports an if block's scope, at either level.
func (s snippetScope) inIf() bool { return s == scopeIf || s == scopeServerIf }

// block translates the directives of one block.
func (r *snippetReader) block(ds []*nginxconf.Directive, scope snippetScope, t *snippetTranslation) (ops []match.SnippetOp, access []match.AccessRule) {
	for _, d := range ds {
		ok := func() {
			r.note(SnippetDirective{Line: d.Line, Name: d.Name, Translated: true})
		}
		ignore := func(reason Reason, why string) {
			r.note(SnippetDirective{Line: d.Line, Name: d.Name, Reason: reason, Note: why})
		}
		if d.HasBlock && d.Name != "if" && d.Name != "location" {
			ignore(answerChanging(d.Name), "a block ramjet does not translate; ramjet does nothing instead")
			continue
		}
		switch d.Name {
		case "if":
			op, why := r.ifOp(d, scope, t)
			if why != "" {
				ignore(SnippetAnswerIgnored, why+"; ramjet ignores the if and its block")
				continue
			}
			ok()
			inner := scopeIf
			if scope == scopeServer {
				inner = scopeServerIf
			}
			op.Then, _ = r.block(d.Block, inner, t)
			ops = append(ops, op)
		case "location":
			if scope != scopeServer {
				ignore(SnippetAnswerIgnored, "a location block is translated only at the top of a server-snippet; ramjet does nothing instead")
				continue
			}
			if l, why := r.location(d, t); why != "" {
				ignore(SnippetAnswerIgnored, why+"; ramjet does nothing instead")
			} else {
				ok()
				t.locs = append(t.locs, l)
			}
		case "allow", "deny":
			if scope.inIf() || len(d.Args) != 1 {
				ignore(SnippetAnswerIgnored, "takes one address, CIDR or all, outside if (nginx refuses it otherwise); ramjet does nothing instead")
				continue
			}
			rule, good := accessRule(d.Name == "deny", d.Args[0])
			if !good {
				ignore(SnippetAnswerIgnored, strconv.Quote(d.Args[0])+" is no address, CIDR or all; ramjet does nothing instead")
				continue
			}
			ok()
			access = append(access, rule)
		default:
			if d.Name == "proxy_set_header" && scope == scopeServer {
				ignore(SnippetNoEffect, "every location ingress-nginx writes sets proxy_set_header of its own, so nginx never inherits the server's; ramjet does nothing either")
				continue
			}
			if knob, isKnob := snippetKnobs[d.Name]; isKnob {
				r.knob(d, knob, scope, ok, ignore)
				continue
			}
			if annotation, isRewrite := snippetResponseRewrites[d.Name]; isRewrite {
				responseRewrite(d.Name, annotation, scope, ignore)
				continue
			}
			op, why := snippetOps(d, scope)
			switch {
			case why != "" && scope == scopeServerIf && locationIfOnly[d.Name]:
				// ingress-nginx cannot load the Ingress at all.
				ignore(SnippetAnswerIgnored, why)
			case why != "":
				ignore(answerChanging(d.Name), why)
			case op == nil:
				ignore(answerChanging(d.Name), "ramjet does not translate this directive and does nothing instead")
			default:
				ok()
				ops = append(ops, op...)
			}
		}
	}
	return ops, access
}

// snippetResponseRewrites are the directives ingress-nginx's template
// writes in every location from an annotation (nginx.tmpl: proxy_cookie_*
// before the configuration-snippet, proxy_redirect after it), by the
// annotation that serves them.
var snippetResponseRewrites = map[string]string{
	"proxy_redirect":      "proxy-redirect-from and proxy-redirect-to",
	"proxy_cookie_domain": "proxy-cookie-domain",
	"proxy_cookie_path":   "proxy-cookie-path",
}

// responseRewrite ignores a snippet's proxy_redirect or proxy_cookie_*,
// saying why: in the locations ingress-nginx writes, nginx refuses one
// beside the template's "off" (the annotations' default), and beside the annotation's rule it tries both,
// one list ramjet does not hold.
func responseRewrite(name, annotation string, scope snippetScope, ignore func(Reason, string)) {
	reason := SnippetIgnored
	if name == "proxy_redirect" {
		reason = SnippetAnswerIgnored
	}
	switch scope {
	case scopeServer:
		ignore(SnippetNoEffect, "ingress-nginx writes "+name+" in every location, so nginx never inherits the server's; use the annotation "+annotation)
	case scopeLocation:
		ignore(reason, "ingress-nginx writes "+name+" off in every location unless the annotation "+annotation+" sets a rule, and nginx refuses a rule beside off (\"is duplicate\"), so ingress-nginx does not load it; beside the annotation's rule nginx tries both, which ramjet does not translate: use the annotation "+annotation+" alone")
	case scopeSnippetLocation:
		ignore(reason, "ramjet does not translate it in a server-snippet's location and does nothing instead")
	default:
		ignore(reason, "nginx does not allow "+name+" in an if; ramjet does nothing instead")
	}
}

// answerChanging is the reason for ignoring a directive: one that can
// answer, refuse, reroute or run code under ingress-nginx moves traffic.
func answerChanging(name string) Reason {
	switch name {
	case "proxy_pass", "grpc_pass", "fastcgi_pass", "uwsgi_pass", "scgi_pass", "alias", "root", "include", "load_module",
		"try_files", "error_page", "set", "break", "internal", "satisfy", "auth_basic", "auth_basic_user_file",
		"auth_request", "limit_req", "limit_conn", "limit_except", "return", "rewrite", "if", "location", "echo",
		"proxy_intercept_errors", "sub_filter", "default_type", "index", "autoindex", "js_content", "perl",
		"proxy_method", "proxy_pass_request_body", "proxy_pass_request_headers", "proxy_set_body", "mirror",
		"ssl_verify_client", "valid_referers", "secure_link":
		return SnippetAnswerIgnored
	}
	if strings.Contains(name, "lua") || strings.HasPrefix(name, "modsecurity") || strings.HasPrefix(name, "js_") {
		return SnippetAnswerIgnored
	}
	return SnippetIgnored
}

// ifOp reads an if's condition: ($var), ($var = s), ($var != s), and the
// regular expression forms; file tests have no equivalent.
func (r *snippetReader) ifOp(d *nginxconf.Directive, scope snippetScope, _ *snippetTranslation) (match.SnippetOp, string) {
	if scope.inIf() {
		return match.SnippetOp{}, "nginx does not allow an if inside an if"
	}
	args := slices.Clone(d.Args)
	if len(args) == 0 || !strings.HasPrefix(args[0], "(") || !strings.HasSuffix(args[len(args)-1], ")") {
		return match.SnippetOp{}, "the condition is not in parentheses"
	}
	args[0] = args[0][1:]
	args[len(args)-1] = strings.TrimSuffix(args[len(args)-1], ")")
	args = slices.DeleteFunc(args, func(s string) bool { return s == "" })
	if len(args) == 0 || !strings.HasPrefix(args[0], "$") {
		return match.SnippetOp{}, "the condition tests files (-f, -d, -e, -x), which ramjet has none of"
	}
	c := &match.SnippetCond{Var: strings.TrimPrefix(strings.Trim(args[0], "{}"), "$")}
	c.Var = strings.Trim(c.Var, "{}")
	if err := match.SnippetVariables("$" + c.Var); err != nil {
		return match.SnippetOp{}, "the condition: " + err.Error()
	}
	switch len(args) {
	case 1:
	case 3:
		c.Op, c.Operand = args[1], args[2]
		switch c.Op {
		case "=", "!=":
		case "~", "~*", "!~", "!~*":
		default:
			return match.SnippetOp{}, "the condition's operator " + strconv.Quote(c.Op) + " is not one of = != ~ ~* !~ !~*"
		}
	default:
		return match.SnippetOp{}, "the condition is not $var, or $var, an operator and a value"
	}
	op := match.SnippetOp{Kind: match.OpIf, Cond: c}
	if _, err := match.NewSnippet(match.Snippet{Ops: []match.SnippetOp{op}}); err != nil {
		return match.SnippetOp{}, "the condition's regular expression is not one ramjet's RE2 engine reads (" + err.Error() + ")"
	}
	return op, ""
}

// location reads a server-snippet's location block.
func (r *snippetReader) location(d *nginxconf.Directive, t *snippetTranslation) (*match.SnippetLocation, string) {
	l := match.SnippetLocation{}
	switch len(d.Args) {
	case 1:
		l.Path = d.Args[0]
	case 2:
		l.Match, l.Path = d.Args[0], d.Args[1]
	default:
		return nil, "the location is not [modifier] path"
	}
	switch {
	case strings.HasPrefix(l.Path, "@"):
		return nil, "a named location is reached only by error_page or try_files"
	case l.Match != "" && l.Match != "=" && l.Match != "~" && l.Match != "~*" && l.Match != "^~":
		return nil, "the location's modifier " + strconv.Quote(l.Match) + " is not one of = ~ ~* ^~"
	}
	ops, access := r.block(d.Block, scopeSnippetLocation, t)
	if len(ops) > 0 || len(access) > 0 {
		l.Snippet = &match.Snippet{Ops: ops, Access: access, Relative: r.b != nil && r.b.opts.RelativeRedirects}
	}
	out, err := match.NewSnippetLocation(l)
	if err != nil {
		return nil, "the location's regular expression is not one ramjet's RE2 engine reads (" + err.Error() + ")"
	}
	return out, ""
}

func accessRule(deny bool, arg string) (match.AccessRule, bool) {
	if arg == "all" {
		return match.AccessRule{Deny: deny, All: true}, true
	}
	if p, err := netip.ParsePrefix(arg); err == nil {
		return match.AccessRule{Deny: deny, Prefix: p.Masked()}, true
	}
	if a, err := netip.ParseAddr(arg); err == nil {
		return match.AccessRule{Deny: deny, Prefix: netip.PrefixFrom(a, a.BitLen())}, true
	}
	return match.AccessRule{}, false
}

// locationIfOnly are the directives nginx takes in an if only inside a
// location (add_header's and expires' "if in location", headers-more's
// "location if"), not in a server's if as return, rewrite and set.
var locationIfOnly = map[string]bool{
	"add_header": true, "expires": true,
	"more_set_headers": true, "more_clear_headers": true, "more_set_input_headers": true, "more_clear_input_headers": true,
}

// snippetOps translates a header, return or rewrite directive; nil ops
// and no reason for one it does not know.
func snippetOps(d *nginxconf.Directive, scope snippetScope) ([]match.SnippetOp, string) {
	a := d.Args
	var ops []match.SnippetOp
	if scope == scopeServerIf && locationIfOnly[d.Name] {
		return nil, "nginx allows it in an if only inside a location, and refuses it in a server's if (\"is not allowed here\"), so ingress-nginx's configuration test fails; ramjet does nothing instead"
	}
	switch d.Name {
	case "more_set_headers", "more_clear_headers", "more_set_input_headers", "more_clear_input_headers":
		var statuses []int
		var types []string
		replaceOnly := false
		for len(a) > 0 && strings.HasPrefix(a[0], "-") {
			switch {
			case a[0] == "-r" && d.Name == "more_set_input_headers":
				replaceOnly, a = true, a[1:]
				continue
			case a[0] == "-s" && len(a) > 1 && !strings.HasSuffix(d.Name, "input_headers"):
				for f := range strings.FieldsSeq(a[1]) {
					n, err := strconv.Atoi(f)
					if err != nil || n < 100 || n > 999 {
						return nil, "-s " + strconv.Quote(a[1]) + " is not a list of status codes; ramjet does nothing instead"
					}
					statuses = append(statuses, n)
				}
			case a[0] == "-t" && len(a) > 1:
				types = append(types, strings.Fields(a[1])...)
			default:
				return nil, "the option " + strconv.Quote(a[0]) + " is not one headers-more reads here; ramjet does nothing instead"
			}
			a = a[2:]
		}
		if len(a) == 0 {
			return nil, "names no header; ramjet does nothing instead"
		}
		for _, h := range a {
			op := match.SnippetOp{Statuses: statuses, Types: types}
			switch d.Name {
			case "more_set_headers", "more_set_input_headers":
				name, value, found := strings.Cut(h, ":")
				if !found {
					// "Name" alone clears, as "Name:" does.
					name = h
				}
				op.Name, op.Value = strings.TrimSpace(name), strings.TrimSpace(value)
				op.Kind = match.OpSetHeader
				if d.Name == "more_set_input_headers" {
					op.Kind, op.Always = match.OpSetInput, !replaceOnly
				}
			case "more_clear_headers":
				op.Kind, op.Name = match.OpClearHeader, h
			default:
				op.Kind, op.Name = match.OpClearInput, h
			}
			if !isToken(strings.TrimSuffix(op.Name, "*")) {
				return nil, strconv.Quote(op.Name) + " is no header name; ramjet does nothing instead"
			}
			ops = append(ops, op)
		}
	case "add_header":
		if len(a) < 2 || len(a) > 3 || len(a) == 3 && a[2] != "always" {
			return nil, "takes a name, a value and optionally always; ramjet does nothing instead"
		}
		ops = append(ops, match.SnippetOp{Kind: match.OpAddHeader, Name: a[0], Value: a[1], Always: len(a) == 3})
	case "expires":
		if scope == scopeServer {
			return nil, "each ingress-nginx location sets no expires of its own, but a server-level expires is inherited only where the location sets none; ramjet reads expires per location only and does nothing instead"
		}
		if len(a) != 1 {
			return nil, "takes one time (modified and @time are not translated); ramjet does nothing instead"
		}
		switch a[0] {
		case "off":
			return []match.SnippetOp{}, ""
		case "epoch", "max":
			ops = append(ops, match.SnippetOp{Kind: match.OpExpires, Value: a[0]})
		default:
			secs, ok := nginxSeconds(a[0], true)
			if !ok {
				return nil, strconv.Quote(a[0]) + " is not a time ramjet translates (modified and @time are not); ramjet does nothing instead"
			}
			ops = append(ops, match.SnippetOp{Kind: match.OpExpires, Value: strconv.Itoa(secs)})
		}
	case "proxy_set_header":
		if len(a) != 2 {
			return nil, "takes a name and a value; ramjet does nothing instead"
		}
		if scope.inIf() {
			return nil, "nginx does not allow proxy_set_header inside if; ramjet does nothing instead"
		}

		ops = append(ops, match.SnippetOp{Kind: match.OpSetUpstream, Name: a[0], Value: a[1], Always: true})
	case "proxy_hide_header":
		if len(a) != 1 {
			return nil, "takes one name; ramjet does nothing instead"
		}
		ops = append(ops, match.SnippetOp{Kind: match.OpHideHeader, Name: a[0]})
	case "return":
		op, why := returnOp(a)
		if why != "" {
			return nil, why
		}
		ops = append(ops, op)
	case "rewrite":
		if len(a) < 2 || len(a) > 3 {
			return nil, "takes a regular expression, a replacement and optionally a flag; ramjet does nothing instead"
		}
		op := match.SnippetOp{Kind: match.OpRewrite, Pattern: a[0], Value: a[1]}
		if len(a) == 3 {
			switch a[2] {
			case "last", "break", "redirect", "permanent":
				op.Flag = a[2]
			default:
				return nil, "the flag " + strconv.Quote(a[2]) + " is not last, break, redirect or permanent; ramjet does nothing instead"
			}
		}
		ops = append(ops, op)
	default:
		return nil, ""
	}
	for _, op := range ops {
		if err := match.SnippetVariables(op.Value); err != nil {
			return nil, err.Error() + "; ramjet does nothing instead"
		}
	}
	if _, err := match.NewSnippet(match.Snippet{Ops: ops}); err != nil {
		return nil, "its regular expression is not one ramjet's RE2 engine reads (" + err.Error() + "); ramjet does nothing instead"
	}
	return ops, ""
}

// returnOp reads return code [text|URL] and return URL.
func returnOp(a []string) (match.SnippetOp, string) {
	op := match.SnippetOp{Kind: match.OpReturn}
	switch {
	case len(a) == 1 && (strings.HasPrefix(a[0], "http://") || strings.HasPrefix(a[0], "https://") || strings.HasPrefix(a[0], "$scheme")):
		op.Code, op.Value = 302, a[0]
		return op, ""
	case len(a) == 0 || len(a) > 2:
		return op, "takes a code and optionally a text or URL; ramjet does nothing instead"
	}
	code, err := strconv.Atoi(a[0])
	if err != nil || code < 100 || code > 999 {
		return op, strconv.Quote(a[0]) + " is no status code; ramjet does nothing instead"
	}
	op.Code = code
	if len(a) == 2 {
		op.Value = a[1]
	}
	return op, ""
}

// snippetKnob maps a proxy directive to the annotation with its setting.
type snippetKnob struct {
	annotation string
	// seconds: the directive takes an nginx time, the annotation seconds.
	seconds bool
}

var snippetKnobs = map[string]snippetKnob{
	"proxy_read_timeout":          {"proxy-read-timeout", true},
	"proxy_connect_timeout":       {"proxy-connect-timeout", true},
	"proxy_send_timeout":          {"proxy-send-timeout", true},
	"client_max_body_size":        {"proxy-body-size", false},
	"client_body_buffer_size":     {"client-body-buffer-size", false},
	"proxy_request_buffering":     {"proxy-request-buffering", false},
	"proxy_next_upstream_tries":   {"proxy-next-upstream-tries", false},
	"proxy_buffer_size":           {"proxy-buffer-size", false},
	"proxy_buffering":             {"proxy-buffering", false},
	"proxy_max_temp_file_size":    {"proxy-max-temp-file-size", false},
	"proxy_busy_buffers_size":     {"proxy-busy-buffers-size", false},
	"proxy_http_version":          {"proxy-http-version", false},
	"proxy_next_upstream_timeout": {"proxy-next-upstream-timeout", true},
}

// knob applies a proxy directive as its annotation would be applied,
// unless the Ingress sets that annotation itself.
func (r *snippetReader) knob(d *nginxconf.Directive, k snippetKnob, scope snippetScope, ok func(), ignore func(Reason, string)) {
	switch {
	case scope == scopeServer:
		ignore(SnippetNoEffect, "ingress-nginx sets it again in every location it writes, so at server level it changes nothing there either")
		return
	case scope != scopeLocation:
		ignore(SnippetIgnored, "ramjet applies it only at the top of a configuration-snippet; ramjet does nothing instead")
		return
	case len(d.Args) != 1:
		ignore(SnippetIgnored, "takes one value; ramjet does nothing instead")
		return
	}
	spec := knownAnnotations[k.annotation]
	if spec.apply == nil {
		ignore(SnippetIgnored, "its annotation "+k.annotation+" is not implemented in this version of ramjet; ramjet does nothing instead")
		return
	}
	value := d.Args[0]
	if k.seconds {
		secs, good := nginxSeconds(value, false)
		if !good {
			ignore(SnippetIgnored, strconv.Quote(value)+" is not an nginx time; ramjet does nothing instead")
			return
		}
		value = strconv.Itoa(secs)
	}
	// The reader, with no Ingress, applies to a scratch set of values:
	// whether the value is refused is the annotation's decision either way.
	into := &annotationValues{}
	if r.ing != nil {
		anns := r.ing.obj.Annotations
		if _, set := anns[NginxPrefix+k.annotation]; set {
			ignore(SnippetNoEffect, "the annotation "+NginxPrefix+k.annotation+" sets it too (nginx would refuse the duplicate); the annotation's value applies")
			return
		}
		if _, set := anns[NativePrefix+k.annotation]; set {
			ignore(SnippetNoEffect, "the annotation "+NativePrefix+k.annotation+" sets it too; the annotation's value applies")
			return
		}
		into = &r.ing.ann
	}
	if err := spec.apply(into, NginxPrefix+k.annotation, value); err != nil {
		ignore(SnippetIgnored, "as "+k.annotation+": "+err.Error())
		return
	}
	ok()
}

// nginxSeconds reads an nginx time ("30", "30s", "1m30s", "2h", "1d")
// in whole seconds, rounding milliseconds up; negative only with signed
// (expires).
func nginxSeconds(s string, signed bool) (int, bool) {
	neg := false
	if signed && strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	if s == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		if n > math.MaxInt64/int(time.Second) {
			return 0, false
		}
		if neg {
			n = -n
		}
		return n, true
	}
	units := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour,
		"d": 24 * time.Hour, "w": 7 * 24 * time.Hour, "M": 30 * 24 * time.Hour, "y": 365 * 24 * time.Hour}
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		j := i
		for j < len(s) && (s[j] < '0' || s[j] > '9') {
			j++
		}
		n, err := strconv.Atoi(s[:i])
		u, known := units[s[i:j]]
		// Past a time.Duration's ~292 years the sum would wrap around to
		// some other time (and so would the Expires date of a plain number).
		if err != nil || !known || n > 1<<30 || time.Duration(n) > (math.MaxInt64-total)/u {
			return 0, false
		}
		total += time.Duration(n) * u
		s = s[j:]
	}
	secs := int(total / time.Second)
	if total%time.Second != 0 {
		secs++
	}
	if neg {
		secs = -secs
	}
	return secs, true
}

// applySnippets puts the snippets' translations on the hosts and routes:
// a host's server-snippet is the first in Ingress order among the
// Ingresses naming it (ingress-nginx ignores the others, warning), its
// server-level steps run before each location's own, and its location
// blocks join the host.
func (b *builder) applySnippets() {
	if !b.opts.SnippetsEnabled() {
		return
	}
	byKey := map[string]*ingress{}
	server := map[*vhost]*ingress{}
	for _, ing := range b.ingresses {
		byKey[ing.obj.Namespace+"/"+ing.obj.Name] = ing
		sv := ing.ann.snippet
		if sv == nil || sv.server.key == "" || strings.TrimSpace(sv.server.value) == "" {
			continue
		}
		for _, rh := range ing.rules {
			v := rh.vhost
			if v == nil {
				continue
			}
			if first, taken := server[v]; taken && first != ing {
				b.warn(SnippetNoEffect, ing.ref(), annotationField(sv.server.key),
					hostLabel(v.vh.Name)+": the server-snippet of Ingress "+first.name()+" applies to this host, as ingress-nginx takes the first; this one does nothing there")
				continue
			}
			server[v] = ing
		}
	}
	locOf := func(ing *ingress) *match.Snippet {
		if ing == nil || ing.ann.snippet == nil {
			return nil
		}
		return ing.ann.snippet.loc
	}
	for _, v := range b.vhostOrder {
		var srv *match.Snippet
		if ing := server[v]; ing != nil {
			srv = ing.ann.snippet.srv
			// A location block runs the server's steps before its own.
			for _, l := range ing.ann.snippet.locs {
				joined := *l
				joined.Snippet = joinSnippets(srv, l.Snippet)
				v.vh.SnippetLocations = append(v.vh.SnippetLocations, &joined)
			}
		}
		for _, r := range v.vh.Routes {
			loc := r.Snippet // an HTTPRoute's header filters (§20), never an Ingress's of its name
			if r.Source.Kind == "" {
				loc = locOf(byKey[r.Source.Namespace+"/"+r.Source.Name])
			}
			r.Snippet = joinSnippets(srv, loc)
		}
		v.vh.FallbackLocation.Snippet = joinSnippets(srv, locOf(v.settingsFrom))
		if ing := server[v]; ing != nil {
			b.warnCrossings(ing, v)
		}
	}
}

// warnCrossings warns SnippetCrossesIngress once for each other object
// whose paths on v the server-snippet of ing can answer: with a return,
// rewrite or if of its server level, which run before every location, or
// with a location block nginx may choose over that object's path.
func (b *builder) warnCrossings(ing *ingress, v *vhost) {
	sv := ing.ann.snippet
	var kinds []string // the server level's steps that can answer or reroute
	if sv.srv != nil {
		for _, op := range sv.srv.Ops {
			if k := op.Kind.String(); (op.Kind == match.OpReturn || op.Kind == match.OpRewrite || op.Kind == match.OpIf) && !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
	}
	var others []string
	why := map[string][]string{}
	for _, r := range v.vh.Routes {
		src := r.Source
		if src.Kind == "" && src.Namespace == ing.obj.Namespace && src.Name == ing.obj.Name || src.Name == "" {
			continue
		}
		obj := cmp.Or(src.Kind, "Ingress") + " " + src.Ingress()
		var what []string
		if len(kinds) > 0 {
			what = append(what, "server-level "+strings.Join(kinds, ", "))
		}
		for _, l := range sv.locs {
			if l.MayAnswer(r) {
				what = append(what, "location "+strings.TrimSpace(l.Match+" "+l.Path))
			}
		}
		if len(what) == 0 {
			continue
		}
		if _, seen := why[obj]; !seen {
			others = append(others, obj)
		}
		for _, w := range what {
			if !slices.Contains(why[obj], w) {
				why[obj] = append(why[obj], w)
			}
		}
	}
	slices.Sort(others)
	for _, obj := range others {
		b.warn(SnippetCrossesIngress, ing.ref(), annotationField(sv.server.key),
			hostLabel(v.vh.Name)+": the server-snippet can answer paths "+obj+" declares ("+strings.Join(why[obj], "; ")+
				"), as under ingress-nginx: this Ingress decides requests meant for the other's backend and policies")
	}
}

// joinSnippets is the server's steps, then the location's; the access
// rules likewise (nginx inherits the server's only where the location has
// none).
func joinSnippets(srv, loc *match.Snippet) *match.Snippet {
	switch {
	case srv == nil:
		return loc
	case loc == nil:
		return srv
	}
	// add_header and proxy_hide_header are inherited only by a location
	// with none of its own (ngx_http_headers_module, ngx_http_proxy_module);
	// headers-more's directives add to the server's. The server's stay
	// for the answers of its own rewrite phase (ServerOnly).
	ops := srv.Ops
	for _, k := range []match.SnippetKind{match.OpAddHeader, match.OpHideHeader} {
		if slices.ContainsFunc(loc.Ops, func(op match.SnippetOp) bool { return op.Kind == k }) {
			ops = slices.Clone(ops)
			for i := range ops {
				if ops[i].Kind == k {
					ops[i].ServerOnly = true
				}
			}
		}
	}
	out := &match.Snippet{Ops: slices.Concat(ops, loc.Ops), Server: len(ops), Access: loc.Access,
		Relative: loc.Relative, ServerRelative: srv.ServerRelative}
	if len(out.Access) == 0 {
		out.Access = srv.Access
	}
	s, _ := match.NewSnippet(*out)
	return s
}
