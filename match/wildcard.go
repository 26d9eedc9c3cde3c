package match

import "strings"

// deepWildcardSection is whether a "*." host matches names any number of
// labels below it (a Gateway API hostname: "*.example.com" matches
// "a.b.example.com") rather than one label (an Ingress host, as
// ingress-nginx's server_name matches). A longer wildcard still wins: the
// name's suffixes are tried longest first.
var deepWildcardSection = section{
	name: "deep-wildcard",
	host: []string{"DeepWildcard"},
	digest: []digestPart{{
		tag:     "deep-wildcard",
		hostHas: func(vh *VirtualHost) bool { return vh.DeepWildcard },
		host:    func(e *encoder, vh *VirtualHost) { e.flag(vh.DeepWildcard) },
	}},
	text: textParts{
		at: 12, // after " tls"
		hostSuffix: func(b *strings.Builder, vh *VirtualHost) {
			if vh.DeepWildcard {
				b.WriteString(" any-depth")
			}
		},
	},
}

// deepWildcard finds the deep wildcard host for name past its first label
// (the one-label match is Table.host's own): the longest suffix first.
func (t *hostSet) deepWildcard(name string) (*hostIndex, bool) {
	for i := strings.IndexByte(name, '.'); i > 0; {
		rest := name[i+1:]
		j := strings.IndexByte(rest, '.')
		if j <= 0 {
			break
		}
		if hi, ok := t.wildcardHosts[rest[j+1:]]; ok && hi.vh.DeepWildcard {
			return hi, true
		}
		i += j + 1
	}
	return nil, false
}
