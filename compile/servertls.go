package compile

import (
	"regexp"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// The server-level TLS annotations (SPEC §12), as ingress-nginx's
// createServers sets them (internal/ingress/controller/controller.go: "only
// add SSL ciphers if the server does not have them previously
// configured"): for each host of its rules, the first Ingress in Ingress
// order with ssl-ciphers gives the host's ssl_ciphers. The value must pass
// ingress-nginx's check (annotations/sslcipher: letters, digits and
// "!:+-_", @STRENGTH, @SECLEVEL=n) and name a suite Go serves
// (configmap.ParseCiphers); otherwise it is not applied, with a warning.
// What Go lacks is left out with a warning (AnnotationSubstituted).
// ssl-prefer-server-ciphers "true" is what Go does; "false" warns: Go's
// server always chooses by its own preference.

func init() {
	registerAnnotations(map[string]annotationSpec{
		"ssl-ciphers":               {apply: keepAccessAnnotation},
		"ssl-prefer-server-ciphers": {apply: keepAccessAnnotation},
	})
}

// sslCipherValue is ingress-nginx's regexValidSSLCipher.
var sslCipherValue = regexp.MustCompile(`^(?:(?:[A-Za-z0-9!:+\-_])*(?:@STRENGTH)*(?:@SECLEVEL=[0-5])*(?:@STRENGTH)*)*$`)

// applyServerTLS sets each host's ServerTLS from its Ingresses.
func (b *builder) applyServerTLS() {
	parsed := make(map[*ingress]*match.ServerTLS)
	for _, ing := range b.ingresses {
		if pv, ok := ing.ann.access.get("ssl-prefer-server-ciphers"); ok {
			if on, err := strconv.ParseBool(pv.value); err != nil {
				b.rejectAccess(ing, pv.key, "not a boolean (true or false); not applied")
			} else if !on {
				b.warn(AnnotationSubstituted, ing.ref(), annotationField(pv.key),
					pv.key+`: "false" is not served: Go's TLS server always chooses the cipher suite by its own preference, as ssl_prefer_server_ciphers on does`)
			}
		}
		av, ok := ing.ann.access.get("ssl-ciphers")
		if !ok {
			continue
		}
		v := strings.TrimSpace(av.value)
		if v == "" || !sslCipherValue.MatchString(v) {
			b.rejectAccess(ing, av.key, strconv.Quote(v)+" is not an OpenSSL cipher list ingress-nginx accepts; the listener's ciphers apply")
			continue
		}
		suites, notes, err := configmap.ParseCiphers(v)
		if err != nil {
			b.rejectAccess(ing, av.key, err.Error()+"; the listener's ciphers apply")
			continue
		}
		for _, n := range notes {
			b.warn(AnnotationSubstituted, ing.ref(), annotationField(av.key), av.key+": "+n)
		}
		parsed[ing] = &match.ServerTLS{Ciphers: v, CipherSuites: suites}
	}
	if len(parsed) == 0 {
		return
	}
	for _, ing := range b.ingresses {
		st := parsed[ing]
		if st == nil {
			continue
		}
		for _, rh := range ing.rules {
			if v := rh.vhost; v != nil && v.vh.ServerTLS == nil {
				v.vh.ServerTLS = st
			}
		}
	}
}
