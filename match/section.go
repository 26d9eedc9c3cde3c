package match

import (
	"cmp"
	"slices"
	"strings"
)

// A section is one feature of the table's hosts, routes and backends: the
// fields that hold it, how the digest encodes it and how the text renders
// it. Each is declared in its feature's file and registered in sections;
// digest and writeText only walk the list. A section describes what a
// route does, not what declared it (an Ingress annotation today), so every
// source of routes shares it.
//
// Every field of Route, VirtualHost and Backend, and of the Location that
// a route and a host's fallback each hold, is claimed by exactly one
// section, or listed in section_test.go's unencoded with the reason it
// changes no answer (TestSectionsClaimEveryField); and every claimed field
// changes the digest, a Location field on a route and on a fallback alike
// (TestSectionDigests): a new field cannot be left out of the digest.
type section struct {
	// name says what the section is about, by behaviour.
	name string
	// route, host and backend name the fields of Route, VirtualHost and
	// Backend the section carries; location the fields of Location, which
	// it carries on every route (Route.Location) and every host's fallback
	// (VirtualHost.FallbackLocation), its digest and text covering both.
	route, host, backend, location []string
	// digest is the section's share of the digest: one part, or more when
	// a setting joined the feature after the digest first encoded it.
	digest []digestPart
	text   textParts
}

// sections are the features in digest order. The order is fixed by the
// digests already published: append a new section, never reorder.
var sections = []*section{
	&routingSection,
	&balancingSection,
	&redirectSlashSection,
	&extensionsSection,
	&redirectsSection,
	&rewriteSection,
	&requestPolicySection,
	&trafficSection,
	&corsSection,
	&authSection,
	&proxyingSection,
	&tlsEndsSection,  // tlsends.go
	&responseSection, // response.go
	&snippetSection,
	&conditionsSection,    // conditions.go
	&splitSection,         // split.go
	&deepWildcardSection,  // wildcard.go
	&streamSection,        // stream.go
	&tracingSection,       // tracing.go
	&serverTLSSection,     // servertls.go
	&listenerSection,      // listener.go
	&caseSensitiveSection, // casesensitive.go
	&passthroughSection,   // tlsroute.go
	&gatewayCORSSection,   // gatewaycors.go
	&errorSourcesSection,  // errorsources.go
	&nginxLocationSection, // nginxlocation.go
}

// A digestPart is a share of the digest. One with no tag (the routing
// section) is always encoded. Every other part is optional: it opens with
// its tag and is encoded, in a host's or backend's own encoding (see
// digest), only for a host (with its fallback and routes) or backend that
// has the feature, as hostHas and backendHas report, and in the table's
// only when tableHas does; so a table without the feature encodes as if
// the part did not exist and a new part changes no published digest. Each
// part's encoding is self-delimiting, so presence is unambiguous.
type digestPart struct {
	tag        string
	hostHas    func(*VirtualHost) bool
	backendHas func(*Backend) bool
	// tableHas, for a part about the table as a whole, is asked once.
	tableHas func(*Table) bool

	// table encodes what the part holds of the table as a whole, after
	// every host and backend.
	table func(*encoder, *Table)
	// A host's entry is followed by its routes'. Adjacent parts with one
	// tag are one part of the digest: per host, route or backend, each
	// part's entry in list order.
	host    func(*encoder, *VirtualHost)
	route   func(*encoder, *Route)
	backend func(*encoder, *Backend)
}

// textParts are what a section writes in the table's text. writeText
// writes the lines themselves (a host's name, where a route or fallback
// leads, a backend's identity and endpoints) and the sections' parts at
// fixed places; at orders the sections writing at one place, lowest first.
type textParts struct {
	at int
	// A suffix is appended to its line; lines follow it, each ending in
	// "\n". A host's lines follow its fallback's, before its routes; a
	// backend's lines come before its endpoints.
	hostSuffix, fallbackSuffix, fallbackLines, hostLines func(*strings.Builder, *VirtualHost)
	routeSuffix, routeLines                              func(*strings.Builder, *VirtualHost, *Route)
	backendSuffix, backendLines                          func(*strings.Builder, *Backend)
}

