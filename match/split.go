package match

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Split shares a route's requests among weighted backends, the Gateway
// API's backendRefs (SPEC §10, §20): each request goes to one of them, an
// alternative's share being its weight over the sum. An invalid
// alternative (a Service that does not exist, a reference that is not
// allowed) has a nil Backend: its share of the requests answers 500, and
// one with no ready endpoints answers 503. Route.Backend is the first
// valid alternative of positive weight, or nil when there is none, which
// answers every request 500. A weight of 0 is never chosen.
type Split struct {
	Alternatives []Alternative
}

// Alternative is one backend of a Split and its weight.
type Alternative struct {
	Backend *Backend // nil: invalid
	Weight  int
	// Snippet, when set, edits the headers of the requests sent to this
	// backend and of its answers only (the Gateway API's filters on a
	// backendRef), after the route's own (Location.Snippet). Only its
	// header steps run, unless Redirect is set; build it with NewSnippet.
	Snippet *Snippet
	// Rewrite, when set, rewrites the requests sent to this backend (the
	// Gateway API's URLRewrite on a backendRef): what it sets, the
	// request-target or the Host, replaces what the route's own
	// (Location.Rewrite) set.
	Rewrite *Rewrite
	// Redirect, when not 0, is the status of the redirect that answers
	// the requests this alternative takes instead of proxying them (the
	// Gateway API's RequestRedirect on a backendRef): Snippet's steps end
	// in its return, which New checks.
	Redirect int
	// Mirrors copy the requests sent to this backend, or a share of them
	// (Mirror.Denominator), to other Services (the Gateway API's
	// RequestMirror on a backendRef), after the route's own
	// (Location.Response); a redirecting alternative sends none.
	Mirrors []*Mirror
}

// MirrorsBody reports whether a mirror of the alternative sends the
// request body.
func (a *Alternative) MirrorsBody() bool {
	return a != nil && slices.ContainsFunc(a.Mirrors, func(m *Mirror) bool { return !m.NoBody })
}

// Weights are the alternatives' weights in order.
func (s *Split) Weights() []int {
	w := make([]int, len(s.Alternatives))
	for i, a := range s.Alternatives {
		w[i] = a.Weight
	}
	return w
}

// splitHasActions reports a route whose split rewrites or redirects some
// backend's requests.
func splitHasActions(r *Route) bool {
	return r.Split != nil && slices.ContainsFunc(r.Split.Alternatives, func(a Alternative) bool { return a.Rewrite != nil || a.Redirect != 0 })
}

// splitHasMirrors reports a route whose split mirrors some backend's
// requests.
func splitHasMirrors(r *Route) bool {
	return r.Split != nil && slices.ContainsFunc(r.Split.Alternatives, func(a Alternative) bool { return len(a.Mirrors) > 0 })
}

// splitHasSnippets reports a route whose split edits some backend's
// headers.
func splitHasSnippets(r *Route) bool {
	return r.Split != nil && slices.ContainsFunc(r.Split.Alternatives, func(a Alternative) bool { return a.Snippet != nil })
}

func checkSplit(s *Split) error {
	if len(s.Alternatives) == 0 {
		return errors.New("a split needs an alternative")
	}
	if slices.ContainsFunc(s.Alternatives, func(a Alternative) bool { return a.Weight < 0 }) {
		return errors.New("a weight is negative")
	}
	return nil
}

// prepareSplit checks a route's split and prepares its alternatives'
// rewrites.
func (p *preparer) prepareSplit(s *Split) error {
	if err := checkSplit(s); err != nil {
		return err
	}
	for i := range s.Alternatives {
		a := &s.Alternatives[i]
		field := "Alternatives[" + strconv.Itoa(i) + "]"
		switch {
		case a.Redirect != 0 && !IsRedirect(a.Redirect):
			return &fieldError{field + ".Redirect", fmt.Errorf("%d is not a redirect status", a.Redirect)}
		case a.Redirect != 0 && a.Snippet == nil:
			return &fieldError{field + ".Snippet", errors.New("a redirecting alternative needs the snippet that returns it")}
		}
		if err := p.prepareRewrite(&a.Rewrite); err != nil {
			return &fieldError{field + ".Rewrite", err}
		}
		for j, m := range a.Mirrors {
			if m == nil {
				return &fieldError{field + ".Mirrors[" + strconv.Itoa(j) + "]", errors.New("a nil mirror")}
			}
			if m.prepared() {
				continue
			}
			pm, err := NewMirror(*m)
			if err != nil {
				return &fieldError{field + ".Mirrors[" + strconv.Itoa(j) + "]", err}
			}
			a.Mirrors[j] = pm
		}
	}
	return nil
}

// splitSection is the weighted share of a route's requests each backend
// takes.
var splitSection = section{
	name:  "weighted-backends",
	route: []string{"Split"},
	digest: []digestPart{{
		tag: "weighted-backends",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Split != nil })
		},
		route: func(e *encoder, r *Route) {
			e.flag(r.Split != nil)
			if s := r.Split; s != nil {
				e.num(len(s.Alternatives))
				for _, a := range s.Alternatives {
					e.backendRef(a.Backend)
					e.num(a.Weight)
				}
			}
		},
	}, {
		// Per-backend header edits joined later, under a tag of their own,
		// so tables without them keep their digest.
		tag: "weighted-backend-filters",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, splitHasSnippets)
		},
		route: func(e *encoder, r *Route) {
			e.flag(splitHasSnippets(r))
			if splitHasSnippets(r) {
				for _, a := range r.Split.Alternatives {
					e.snippet(a.Snippet)
				}
			}
		},
	}, {
		// Per-backend rewrites and redirects joined later still.
		tag: "weighted-backend-actions",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, splitHasActions)
		},
		route: func(e *encoder, r *Route) {
			e.flag(splitHasActions(r))
			if splitHasActions(r) {
				for _, a := range r.Split.Alternatives {
					e.rewrite(a.Rewrite)
					e.num(a.Redirect)
				}
			}
		},
	}, {
		// Per-backend mirrors joined last.
		tag: "weighted-backend-mirrors",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, splitHasMirrors)
		},
		route: func(e *encoder, r *Route) {
			e.flag(splitHasMirrors(r))
			if splitHasMirrors(r) {
				for _, a := range r.Split.Alternatives {
					e.num(len(a.Mirrors))
					e.mirrorList(a.Mirrors)
				}
			}
		},
	}},
	text: textParts{
		at: 16,
		routeSuffix: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			if r.Split == nil {
				return
			}
			b.WriteString(" split")
			for _, a := range r.Split.Alternatives {
				id := "invalid(500)"
				if a.Backend != nil {
					id = a.Backend.ID
				}
				b.WriteString(" " + strconv.Itoa(a.Weight) + "*" + id)
			}
		},
		routeLines: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			if !splitHasSnippets(r) && !splitHasActions(r) && !splitHasMirrors(r) {
				return
			}
			for i, a := range r.Split.Alternatives {
				if a.Snippet == nil && a.Rewrite == nil && len(a.Mirrors) == 0 {
					continue
				}
				b.WriteString("    split " + strconv.Itoa(i) + " only:\n")
				if a.Rewrite != nil {
					b.WriteString("      " + a.Rewrite.String() + "\n")
				}
				for _, m := range a.Mirrors {
					b.WriteString("      " + mirrorText(m) + "\n")
				}
				if a.Snippet != nil {
					snippetLines(b, "      ", a.Snippet)
				}
			}
		},
	},
}
