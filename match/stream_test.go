package match

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamSpec is sectionSpec with a TCP and a UDP service.
func streamSpec(t *testing.T) Spec {
	s := sectionSpec(t)
	tcp := &Backend{ID: "tcp-prod-db-5432", Namespace: "prod", Name: "db", Port: 5432, Endpoints: []string{"10.0.9.1:5432", "10.0.9.2:5432"}}
	udp := &Backend{ID: "udp-kube-system-dns-53", Namespace: "kube-system", Name: "dns", Port: 53, Endpoints: []string{"10.0.8.1:53"}}
	s.L4Services = []*L4Service{
		{Protocol: UDP, Port: 53, Backend: udp, ServicePort: "53", Source: Source{Kind: "ConfigMap", Namespace: "ingress", Name: "udp", Field: "data[53]"}},
		{Protocol: TCP, Port: 5432, Backend: tcp, ServicePort: "5432", DecodeProxyProtocol: true, Source: Source{Kind: "ConfigMap", Namespace: "ingress", Name: "tcp", Field: "data[5432]"}},
	}
	return s
}

// A table without L4 services digests as before the section existed; one
// with them differs, and every value of a service and every setting
// changes both the digest and the text.
func TestStreamSectionDigest(t *testing.T) {
	plain := mustNew(t, sectionSpec(t))
	withSettings := sectionSpec(t)
	withSettings.StreamSettings = &StreamSettings{Timeout: time.Second}
	assert.Equal(t, plain.Digest(), mustNew(t, withSettings).Digest(), "settings without services change nothing")
	assert.NotContains(t, plain.String(), "l4")

	base := mustNew(t, streamSpec(t))
	assert.NotEqual(t, plain.Digest(), base.Digest())
	require.Equal(t, base.String(), mustNew(t, streamSpec(t)).String())
	assert.Contains(t, base.String(), "l4 tcp 5432 -> prod/db:5432 Serving proxy-protocol-in from ConfigMap ingress/tcp data[5432]\n  endpoint 10.0.9.1:5432\n")
	assert.Contains(t, base.String(), "l4 udp 53 -> kube-system/dns:53 Serving from ConfigMap ingress/udp data[53]\n")
	assert.Contains(t, base.String(), "l4-settings timeout 10m0s connect-timeout 1m0s next-upstream on tries 3 next-upstream-timeout 10m0s responses 1\n")

	tcp := func(s Spec) *L4Service { return s.L4Services[1] }
	changes := map[string]func(*Spec){
		"port":           func(s *Spec) { tcp(*s).Port = 5433 },
		"protocol":       func(s *Spec) { tcp(*s).Protocol = UDP },
		"decode":         func(s *Spec) { tcp(*s).DecodeProxyProtocol = false },
		"encode":         func(s *Spec) { tcp(*s).EncodeProxyProtocol = true },
		"service port":   func(s *Spec) { tcp(*s).ServicePort = "postgres" },
		"endpoints":      func(s *Spec) { tcp(*s).Backend.Endpoints = tcp(*s).Backend.Endpoints[:1] },
		"state":          func(s *Spec) { tcp(*s).Backend.State = ServiceNotFound },
		"backend name":   func(s *Spec) { tcp(*s).Backend.Name = "db2" },
		"timeout":        func(s *Spec) { st := DefaultStreamSettings; st.Timeout = time.Minute; s.StreamSettings = &st },
		"connect":        func(s *Spec) { st := DefaultStreamSettings; st.ConnectTimeout = time.Second; s.StreamSettings = &st },
		"next upstream":  func(s *Spec) { st := DefaultStreamSettings; st.NextUpstream = false; s.StreamSettings = &st },
		"tries":          func(s *Spec) { st := DefaultStreamSettings; st.NextUpstreamTries = 0; s.StreamSettings = &st },
		"tries timeout":  func(s *Spec) { st := DefaultStreamSettings; st.NextUpstreamTimeout = 0; s.StreamSettings = &st },
		"responses":      func(s *Spec) { st := DefaultStreamSettings; st.Responses = 2; s.StreamSettings = &st },
		"service gone":   func(s *Spec) { s.L4Services = s.L4Services[:1] },
		"backend moving": func(s *Spec) { tcp(*s).Backend.Namespace = "staging" },
	}
	for name, mutate := range changes {
		s := streamSpec(t)
		mutate(&s)
		tab := mustNew(t, s)
		assert.NotEqual(t, base.Digest(), tab.Digest(), name)
		assert.NotEqual(t, withoutDigest(base.String()), withoutDigest(tab.String()), name)
	}
}

func TestL4ServiceLookup(t *testing.T) {
	s := streamSpec(t)
	dup := *s.L4Services[1]
	dup.ServicePort = "other"
	s.L4Services = append(s.L4Services, &dup)
	tab := mustNew(t, s)
	require.NotNil(t, tab.L4Service(TCP, 5432))
	assert.Equal(t, "5432", tab.L4Service(TCP, 5432).ServicePort, "the first of a repeated port is kept")
	assert.Nil(t, tab.L4Service(UDP, 5432))
	assert.Equal(t, "dns", tab.L4Service(UDP, 53).Backend.Name)
	var n int
	for range tab.L4Services() {
		n++
	}
	assert.Equal(t, 2, n)
	assert.Equal(t, DefaultStreamSettings, tab.StreamSettings())

	bad := streamSpec(t)
	bad.L4Services[0].Port = 0
	_, err := New(bad)
	assert.Error(t, err)
	bad = streamSpec(t)
	bad.L4Services[0].Backend = nil
	_, err = New(bad)
	assert.Error(t, err)
}
