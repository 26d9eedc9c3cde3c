package compile

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"ramjet.dev/ramjet/match"
)

// parsedSecret is one Secret's key pair, parsed once however many
// Ingresses name it.
type parsedSecret struct {
	problem Reason // "", SecretNotFound or SecretInvalid
	message string
	cert    *match.Certificate
	leaf    *x509.Certificate
}

// covers reports whether the certificate is valid for the TLS host h. A
// wildcard host needs a certificate valid for every name it stands for, so
// it is checked with one label no certificate names explicitly. A
// certificate without DNS names is read by its Common Name, as
// ingress-nginx's verifyHostname still reads it (Go's VerifyHostname no
// longer does): such a certificate is served, not the default.
func (ps *parsedSecret) covers(h string) bool {
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		h = "ramjet-wildcard-check." + rest
	}
	if ps.leaf.VerifyHostname(h) == nil {
		return true
	}
	return len(ps.leaf.DNSNames) == 0 && commonNameMatches(strings.ToLower(ps.leaf.Subject.CommonName), h)
}

// commonNameMatches is ingress-nginx's matchHostnames: label by label, a
// "*" first label standing for any one label.
func commonNameMatches(pattern, host string) bool {
	pattern = strings.TrimSuffix(pattern, ".")
	if pattern == "" {
		return false
	}
	pl, hl := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pl) != len(hl) {
		return false
	}
	for i, p := range pl {
		if p != hl[i] && (i != 0 || p != "*") {
			return false
		}
	}
	return true
}

// buildTLS reads every claimed Ingress's spec.tls (SPEC §12).
//
//   - Every valid host listed is a TLS host, whether or not the Secret is
//     usable: the plain-HTTP redirect must not depend on a Secret being
//     right. It marks its virtual host TLS; a listed host with no rule
//     creates no virtual host (ingress-nginx makes no server for it either)
//     but is still in the table's TLS hosts, so it is still redirected and
//     still gets its certificate, since SNI selection is separate from
//     routing.
//   - A host's certificate comes from the oldest Ingress whose tls entry
//     lists the host with a valid Secret whose certificate covers the host
//     (SPEC §19); a listed certificate that does not cover it warns
//     CertificateHostMismatch and the next one, else the default, serves.
//   - An entry without secretName asks for the default certificate: no
//     warning. An invalid listed host warns RuleRejected and is skipped.
//   - A rule host left without a certificate gets the first Secret of its
//     own Ingress's spec.tls valid for it, oldest Ingress first, as in
//     ingress-nginx (coveringSecret). It is no TLS host for that: only
//     listed hosts are redirected (SPEC §12).
func (b *builder) buildTLS() {
	tlsHosts := make(map[string]bool)
	chosen := make(map[string]bool)
	var used []*parsedSecret
	var hosts []string // one entry's valid hosts, reused across entries
	for _, ing := range b.ingresses {
		for i := range ing.obj.Spec.TLS {
			entry := &ing.obj.Spec.TLS[i]
			field := tlsField(i)
			hosts = hosts[:0]
			for j, h := range entry.Hosts {
				why := invalidHost(h)
				if h == "" {
					why = "is empty"
				}
				if why != "" {
					b.warn(RuleRejected, ing.ref(), field+".hosts["+strconv.Itoa(j)+"]",
						"TLS host "+strconv.Quote(h)+" "+why+"; it gets no certificate and no redirect from this entry")
					continue
				}
				tlsHosts[h] = true
				hosts = append(hosts, h)
			}
			if entry.SecretName == "" {
				continue
			}
			ps := b.secret(ing.obj.Namespace, entry.SecretName)
			if ps.problem != "" {
				b.warn(ps.problem, ing.ref(), field+".secretName", ps.message+"; its hosts get the default certificate")
				continue
			}
			for _, h := range hosts {
				if chosen[h] {
					continue
				}
				if !ps.covers(h) {
					b.warn(CertificateHostMismatch, ing.ref(), field+".secretName",
						"the certificate in Secret "+ps.cert.Secret+" is not valid for TLS host "+strconv.Quote(h)+
							"; another Ingress's certificate for the host, else the default certificate, is served")
					continue
				}
				chosen[h] = true
				if len(ps.cert.Hosts) == 0 {
					used = append(used, ps)
				}
				ps.cert.Hosts = append(ps.cert.Hosts, h)
			}
		}
	}
	for _, ing := range b.ingresses {
		if len(ing.obj.Spec.TLS) == 0 {
			continue
		}
		for _, rh := range ing.rules {
			if v := rh.vhost; v != nil && v.vh.Name != "" && !chosen[v.vh.Name] {
				if ps := b.coveringSecret(ing, v.vh.Name); ps != nil {
					h := v.vh.Name
					chosen[h] = true
					if len(ps.cert.Hosts) == 0 {
						used = append(used, ps)
					}
					ps.cert.Hosts = append(ps.cert.Hosts, h)
				}
			}
		}
	}
	for _, v := range b.vhostOrder {
		v.vh.TLS = tlsHosts[v.vh.Name]
	}
	b.tlsHosts = make([]string, 0, len(tlsHosts))
	for h := range tlsHosts {
		b.tlsHosts = append(b.tlsHosts, h)
	}
	slices.Sort(b.tlsHosts)
	b.certs = make([]*match.Certificate, 0, len(used))
	for _, ps := range used {
		slices.Sort(ps.cert.Hosts)
		b.certs = append(b.certs, ps.cert)
	}
}

