package match

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/dlclark/regexp2"
)

// MaxRegexProgram is the largest compiled pattern accepted (SPEC §4): a
// pathological path fails validation instead of costing memory in every
// replica.
const MaxRegexProgram = 1 << 20

// MaxRegexPattern is the longest pattern text accepted, checked before it
// is parsed: the backtracking engine's program grows with the text
// (backtrackBytesPerPatternByte), so a longer one would be over
// MaxRegexProgram there anyway, and parsing a pattern of a MiB takes
// seconds, which one bad Ingress would otherwise add to every rebuild.
const MaxRegexPattern = MaxRegexProgram / backtrackBytesPerPatternByte

// DefaultMatchTimeout bounds one match on the backtracking engine. It is a
// fifth of RegexBudget, so a request whose budget is nearly spent overruns
// it by little; no sane pattern needs 10 ms on a request path.
const DefaultMatchTimeout = 10 * time.Millisecond

func init() {
	// regexp2 checks deadlines against a clock that ticks every 100 ms by
	// default, which would let one match overrun the whole budget. It is
	// set once, before any match runs.
	regexp2.SetTimeoutCheckPeriod(5 * time.Millisecond)
}

// backtrackBytesPerPatternByte estimates the backtracking engine's program
// size: regexp2 compiles counted repetition to loops, so its program grows
// with the pattern text, not with the repeat counts.
const backtrackBytesPerPatternByte = 32

// Regexp is an ImplementationSpecific path pattern compiled case-insensitive
// as ^(?:pattern). Patterns that Go's linear-time engine accepts run there;
// the rest (look-around, back-references, atomic groups, repeat counts over
// 1000, \Z, ...) run on regexp2 with a match timeout, and a timed-out match
// counts as no match. regexp2 checks its timeout against a clock that ticks
// every 5 ms (set in init), so a runaway match may take up to that much
// longer than the timeout. Possessive quantifiers (a++) are accepted by neither engine: such
// a pattern fails to compile.
type Regexp struct {
	pattern string
	prefix  string // literal prefix, lower case; see literalPrefix
	// caseSensitive: compiled by CompileCaseSensitiveRegex, letters match
	// only as written.
	caseSensitive bool
	linear        *regexp.Regexp
	backtrk       *regexp2.Regexp
	timeouts      atomic.Uint64
}

// CompileRegex compiles pattern (already stripped of a leading "^"). A
// timeout <= 0 means DefaultMatchTimeout.
func CompileRegex(pattern string, timeout time.Duration) (*Regexp, error) {
	return compileRegex(pattern, timeout, false)
}

// CompileCaseSensitiveRegex is CompileRegex without the case folding: a
// Gateway API RegularExpression path match, which the API defines as
// case-sensitive (SPEC §20). The dialect is otherwise the same.
func CompileCaseSensitiveRegex(pattern string, timeout time.Duration) (*Regexp, error) {
	return compileRegex(pattern, timeout, true)
}

// CompileSearchRegex is the dialect of CompileRegex for a pattern that
// may match anywhere in a value, as nginx's map and if match ("~" and,
// case-insensitive, "~*"): MatchString then reports a match at any
// position.
func CompileSearchRegex(pattern string, caseSensitive bool) (*Regexp, error) {
	return compileExpr(pattern, "(?:"+pattern+")", 0, caseSensitive)
}

func compileRegex(pattern string, timeout time.Duration, caseSensitive bool) (*Regexp, error) {
	return compileExpr(pattern, "^(?:"+pattern+")", timeout, caseSensitive)
}

// compileExpr compiles expr, pattern with its anchoring.
func compileExpr(pattern, expr string, timeout time.Duration, caseSensitive bool) (*Regexp, error) {
	if timeout <= 0 {
		timeout = DefaultMatchTimeout
	}
	if len(pattern) > MaxRegexPattern {
		return nil, fmt.Errorf("regex %q: %d bytes long, over the %d-byte limit", truncate(pattern), len(pattern), MaxRegexPattern)
	}
	// A pattern that turns caseless matching off inline must keep that
	// scope, which folding the whole pattern would erase: it is left to the
	// engine's own case folding (Unicode, documented, §19).
	engineFold := !caseSensitive && turnsCaseOff(pattern)
	flags := syntax.Perl
	if engineFold {
		flags |= syntax.FoldCase
	}
	// Go's \s leaves out the vertical tab that PCRE's has: both engines get
	// the ASCII sets spelled out.
	if parsed, err := syntax.Parse(asciiClasses(expr), flags); err == nil {
		if !caseSensitive && !engineFold {
			parsed = foldASCII(parsed)
		}
		// Simplify expands counted repetition into copies, so a short pattern
		// can cost hundreds of MiB before its size is known: reject what is
		// clearly too large from the parse tree, and measure the rest exactly.
		if est := estimateInsts(parsed, maxEstimatedInsts) * instSize; est > 2*MaxRegexProgram {
			return nil, fmt.Errorf("regex %q: compiled program would be over %d bytes, over the %d-byte limit", truncate(pattern), 2*MaxRegexProgram, MaxRegexProgram)
		}
		prog, err := syntax.Compile(parsed.Simplify())
		if err != nil {
			return nil, fmt.Errorf("regex %q: %w", pattern, err)
		}
		if size := len(prog.Inst) * instSize; size > MaxRegexProgram {
			return nil, fmt.Errorf("regex %q: compiled program is %d bytes, over the %d-byte limit", truncate(pattern), size, MaxRegexProgram)
		}
		re, err := regexp.Compile(parsed.String())
		if err == nil {
			r := &Regexp{pattern: pattern, linear: re, caseSensitive: caseSensitive}
			if strings.HasPrefix(expr, "^") {
				r.prefix = literalPrefix(parsed)
			}
			if hasDollar(parsed) {
				// Perl's $ also matches before a final newline, Go's only at
				// the end. They differ only for a path ending in "\n" (a
				// decoded %0A), which the backtracking engine then answers.
				if r.backtrk, err = compileBacktracking(pattern, expr, timeout, caseSensitive); err != nil {
					return nil, err
				}
			}
			return r, nil
		}
		// Go's own limits (e.g. nesting) reject it: try the other engine.
	}
	re, err := compileBacktracking(pattern, expr, timeout, caseSensitive)
	if err != nil {
		return nil, err
	}
	return &Regexp{pattern: pattern, backtrk: re, caseSensitive: caseSensitive}, nil
}

