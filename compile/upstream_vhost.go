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
// name), are expanded when the table is built, route by route; $host,
// the request's, when the request is served (match.Rewrite.UpstreamHost).

// vhostVars are the variables expanded when the table is built.
var vhostVars = []string{"service_name", "namespace", "service_port"}

// unsupportedVhostVar names the first variable of an upstream-vhost
// value that is none of those and not $host; "" when there is none.
func unsupportedVhostVar(h string) string {
	for rest := h; ; {
		i := strings.IndexByte(rest, '$')
		if i < 0 {
			return ""
		}
		rest = rest[i+1:]
		name, braced := rest, strings.HasPrefix(rest, "{")
		if braced {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return "$" + rest
			}
			name, rest = rest[1:end], rest[end+1:]
		} else {
			n := 0
			for n < len(rest) && (rest[n] == '_' || isAlnum(rest[n])) {
				n++
			}
			name, rest = rest[:n], rest[n:]
		}
		if name != "host" && !contains(vhostVars, name) {
			return "$" + name
		}
	}
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// expandVhost replaces the build-time variables of an upstream-vhost
// value; $host stays for the request.
func expandVhost(h, namespace, service, port string) string {
	if !strings.Contains(h, "$") {
		return h
	}
	r := strings.NewReplacer(
		"${service_name}", service, "${namespace}", namespace, "${service_port}", port,
	)
	h = r.Replace(h)
	// Unbraced names end at the first byte that cannot continue a name,
	// so $service_names is not $service_name: unsupportedVhostVar refused
	// such values already, and the longest name is tried first anyway.
	for _, v := range []struct{ name, val string }{{"$service_name", service}, {"$service_port", port}, {"$namespace", namespace}} {
		h = strings.ReplaceAll(h, v.name, v.val)
	}
	return h
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
	tmpl := ing.ann.rewrite.vhost
	if rw.Host == "" || sampleVhost(tmpl) == tmpl {
		return rw // no build-time variable
	}
	svc, port := declaredService(ing.obj, field)
	h := expandVhost(tmpl, ing.obj.Namespace, svc, port)
	spec := *rw
	spec.Host = h
	out, err := match.NewRewrite(spec)
	if err != nil && (field != defaultBackendField || ing.obj.Spec.DefaultBackend != nil) {
		key := ing.ann.rewrite.vhostKey
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
