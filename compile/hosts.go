package compile

import (
	"net/netip"
	"strconv"
	"strings"
)

// buildHosts validates every rule host (SPEC §3) and creates the virtual
// hosts: one per distinct accepted rule host, created by the first Ingress
// in Ingress order that names it, whether or not the rule has an http
// section. The catch-all ("") always exists; hostless rules add to it.
func (b *builder) buildHosts() {
	b.catchAll = b.newVhost("", nil)
	total := 0
	for _, ing := range b.ingresses {
		total += len(ing.obj.Spec.Rules)
	}
	rules := make([]ruleHost, total)
	for _, ing := range b.ingresses {
		ing.rules, rules = rules[:len(ing.obj.Spec.Rules):len(ing.obj.Spec.Rules)], rules[len(ing.obj.Spec.Rules):]
		for i := range ing.obj.Spec.Rules {
			host := ing.obj.Spec.Rules[i].Host
			if why := invalidHost(host); why != "" {
				b.warn(RuleRejected, ing.ref(), ruleField(i)+".host",
					"host "+strconv.Quote(host)+" "+why+"; the rule is not served")
				continue
			}
			v, ok := b.vhostNamed(host)
			if !ok {
				v = b.newVhost(host, ing)
			}
			ing.rules[i] = ruleHost{vhost: v}
		}
	}
}

// vhostNamed returns the virtual host called name.
func (b *builder) vhostNamed(name string) (*vhost, bool) { return b.vhosts.get("", name) }

// vhostOf is the virtual host called name, nil when there is none.
func (b *builder) vhostOf(name string) *vhost {
	v, _ := b.vhosts.get("", name)
	return v
}

func (b *builder) hasVhost(name string) bool {
	_, ok := b.vhosts.get("", name)
	return ok
}

func vhostKey(v *vhost) (string, string) { return "", v.vh.Name }

func (b *builder) newVhost(name string, creator *ingress) *vhost {
	v := b.vhostSlab.new()
	v.vh = b.hostSlab.new()
	v.vh.Name = name
	v.creator, v.settingsFrom = creator, creator
	if creator != nil && creator.obj != nil {
		v.vh.Creator = creator.source("")
	}
	v.routeSlices = &b.routeSlices
	b.vhosts.add("", name, v)
	b.vhostOrder = append(b.vhostOrder, v)
	return v
}

// invalidHost says why host is not acceptable as a rule host, or "" when it
// is: "" (the catch-all), a lower-case DNS-1123 subdomain, or "*." followed
// by one. Nothing is normalized: a host that would need a guess is refused.
func invalidHost(host string) string {
	if host == "" {
		return ""
	}
	if looksNumeric(host) && strings.Count(host, ".") == 3 {
		// A dotted quad, leading zeros and all (01.2.3.4): requests naming
		// it count as an IP literal and go to the catch-all, so a rule for
		// it could never match.
		return "is an IP address; rules match host names only"
	}
	if strings.HasPrefix(host, "[") || strings.Count(host, ":") > 1 {
		// Parsed only when it could be an IPv6 address (a dotted quad was
		// caught above): ParseAddr allocates its error for every ordinary name.
		if _, err := netip.ParseAddr(host); err == nil || strings.HasPrefix(host, "[") {
			return "is an IP address; rules match host names only"
		}
	}
	if strings.ContainsAny(host, "/?#") {
		return "contains a path; a host is a name only"
	}
	if strings.Contains(host, ":") {
		return "contains a port; a host is a name only"
	}
	if strings.ToLower(host) != host {
		return "contains an upper-case letter; hosts must be lower-case (they are not normalized)"
	}
	name := host
	if strings.HasPrefix(host, "*.") {
		name = host[2:]
	}
	if strings.Contains(name, "*") || name == "" {
		return "has a misplaced *; a wildcard must be the whole left-most label, as in *.example.com"
	}
	if why := invalidDNSSubdomain(name); why != "" {
		return why
	}
	if name != host && looksNumeric(name) {
		if _, err := netip.ParseAddr(name); err == nil {
			return "puts a wildcard in front of an IP address; rules match host names only"
		}
	}
	return ""
}

// invalidDNSSubdomain checks a lower-case DNS-1123 subdomain: at most 253
// characters, dot-separated labels of 1–63 characters from [a-z0-9-] that
// start and end with a letter or digit. Hand-written because it runs for
// every rule host of every rebuild.
func invalidDNSSubdomain(name string) string {
	if len(name) > 253 {
		return "is longer than 253 characters"
	}
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			if label == 0 {
				return "has an empty label; it must be a DNS-1123 subdomain"
			}
			if name[i-1] == '-' {
				return "has a label ending in '-'; it must be a DNS-1123 subdomain"
			}
			label = 0
			continue
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-':
			if label == 0 {
				return "has a label starting with '-'; it must be a DNS-1123 subdomain"
			}
		case c >= 0x80:
			return "contains a non-ASCII character; it must be a DNS-1123 subdomain (a-z, 0-9, '-', '.')"
		default:
			return "contains " + strconv.QuoteRune(rune(c)) + "; it must be a DNS-1123 subdomain (a-z, 0-9, '-', '.')"
		}
		label++
		if label > 63 {
			return "has a label longer than 63 characters"
		}
	}
	if label == 0 {
		return "has an empty label; it must be a DNS-1123 subdomain"
	}
	if name[len(name)-1] == '-' {
		return "has a label ending in '-'; it must be a DNS-1123 subdomain"
	}
	return ""
}

// looksNumeric reports a name of only digits and dots, which may be an IPv4
// address.
func looksNumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}
