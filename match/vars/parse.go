package vars

import (
	"strings"
)

// Syntax is how a place reads a "$".
type Syntax uint8

const (
	// Script is nginx's syntax for directive values: $name, ${name}, and
	// $1 to $9, one digit ("$12" is capture 1, then "2").
	Script Syntax = iota
	// Native is ramjet's: ${name} only, captures ${0} to ${9}.
	Native
	// Log is nginx's log_format: $name and ${name}, a digit no capture.
	Log
)

// Place is somewhere a value may hold variables: the subset of the table
// it expands and how it reads them.
type Place struct {
	// Name says where, for messages: "an auth URL", "upstream-vhost".
	Name   string
	Vars   Set
	Syntax Syntax
	// Lenient places take what they cannot expand: a "$" naming nothing
	// (or a "${" not closed) is literal text, another name an Unknown Ref
	// (Template.Unknown); Parse never fails.
	Lenient bool
}

// Ref is one variable a template uses.
type Ref struct {
	Var Var
	// Name is a family's name ("user_agent" of $http_user_agent), or an
	// Unknown variable's.
	Name string
	// N is a capture's number.
	N uint8
}

// Part is literal text (Ref.Var None) or a variable.
type Part struct {
	Lit string
	Ref Ref
}

// Template is a value split into literal text and variables.
type Template []Part

// Error is a "$" a place cannot expand.
type Error struct {
	Place *Place
	// Name is the variable as named; Open a "${" without "}"; Empty a "$"
	// naming nothing.
	Name        string
	Open, Empty bool
}

func (e *Error) Error() string {
	switch {
	case e.Open:
		return `"${" is not closed`
	case e.Empty && e.Place.Syntax == Native:
		return `a "$" must start ${name} (` + e.Place.Name + " expands " + e.Place.Expands() + ")"
	case e.Empty:
		return `a "$" names no variable (` + e.Place.Name + " expands " + e.Place.Expands() + ")"
	case e.Place.Syntax == Native:
		return "${" + e.Name + "} is not a variable ramjet expands in " + e.Place.Name + " (it expands " + e.Place.Expands() + ")"
	}
	return "$" + e.Name + " is not a variable ramjet expands in " + e.Place.Name + " (it expands " + e.Place.Expands() + ")"
}

// Expands lists the variables p expands, as its messages do.
func (p *Place) Expands() string {
	s := p.Vars.String()
	if p.Syntax == Native {
		s = strings.ReplaceAll(s, "$1 to $9", "$0 to $9")
		var b strings.Builder
		for i, n := range strings.Split(s, ", ") {
			if i > 0 {
				b.WriteString(", ")
			}
			n = strings.TrimPrefix(n, "$")
			if a, z, ok := strings.Cut(n, " to $"); ok {
				b.WriteString("${" + a + "} to ${" + z + "}")
			} else {
				b.WriteString("${" + n + "}")
			}
		}
		s = b.String()
	}
	return s
}

// LiteralDollar is the variable that stands for a "$" everywhere, as
// ingress-nginx's http-level geo $literal_dollar does; Parse reads it as
// literal text. Escape writes a value with it.
const LiteralDollar = "literal_dollar"

// Escape is s written so that every place reads it as the literal text s:
// each "$" as ${literal_dollar}, as ingress-nginx writes a value it means
// literally (escapeLiteralDollar in its template functions).
func Escape(s string) string { return strings.ReplaceAll(s, "$", "${"+LiteralDollar+"}") }

// Parse splits s into literal text and the variables p expands, a
// $literal_dollar into a literal "$". It fails with an *Error on a "$" p
// cannot expand, unless p is Lenient.
func (p *Place) Parse(s string) (Template, error) {
	if strings.IndexByte(s, '$') < 0 {
		if s == "" {
			return nil, nil
		}
		return Template{{Lit: s}}, nil
	}
	var t Template
	lit := func(l string) {
		if l == "" {
			return
		}
		if n := len(t); n > 0 && t[n-1].Ref.Var == None {
			t[n-1].Lit += l
			return
		}
		t = append(t, Part{Lit: l})
	}
	for s != "" {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			lit(s)
			break
		}
		lit(s[:i])
		s = s[i+1:]
		name, braced := "", strings.HasPrefix(s, "{")
		switch {
		case braced:
			end := strings.IndexByte(s, '}')
			if end < 0 && p.Lenient {
				lit("$")
				continue
			}
			if end < 0 {
				return nil, &Error{Place: p, Name: s, Open: true}
			}
			name, s = s[1:end], s[end+1:]
		case p.Syntax == Native:
			return nil, &Error{Place: p, Empty: true}
		case p.Syntax == Script && s != "" && s[0] >= '1' && s[0] <= '9':
			name, s = s[:1], s[1:]
		default:
			n := 0
			for n < len(s) && (s[n] == '_' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= '0' && s[n] <= '9') {
				n++
			}
			name, s = s[:n], s[n:]
		}
		if name == LiteralDollar {
			lit("$")
			continue
		}
		r, ok := p.Vars.Lookup(name)
		if !ok && p.Syntax == Native && name == "0" && p.Vars.Has(Capture) {
			r, ok = Ref{Var: Capture}, true
		}
		switch {
		case ok:
			t = append(t, Part{Ref: r})
		case p.Lenient && name == "" && !braced:
			lit("$")
		case p.Lenient:
			t = append(t, Part{Ref: Ref{Var: Unknown, Name: name}})
		case name == "" && !braced:
			return nil, &Error{Place: p, Empty: true}
		default:
			return nil, &Error{Place: p, Name: name}
		}
	}
	return t, nil
}

// Unknown lists the names of t's Unknown variables, each once, in order.
func (t Template) Unknown() []string {
	var out []string
	for _, p := range t {
		if p.Ref.Var == Unknown && !contains(out, p.Ref.Name) {
			out = append(out, p.Ref.Name)
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Literal reports a template without variables.
func (t Template) Literal() bool { return len(t) == 0 || len(t) == 1 && t[0].Ref.Var == None }

// Uses reports whether t uses one of s.
func (t Template) Uses(s Set) bool {
	for _, p := range t {
		if p.Ref.Var != None && s.Has(p.Ref.Var) {
			return true
		}
	}
	return false
}

// Expand writes t to b, each variable as value gives it.
func (t Template) Expand(b *strings.Builder, value func(Ref) string) {
	for _, p := range t {
		if p.Ref.Var == None {
			b.WriteString(p.Lit)
		} else {
			b.WriteString(value(p.Ref))
		}
	}
}
