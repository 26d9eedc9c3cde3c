package compile

import "slices"

// CompilerReuses is how many compiles c answered with the previous
// result, and CompilerRecompiles how many compiled only what changed.
func CompilerReuses(c *Compiler) int { return c.reuses }

func CompilerRecompiles(c *Compiler) int { return c.recompiles }

func CompilerShared(c *Compiler) int { return c.shared }

// CompilerEndpointOnly is how many recompiles changed backends' endpoint
// lists alone.
func CompilerEndpointOnly(c *Compiler) int { return c.endpointOnly }

// CompilerGatewayRecompiles is how many recompiles had Gateway listeners,
// and how many TLSRoutes.
func CompilerGatewayRecompiles(c *Compiler) (listeners, passthrough int) {
	return c.listenerRecompiles, c.passthroughRecompiles
}

// CompilerCheck reports how c's kept state disagrees with the snapshot it
// last compiled: the couplings index against one built afresh.
func CompilerCheck(c *Compiler) string {
	if c.couplings == nil {
		return ""
	}
	fresh := newCouplings()
	for key, e := range c.seen.ingresses.m {
		fresh.add(key, e.obj)
	}
	same := func(a, b map[string][]objKey) bool {
		if len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if len(v) != len(b[k]) {
				return false
			}
			for _, x := range v {
				if !slices.Contains(b[k], x) {
					return false
				}
			}
		}
		return true
	}
	hosts := func(m map[objKey][]objKey) map[string][]objKey {
		out := map[string][]objKey{}
		for k, v := range m {
			out[k.ns+"/"+k.name] = v
		}
		return out
	}
	switch {
	case len(fresh.facts) != len(c.couplings.facts):
		return "the couplings index holds other Ingresses than the snapshot"
	case !same(fresh.byHost, c.couplings.byHost):
		return "the couplings index by host is stale"
	case !same(hosts(fresh.bySvc), hosts(c.couplings.bySvc)):
		return "the couplings index by Service is stale"
	}
	return ""
}

// CompilerFullReasons counts why c compiled in full when it tried not to.
func CompilerFullReasons(c *Compiler) map[string]int { return c.fullReasons }
