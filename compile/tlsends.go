package compile

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/configmap"
)

// TLS at both ends (SPEC §11, §12), as ingress-nginx v1.15 reads it:
//
//   - proxy-ssl-secret with proxy-ssl-verify, -verify-depth, -name,
//     -server-name, -protocols and -ciphers: per location (the route), and
//     the host's first Ingress with a CA (a canary too) also at the server
//     level, which the host's other locations inherit, unless the
//     ConfigMap's proxy-ssl-location-only (Options.ProxySSLLocationOnly)
//     is on. A Secret that is missing or holds neither ca.crt nor a key
//     pair denies the location (503). A bad value of another key takes
//     its default, with a warning, as ingress-nginx's parser does.
//   - auth-tls-secret with auth-tls-verify-client, -verify-depth,
//     -error-page, -pass-certificate-to-upstream and -match-cn: per host,
//     the first Ingress (in Ingress order, canaries included) of the host
//     whose Secret has a CA decides. A Secret that cannot be used makes
//     every request to the host answer 403, as ingress-nginx's server
//     block does.
//   - ssl-passthrough, with Options.EnableSSLPassthrough: the host's TLS
//     connections go to the backend of its "/" location, unterminated.

func init() {
	keys := map[string]annotationSpec{}
	for _, k := range []string{
		"proxy-ssl-secret", "proxy-ssl-verify", "proxy-ssl-verify-depth", "proxy-ssl-name",
		"proxy-ssl-server-name", "proxy-ssl-protocols", "proxy-ssl-ciphers",
		"auth-tls-secret", "auth-tls-verify-client", "auth-tls-verify-depth", "auth-tls-error-page",
		"auth-tls-pass-certificate-to-upstream", "auth-tls-match-cn",
		"ssl-passthrough"} {
		keys[k] = annotationSpec{apply: keepAccessAnnotation}
	}
	registerAnnotations(keys)
}

var (
	onOffValue         = regexp.MustCompile(`^(on|off)$`)
	proxySSLProtocols  = regexp.MustCompile(`^(TLSv1\.2|TLSv1\.3| )*$`)
	proxySSLCiphers    = regexp.MustCompile(`^[A-Za-z0-9+:_\-!]*$`)
	proxySSLName       = regexp.MustCompile(`^[A-Za-z0-9_.\-*${}]+$`)
	authTLSVerify      = regexp.MustCompile(`^(on|off|optional|optional_no_ca)$`)
	authTLSErrorPage   = regexp.MustCompile(`^(@[A-Za-z0-9_-]+|((https?://)?[A-Za-z0-9\-.]+(:\d+)?)?(/[A-Za-z0-9\-_.]+)*/?)$`)
	secretNameNSFormat = regexp.MustCompile(`^[A-Za-z0-9\-.]+/[A-Za-z0-9\-.]+$`)
)

// proxySSLDefaults are ingress-nginx's values of the proxy-ssl-* keys
// besides the Secret.
var proxySSLDefaults = map[string]string{
	"proxy-ssl-verify": "off", "proxy-ssl-verify-depth": "1", "proxy-ssl-name": "",
	"proxy-ssl-server-name": "off", "proxy-ssl-protocols": "TLSv1.2", "proxy-ssl-ciphers": "DEFAULT",
}

// tlsEnds is what one Ingress asks for.
type tlsEnds struct {
	backend     *match.BackendTLS
	client      *match.ClientTLS
	passthrough bool
}

// applyTLSEnds reads each Ingress's TLS annotations and puts them on its
// routes and hosts.
func (b *builder) applyTLSEnds() {
	var asked map[*ingress]*tlsEnds
	for _, ing := range b.ingresses {
		if len(ing.ann.access.raw) == 0 {
			continue
		}
		e := tlsEnds{
			backend:     b.resolveBackendTLS(ing),
			client:      b.resolveClientTLS(ing),
			passthrough: b.resolvePassthrough(ing),
		}
		if e != (tlsEnds{}) {
			if asked == nil {
				asked = make(map[*ingress]*tlsEnds)
			}
			asked[ing] = &e
		}
	}
	for _, ing := range b.canaries {
		// A canary makes no location, but its server-level settings
		// reach its hosts' servers (serverHosts); ssl-passthrough is
		// read only from the Ingresses that make servers.
		if len(ing.ann.access.raw) == 0 {
			continue
		}
		e := tlsEnds{backend: b.resolveBackendTLS(ing), client: b.resolveClientTLS(ing)}
		if e != (tlsEnds{}) {
			if asked == nil {
				asked = make(map[*ingress]*tlsEnds)
			}
			asked[ing] = &e
		}
	}
	if asked == nil {
		return
	}
	for _, v := range b.vhostOrder {
		for _, r := range v.vh.Routes {
			if e := asked[b.ingressOf(r.Source)]; e != nil {
				r.BackendTLS = e.backend
			}
		}
	}
	b.applyHostTLSEnds(asked)
}

