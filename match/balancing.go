package match

import (
	"strings"

	"ramjet.dev/ramjet/balance"
)

// balancingSection is how a backend chooses among its endpoints (SPEC §9):
// round-robin unless set, so a table balanced round-robin throughout
// encodes as if the section did not exist.
var balancingSection = section{
	name:    "balancing",
	backend: []string{"Algorithm", "HashKey"},
	digest: []digestPart{{
		tag:        "balancing",
		backendHas: func(be *Backend) bool { return be.Algorithm != balance.RoundRobin },
		table: func(e *encoder, t *Table) {
			e.num(len(t.backends))
			for _, be := range t.backends {
				e.num(int(be.Algorithm))
				e.str(be.HashKey.String())
			}
		},
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
		return " hash " + quoteText(be.HashKey.String(), false)
	}
	return " " + be.Algorithm.String()
}
