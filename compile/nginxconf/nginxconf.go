// Package nginxconf reads nginx configuration syntax: the text an
// ingress-nginx snippet annotation pastes into nginx.conf. It tokenizes as
// nginx's ngx_conf_read_token does (whitespace-separated words, single and
// double quotes, backslash escapes, "#" comments, ";" ending a directive,
// "{ }" blocks, "${var}" not opening one) and builds the directive tree.
// It evaluates nothing: what a directive means is its reader's business.
package nginxconf

import (
	"errors"
	"fmt"
	"strings"
)

// Limits bound the work one snippet costs: the source is read once, and a
// tree deeper than MaxDepth is refused rather than recursed into.
const (
	MaxSize  = 64 << 10
	MaxDepth = 16
)

// Directive is one directive: its name, its arguments with quotes and
// escapes resolved, and its block when it has one ("location /x { … }").
type Directive struct {
	Name string
	Args []string
	// Line is the 1-based line of the name in the source.
	Line int
	// Block holds the directives inside "{ }"; HasBlock tells an empty
	// block from none.
	Block    []*Directive
	HasBlock bool
	// Lua holds the text of a *_by_lua_block's block, which is Lua, not
	// nginx configuration: ngx_http_lua_module reads it with its own
	// lexer, balancing braces outside Lua strings and comments.
	Lua string
}

// An Error says where the source stops being nginx configuration.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ErrTooLarge is returned for a source over MaxSize bytes.
var ErrTooLarge = errors.New("nginxconf: source over 64 KiB")

// Parse reads src as the inside of an nginx block (a snippet is pasted
// into a server or location block).
func Parse(src string) ([]*Directive, error) {
	if len(src) > MaxSize {
		return nil, ErrTooLarge
	}
	p := &parser{lx: lexer{src: src, line: 1}}
	ds, closed, err := p.block(0)
	if err != nil {
		return nil, err
	}
	if closed {
		return nil, &Error{p.lx.line, `unexpected "}"`}
	}
	return ds, nil
}

type parser struct{ lx lexer }

// block reads directives until "}" (closed) or the end of the source.
func (p *parser) block(depth int) (ds []*Directive, closed bool, err error) {
	var cur *Directive
	for {
		t, err := p.lx.next()
		if err != nil {
			return nil, false, err
		}
		switch t.kind {
		case tokEOF:
			if cur != nil {
				return nil, false, &Error{p.lx.line, `unexpected end of file, expecting ";" or "}"`}
			}
			return ds, false, nil
		case tokWord:
			if cur == nil {
				cur = &Directive{Name: t.text, Line: t.line}
			} else {
				cur.Args = append(cur.Args, t.text)
			}
		case tokSemicolon:
			if cur == nil {
				return nil, false, &Error{t.line, `unexpected ";"`}
			}
			ds, cur = append(ds, cur), nil
		case tokOpen:
			if cur == nil {
				return nil, false, &Error{t.line, `unexpected "{"`}
			}
			if strings.HasSuffix(cur.Name, "_by_lua_block") {
				lua, err := p.lx.luaBlock()
				if err != nil {
					return nil, false, err
				}
				cur.Lua, cur.HasBlock = lua, true
				ds, cur = append(ds, cur), nil
				continue
			}
			if depth+1 >= MaxDepth {
				return nil, false, &Error{t.line, "blocks nested too deep"}
			}
			inner, closed, err := p.block(depth + 1)
			if err != nil {
				return nil, false, err
			}
			if !closed {
				return nil, false, &Error{p.lx.line, `unexpected end of file, expecting "}"`}
			}
			cur.Block, cur.HasBlock = inner, true
			ds, cur = append(ds, cur), nil
		case tokClose:
			if cur != nil {
				return nil, false, &Error{t.line, `unexpected "}"`}
			}
			return ds, true, nil
		}
	}
}

type tokKind uint8

const (
	tokEOF tokKind = iota
	tokWord
	tokSemicolon
	tokOpen
	tokClose
)

type token struct {
	kind tokKind
	text string
	line int
}