// applyHostTLSEnds sets each host's server-level settings from its
// Ingresses, canaries included, in Ingress order, as ingress-nginx's
// getBackendServers does.
func (b *builder) applyHostTLSEnds(asked map[*ingress]*tlsEnds) {
	passthrough := make(map[*vhost]*ingress)
	order := slices.SortedFunc(maps.Keys(asked), func(x, y *ingress) int { return cmp.Compare(x.rank, y.rank) })
	for _, ing := range order {
		e := asked[ing]
		if e.passthrough {
			// createServers reads ssl-passthrough from every rule.
			for _, rh := range ing.rules {
				if v := rh.vhost; v != nil && passthrough[v] == nil {
					passthrough[v] = ing
				}
			}
		}
		for _, v := range b.serverHosts(ing) {
			if bt := e.backend; bt != nil && len(bt.CAs) > 0 && v.vh.FallbackLocation.BackendTLS == nil && !b.opts.ProxySSLLocationOnly {
				v.vh.FallbackLocation.BackendTLS = bt
			}
			if c := e.client; c != nil {
				switch cur := v.vh.ClientTLS; {
				case c.Error != "" && (cur == nil || cur.Error == ""):
					// The server's error wins over any CA (nginx.tmpl
					// writes a lone "return 403").
					v.vh.ClientTLS = c
				case cur == nil:
					v.vh.ClientTLS = c
				}
			}
		}
	}
	for _, v := range b.vhostOrder {
		if ing := passthrough[v]; ing != nil {
			b.passthroughBackend(v, ing)
		}
	}
	mergeServerBackendTLS(b.vhostOrder)
}

// serverHosts are the hosts whose servers an Ingress's server-level
// annotations reach: its rules' hosts, a rule without http only on the
// catch-all. A canary's rule reaches its host's server when an ordinary
// Ingress made one, else the catch-all's, as getBackendServers falls back
// to the "_" server for a host createServers did not make; like there, a
// canary rule with a host and no http reaches none.
func (b *builder) serverHosts(ing *ingress) []*vhost {
	var out []*vhost
	if ing.ann.trafficR().canaryKey == "" {
		for i, rh := range ing.rules {
			v := rh.vhost
			if v == nil || ing.obj.Spec.Rules[i].HTTP == nil && v != b.catchAll {
				// getBackendServers skips a rule without http before
				// it reads auth-tls and proxy-ssl for the server.
				continue
			}
			out = append(out, v)
		}
		return out
	}
	for i := range ing.obj.Spec.Rules {
		rule := &ing.obj.Spec.Rules[i]
		if rule.HTTP == nil && rule.Host != "" {
			continue
		}
		v := b.vhostOf(rule.Host)
		if v == nil || v.creator == nil {
			v = b.catchAll
		}
		out = append(out, v)
	}
	return out
}

// mergeServerBackendTLS gives each route whose Ingress has backend TLS of
// its own the host's server-level directives it does not write itself, as
// nginx merges a server's proxy_ssl_* into each location
// (ngx_http_proxy_merge_loc_conf), directive by directive. nginx.tmpl
// writes a location's CA, verification, depth, protocols and ciphers only
// when its Secret has a ca.crt, its client certificate only when the
// Secret also has a key pair, proxy_ssl_name only when set, and
// proxy_ssl_server_name always. A denied location answers 503 whatever it
// would inherit.
func mergeServerBackendTLS(vhosts []*vhost) {
	type pair struct{ own, server *match.BackendTLS }
	merged := map[pair]*match.BackendTLS{}
	for _, v := range vhosts {
		server := v.vh.FallbackLocation.BackendTLS
		if server == nil {
			continue
		}
		for _, r := range v.vh.Routes {
			own := r.BackendTLS
			if own == nil || own == server || own.Denied != "" {
				continue
			}
			m := merged[pair{own, server}]
			if m == nil {
				bt := *own
				if len(bt.CAs) == 0 {
					bt.CAs, bt.Verify, bt.VerifyDepth, bt.Protocols, bt.Ciphers = server.CAs, server.Verify, server.VerifyDepth, server.Protocols, server.Ciphers
				}
				if bt.ClientCert == nil {
					bt.ClientCert = server.ClientCert
				}
				if bt.Name == "" {
					bt.Name = server.Name
				}
				m = match.NewBackendTLS(bt)
				merged[pair{own, server}] = m
			}
			r.BackendTLS = m
		}
	}
}

