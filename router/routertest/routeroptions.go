package routertest

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/router"
)

// routerOptions applies the case options that are the router's (SPEC §1,
// §18), named as the controller's flags: proxyBodySize (nginx size syntax,
// "0" for no limit), useForwardedHeaders, proxyRealIPCIDR (addresses or
// CIDRs, a list or one comma-separated string).
func (o fileOptions) routerOptions(ro *router.Options) error {
	if o.TrustForwardedProto != nil && *o.TrustForwardedProto || o.UseForwardedHeaders != nil && *o.UseForwardedHeaders {
		ro.TrustForwardedProto = true
	}
	if o.ProxyBodySize != nil {
		n, err := parseSize(*o.ProxyBodySize)
		if err != nil {
			return fmt.Errorf("options.proxyBodySize: %w", err)
		}
		ro.MaxBodySize = n
		if n == 0 {
			ro.MaxBodySize = -1 // nginx's 0: no limit
		}
	}
	for _, s := range o.ProxyRealIPCIDR {
		for part := range strings.SplitSeq(s, ",") {
			part = strings.TrimSpace(part)
			p, err := netip.ParsePrefix(part)
			if err != nil {
				a, aerr := netip.ParseAddr(part)
				if aerr != nil {
					return fmt.Errorf("options.proxyRealIPCIDR: %q is neither an address nor a CIDR", part)
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			ro.ProxyRealIPCIDR = append(ro.ProxyRealIPCIDR, p)
		}
	}
	return nil
}

// parseSize reads nginx's size syntax: bytes, or a number with k, m or g
// (either case).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with k, m or g)", s)
	}
	return n * mult, nil
}
