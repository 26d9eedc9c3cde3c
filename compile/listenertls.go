package compile

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"ramjet.dev/ramjet/match"
)

// ListenerCertificate is a certificate a route source asks to be served on
// the TLS listener, chosen by SNI, for some host names: a Gateway HTTPS
// listener's tls.certificateRefs entry as compile/gatewayapi translates it
// (SPEC §20). The translator has already checked the reference (kind,
// ReferenceGrant); compile reads the Secret as it does an Ingress's.
//
// Unlike an Ingress's spec.tls, a listener certificate does not make its
// hosts TLS hosts: plain HTTP to them is not redirected, since a Gateway
// says with its own HTTP listener and RequestRedirect filters what plain
// HTTP gets.
type ListenerCertificate struct {
	// Object and Field name the declaration in warnings: the Gateway and
	// "spec.listeners[1].tls.certificateRefs[0]".
	Object Ref
	Field  string
	// Created is the object's creation timestamp. A host's certificate is
	// an Ingress's when one lists the host (SPEC §12), else that of the
	// oldest listener certificate valid for it, then by object and field.
	Created time.Time
	// SecretNamespace and SecretName name the kubernetes.io/tls Secret.
	SecretNamespace, SecretName string
	// Hosts are the names, exact or "*." wildcards, it is served for, or
	// match.AnyName for every name no other certificate serves.
	Hosts []string
}

// buildListenerCertificates adds the listener certificates for the hosts
// no Ingress certificate serves. It runs after buildTLS. A Secret that is
// missing or invalid, or a certificate not valid for a host, warns as for
// an Ingress, naming the listener's object and field.
func (b *builder) buildListenerCertificates() {
	if len(b.snap.ListenerCertificates) == 0 {
		return
	}
	chosen := make(map[string]bool)
	for _, c := range b.certs {
		for _, h := range c.Hosts {
			chosen[h] = true
		}
	}
	lcs := slices.DeleteFunc(slices.Clone(b.snap.ListenerCertificates), func(lc *ListenerCertificate) bool { return lc == nil })
	slices.SortStableFunc(lcs, func(x, y *ListenerCertificate) int {
		return cmp.Or(x.Created.Compare(y.Created), cmp.Compare(x.Object.Namespace, y.Object.Namespace),
			cmp.Compare(x.Object.Name, y.Object.Name), cmp.Compare(x.Field, y.Field))
	})
	for _, lc := range lcs {
		ps := b.secret(lc.SecretNamespace, lc.SecretName)
		if ps.problem != "" {
			b.warn(ps.problem, lc.Object, lc.Field, ps.message+"; its hosts get another listener's certificate, else the default certificate")
			continue
		}
		for _, h := range lc.Hosts {
			if chosen[h] {
				continue
			}
			if h != match.AnyName && !ps.covers(h) {
				b.warn(CertificateHostMismatch, lc.Object, lc.Field,
					"the certificate in Secret "+ps.cert.Secret+" is not valid for host "+strconv.Quote(h)+
						"; another certificate for the host, else the default certificate, is served")
				continue
			}
			chosen[h] = true
			if len(ps.cert.Hosts) == 0 && !slices.Contains(b.certs, ps.cert) {
				b.certs = append(b.certs, ps.cert)
			}
			ps.cert.Hosts = append(ps.cert.Hosts, h)
		}
	}
	for _, c := range b.certs {
		slices.Sort(c.Hosts)
		c.Hosts = slices.Compact(c.Hosts)
	}
}