// passthroughBackend is the backend of the host's "/" location: its root
// route's, else the fallback an Ingress's spec.defaultBackend gave it.
// ingress-nginx ignores passthrough for a host whose "/" is the global
// default backend.
func (b *builder) passthroughBackend(v *vhost, ing *ingress) {
	key := ing.ann.access.raw["ssl-passthrough"].key
	if v == b.catchAll || strings.HasPrefix(v.vh.Name, "*.") {
		// ingress-nginx's TCP proxy compares the SNI with the server's
		// name as written, which no SNI equals.
		b.warn(AnnotationRejected, ing.ref(), annotationField(key),
			key+": "+hostLabel(v.vh.Name)+" is no single name a ClientHello can ask for; its TLS connections are not passed through (in ingress-nginx neither)")
		return
	}
	var be *match.Backend
	for _, r := range v.vh.Routes {
		if (r.Type == match.Prefix && r.Path == "") || (r.Type != match.Prefix && r.Path == "/") {
			be = r.Backend
			break
		}
	}
	if be == nil && v.vh.FallbackSource.Name != "" {
		be = v.vh.Fallback
	}
	if be == nil {
		b.warn(AnnotationRejected, ing.ref(), annotationField(key),
			key+": host "+strconv.Quote(v.vh.Name)+" has no \"/\" path of its own, so its TLS connections are not passed through (ingress-nginx ignores it too)")
		return
	}
	v.vh.Passthrough = be
}

func (b *builder) resolvePassthrough(ing *ingress) bool {
	a, ok := ing.ann.access.get("ssl-passthrough")
	if !ok {
		return false
	}
	on, err := strconv.ParseBool(a.value)
	switch {
	case err != nil:
		b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a boolean (true or false); not applied")
		return false
	case on && !b.opts.EnableSSLPassthrough:
		b.rejectAccess(ing, a.key, "needs the controller's --enable-ssl-passthrough (Options.EnableSSLPassthrough), as in ingress-nginx; TLS is terminated as for any host")
		return false
	}
	return on
}

// secretRef reads a "namespace/name" Secret annotation as
// k8s.ParseNameNS does; why is set when it is not one, or names another
// namespace without allow-cross-namespace-resources.
func (b *builder) secretRef(ing *ingress, value string) (ns, name, why string) {
	v := strings.TrimSpace(value)
	if !secretNameNSFormat.MatchString(v) {
		return "", "", strconv.Quote(value) + " is not namespace/name"
	}
	ns, name, _ = strings.Cut(v, "/")
	if ns != ing.obj.Namespace && !b.opts.AllowCrossNamespaceResources {
		return "", "", "Secret " + v + " is in another namespace, which ingress-nginx allows only with the ConfigMap key allow-cross-namespace-resources"
	}
	return ns, name, ""
}

// authSecret is a Secret's CA and key pair, as ingress-nginx's
// getPemCertificate reads them; why says why it cannot be used.
func (b *builder) authSecret(ns, name string) (cas []*x509.Certificate, pair *tls.Certificate, reason Reason, why string) {
	return readAuthSecret(b.secrets[objKey{ns, name}], ns+"/"+name)
}

// readAuthSecret is authSecret of sec (nil: not found), named ref.
func readAuthSecret(sec *corev1.Secret, ref string) (cas []*x509.Certificate, pair *tls.Certificate, reason Reason, why string) {
	if sec == nil {
		return nil, nil, SecretNotFound, "Secret " + ref + " not found"
	}
	crt, key, ca := secretData(sec, corev1.TLSCertKey), secretData(sec, corev1.TLSPrivateKeyKey), secretData(sec, "ca.crt")
	if len(crt) > 0 && len(key) > 0 {
		p, err := tls.X509KeyPair(crt, key)
		if err != nil {
			return nil, nil, SecretInvalid, "Secret " + ref + ": tls.crt and tls.key do not form a key pair: " + err.Error()
		}
		pair = &p
	}
	if len(ca) > 0 {
		var err error
		if cas, err = parseCAs(ca); err != nil {
			return nil, nil, SecretInvalid, "Secret " + ref + ": ca.crt: " + err.Error()
		}
	}
	if pair == nil && cas == nil {
		return nil, nil, SecretInvalid, "Secret " + ref + " contains no key pair or CA certificate"
	}
	return cas, pair, "", ""
}

