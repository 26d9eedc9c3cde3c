package match

import (
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Case-insensitive matching folds ASCII letters only, as nginx's PCRE
// without UTF mode does (SPEC §13): "é" is not "É", "ſ" is not "s". Both
// engines fold Unicode when asked to ignore case, so neither is asked:
// the pattern is rewritten to spell out the ASCII folds itself, on the
// parse tree for Go's engine (foldASCII) and on the text for regexp2
// (foldASCIIText). A pattern that turns case folding off inside ("(?-i)")
// is compiled with the engine's own folding instead, which keeps that
// scope, at the cost of Unicode folding elsewhere in it (documented, §19).

// foldASCII returns re, parsed case-sensitive, with every ASCII letter
// matching both cases: literals get the FoldCase flag on their ASCII runs
// only, character classes gain the other case of their ASCII letters.
func foldASCII(re *syntax.Regexp) *syntax.Regexp {
	switch re.Op {
	case syntax.OpLiteral:
		return foldLiteral(re)
	case syntax.OpCharClass:
		re.Rune = foldClass(re.Rune)
		return re
	}
	for i, sub := range re.Sub {
		re.Sub[i] = foldASCII(sub)
	}
	return re
}

// foldLiteral splits a literal into runs of ASCII runes, which fold, and
// runs of other runes, which do not.
func foldLiteral(re *syntax.Regexp) *syntax.Regexp {
	var parts []*syntax.Regexp
	for rs := re.Rune; len(rs) > 0; {
		ascii := rs[0] < utf8.RuneSelf
		n := 1
		for n < len(rs) && (rs[n] < utf8.RuneSelf) == ascii {
			n++
		}
		flags := re.Flags &^ syntax.FoldCase
		if ascii {
			flags |= syntax.FoldCase
		}
		parts = append(parts, &syntax.Regexp{Op: syntax.OpLiteral, Flags: flags, Rune: rs[:n:n]})
		rs = rs[n:]
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags &^ syntax.FoldCase, Sub: parts}
}

// foldClass adds the other case of each ASCII letter in the class ranges
// (lo, hi pairs). The parser stores a negated class as its complement,
// which reaches unicode.MaxRune: that one is folded as the class it
// negates, so "[^a]" excludes "A" too, as PCRE's caseless [^a] does.
func foldClass(ranges []rune) []rune {
	if n := len(ranges); n > 0 && ranges[n-1] == unicode.MaxRune {
		return complement(addASCIIFolds(complement(ranges)))
	}
	return addASCIIFolds(ranges)
}

func addASCIIFolds(ranges []rune) []rune {
	out := append([]rune(nil), ranges...)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if l, h := max(lo, 'A'), min(hi, 'Z'); l <= h {
			out = append(out, l+('a'-'A'), h+('a'-'A'))
		}
		if l, h := max(lo, 'a'), min(hi, 'z'); l <= h {
			out = append(out, l-('a'-'A'), h-('a'-'A'))
		}
	}
	return normalizeRanges(out)
}