// compileBacktracking needs no size check of its own: its program grows
// with the text, which CompileRegex bounds by MaxRegexPattern.
func compileBacktracking(pattern, expr string, timeout time.Duration, caseSensitive bool) (*regexp2.Regexp, error) {
	// A back-reference matches caseless in PCRE ("(a)\1" matches "aA"),
	// which only the engine's own IgnoreCase gives; such a pattern keeps it
	// and with it Unicode folding (documented, §19).
	opts := regexp2.None
	text := asciiClasses(expr)
	switch {
	case caseSensitive:
	case turnsCaseOff(expr):
		// foldASCIIText would fold inside the (?-i) scope too.
		opts = regexp2.IgnoreCase
	case hasBackReference(expr):
		text = foldASCIIText(text)
		opts = regexp2.IgnoreCase
	default:
		text = foldASCIIText(text)
	}
	re, err := regexp2.Compile(text, opts)
	if err != nil {
		// Say it in the pattern as written, not as rewritten.
		if _, plain := regexp2.Compile(expr, opts); plain != nil {
			err = plain
		}
		return nil, fmt.Errorf("regex %q: %w", truncate(pattern), err)
	}
	re.MatchTimeout = timeout
	return re, nil
}

// hasDollar reports whether re uses $ (not \z) as an end anchor.
func hasDollar(re *syntax.Regexp) bool {
	if re.Op == syntax.OpEndText && re.Flags&syntax.WasDollar != 0 {
		return true
	}
	for _, sub := range re.Sub {
		if hasDollar(sub) {
			return true
		}
	}
	return false
}

// instSize is the size of one instruction of Go's compiled program.
const instSize = int(unsafe.Sizeof(syntax.Inst{}))

// maxEstimatedInsts caps estimateInsts well above the rejection threshold, so
// nested repeat counts cannot overflow.
const maxEstimatedInsts = 4 * MaxRegexProgram / instSize

