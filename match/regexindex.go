package match

import (
	"regexp/syntax"
	"strings"
	"time"
	"unicode/utf8"
)

// RegexBudget bounds the time one request spends matching regex routes,
// however many its host has (SPEC §13). Past it the request is unmatched
// and answers 404: a host's regexes cannot slow down the whole server.
const RegexBudget = 50 * time.Millisecond

// regexIndexMin is the number of regex routes from which a host gets a
// prefix index; below it trying each pattern is as fast.
const regexIndexMin = 32

// literalPrefix returns the ASCII-lower-cased literal text every match of
// re must begin with ("" when there is none), for the prefix index. re is
// the parsed "(?i)^(?:pattern)". Matching folds ASCII case only (see
// asciiFoldInput), so comparing lower-cased ASCII is exact; the prefix
// stops at the first non-ASCII rune.
func literalPrefix(re *syntax.Regexp) string {
	var b strings.Builder
	appendPrefix(&b, re)
	return b.String()
}

// appendPrefix appends re's literal prefix and reports whether re is
// entirely literal, so that what follows it extends the prefix.
func appendPrefix(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginText, syntax.OpEmptyMatch:
		return true
	case syntax.OpCapture:
		return appendPrefix(b, re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !appendPrefix(b, sub) {
				return false
			}
		}
		return true
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r >= utf8.RuneSelf {
				return false
			}
			b.WriteByte(lowerByte(byte(r)))
		}
		return true
	}
	return false
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// regexIndex finds the regex routes a path can match by their literal
// prefixes: a byte trie over the lower-cased prefixes, each node listing
// (in controller order) the routes whose prefix ends there. A lookup walks
// the path down the trie and tries only the routes it collects.
type regexIndex struct {
	root trieNode
}

type trieNode struct {
	routes   []int32 // indexes into the host's regex routes, ascending
	children map[byte]*trieNode
}

func newRegexIndex(routes []*Route) *regexIndex {
	x := &regexIndex{}
	for i, r := range routes {
		n := &x.root
		for j := 0; j < len(r.Regexp.prefix); j++ {
			c := r.Regexp.prefix[j]
			if n.children == nil {
				n.children = make(map[byte]*trieNode)
			}
			next := n.children[c]
			if next == nil {
				next = &trieNode{}
				n.children[c] = next
			}
			n = next
		}
		n.routes = append(n.routes, int32(i))
	}
	return x
}

// maxMergedLists bounds the route lists merged on the stack; a path along
// which more trie nodes list routes is matched by trying every route.
const maxMergedLists = 16

// regexOutcome is what matching a path against a host's regex routes
// found: the first route that matched, whether any match timed out, and
// whether the budget ran out first.
type regexOutcome struct {
	route     *Route
	timedOut  bool
	exhausted bool
}

// matchRegexRoutes tries the host's regex routes in controller order (only
// those the prefix index allows, if the host has one) within RegexBudget.
func matchRegexRoutes(routes []*Route, idx *regexIndex, path string, q *Request) regexOutcome {
	m := regexMatcher{path: asciiFoldInput(path), raw: path, start: time.Now()}
	if idx == nil {
		for _, r := range routes {
			if m.try(r, q) {
				return m.out
			}
		}
		return m.out
	}
	var lists [maxMergedLists][]int32
	k := 0
	n := &idx.root
	for i := 0; n != nil; i++ {
		if len(n.routes) > 0 {
			if k == len(lists) {
				return matchRegexRoutes(routes, nil, m.raw, q)
			}
			lists[k] = n.routes
			k++
		}
		if i == len(path) || n.children == nil {
			break
		}
		n = n.children[lowerByte(path[i])]
	}
	// Merge the ascending lists, so routes are tried in controller order.
	for {
		best := -1
		for j := 0; j < k; j++ {
			if len(lists[j]) > 0 && (best < 0 || lists[j][0] < lists[best][0]) {
				best = j
			}
		}
		if best < 0 {
			return m.out
		}
		r := routes[lists[best][0]]
		lists[best] = lists[best][1:]
		if m.try(r, q) {
			return m.out
		}
	}
}

// regexMatcher tries routes one by one against a path and keeps the time.
type regexMatcher struct {
	path  string // passed through asciiFoldInput
	raw   string // as received, for case-sensitive patterns
	start time.Time
	tried int
	out   regexOutcome
}

// try reports whether the search is over: r matched or the budget ran out.
// The clock is read after every backtracking match and every 32 linear
// ones, which take about a microsecond each.
// A route whose conditions q does not meet counts as not matching.
func (m *regexMatcher) try(r *Route, q *Request) bool {
	path := m.path
	if r.Regexp.caseSensitive {
		path = m.raw
	}
	ok, timedOut := r.Regexp.match(path)
	if ok && (r.When == nil || r.When.Matches(q)) {
		m.out.route = r
		return true
	}
	m.out.timedOut = m.out.timedOut || timedOut
	m.tried++
	if r.Regexp.linear == nil || m.tried%32 == 0 {
		if time.Since(m.start) >= RegexBudget {
			m.out.exhausted = true
			return true
		}
	}
	return false
}