type lexer struct {
	src  string
	pos  int
	line int
	// needSpace: a quoted word just ended; only a separator may follow.
	needSpace bool
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// next returns the next token, as ngx_conf_read_token splits them.
func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if l.needSpace {
			switch {
			case isSpace(c), c == ';', c == '{', c == '}', c == ')':
				l.needSpace = false
			default:
				return token{}, &Error{l.line, fmt.Sprintf("unexpected %q after a quoted string", c)}
			}
		}
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case isSpace(c):
			l.pos++
		case c == '#':
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case c == ';':
			l.pos++
			return token{tokSemicolon, "", l.line}, nil
		case c == '{':
			l.pos++
			return token{tokOpen, "", l.line}, nil
		case c == '}':
			l.pos++
			return token{tokClose, "", l.line}, nil
		case c == '"' || c == '\'':
			return l.quoted(c)
		default:
			return l.word()
		}
	}
	return token{tokEOF, "", l.line}, nil
}

// luaBlock reads a Lua block's text up to its closing brace, which it
// consumes: braces count outside Lua's quoted strings and "--" comments.
func (l *lexer) luaBlock() (string, error) {
	line := l.line
	start, depth := l.pos, 0
	for i := start; i < len(l.src); i++ {
		switch c := l.src[i]; c {
		case '\n':
			l.line++
		case '"', '\'':
			for i++; i < len(l.src) && l.src[i] != c && l.src[i] != '\n'; i++ {
				if l.src[i] == '\\' {
					i++
				}
			}
			if i < len(l.src) && l.src[i] == '\n' {
				l.line++
			}
		case '-':
			if i+1 < len(l.src) && l.src[i+1] == '-' {
				for i < len(l.src) && l.src[i] != '\n' {
					i++
				}
				if i < len(l.src) {
					l.line++
				}
			}
		case '{':
			depth++
		case '}':
			if depth == 0 {
				l.pos = i + 1
				return l.src[start:i], nil
			}
			depth--
		}
	}
	return "", &Error{line, `unexpected end of file in a Lua block, expecting "}"`}
}

// quoted reads a word in quotes: it may hold any byte, the quote itself
// escaped with a backslash.
func (l *lexer) quoted(q byte) (token, error) {
	line := l.line
	start := l.pos + 1
	for i := start; i < len(l.src); i++ {
		switch l.src[i] {
		case '\\':
			if i+1 < len(l.src) && l.src[i+1] == '\n' {
				l.line++
			}
			i++
		case '\n':
			l.line++
		case q:
			l.pos = i + 1
			l.needSpace = true
			return token{tokWord, Unescape(l.src[start:i]), line}, nil
		}
	}
	return token{}, &Error{line, "unexpected end of file in a quoted string"}
}

// word reads an unquoted word: it ends at whitespace, ";", "{" (unless it
// follows "$", a "${var}") or "}" (unless it closes that "${").
func (l *lexer) word() (token, error) {
	line := l.line
	start := l.pos
	inVar := false
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\\':
			if l.pos+1 < len(l.src) && l.src[l.pos+1] == '\n' {
				l.line++
			}
			l.pos += 2
			continue
		case c == '{' && l.pos > start && l.src[l.pos-1] == '$':
			inVar = true
		case c == '}' && inVar:
			inVar = false
		case isSpace(c), c == ';', c == '{', c == '}':
			return token{tokWord, Unescape(l.src[start:l.pos]), line}, nil
		}
		l.pos++
	}
	if l.pos > len(l.src) {
		l.pos = len(l.src)
	}
	return token{tokWord, Unescape(l.src[start:l.pos]), line}, nil
}

// Unescape resolves the escapes nginx resolves in every word: \" \' \\ \t
// \r \n. Any other backslash stays, with the byte after it, so a regular
// expression's "\d" reaches the regex as written.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '"', '\'', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Format writes ds back as nginx configuration that Parse reads as the
// same tree, every argument double-quoted.
func Format(ds []*Directive) string {
	var b strings.Builder
	format(&b, ds, 0)
	return b.String()
}

func format(b *strings.Builder, ds []*Directive, depth int) {
	for _, d := range ds {
		b.WriteString(strings.Repeat("    ", depth))
		b.WriteString(Quote(d.Name))
		for _, a := range d.Args {
			b.WriteByte(' ')
			b.WriteString(Quote(a))
		}
		if !d.HasBlock {
			b.WriteString(";\n")
			continue
		}
		if strings.HasSuffix(d.Name, "_by_lua_block") {
			b.WriteString(" {" + d.Lua + "}\n")
			continue
		}
		b.WriteString(" {\n")
		format(b, d.Block, depth+1)
		b.WriteString(strings.Repeat("    ", depth) + "}\n")
	}
}

// Quote returns s in double quotes with the bytes unescape resolves
// escaped, so that Parse reads it back as s.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
