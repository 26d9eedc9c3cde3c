package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/gatewayapi"
)

// The migration view: -translate -to gateway prints, for an Ingress dump,
// the Gateways and HTTPRoutes that serve the same (gatewayapi.FromIngress,
// what ingress2gateway does, read as ramjet reads the Ingresses), and
// -report says which annotations have no Gateway API equivalent.

// The values of -to.
const (
	toTable   = "table"
	toGateway = "gateway"
)

// runGateway prints the Gateway API objects for the manifests' Ingresses
// as YAML kubectl apply takes, then what they leave out as comments; with
// asJSON one document with the objects and that list.
func runGateway(paths []string, fs *flag.FlagSet, o *translateOptions, gatewayNS string, asJSON bool, stdout, stderr io.Writer) int {
	if _, err := o.compile(); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return 2
	}
	snap, skipped, unreadable, err := loadLenient(paths)
	if errs := loadFailure(paths, snap, unreadable, err); errs != nil {
		return failLoad(errs, asJSON, stdout, stderr)
	}
	opts, notes := claimOptions(fs, o, snap)
	for _, n := range notes {
		fmt.Fprintln(stderr, "note:", n)
	}
	// What was read is converted; what was not still fails the run.
	code := 0
	if len(unreadable) > 0 {
		code = 2
	}
	m := gatewayapi.FromIngress(*snap, gatewayapi.FromIngressOptions{Compile: opts, GatewayNamespace: gatewayNS})
	kept := l4Kept(*snap, opts)
	if asJSON {
		return encode(struct {
			Gateways        any                      `json:"gateways"`
			ReferenceGrants any                      `json:"referenceGrants"`
			HTTPRoutes      any                      `json:"httpRoutes"`
			Unconverted     []gatewayapi.Unconverted `json:"unconverted"`
			// L4Services are kept as they are (l4Kept).
			L4Services []jsonL4Service `json:"l4Services,omitempty"`
			Errors     []string        `json:"errors,omitempty"`
		}{m.Gateways, m.ReferenceGrants, m.HTTPRoutes, m.Unconverted, kept, unreadable}, code, stdout, stderr)
	}
	writeUnreadable(stderr, unreadable)
	for _, s := range skipped {
		fmt.Fprintln(stderr, s)
	}
	if err := m.WriteYAML(stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	for _, u := range m.Unconverted {
		fmt.Fprintf(stdout, "# not converted: Ingress %s/%s %s: %s\n", u.Namespace, u.Name, u.Annotation, u.Why)
	}
	for _, s := range kept {
		fmt.Fprintf(stdout, "# kept: ConfigMap %s %s: %s %d -> %s is no Gateway API route (ramjet serves no TCPRoute or UDPRoute); "+
			"the --%s-services-configmap that names this ConfigMap goes on serving it\n", s.ConfigMap, s.Field, s.Protocol, s.Port, s.Service, s.Protocol)
	}
	return code
}

// l4Kept are the TCP and UDP services of the manifests (SPEC §22): no
// Gateway API object carries them, and the controller's services
// ConfigMaps serve them alike for Ingresses and Gateway API routes, so
// the migration names them rather than leaving them out without a word.
func l4Kept(snap compile.Snapshot, opts compile.Options) []jsonL4Service {
	if opts.TCPServices == "" && opts.UDPServices == "" {
		return nil
	}
	return l4ServicesOf(compile.Compile(snap, opts).Table)
}

// gatewayGap is an annotation (or field) that the Gateway API conversion
// leaves out, with the Ingresses that set it and why.
type gatewayGap struct {
	Annotation string   `json:"annotation"`
	Ingresses  []string `json:"ingresses"`
	Why        []string `json:"why"`
}

// gatewayGaps groups FromIngress's unconverted list by annotation, the
// most widespread first.
func gatewayGaps(snap compile.Snapshot, opts compile.Options) []gatewayGap {
	m := gatewayapi.FromIngress(snap, gatewayapi.FromIngressOptions{Compile: opts})
	by := map[string]*gatewayGap{}
	var out []*gatewayGap
	for _, u := range m.Unconverted {
		g := by[u.Annotation]
		if g == nil {
			g = &gatewayGap{Annotation: u.Annotation}
			by[u.Annotation] = g
			out = append(out, g)
		}
		if ing := u.Namespace + "/" + u.Name; !slices.Contains(g.Ingresses, ing) {
			g.Ingresses = append(g.Ingresses, ing)
		}
		if !slices.Contains(g.Why, u.Why) {
			g.Why = append(g.Why, u.Why)
		}
	}
	gaps := make([]gatewayGap, 0, len(out))
	for _, g := range out {
		slices.Sort(g.Why)
		gaps = append(gaps, *g)
	}
	slices.SortStableFunc(gaps, func(a, b gatewayGap) int {
		return cmp.Or(cmp.Compare(len(b.Ingresses), len(a.Ingresses)), cmp.Compare(a.Annotation, b.Annotation))
	})
	return gaps
}

// writeGatewayGaps is the report's section on what the Gateway API
// conversion leaves out.
func writeGatewayGaps(w io.Writer, gaps []gatewayGap) {
	fmt.Fprintln(w, "\nNo exact Gateway API equivalent (left out by -translate -to gateway, or changed as said)")
	if len(gaps) == 0 {
		fmt.Fprintln(w, "  none: every annotation carries over")
		return
	}
	for _, g := range gaps {
		fmt.Fprintf(w, "  %-55s %s: %s\n", g.Annotation, plural(len(g.Ingresses), "Ingress"), strings.Join(g.Ingresses, ", "))
		for _, why := range g.Why {
			fmt.Fprintf(w, "  %55s -> %s\n", "", why)
		}
	}
}
