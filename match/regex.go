package match

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dlclark/regexp2"
)

// MaxRegexProgram is the largest compiled pattern accepted (SPEC §4): a
// pathological path fails validation instead of costing memory in every
// replica.
const MaxRegexProgram = 1 << 20

// DefaultMatchTimeout bounds one match on the backtracking engine.
const DefaultMatchTimeout = 50 * time.Millisecond

// backtrackBytesPerPatternByte estimates the backtracking engine's program
// size: regexp2 compiles counted repetition to loops, so its program grows
// with the pattern text, not with the repeat counts.
const backtrackBytesPerPatternByte = 32

// Regexp is an ImplementationSpecific path pattern compiled case-insensitive
// as ^(?:pattern). Patterns that Go's linear-time engine accepts run there;
// the rest (look-around, back-references, possessive quantifiers, repeat
// counts over 1000, \Z, ...) run on regexp2 with a match timeout, and a
// timed-out match counts as no match.
type Regexp struct {
	pattern  string
	linear   *regexp.Regexp
	backtrk  *regexp2.Regexp
	timeouts atomic.Uint64
}

// CompileRegex compiles pattern (already stripped of a leading "^"). A
// timeout <= 0 means DefaultMatchTimeout.
func CompileRegex(pattern string, timeout time.Duration) (*Regexp, error) {
	if timeout <= 0 {
		timeout = DefaultMatchTimeout
	}
	expr := "^(?:" + pattern + ")"
	if parsed, err := syntax.Parse("(?i)"+expr, syntax.Perl); err == nil {
		prog, err := syntax.Compile(parsed.Simplify())
		if err != nil {
			return nil, fmt.Errorf("regex %q: %w", pattern, err)
		}
		if size := len(prog.Inst) * int(unsafe.Sizeof(syntax.Inst{})); size > MaxRegexProgram {
			return nil, fmt.Errorf("regex %q: compiled program is %d bytes, over the %d-byte limit", pattern, size, MaxRegexProgram)
		}
		re, err := regexp.Compile("(?i)" + expr)
		if err == nil {
			return &Regexp{pattern: pattern, linear: re}, nil
		}
		// Go's own limits (e.g. nesting) reject it: try the other engine.
	}
	if size := len(pattern) * backtrackBytesPerPatternByte; size > MaxRegexProgram {
		return nil, fmt.Errorf("regex %q: compiled program would be about %d bytes, over the %d-byte limit", truncate(pattern), size, MaxRegexProgram)
	}
	re, err := regexp2.Compile(expr, regexp2.IgnoreCase)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", truncate(pattern), err)
	}
	re.MatchTimeout = timeout
	return &Regexp{pattern: pattern, backtrk: re}, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// MatchString reports whether path matches from its start.
func (r *Regexp) MatchString(path string) bool {
	if r.linear != nil {
		return r.linear.MatchString(path)
	}
	ok, err := r.backtrk.MatchString(path)
	if err != nil {
		// regexp2 fails a match only when it times out.
		r.timeouts.Add(1)
		return false
	}
	return ok
}

// String returns the pattern as compiled, without the added anchor.
func (r *Regexp) String() string { return r.pattern }

// Linear reports whether the pattern runs on the linear-time engine.
func (r *Regexp) Linear() bool { return r.linear != nil }

// Timeouts counts matches that hit the timeout and so counted as no match.
func (r *Regexp) Timeouts() uint64 { return r.timeouts.Load() }
