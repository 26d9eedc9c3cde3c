package configmap

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// ParseSourceRanges reads a comma-separated list of CIDR ranges and bare
// addresses as ingress-nginx's source range annotations and
// proxy-real-ip-cidr take them ("10.0.0.0/8, 192.168.1.7, 2001:db8::/32").
// Ranges are masked, and IPv4 in IPv6 ("::ffff:10.0.0.0/104") becomes
// IPv4; one shorter than /96 stays the IPv6 range it is. Any entry that is
// neither, an empty one included, fails the whole list, as it does in
// ingress-nginx. The result is sorted and free of duplicates.
func ParseSourceRanges(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		p, err := parseRange(part)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return sortPrefixes(out), nil
}

func parseRange(s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, errors.New("an empty entry in the list")
	}
	var p netip.Prefix
	if strings.IndexByte(s, '/') >= 0 {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR range", s)
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not an IP address or CIDR range", s)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	// Masked first: a mapped address over fewer than 96 bits is an IPv6
	// range, which no IPv4 client is in.
	p = p.Masked()
	if a := p.Addr(); a.Is4In6() {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p, nil
}

// sortPrefixes sorts by address, then length, and drops duplicates in
// place, so the table and its digest do not depend on how a list was
// written.
func sortPrefixes(ps []netip.Prefix) []netip.Prefix {
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return slices.Compact(ps)
}