// coveringSecret is the first Secret of ing's spec.tls whose certificate
// is valid for h, a host of its rules that none of its entries lists, else
// nil: ingress-nginx serves it to such a host (extractTLSSecretName's
// search by SAN), so an entry with a secretName and no hosts covers the
// rules it is valid for. A host the Ingress lists keeps its entry's Secret.
func (b *builder) coveringSecret(ing *ingress, h string) *parsedSecret {
	for i := range ing.obj.Spec.TLS {
		if slices.ContainsFunc(ing.obj.Spec.TLS[i].Hosts, func(l string) bool { return strings.EqualFold(l, h) }) {
			return nil
		}
	}
	for i := range ing.obj.Spec.TLS {
		if name := ing.obj.Spec.TLS[i].SecretName; name != "" {
			if ps := b.secret(ing.obj.Namespace, name); ps.problem == "" && ps.covers(h) {
				return ps
			}
		}
	}
	return nil
}

// secret parses the kubernetes.io/tls Secret ns/name once. A Secret of
// another type reads as absent.
func (b *builder) secret(ns, name string) *parsedSecret {
	if ps, ok := b.parsed[objKey{ns, name}]; ok {
		return ps
	}
	ps := &parsedSecret{}
	b.parsed[objKey{ns, name}] = ps
	key := ns + "/" + name
	sec := b.secrets[objKey{ns, name}]
	switch {
	case sec == nil:
		ps.problem, ps.message = SecretNotFound, "Secret "+key+" not found"
	case sec.Type != corev1.SecretTypeTLS:
		ps.problem, ps.message = SecretNotFound,
			"Secret "+key+" is of type "+strconv.Quote(string(sec.Type))+", not kubernetes.io/tls, and reads as absent"
	default:
		pair, err := tls.X509KeyPair(secretData(sec, corev1.TLSCertKey), secretData(sec, corev1.TLSPrivateKeyKey))
		if err != nil {
			ps.problem, ps.message = SecretInvalid,
				"Secret "+key+": tls.crt and tls.key do not form a key pair: "+err.Error()
			break
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			ps.problem, ps.message = SecretInvalid, "Secret "+key+": tls.crt: "+err.Error()
			break
		}
		sum := sha256.Sum256(pair.Certificate[0])
		ps.cert = &match.Certificate{Secret: key, Fingerprint: hex.EncodeToString(sum[:]), Cert: &pair}
		ps.leaf = leaf
	}
	return ps
}

// secretData reads a key the way the API server stores it: stringData,
// when a manifest carries it, overrides data.
func secretData(sec *corev1.Secret, key string) []byte {
	if s, ok := sec.StringData[key]; ok {
		return []byte(s)
	}
	return sec.Data[key]
}
