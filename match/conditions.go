package match

import (
	"cmp"
	"errors"
	"net/textproto"
	"net/url"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"ramjet.dev/ramjet/match/vars"
)

// Conditions are what a request must carry besides its path for a route to
// match: the Gateway API's HTTPRoute method, header and query parameter
// matches (SPEC §20). A route with conditions that a request does not meet
// is passed over as if its path had not matched, and the lookup goes on to
// the next candidate: another route of the same key, then the shorter
// keys, then the fallback. Routes of one key are tried in the Gateway
// API's order: a method match first, then more header matches, then more
// query parameter matches, then Order. Build with NewConditions; New
// prepares a literal the same way.
type Conditions struct {
	// Method is the request method that matches; "" matches any.
	Method string
	// Headers and Query must all match. Header names are matched without
	// regard to case, query parameter names exactly.
	Headers, Query []ValueMatch

	ready bool
	// inline holds Headers and Query when they are few, so checking them
	// reads this one object rather than chasing two more pointers.
	inline [inlineValues]ValueMatch
}

// inlineValues is how many conditions a Conditions holds in itself.
const inlineValues = 3

// ValueMatch is one header or query parameter condition: the first value
// of Name equals Value, or with Regex matches it as an RE2 pattern
// (unanchored, as the Gateway API's RegularExpression). A header sent
// several times is matched as its values joined with ", ".
type ValueMatch struct {
	Name, Value string
	Regex       bool

	re *regexp.Regexp
	// lits, for a pattern anchored at both ends that matches a few
	// strings only (^(red|blue)$), are those strings: a set lookup then
	// stands in for the regex engine (finiteMatches).
	lits []string
}

// matchValue matches a value that was found: the pattern's strings, the
// pattern, or the exact value.
func (v *ValueMatch) matchValue(s string) bool {
	switch {
	case v.lits != nil:
		return slices.Contains(v.lits, s)
	case v.re != nil:
		return v.re.MatchString(s)
	}
	return s == v.Value
}

// Request is what conditions are matched against: the method, the headers
// with canonical names (an *http.Request's Header), the query as received,
// still escaped, and the Host line (an *http.Request's Host), which a
// condition on the header Host reads: net/http keeps it out of Header.
type Request struct {
	Method string
	Header map[string][]string
	Query  string
	Host   string
}

// NewConditions checks c and compiles its patterns; header names become
// canonical. Duplicate names keep their first condition, as the Gateway
// API asks.
func NewConditions(c Conditions) (*Conditions, error) {
	out := &Conditions{Method: c.Method, ready: true}
	hs, err := prepareValues(c.Headers, true)
	if err != nil {
		return nil, &fieldError{"Headers", err}
	}
	qs, err := prepareValues(c.Query, false)
	if err != nil {
		return nil, &fieldError{"Query", err}
	}
	out.Headers, out.Query = hs, qs
	if n := len(hs); n+len(qs) <= inlineValues {
		copy(out.inline[:], hs)
		copy(out.inline[n:], qs)
		out.Headers, out.Query = nil, nil
		if n > 0 {
			out.Headers = out.inline[:n:n]
		}
		if len(qs) > 0 {
			out.Query = out.inline[n : n+len(qs) : n+len(qs)]
		}
	}
	return out, nil
}

func prepareValues(in []ValueMatch, header bool) ([]ValueMatch, error) {
	var out []ValueMatch
	for _, v := range in {
		if v.Name == "" {
			return nil, errors.New("a condition without a name")
		}
		if header {
			v.Name = textproto.CanonicalMIMEHeaderKey(v.Name)
		}
		if slices.ContainsFunc(out, func(o ValueMatch) bool { return o.Name == v.Name }) {
			continue
		}
		v.re, v.lits = nil, nil
		if v.Regex {
			re, err := regexp.Compile(v.Value)
			if err != nil {
				return nil, errors.New(strconv.Quote(v.Name) + ": " + err.Error())
			}
			v.re = re
			v.lits = finiteMatches(v.Value)
		}
		out = append(out, v)
	}
	return out, nil
}

// Matches reports whether q meets every condition; a nil q meets none but
// an empty set.
func (c *Conditions) Matches(q *Request) bool {
	if c == nil {
		return true
	}
	if q == nil {
		return c.Method == "" && len(c.Headers) == 0 && len(c.Query) == 0
	}
	if c.Method != "" && c.Method != q.Method {
		return false
	}
	for i := range c.Headers {
		h := &c.Headers[i]
		v, ok := vars.Header(q.Header, q.Host, h.Name)
		if !ok || !h.matchValue(v) {
			return false
		}
	}
	for i := range c.Query {
		if !c.Query[i].matchQuery(q.Query) {
			return false
		}
	}
	return true
}