// digestBlock is the parts encoded under one tag, their encoders and
// presence predicates gathered in list order.
type digestBlock struct {
	tag        string
	parts      []*digestPart
	table      func(*encoder, *Table)
	host       []func(*encoder, *VirtualHost)
	route      []func(*encoder, *Route)
	backend    []func(*encoder, *Backend)
	hostHas    []func(*VirtualHost) bool
	backendHas []func(*Backend) bool
	tableHas   []func(*Table) bool
}

// digestBlocks are the sections' digest parts in digest order.
var digestBlocks = blocksOf(sections)

func blocksOf(secs []*section) []digestBlock {
	var blocks []digestBlock
	for _, s := range secs {
		for i := range s.digest {
			p := &s.digest[i]
			if n := len(blocks); n == 0 || p.tag == "" || blocks[n-1].tag != p.tag {
				blocks = append(blocks, digestBlock{tag: p.tag})
			}
			b := &blocks[len(blocks)-1]
			b.parts = append(b.parts, p)
			if p.table != nil {
				b.table = p.table
			}
			if p.host != nil {
				b.host = append(b.host, p.host)
			}
			if p.route != nil {
				b.route = append(b.route, p.route)
			}
			if p.backend != nil {
				b.backend = append(b.backend, p.backend)
			}
			if p.hostHas != nil {
				b.hostHas = append(b.hostHas, p.hostHas)
			}
			if p.backendHas != nil {
				b.backendHas = append(b.backendHas, p.backendHas)
			}
			if p.tableHas != nil {
				b.tableHas = append(b.tableHas, p.tableHas)
			}
		}
	}
	return blocks
}

// hostPresent, backendPresent and tablePresent report whether the block
// encodes an entry for the host, the backend, or the table as a whole.
func (b *digestBlock) hostPresent(vh *VirtualHost) bool {
	for _, has := range b.hostHas {
		if has(vh) {
			return true
		}
	}
	return false
}

func (b *digestBlock) backendPresent(be *Backend) bool {
	for _, has := range b.backendHas {
		if has(be) {
			return true
		}
	}
	return false
}

func (b *digestBlock) tablePresent(t *Table) bool {
	if b.tag == "" {
		return true
	}
	for _, has := range b.tableHas {
		if has(t) {
			return true
		}
	}
	return false
}

// textPlaces are the sections' text parts by place, each in text order.
type textPlaces struct {
	hostSuffix, fallbackSuffix, fallbackLines, hostLines []func(*strings.Builder, *VirtualHost)
	routeSuffix, routeLines                              []func(*strings.Builder, *VirtualHost, *Route)
	backendSuffix, backendLines                          []func(*strings.Builder, *Backend)
}

var sectionText = textPlacesOf(sections)

func textPlacesOf(secs []*section) textPlaces {
	byAt := slices.Clone(secs)
	slices.SortStableFunc(byAt, func(a, b *section) int { return cmp.Compare(a.text.at, b.text.at) })
	var tp textPlaces
	for _, s := range byAt {
		x := &s.text
		if x.hostSuffix != nil {
			tp.hostSuffix = append(tp.hostSuffix, x.hostSuffix)
		}
		if x.fallbackSuffix != nil {
			tp.fallbackSuffix = append(tp.fallbackSuffix, x.fallbackSuffix)
		}
		if x.fallbackLines != nil {
			tp.fallbackLines = append(tp.fallbackLines, x.fallbackLines)
		}
		if x.hostLines != nil {
			tp.hostLines = append(tp.hostLines, x.hostLines)
		}
		if x.routeSuffix != nil {
			tp.routeSuffix = append(tp.routeSuffix, x.routeSuffix)
		}
		if x.routeLines != nil {
			tp.routeLines = append(tp.routeLines, x.routeLines)
		}
		if x.backendSuffix != nil {
			tp.backendSuffix = append(tp.backendSuffix, x.backendSuffix)
		}
		if x.backendLines != nil {
			tp.backendLines = append(tp.backendLines, x.backendLines)
		}
	}
	return tp
}