// parseCRLs reads a ca.crl as ingress-nginx accepts it (ssl.ConfigureCRL:
// the first PEM block an "X509 CRL" that parses) and nginx's ssl_crl loads
// it: every CRL of the file. nil for none.
func parseCRLs(data []byte) ([]*x509.RevocationList, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var crls []*x509.RevocationList
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "X509 CRL" {
			if crls == nil {
				return nil, errors.New("the first PEM block is not an X509 CRL")
			}
			continue
		}
		crl, err := x509.ParseRevocationList(block.Bytes)
		if err != nil {
			return nil, err
		}
		crls = append(crls, crl)
	}
	if crls == nil {
		return nil, errors.New("no PEM block")
	}
	return crls, nil
}

func parseCAs(data []byte) ([]*x509.Certificate, error) {
	var cas []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		cas = append(cas, c)
	}
	if len(cas) == 0 {
		return nil, errors.New("no PEM certificate")
	}
	return cas, nil
}

// resolveBackendTLS reads proxy-ssl-*; nil without proxy-ssl-secret.
func (b *builder) resolveBackendTLS(ing *ingress) *match.BackendTLS {
	raw := &ing.ann.access
	sa, ok := raw.get("proxy-ssl-secret")
	if !ok {
		// A default written out changes nothing under either
		// controller; another value is a setting that does not apply.
		for k, def := range proxySSLDefaults {
			if a, ok := raw.get(k); ok && strings.TrimSpace(a.value) != def {
				b.rejectAccess(ing, a.key, "has no effect without proxy-ssl-secret, as in ingress-nginx")
			}
		}
		return nil
	}
	deny := func(reason Reason, why string) *match.BackendTLS {
		b.warn(reason, ing.ref(), annotationField(sa.key), sa.key+": "+why+"; every request to this Ingress's paths answers 503")
		return match.NewBackendTLS(match.BackendTLS{Secret: strings.TrimSpace(sa.value), Denied: why})
	}
	ns, name, why := b.secretRef(ing, sa.value)
	if why != "" {
		return deny(AnnotationRejected, why)
	}
	cas, pair, reason, why := b.authSecret(ns, name)
	if why != "" {
		return deny(reason, why)
	}
	bt := match.BackendTLS{Secret: ns + "/" + name, VerifyDepth: 1, Ciphers: "DEFAULT", Protocols: []string{"TLSv1.2"}}
	if len(cas) > 0 {
		bt.CAs, bt.ClientCert = cas, pair
	}
	bad := func(a accessValue, def string) {
		b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not valid; "+def+" applies, as in ingress-nginx")
	}
	if a, ok := raw.get("proxy-ssl-ciphers"); ok {
		v := strings.TrimSpace(a.value)
		switch _, notes, err := configmap.ParseCiphers(v); {
		case !proxySSLCiphers.MatchString(v) || v == "":
			bad(a, "DEFAULT")
		case err != nil:
			// nginx refuses a list that selects no suite.
			b.rejectAccess(ing, a.key, err.Error()+"; DEFAULT applies")
		default:
			for _, n := range notes {
				b.warn(AnnotationSubstituted, ing.ref(), annotationField(a.key), a.key+": "+n)
			}
			bt.Ciphers = v
		}
	}
	if a, ok := raw.get("proxy-ssl-protocols"); ok {
		v := strings.TrimSpace(a.value)
		if fields := strings.Fields(v); proxySSLProtocols.MatchString(v) && len(fields) > 0 {
			slices.Sort(fields)
			bt.Protocols = slices.Compact(fields)
		} else {
			bad(a, "TLSv1.2")
		}
	}
	if a, ok := raw.get("proxy-ssl-name"); ok {
		v := strings.TrimSpace(a.value)
		switch err := match.CheckBackendTLSName(v); {
		case !proxySSLName.MatchString(v):
			bad(a, "the default name ("+match.ProxyHostName+")")
		case err != nil:
			// nginx would expand it; sent as written it names no backend.
			b.rejectAccess(ing, a.key, valueError(a.value, err)+"; the default name ("+match.ProxyHostName+") applies")
		default:
			bt.Name = v
		}
	}
	if a, ok := raw.get("proxy-ssl-verify"); ok {
		if v := strings.TrimSpace(a.value); onOffValue.MatchString(v) {
			bt.Verify = v == "on"
		} else {
			bad(a, "off")
		}
	}
	if a, ok := raw.get("proxy-ssl-verify-depth"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(a.value)); err == nil && n > 0 {
			bt.VerifyDepth = n
		} else if err != nil || n < 0 {
			bad(a, "1")
		}
	}
	if a, ok := raw.get("proxy-ssl-server-name"); ok {
		if v := strings.TrimSpace(a.value); onOffValue.MatchString(v) {
			bt.ServerName = v == "on"
		} else {
			bad(a, "off")
		}
	}
	if len(cas) == 0 {
		// ingress-nginx writes only proxy_ssl_name and _server_name for a
		// Secret without a CA (nginx.tmpl: the rest sits under CAFileName).
		if pair != nil || bt.Verify {
			msg := sa.key + ": Secret " + bt.Secret + " has no ca.crt: this Ingress's paths verify no backend certificate and present no client certificate of their own, as in ingress-nginx"
			if !b.opts.ProxySSLLocationOnly {
				msg += "; they take the host's, if another of its Ingresses has a proxy-ssl-secret with a ca.crt"
			}
			b.warn(SecretInvalid, ing.ref(), annotationField(sa.key), msg)
		}
		bt.Verify, bt.VerifyDepth, bt.Ciphers, bt.Protocols = false, 0, "", nil
	}
	return match.NewBackendTLS(bt)
}