// normalizeRanges sorts and merges rune ranges.
func normalizeRanges(r []rune) []rune {
	type span struct{ lo, hi rune }
	spans := make([]span, 0, len(r)/2)
	for i := 0; i+1 < len(r); i += 2 {
		spans = append(spans, span{r[i], r[i+1]})
	}
	// Insertion sort: classes are short.
	for i := 1; i < len(spans); i++ {
		for j := i; j > 0 && spans[j].lo < spans[j-1].lo; j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	out := r[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && s.lo <= out[n-1]+1 {
			out[n-1] = max(out[n-1], s.hi)
			continue
		}
		out = append(out, s.lo, s.hi)
	}
	return out
}

// complement returns the runes not in the sorted, merged ranges.
func complement(r []rune) []rune {
	var out []rune
	next := rune(0)
	for i := 0; i+1 < len(r); i += 2 {
		if r[i] > next {
			out = append(out, next, r[i]-1)
		}
		next = r[i+1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, next, unicode.MaxRune)
	}
	return out
}

// foldASCIIText rewrites a pattern in regexp2's (.NET) syntax so that,
// compiled without IgnoreCase, each ASCII letter matches both cases:
// "a" becomes "[aA]" outside a class, and a class gains the other case of
// its letters and letter ranges ("[^a-c]" becomes "[^a-cA-C]", which
// excludes both, as PCRE's caseless class does). Escapes, group names,
// inline options, \p{...} and \k<...> are copied as they are.
func foldASCIIText(expr string) string {
	var b strings.Builder
	b.Grow(len(expr) * 2)
	inClass := false
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '\\':
			n := escapeLen(expr[i:])
			b.WriteString(expr[i : i+n])
			i += n
		case inClass && c == ']':
			inClass = false
			b.WriteByte(c)
			i++
		case inClass:
			if isASCIILetter(c) && i+2 < len(expr) && expr[i+1] == '-' && expr[i+2] != ']' && expr[i+2] != '\\' && expr[i+2] < utf8.RuneSelf {
				lo, hi := c, expr[i+2]
				b.WriteString(expr[i : i+3])
				for _, r := range otherCaseRanges(lo, hi) {
					b.WriteString(r)
				}
				i += 3
				continue
			}
			b.WriteByte(c)
			if isASCIILetter(c) {
				b.WriteByte(c ^ 0x20)
			}
			i++
		case c == '[':
			inClass = true
			b.WriteByte(c)
			i++
			if i < len(expr) && expr[i] == '^' {
				b.WriteByte('^')
				i++
			}
			if i < len(expr) && expr[i] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == '(' && i+1 < len(expr) && expr[i+1] == '?':
			n := groupPrefixLen(expr[i:])
			b.WriteString(expr[i : i+n])
			i += n
		case c == '{':
			// A quantifier's counts hold no letters; a '{' that is not one
			// is a literal without letters too.
			b.WriteByte(c)
			i++
		case isASCIILetter(c):
			b.WriteByte('[')
			b.WriteByte(c)
			b.WriteByte(c ^ 0x20)
			b.WriteByte(']')
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// otherCaseRanges is the other case of the letters in lo-hi, as class
// ranges.
func otherCaseRanges(lo, hi byte) []string {
	var out []string
	if l, h := max(lo, 'A'), min(hi, 'Z'); l <= h {
		out = append(out, string([]byte{l + 32, '-', h + 32}))
	}
	if l, h := max(lo, 'a'), min(hi, 'z'); l <= h {
		out = append(out, string([]byte{l - 32, '-', h - 32}))
	}
	return out
}

// escapeLen is the length of the escape at the start of s ("\\..."), so
// that its letters are copied as they are.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	until := func(close byte) int {
		if i := strings.IndexByte(s[2:], close); i >= 0 {
			return 2 + i + 1
		}
		return len(s)
	}
	switch s[1] {
	case 'p', 'P':
		if len(s) > 2 && s[2] == '{' {
			return until('}')
		}
	case 'k':
		if len(s) > 2 && s[2] == '<' {
			return until('>')
		}
		if len(s) > 2 && s[2] == '\'' {
			return 3 + strings.IndexByte(s[3:], '\'') + 1
		}
	case 'x':
		return min(4, len(s))
	case 'u':
		return min(6, len(s))
	case 'c':
		return min(3, len(s))
	}
	_, size := utf8.DecodeRuneInString(s[1:])
	return 1 + size
}

// groupPrefixLen is the length of a group construct's head at the start
// of s ("(?" and what follows up to where the group's pattern starts), so
// that names and inline options are copied as they are.
func groupPrefixLen(s string) int {
	if len(s) < 3 {
		return len(s)
	}
	switch c := s[2]; {
	case c == ':' || c == '=' || c == '!' || c == '>':
		return 3
	case c == '<' && len(s) > 3 && (s[3] == '=' || s[3] == '!'):
		return 4
	case c == '<' || c == 'P' && len(s) > 3 && s[3] == '<':
		if i := strings.IndexByte(s, '>'); i >= 0 {
			return i + 1
		}
	case c == '\'':
		if i := strings.IndexByte(s[3:], '\''); i >= 0 {
			return 3 + i + 1
		}
	case c == '(' || c == '#':
		// A condition "(?(name)" or a comment: up to its ')'.
		if i := strings.IndexByte(s[3:], ')'); i >= 0 {
			return 3 + i + 1
		}
	default:
		// Inline options: "(?i)", "(?-i:", "(?imsx-n:".
		if i := strings.IndexAny(s[2:], ":)"); i >= 0 {
			return 2 + i + 1
		}
	}
	return len(s)
}

// hasBackReference reports whether a regexp2 pattern refers back to a
// group ("\1", "\k<name>").
func hasBackReference(expr string) bool {
	for i := 0; i < len(expr); i++ {
		if expr[i] != '\\' || i+1 == len(expr) {
			continue
		}
		if c := expr[i+1]; '1' <= c && c <= '9' || c == 'k' {
			return true
		}
		i += escapeLen(expr[i:]) - 1
	}
	return false
}

// turnsCaseOff reports whether a pattern turns caseless matching off with
// an inline flag group ("(?-i)", "(?s-i:"), outside classes and escapes.
func turnsCaseOff(expr string) bool {
	inClass := false
	for i := 0; i < len(expr); i++ {
		switch c := expr[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
			// A ']' right after "[" or "[^" is a literal.
			if i+1 < len(expr) && expr[i+1] == '^' {
				i++
			}
			if i+1 < len(expr) && expr[i+1] == ']' {
				i++
			}
		case c == '(' && strings.HasPrefix(expr[i+1:], "?"):
			j := i + 2
			for j < len(expr) && (isASCIILetter(expr[j]) || expr[j] == '-') {
				j++
			}
			if j < len(expr) && (expr[j] == ')' || expr[j] == ':') {
				if _, off, ok := strings.Cut(expr[i+2:j], "-"); ok && strings.IndexByte(off, 'i') >= 0 {
					return true
				}
			}
		}
	}
	return false
}
