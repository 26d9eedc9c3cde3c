package match

import (
	"strconv"
	"strings"

	"ramjet.dev/ramjet/balance"
)

// balancingSection is how a backend chooses among its endpoints (SPEC §9):
// round-robin unless set, so a table balanced round-robin throughout
// encodes as if the section did not exist.
var balancingSection = section{
	name:    "balancing",
	backend: []string{"Algorithm", "HashKey", "HashSubset"},
	digest: []digestPart{{
		tag:        "balancing",
		backendHas: func(be *Backend) bool { return be.Algorithm != balance.RoundRobin },
		backend: func(e *encoder, be *Backend) {
			e.num(int(be.Algorithm))
			e.str(be.HashKey.String())
		},
	}, {
		// Subsets joined later, under a tag of their own, so tables
		// without them keep their digest.
		tag:        "hash-subset",
		backendHas: func(be *Backend) bool { return be.HashSubset > 0 },
		backend:    func(e *encoder, be *Backend) { e.num(int(be.HashSubset)) },
	}},
	text: textParts{
		at:            10,
		backendSuffix: func(b *strings.Builder, be *Backend) { b.WriteString(balancingText(be)) },
	},
}

// balancingText names a backend's balancing algorithm unless it is the default.
func balancingText(be *Backend) string {
	switch be.Algorithm {
	case balance.RoundRobin:
		return ""
	case balance.Hash:
		if be.HashSubset > 0 {
			return " hash " + quoteText(be.HashKey.String(), false) + " subset " + strconv.Itoa(int(be.HashSubset))
		}
		return " hash " + quoteText(be.HashKey.String(), false)
	}
	return " " + be.Algorithm.String()
}