// resolveClientTLS reads auth-tls-*; nil without auth-tls-secret.
func (b *builder) resolveClientTLS(ing *ingress) *match.ClientTLS {
	raw := &ing.ann.access
	sa, ok := raw.get("auth-tls-secret")
	if !ok {
		for _, k := range []string{"auth-tls-verify-client", "auth-tls-verify-depth", "auth-tls-error-page",
			"auth-tls-pass-certificate-to-upstream", "auth-tls-match-cn"} {
			if a, ok := raw.get(k); ok {
				b.rejectAccess(ing, a.key, "has no effect without auth-tls-secret, as in ingress-nginx")
			}
		}
		return nil
	}
	failAt := func(key string, reason Reason, why string) *match.ClientTLS {
		b.warn(reason, ing.ref(), annotationField(key), key+": "+why+"; every request to the Ingress's hosts answers 403, as in ingress-nginx")
		c, _ := match.NewClientTLS(match.ClientTLS{Secret: strings.TrimSpace(sa.value), Error: why})
		return c
	}
	fail := func(reason Reason, why string) *match.ClientTLS { return failAt(sa.key, reason, why) }
	ns, name, why := b.secretRef(ing, sa.value)
	if why != "" {
		return fail(AnnotationRejected, why)
	}
	cas, _, reason, why := b.authSecret(ns, name)
	if why != "" {
		return fail(reason, why)
	}
	if len(cas) == 0 {
		b.warn(SecretInvalid, ing.ref(), annotationField(sa.key), sa.key+": Secret "+ns+"/"+name+" has no ca.crt: client certificates are not asked for, as in ingress-nginx")
		return nil
	}
	crls, err := parseCRLs(secretData(b.secrets[objKey{ns, name}], "ca.crl"))
	if err != nil {
		return fail(SecretInvalid, "Secret "+ns+"/"+name+": ca.crl: "+err.Error())
	}
	c := match.ClientTLS{Secret: ns + "/" + name, CAs: cas, CRLs: crls, Verify: match.VerifyOn, VerifyDepth: 1}
	if a, ok := raw.get("auth-tls-verify-client"); ok {
		if v := strings.TrimSpace(a.value); authTLSVerify.MatchString(v) {
			c.Verify = match.ClientVerify(v)
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not on, off, optional or optional_no_ca; on applies, as in ingress-nginx")
		}
	}
	if a, ok := raw.get("auth-tls-verify-depth"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(a.value)); err == nil && n > 0 {
			c.VerifyDepth = n
		} else if err != nil || n < 0 {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a positive number; 1 applies, as in ingress-nginx")
		}
	}
	if a, ok := raw.get("auth-tls-error-page"); ok {
		if v := strings.TrimSpace(a.value); authTLSErrorPage.MatchString(v) && !strings.HasPrefix(v, "@") {
			c.ErrorPage = v
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a URL or path; requests without a valid certificate get the 400 (ingress-nginx drops the whole Ingress)")
		}
	}
	if a, ok := raw.get("auth-tls-pass-certificate-to-upstream"); ok {
		if on, err := strconv.ParseBool(a.value); err == nil {
			c.PassCertificate = on
		} else {
			b.rejectAccess(ing, a.key, strconv.Quote(a.value)+" is not a boolean (true or false); not applied (ingress-nginx drops the whole Ingress)")
		}
	}
	if a, ok := raw.get("auth-tls-match-cn"); ok {
		v := a.value
		if _, err := regexp.Compile(strings.TrimPrefix(v, "CN=")); err != nil || !strings.HasPrefix(v, "CN=") {
			return failAt(a.key, AnnotationRejected, strconv.Quote(v)+` is not "CN=" followed by a regular expression`)
		}
		c.MatchCN = v
		if !matchCNAnchored(v) {
			b.warn(AnnotationUnanchored, ing.ref(), annotationField(a.key), a.key+": "+strconv.Quote(v)+
				` matches anywhere in the client's subject DN, as ingress-nginx's "$ssl_client_s_dn !~" test does, so a DN that merely contains a match passes (CN=alice.evil for CN=alice); `+
				strconv.Quote(anchoredMatchCN(v))+` passes only the whole DN it spells out, every RDN included (the value must begin with CN=, so its first branch, which never matches, lets ^ lead the second)`)
		}
	}
	out, err := match.NewClientTLS(c)
	if err != nil {
		return failAt(raw.raw["auth-tls-match-cn"].key, AnnotationRejected, err.Error())
	}
	return out
}

