package main

import (
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/compile"
)

// The example controller serves ModSecurity itself (examples/controller,
// modsecurity.go: Coraza and the OWASP CRS through router.Options.Hook),
// which the library alone does not: -report migrates to the controller,
// so its findings on these annotations say what the controller does.
var controllerServes = []string{"enable-modsecurity", "enable-owasp-core-rules", "modsecurity-snippet", "modsecurity-transaction-id"}

// imageFiles are the files of ingress-nginx's image the controller serves
// to a snippet's Include; it reads no other.
var imageFiles = []string{"/etc/nginx/modsecurity/modsecurity.conf", "/etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf",
	"/etc/nginx/owasp-modsecurity-crs/crs-setup.conf", "/etc/nginx/owasp-modsecurity-crs/rules/"}

// servedByController rewrites the finding about an annotation the
// controller serves: its severity compared with ingress-nginx, and what
// the controller does.
//   - A snippet that Includes a file the controller does not hold:
//     its rules do not build and the Ingress's paths answer 503.
//   - The engine on (SecRuleEngine On) with the OWASP CRS or rules of
//     the response phases: requests are refused as under ingress-nginx,
//     but the hook sees only requests, so the response phases do not run.
//   - Otherwise the same requests are logged or refused as under
//     ingress-nginx; only the engine and the log differ.
func servedByController(f finding, annotations map[string]string, snippetsOn bool) finding {
	name, ok := strings.CutPrefix(f.Annotation, compile.NginxPrefix)
	if !ok {
		name, ok = strings.CutPrefix(f.Annotation, compile.NativePrefix)
	}
	if !ok || !slices.Contains(controllerServes, name) || f.Reason != compile.AnnotationUnsupported && f.Reason != compile.AnnotationRejected {
		return f
	}
	get := func(key string) string {
		if v, ok := annotations[compile.NativePrefix+key]; ok {
			return v
		}
		return annotations[compile.NginxPrefix+key]
	}
	if !snippetsOn {
		// modsecurity-snippet is Critical-risk: ingress-nginx drops it
		// unless snippets are allowed, and the controller does too.
		if name == "modsecurity-snippet" {
			f.Severity, f.Instead = compile.Cosmetic, "a Critical-risk annotation: off unless allow-snippet-annotations is true and annotations-risk-level Critical, under ingress-nginx and the controller alike"
			return f
		}
	}
	var snippet string
	if snippetsOn {
		snippet = strings.ToLower(get("modsecurity-snippet"))
	}
	owasp, _ := strconv.ParseBool(get("enable-owasp-core-rules"))
	on, responses := false, false
	for line := range strings.Lines(snippet) {
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 2 && fields[0] == "secruleengine":
			on = fields[1] == "on"
		case len(fields) >= 2 && fields[0] == "include":
			file := strings.Trim(fields[1], `"'`)
			if !slices.ContainsFunc(imageFiles, func(p string) bool { return strings.HasPrefix(file, p) }) {
				f.Severity = compile.TrafficMoves
				f.Instead = "served by the controller (Coraza), which reads no file but the CRS and modsecurity.conf of ingress-nginx's image: Include " + fields[1] + " does not build and the Ingress's paths answer 503"
				return f
			}
			owasp = owasp || strings.Contains(file, "owasp")
		}
		responses = responses || strings.Contains(line, "phase:3") || strings.Contains(line, "phase:4") || strings.Contains(line, "response_")
	}
	f.Severity, f.Instead = compile.Cosmetic, "served by the controller (Coraza, with the OWASP CRS v4 it embeds): the rules detect or refuse the same requests; matched rules go to the controller's log, not an audit log"
	if on && (owasp || responses) {
		f.Severity = compile.FeatureMissing
		f.Instead = "served by the controller (Coraza): SecRuleEngine On refuses requests as ingress-nginx does, but the rules of the response phases (the CRS's RESPONSE-* among them) do not run: the hook sees only requests"
	}
	return f
}