// estimateInsts returns about how many instructions syntax.Compile emits for
// re after Simplify (close, not exact), saturating at limit.
func estimateInsts(re *syntax.Regexp, limit int) int {
	n := 0
	switch re.Op {
	case syntax.OpLiteral:
		n = len(re.Rune)
	case syntax.OpCapture:
		n = 2 + estimateInsts(re.Sub[0], limit)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		n = 1 + estimateInsts(re.Sub[0], limit)
	case syntax.OpRepeat:
		// x{n,m} is n copies then m-n optional ones; x{n,} is n copies then a star.
		copies, extra := re.Max, re.Max-re.Min
		if re.Max < 0 {
			copies, extra = re.Min+1, 1
		}
		per := max(estimateInsts(re.Sub[0], limit), 1)
		if copies > (limit-extra)/per {
			return limit
		}
		n = copies*per + extra
	case syntax.OpConcat, syntax.OpAlternate:
		n = len(re.Sub)
		for _, sub := range re.Sub {
			n += estimateInsts(sub, limit)
			if n >= limit {
				return limit
			}
		}
	default:
		n = 1
	}
	return min(n, limit)
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// runeBufs holds rune buffers for backtracking matches, so a lookup does not
// allocate; buffers grown past maxPooledRunes by a huge path are dropped.
var runeBufs = sync.Pool{New: func() any { b := make([]rune, 0, 256); return &b }}

const maxPooledRunes = 8192

// asciiClasses rewrites \d, \w and \s (and their negations outside a
// character class) to their ASCII sets: regexp2 gives them Unicode meaning
// ("\d" matches "١"), PCRE without UTF mode, which nginx uses, does not
// (SPEC §13); Go's \s lacks PCRE's vertical tab. \b keeps each engine's
// meaning.
func asciiClasses(expr string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\\' && i+1 < len(expr) && expr[i+1] == 'Q' && !inClass:
			// Quoted text up to \E is literal.
			end := strings.Index(expr[i+2:], `\E`)
			if end < 0 {
				end = len(expr) - i - 2
			} else {
				end += 2
			}
			b.WriteString(expr[i : i+2+end])
			i += 1 + end
			continue
		case c == '\\' && i+1 < len(expr):
			sub, ok := asciiClass(expr[i+1], inClass)
			if !ok {
				b.WriteByte(c)
				b.WriteByte(expr[i+1])
			} else {
				b.WriteString(sub)
			}
			i++
			continue
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ']' right after "[" or "[^" is a literal.
			if i+1 < len(expr) && expr[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(expr) && expr[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
			continue
		case c == '[' && inClass && i+1 < len(expr) && expr[i+1] == ':':
			// A POSIX class, which regexp2 does not read.
			if end := strings.Index(expr[i+2:], ":]"); end >= 0 {
				if set, ok := posixClasses[expr[i+2:i+2+end]]; ok {
					b.WriteString(set)
					i += 3 + end
					continue
				}
			}
		case c == ']' && inClass:
			inClass = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// posixClasses spell out PCRE's POSIX classes, ASCII only, for use inside
// a bracket. The negated forms ("[:^alpha:]") are left as they are.
var posixClasses = map[string]string{
	"alpha":  "a-zA-Z",
	"digit":  "0-9",
	"alnum":  "0-9A-Za-z",
	"upper":  "A-Z",
	"lower":  "a-z",
	"space":  "\\t\\n\\x0B\\f\\r ",
	"blank":  "\\t ",
	"punct":  "!-/:-@\\[-`{-~",
	"xdigit": "0-9A-Fa-f",
	"word":   "0-9A-Za-z_",
	"cntrl":  "\\x00-\\x1F\\x7F",
	"print":  "\\x20-\\x7E",
	"graph":  "\\x21-\\x7E",
	"ascii":  "\\x00-\\x7F",
}

func asciiClass(c byte, inClass bool) (string, bool) {
	const digit, word, space = "0-9", "0-9A-Za-z_", "\\t\\n\\x0B\\f\\r "
	set := ""
	negate := false
	switch c {
	case 'd', 'D':
		set = digit
	case 'w', 'W':
		set = word
	case 's', 'S':
		set = space
	default:
		return "", false
	}
	negate = c < 'a'
	switch {
	case inClass && negate:
		return "", false // no ASCII spelling inside a class; rare enough to keep
	case inClass:
		return set, true
	case negate:
		return "[^" + set + "]", true
	}
	return "[" + set + "]", true
}

// asciiFoldInput replaces the runes that case-fold to an ASCII letter in
// one of the engines (ſ U+017F to s and K U+212A to k in Go's, İ U+0130 to
// i in regexp2's) with U+FFFD, so that (?i) folds ASCII only, as PCRE
// without UTF mode does (SPEC §13): "/u%C5%BFers" must not match "/users".
// It allocates only for a path holding one of them.
func asciiFoldInput(path string) string {
	i := 0
	for i < len(path) && path[i] < 0x80 {
		i++
	}
	if i == len(path) || !(strings.Contains(path[i:], "\u017f") || strings.Contains(path[i:], "\u212a") || strings.Contains(path[i:], "\u0130")) {
		return path
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u017f', '\u212a', '\u0130':
			return utf8.RuneError
		}
		return r
	}, path)
}

// MatchString reports whether path matches from its start. Case folds
// ASCII only (see asciiFoldInput), unless the pattern is case-sensitive.
func (r *Regexp) MatchString(path string) bool {
	if !r.caseSensitive {
		path = asciiFoldInput(path)
	}
	ok, _ := r.match(path)
	return ok
}

// match is MatchString for a path already passed through asciiFoldInput;
// timedOut reports a backtracking match cut off by its timeout.
func (r *Regexp) match(path string) (ok, timedOut bool) {
	if r.linear != nil && (r.backtrk == nil || strings.IndexByte(path, '\n') < 0) {
		return r.linear.MatchString(path), false
	}
	// regexp2 matches runes; its MatchString allocates them on every call.
	bp := runeBufs.Get().(*[]rune)
	runes := (*bp)[:0]
	for _, c := range path {
		runes = append(runes, c)
	}
	ok, err := r.backtrk.MatchRunes(runes)
	if cap(runes) <= maxPooledRunes {
		*bp = runes
		runeBufs.Put(bp)
	}
	if err != nil {
		// regexp2 fails a match only when it times out.
		r.timeouts.Add(1)
		return false, true
	}
	return ok, false
}

// String returns the pattern as compiled, without the added anchor.
func (r *Regexp) String() string { return r.pattern }

// CaseSensitive reports whether the pattern was compiled by
// CompileCaseSensitiveRegex.
func (r *Regexp) CaseSensitive() bool { return r.caseSensitive }

// Linear reports whether the pattern runs on the linear-time engine.
func (r *Regexp) Linear() bool { return r.linear != nil }

// Timeouts counts matches that hit the timeout and so counted as no match.
func (r *Regexp) Timeouts() uint64 { return r.timeouts.Load() }
