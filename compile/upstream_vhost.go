package compile

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
)

// upstream-vhost with nginx variables (SPEC §11 "Also served"): the
// location's $namespace, $service_name and $service_port, which
// ingress-nginx sets in every location (nginx.tmpl: set $namespace ...,
// from getIngressInformation: the Ingress's namespace and the Service
// name and port as the path declares them, the port's number or else its
// name), are expanded when the table is built, route by route; the
// request's $host and $http_host when the request is
// served (match.Rewrite.UpstreamHost).

// vhostPlace is where upstream-vhost reads its variables; vhostBuild
// those expanded when the table is built.
var (
	vhostPlace = vars.Place{Name: "upstream-vhost", Vars: vars.Of(vars.Host, vars.HTTPHost, vars.ServiceName, vars.Namespace, vars.ServicePort)}
	vhostBuild = vars.Of(vars.ServiceName, vars.Namespace, vars.ServicePort)
)

// expandVhost replaces the build-time variables of an upstream-vhost
// value; the request's variables stay. A value vhostPlace refuses is
// returned as it is (applyUpstreamVhost refused it already).
func expandVhost(h, namespace, service, port string) string {
	t, err := vhostPlace.Parse(h)
	if err != nil || !t.Uses(vhostBuild) {
		return h
	}
	var b strings.Builder
	for i, p := range t {
		switch p.Ref.Var {
		case vars.None:
			b.WriteString(p.Lit)
		case vars.Namespace:
			b.WriteString(namespace)
		case vars.ServiceName:
			b.WriteString(service)
		case vars.ServicePort:
			b.WriteString(port)
		case vars.Host, vars.HTTPHost:
			// Braced when a name byte follows, so it is read back as itself.
			name := vars.Table[p.Ref.Var].Name
			if i+1 < len(t) && t[i+1].Ref.Var == vars.None && isNameByte(t[i+1].Lit[0]) {
				b.WriteString("${" + name + "}")
			} else {
				b.WriteString("$" + name)
			}
		}
	}
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// sampleVhost is h with every build-time variable standing for a host
// label, to check the rest of the value when it is read.
func sampleVhost(h string) string { return expandVhost(h, "ns", "svc", "80") }

// expandRouteVhost gives a route whose upstream-vhost uses build-time
// variables its own rewrite, with them expanded for the Service its path
// names; field is the declaration ("spec.rules[i].http.paths[j]" or
// "spec.defaultBackend"). A value that is no Host header once expanded
// (a port name after a ':', an empty $service_name) is not applied, with
// a warning for a route; the host's default location, whose Service
// ingress-nginx takes from spec.defaultBackend, drops it quietly when it
// has none.
func (b *builder) expandRouteVhost(ing *ingress, rw *match.Rewrite, field string) *match.Rewrite {
	if rw == nil || ing == nil {
		return rw
	}
	tmpl := ing.ann.rewriteR().vhost
	if rw.Host == "" || sampleVhost(tmpl) == tmpl {
		return rw // no build-time variable
	}
	svc, port := declaredService(ing.obj, field)
	h := expandVhost(tmpl, ing.obj.Namespace, svc, port)
	spec := *rw
	spec.Host = h
	out, err := match.NewRewrite(spec)
	if err != nil && (field != defaultBackendField || ing.obj.Spec.DefaultBackend != nil) {
		key := ing.ann.rewriteR().vhostKey
		b.warn(AnnotationRejected, ing.ref(), annotationField(key),
			key+" "+strconv.Quote(tmpl)+" expands to "+strconv.Quote(h)+" for "+field+", which is no Host header; not applied to that path, whose backend receives the client's Host")
	}
	if err != nil {
		spec.Host = ""
		if spec.Target == "" && !spec.ForwardedPrefixSet {
			return nil
		}
		out, _ = match.NewRewrite(spec)
	}
	return out
}

// declaredService is the Service name and port a declaration names, as
// ingress-nginx's getIngressInformation gives them: the port's number, or
// its name; for the default location, spec.defaultBackend's.
func declaredService(ing *networkingv1.Ingress, field string) (name, port string) {
	ref := func(s *networkingv1.IngressServiceBackend) (string, string) {
		if s == nil {
			return "", ""
		}
		if s.Port.Number > 0 {
			return s.Name, strconv.Itoa(int(s.Port.Number))
		}
		return s.Name, s.Port.Name
	}
	var i, j int
	if _, err := fmt.Sscanf(field, "spec.rules[%d].http.paths[%d]", &i, &j); err == nil &&
		i < len(ing.Spec.Rules) && ing.Spec.Rules[i].HTTP != nil && j < len(ing.Spec.Rules[i].HTTP.Paths) {
		return ref(ing.Spec.Rules[i].HTTP.Paths[j].Backend.Service)
	}
	if db := ing.Spec.DefaultBackend; db != nil {
		return ref(db.Service)
	}
	return "", ""
}

// valueError words a value's parse error after the quoted value: a
// refused variable is a sentence of its own (vars.Error), other errors
// go on from the value ("… has no host").
func valueError(value string, err error) string {
	if ve := (*vars.Error)(nil); errors.As(err, &ve) {
		return strconv.Quote(value) + ": " + err.Error()
	}
	return strconv.Quote(value) + " " + err.Error()
}
