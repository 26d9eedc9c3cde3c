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
}

// A digestPart is a share of the digest. One with no tag (the routing
// section) is always encoded, first. Every other part is optional: it opens
// with its tag and is encoded only when some host (with its fallback and
// routes) or backend has the feature, as hostHas and backendHas report, so
// a table without the feature encodes as if the part did not exist and a
// new part changes no published digest. Each part's encoding is
// self-delimiting, so presence is unambiguous. hostHas looks at a host's
// routes itself: one call per host keeps the walk for presence cheap.
type digestPart struct {
	tag        string
	hostHas    func(*VirtualHost) bool
	backendHas func(*Backend) bool
	// tableHas, for a part about the table as a whole, is asked once.
	tableHas func(*Table) bool

	// table encodes the part in one go, for a part that is not one entry
	// per host, route and backend.
	table func(*encoder, *Table)
	// Otherwise each host's entry is followed by its routes', then come
	// the backends'. Adjacent parts with one tag are one part of the
	// digest: per host, route or backend, each part's entry in list order.
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

// digestBlock is the parts encoded under one tag, their encoders gathered
// in list order.
type digestBlock struct {
	tag     string
	parts   []*digestPart
	table   func(*encoder, *Table)
	host    []func(*encoder, *VirtualHost)
	route   []func(*encoder, *Route)
	backend []func(*encoder, *Backend)
}

// digestBlocks are the sections' digest parts in digest order.
var digestBlocks = blocksOf(sections)

func blocksOf(secs []*section) []digestBlock {
	var blocks []digestBlock
	for _, s := range secs {
		for i := range s.digest {
			p := &s.digest[i]
			if n := len(blocks); n == 0 || p.tag == "" || blocks[n-1].tag != p.tag {
				blocks = append(blocks, digestBlock{tag: p.tag, table: p.table})
			}
			b := &blocks[len(blocks)-1]
			b.parts = append(b.parts, p)
			if p.host != nil {
				b.host = append(b.host, p.host)
			}
			if p.route != nil {
				b.route = append(b.route, p.route)
			}
			if p.backend != nil {
				b.backend = append(b.backend, p.backend)
			}
		}
	}
	return blocks
}

// encode writes the block's entries after its tag.
func (b *digestBlock) encode(e *encoder, t *Table) {
	if b.table != nil {
		b.table(e, t)
		return
	}
	if len(b.host) > 0 || len(b.route) > 0 {
		for _, vh := range t.hosts {
			for _, f := range b.host {
				f(e, vh)
			}
			for _, r := range vh.Routes {
				for _, f := range b.route {
					f(e, r)
				}
			}
		}
	}
	if len(b.backend) > 0 {
		for _, be := range t.backends {
			for _, f := range b.backend {
				f(e, be)
			}
		}
	}
}

// presence is what the walk for the optional blocks' presence asks: each
// block's has predicates, by what they look at, with the block's bit.
type presence struct {
	always uint64 // blocks with no tag
	// table are the blocks a tableHas predicate decides.
	table []tableHas
	// The blocks some host predicate asks for, and some backend
	// predicate: when all are found, the walk stops.
	hostBits, backendBits uint64
	host                  []hostHas
	backend               []backendHas
}

type (
	hostHas struct {
		bit uint64
		has func(*VirtualHost) bool
	}
	backendHas struct {
		bit uint64
		has func(*Backend) bool
	}
	tableHas struct {
		bit uint64
		has func(*Table) bool
	}
)

var digestPresence = presenceOf(digestBlocks)

func presenceOf(blocks []digestBlock) presence {
	var p presence
	for i, b := range blocks {
		bit := uint64(1) << i
		if b.tag == "" {
			p.always |= bit
			continue
		}
		for _, part := range b.parts {
			if part.hostHas != nil {
				p.host = append(p.host, hostHas{bit, part.hostHas})
				p.hostBits |= bit
			}
			if part.backendHas != nil {
				p.backend = append(p.backend, backendHas{bit, part.backendHas})
				p.backendBits |= bit
			}
			if part.tableHas != nil {
				p.table = append(p.table, tableHas{bit, part.tableHas})
			}
		}
	}
	return p
}

// present returns the bits of the blocks t encodes, in one walk over its
// hosts and backends that stops asking a block once it is found.
func (p *presence) present(t *Table) uint64 {
	found := p.always
	for _, c := range p.table {
		if c.has(t) {
			found |= c.bit
		}
	}
	for _, vh := range t.hosts {
		if found&p.hostBits == p.hostBits {
			break
		}
		for _, c := range p.host {
			if found&c.bit == 0 && c.has(vh) {
				found |= c.bit
			}
		}
	}
	for _, be := range t.backends {
		if found&p.backendBits == p.backendBits {
			break
		}
		for _, c := range p.backend {
			if found&c.bit == 0 && c.has(be) {
				found |= c.bit
			}
		}
	}
	return found
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