// matchQuery finds the first parameter named v.Name in the escaped query
// and matches its value, decoding as it compares so an exact match does
// not allocate.
func (v *ValueMatch) matchQuery(query string) bool {
	var pattern *ValueMatch
	if v.Regex {
		pattern = v
	}
	return queryMatches(query, v.Name, v.Value, pattern)
}

// queryMatches is matchQuery for the parameter name: its value equals
// value, or matches pattern when one is given.
func queryMatches(query, name, value string, pattern *ValueMatch) bool {
	return queryNameMatches(query, name, pairName(name), value, pattern)
}

// pairName reports whether name may be a pair's name as written: one
// holding '=' or '&' is not.
func pairName(name string) bool {
	return strings.IndexByte(name, '=') < 0 && strings.IndexByte(name, '&') < 0
}

// queryNameMatches is queryMatches given pairName(name).
func queryNameMatches(query, name string, pair bool, value string, pattern *ValueMatch) bool {
	if strings.IndexByte(query, '%') < 0 && strings.IndexByte(query, '+') < 0 {
		// Nothing to decode: names and values compare as written.
		if !pair {
			return false
		}
		val, ok := plainQueryParam(query, name)
		if !ok {
			return false
		}
		if pattern == nil {
			return val == value
		}
		return pattern.matchValue(val)
	}
	val, ok := queryParam(query, name)
	return ok && paramMatches(val, value, pattern)
}

// plainQueryParam is queryParam for a query without '%' or '+' and a
// name without '=' or '&' (pairName): a pair is the parameter when it
// begins with name and then '=', '&' or its end.
func plainQueryParam(query, name string) (string, bool) {
	for query != "" {
		if len(query) >= len(name) && query[:len(name)] == name {
			rest := query[len(name):]
			if rest == "" || rest[0] == '&' {
				return "", true
			}
			if rest[0] == '=' {
				val := rest[1:]
				if j := strings.IndexByte(val, '&'); j >= 0 {
					val = val[:j]
				}
				return val, true
			}
		}
		j := strings.IndexByte(query, '&')
		if j < 0 {
			break
		}
		query = query[j+1:]
	}
	return "", false
}

// queryParam is the value, still escaped, of the first parameter of the
// escaped query whose name decodes to name ('+' to space, %XX; a
// malformed escape matches no name). One pass over the query, without
// allocating.
func queryParam(query, name string) (string, bool) {
	for len(query) > 0 {
		// The pair's name ends at the first '=' or '&'.
		i, escaped := 0, false
		for ; i < len(query); i++ {
			c := query[i]
			if c == '=' || c == '&' {
				break
			}
			if c == '%' || c == '+' {
				escaped = true
			}
		}
		n := query[:i]
		found := n == name
		if escaped {
			found = unescapedEqual(n, name)
		}
		val := ""
		query = query[i:]
		if len(query) > 0 && query[0] == '=' {
			val = query[1:]
			if j := strings.IndexByte(val, '&'); j >= 0 {
				val, query = val[:j], val[j:]
			} else {
				query = ""
			}
		}
		if found {
			return val, true
		}
		if len(query) > 0 { // at the '&'
			query = query[1:]
		}
	}
	return "", false
}

// paramMatches matches a query parameter's value, still escaped: it
// decodes to value, or, when a pattern is given, matches it.
func paramMatches(val, value string, pattern *ValueMatch) bool {
	if pattern == nil {
		return unescapedEqual(val, value)
	}
	if strings.ContainsAny(val, "%+") {
		d, err := url.QueryUnescape(val)
		if err != nil {
			return false
		}
		val = d
	}
	return pattern.matchValue(val)
}

// maxFiniteMatches bounds the strings finiteMatches lists.
const maxFiniteMatches = 32

