package match

import (
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Extensions are the annotations of a route's Ingress whose keys start with
// a prefix the embedder registered (compile.Options.ExtensionPrefixes),
// with the key in full ("example.com/require-header"), and the
// ingress-nginx annotations the embedder serves itself
// (compile.Options.ExtensionKeys), under the name alone
// ("enable-modsecurity"). ramjet does not
// interpret them: they are carried into the table for the embedder's
// router.Hook. An Extensions never changes once built; a nil one is empty.
type Extensions struct {
	keys, values []string // sorted by key
}

// NewExtensions returns the extensions holding m, nil when m is empty.
func NewExtensions(m map[string]string) *Extensions {
	if len(m) == 0 {
		return nil
	}
	e := &Extensions{keys: slices.Sorted(maps.Keys(m))}
	e.values = make([]string, len(e.keys))
	for i, k := range e.keys {
		e.values[i] = m[k]
	}
	return e
}

// Get returns the value of key and whether it is set.
func (e *Extensions) Get(key string) (string, bool) {
	if e == nil {
		return "", false
	}
	if i, ok := slices.BinarySearch(e.keys, key); ok {
		return e.values[i], true
	}
	return "", false
}

// Len is the number of annotations held.
func (e *Extensions) Len() int {
	if e == nil {
		return 0
	}
	return len(e.keys)
}

// All yields the annotations sorted by key.
func (e *Extensions) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if e == nil {
			return
		}
		for i, k := range e.keys {
			if !yield(k, e.values[i]) {
				return
			}
		}
	}
}

// extensionsSection is the embedder's own settings of a route or a
// host's fallback, which its router.Hook answers by: two tables that
// differ only there differ.
var extensionsSection = section{
	name:     "extensions",
	location: []string{"Extensions"},
	digest: []digestPart{{
		tag: "extensions",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, func(r *Route) bool { return r.Extensions.Len() > 0 })
		},
		route: func(e *encoder, r *Route) { e.extensions(r.Extensions) },
	}, {
		// The fallback's joined later, under a tag of its own, so tables
		// without them keep their digest.
		tag:     "fallback-extensions",
		hostHas: func(vh *VirtualHost) bool { return vh.FallbackLocation.Extensions.Len() > 0 },
		host:    func(e *encoder, vh *VirtualHost) { e.extensions(vh.FallbackLocation.Extensions) },
	}},
	text: textParts{
		at: 60, // last on a route line, after the settings ramjet acts on
		routeSuffix: func(b *strings.Builder, _ *VirtualHost, r *Route) {
			b.WriteString(extensionsText(r.Extensions))
		},
		fallbackSuffix: func(b *strings.Builder, vh *VirtualHost) {
			b.WriteString(extensionsText(vh.FallbackLocation.Extensions))
		},
	},
}

func (e *encoder) extensions(x *Extensions) {
	e.num(x.Len())
	for k, v := range x.All() {
		e.str(k)
		e.str(v)
	}
}

// extensionsText renders a route's extensions for the text form.
func extensionsText(e *Extensions) string {
	if e.Len() == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" ext(")
	for k, v := range e.All() {
		if b.Len() > len(" ext(") {
			b.WriteString(" ")
		}
		b.WriteString(k + "=" + strconv.Quote(v))
	}
	b.WriteString(")")
	return b.String()
}