// matchCNAnchored reports whether an auth-tls-match-cn pattern matches
// only whole subject DNs: every branch that can match at all begins with
// ^ and ends with $.
func matchCNAnchored(pattern string) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	return err == nil && spansText(re)
}

func spansText(re *syntax.Regexp) bool {
	if re.Op == syntax.OpAlternate {
		return !slices.ContainsFunc(re.Sub, func(s *syntax.Regexp) bool { return !spansText(s) })
	}
	return neverMatches(re) || edgeAnchored(re, syntax.OpBeginText) && edgeAnchored(re, syntax.OpEndText)
}

// edgeAnchored reports whether every match of re begins (op
// OpBeginText) or ends (OpEndText) with that assertion.
func edgeAnchored(re *syntax.Regexp, op syntax.Op) bool {
	switch re.Op {
	case op:
		return true
	case syntax.OpCapture:
		return edgeAnchored(re.Sub[0], op)
	case syntax.OpConcat:
		i := 0
		if op == syntax.OpEndText {
			i = len(re.Sub) - 1
		}
		return len(re.Sub) > 0 && edgeAnchored(re.Sub[i], op)
	case syntax.OpAlternate:
		return !slices.ContainsFunc(re.Sub, func(s *syntax.Regexp) bool { return !neverMatches(s) && !edgeAnchored(s, op) })
	}
	return false
}

// neverMatches: a literal before ^, as the "CN=^" that lets a value
// beginning with CN= anchor its other branches.
func neverMatches(re *syntax.Regexp) bool {
	if re.Op != syntax.OpConcat {
		return false
	}
	for i, s := range re.Sub {
		if s.Op == syntax.OpBeginText && slices.ContainsFunc(re.Sub[:i], func(s *syntax.Regexp) bool { return s.Op == syntax.OpLiteral }) {
			return true
		}
	}
	return false
}

// anchoredMatchCN spells an auth-tls-match-cn value so that it matches
// only a whole subject DN. The value must begin with "CN=" (ingress-nginx's
// CommonNameAnnotationValidator) and nginx matches it unanchored, so an
// empty first branch "CN=^", which never matches, lets ^ lead the second.
func anchoredMatchCN(v string) string {
	body := strings.TrimPrefix(v, "CN=^|^")
	if strings.HasSuffix(body, "$") && !strings.HasSuffix(body, `\$`) {
		body = body[:len(body)-1]
	}
	if topLevelAlternation(body) {
		body = "(?:" + body + ")"
	}
	return "CN=^|^" + body + "$"
}

// topLevelAlternation reports whether a pattern has a | outside groups and
// character classes.
func topLevelAlternation(p string) bool {
	depth, class := 0, false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
			if i+1 < len(p) && p[i+1] == '^' {
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				i++ // a ] first in a class is itself
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			return true
		}
	}
	return false
}