// finiteMatches lists every string an RE2 pattern matches when it is
// anchored at both ends (^…$, \A…\z) and matches at most
// maxFiniteMatches strings, built of literals, alternations, groups and
// optional parts without case folding; otherwise nil.
func finiteMatches(pattern string) []string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return nil
	}
	first, last := re.Sub[0].Op, re.Sub[len(re.Sub)-1].Op
	if first != syntax.OpBeginText || last != syntax.OpEndText {
		return nil
	}
	out, ok := finiteStrings(&syntax.Regexp{Op: syntax.OpConcat, Sub: re.Sub[1 : len(re.Sub)-1]})
	if !ok {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// finiteStrings lists the strings re matches, if it is a finite language
// of at most maxFiniteMatches strings without case folding.
func finiteStrings(re *syntax.Regexp) ([]string, bool) {
	if re.Flags&syntax.FoldCase != 0 {
		return nil, false
	}
	switch re.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		// U+FFFD also matches an invalid byte, which a string compare
		// would not.
		if slices.Contains(re.Rune, utf8.RuneError) {
			return nil, false
		}
		return []string{string(re.Rune)}, true
	case syntax.OpCapture:
		return finiteStrings(re.Sub[0])
	case syntax.OpQuest:
		s, ok := finiteStrings(re.Sub[0])
		return append([]string{""}, s...), ok && len(s) < maxFiniteMatches
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			s, ok := finiteStrings(sub)
			if !ok || len(out)+len(s) > maxFiniteMatches {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			s, ok := finiteStrings(sub)
			if !ok || len(out)*len(s) > maxFiniteMatches {
				return nil, false
			}
			var prod []string
			for _, a := range out {
				for _, b := range s {
					prod = append(prod, a+b)
				}
			}
			out = prod
		}
		return out, true
	case syntax.OpCharClass:
		var out []string
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(out) == maxFiniteMatches || r == utf8.RuneError {
					return nil, false
				}
				out = append(out, string(r))
			}
		}
		return out, true
	}
	return nil, false
}

// unescapedEqual reports whether the query component enc decodes ('+' to
// space, %XX) to want; malformed escapes never match.
func unescapedEqual(enc, want string) bool {
	j := 0
	for i := 0; i < len(enc); i++ {
		c := enc[i]
		switch c {
		case '+':
			c = ' '
		case '%':
			if i+2 >= len(enc) {
				return false
			}
			hi, ok1 := unhex(enc[i+1])
			lo, ok2 := unhex(enc[i+2])
			if !ok1 || !ok2 {
				return false
			}
			c, i = hi<<4|lo, i+2
		}
		if j >= len(want) || want[j] != c {
			return false
		}
		j++
	}
	return j == len(want)
}

// compareConditions orders routes of one key by the Gateway API's
// precedence: a method match first, then more header matches, then more
// query parameter matches; routes without conditions come last.
func compareConditions(a, b *Conditions) int {
	var am, bm, ah, bh, aq, bq int
	if a != nil {
		am, ah, aq = boolInt(a.Method != ""), len(a.Headers), len(a.Query)
	}
	if b != nil {
		bm, bh, bq = boolInt(b.Method != ""), len(b.Headers), len(b.Query)
	}
	return cmp.Or(cmp.Compare(bm, am), cmp.Compare(bh, ah), cmp.Compare(bq, aq))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sameConditions reports conditions that match the same requests as
// written: such routes of one key are duplicates.
func sameConditions(a, b *Conditions) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Method == b.Method && slices.EqualFunc(a.Headers, b.Headers, sameValue) && slices.EqualFunc(a.Query, b.Query, sameValue)
}

func sameValue(a, b ValueMatch) bool {
	return a.Name == b.Name && a.Value == b.Value && a.Regex == b.Regex
}

// conditionsSection is the route's method, header and query parameter
// matches.
var conditionsSection = section{
	name:  "request-conditions",
	route: []string{"When"},
	digest: []digestPart{{
		tag: "request-conditions",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.When != nil })
		},
		route: func(e *encoder, r *Route) {
			e.flag(r.When != nil)
			if c := r.When; c != nil {
				e.str(c.Method)
				for _, vs := range [][]ValueMatch{c.Headers, c.Query} {
					e.num(len(vs))
					for _, v := range vs {
						e.str(v.Name)
						e.str(v.Value)
						e.flag(v.Regex)
					}
				}
			}
		},
	}},
	text: textParts{
		at: 15, // right after the route's own line, before what it does
		routeSuffix: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			b.WriteString(conditionsText(r.When))
		},
	},
}

// conditionsText is " when method=GET header:Version=two query:q~^a",
// "" for none.
func conditionsText(c *Conditions) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(" when")
	if c.Method != "" {
		b.WriteString(" method=" + c.Method)
	}
	for _, p := range []struct {
		kind string
		vs   []ValueMatch
	}{{"header", c.Headers}, {"query", c.Query}} {
		for _, v := range p.vs {
			op := "="
			if v.Regex {
				op = "~"
			}
			b.WriteString(" " + p.kind + ":" + v.Name + op + strconv.Quote(v.Value))
		}
	}
	return b.String()
}
