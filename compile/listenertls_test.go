package compile

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestListenerCertificates(t *testing.T) {
	gw := Ref{Kind: "Gateway", Namespace: "infra", Name: "gw"}
	s := mkSnapshot(
		mkService("prod", "web", ":80:"), mkSlice("prod", "web", "w", "", 80, "10.0.0.1"),
		mkSecret("prod", "ing", "a"), mkSecret("infra", "b", "b"), mkSecret("infra", "c", "c"),
		mkSecret("infra", "narrow", "narrow"),
		mkIngress("prod", "shop", 1, withRules(mkRule("shop.example.com", prefix("/", "web", 80))),
			withTLS("ing", "shop.example.com")),
	)
	lc := func(field, secret string, created int64, hosts ...string) *ListenerCertificate {
		return &ListenerCertificate{Object: gw, Field: field, Created: time.Unix(created, 0),
			SecretNamespace: "infra", SecretName: secret, Hosts: hosts}
	}
	s.ListenerCertificates = []*ListenerCertificate{
		// Newer than the next one: it serves only what the older leaves.
		lc("spec.listeners[1].tls.certificateRefs[0]", "c", 5, "api.example.com", "*.wild.example.com"),
		lc("spec.listeners[0].tls.certificateRefs[0]", "b", 2, "api.example.com", "shop.example.com"),
		lc("spec.listeners[2].tls.certificateRefs[0]", "missing", 2, "gone.example.com"),
		lc("spec.listeners[3].tls.certificateRefs[0]", "narrow", 2, "other.example.com"),
		nil,
	}
	tab, ws := compileOK(t, s, Options{})

	got := map[string]string{}
	for c := range tab.Certificates() {
		for _, h := range c.Hosts {
			got[h] = c.Secret
		}
	}
	want := map[string]string{
		"shop.example.com":   "prod/ing", // the Ingress's certificate wins its host
		"api.example.com":    "infra/b",  // the older listener's
		"*.wild.example.com": "infra/c",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("certificates by host (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]short{
		{SecretNotFound, "Gateway infra/gw", "spec.listeners[2].tls.certificateRefs[0]"},
		{CertificateHostMismatch, "Gateway infra/gw", "spec.listeners[3].tls.certificateRefs[0]"},
	}, shorten(ws)); d != "" {
		t.Errorf("warnings (-want +got):\n%s\n%s", d, warningText(ws))
	}
	// Listener certificates make no TLS host: plain HTTP is not redirected.
	if tlsHosts := slices.Collect(tab.TLSHosts()); !slices.Equal(tlsHosts, []string{"shop.example.com"}) {
		t.Errorf("TLS hosts %v, want only the Ingress's", tlsHosts)
	}

	// The digest covers them, and their order does not matter.
	s2 := s
	s2.ListenerCertificates = append([]*ListenerCertificate(nil), s.ListenerCertificates[1], s.ListenerCertificates[0], s.ListenerCertificates[3], s.ListenerCertificates[2])
	tab2, _ := compileOK(t, s2, Options{})
	if tab2.Digest() != tab.Digest() {
		t.Error("the digest depends on the order of listener certificates")
	}
	s2.ListenerCertificates = s2.ListenerCertificates[:1]
	tab3, _ := compileOK(t, s2, Options{})
	if tab3.Digest() == tab.Digest() {
		t.Error("the digest does not cover listener certificates")
	}
}
