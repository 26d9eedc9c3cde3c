package main

import (
	"crypto/tls"
	"crypto/x509"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"ramjet.dev/ramjet/match"
)

// The certificate and orphan metrics of ingress-nginx v1.15
// (internal/ingress/metric/collectors/controller.go): ssl_expire_time_seconds
// and ssl_certificate_info per host and certificate, with the labels
// SetSSLExpireTime and SetSSLInfo give them (namespace is the Secret's,
// class the controller's, no controller_* constant labels), and
// orphan_ingress per Ingress whose backend has no Service ("no-service") or
// no endpoints ("no-endpoint"), as the controller's createUpstreams counts
// them. They are set anew from every published table, so a certificate or
// Ingress gone from the table is gone from the scrape. The default
// certificate has series for the default server "_" and for each TLS host
// of the table served it, as ingress-nginx's createServers gives it to
// them, labelled with its --default-ssl-certificate Secret (no namespace
// and name for the self-signed one, as for ingress-nginx's fake
// certificate); they are set anew when it rotates too.

var (
	sslLabelHost    = []string{"namespace", "class", "host", "secret_name", "identifier"}
	sslInfoLabels   = []string{"namespace", "class", "host", "secret_name", "identifier", "issuer_organization", "issuer_common_name", "serial_number", "public_key_algorithm"}
	orphanityLabels = []string{"namespace", "ingress", "type"} // with the controller_* constant labels
)

// tableMetrics are the metrics read from each published table.
type tableMetrics struct {
	sslExpire, sslInfo, orphan *prometheus.GaugeVec
	// mu: set replaces every series under it and a scrape reads them
	// under it, so a scrape sees the old set or the new, never a part.
	mu *sync.RWMutex
}

func newTableMetrics(id metricsIdentity) tableMetrics {
	return tableMetrics{
		mu: new(sync.RWMutex),
		sslExpire: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: nginxNamespace, Name: "ssl_expire_time_seconds",
			Help: `Number of seconds since 1970 to the SSL Certificate expire.
			An example to check if this certificate will expire in 10 days is: "nginx_ingress_controller_ssl_expire_time_seconds < (time() + (10 * 24 * 3600))"`,
		}, sslLabelHost),
		sslInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: nginxNamespace, Name: "ssl_certificate_info", Help: "Hold all labels associated to a certificate",
		}, sslInfoLabels),
		orphan: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: nginxNamespace, Name: "orphan_ingress", ConstLabels: id.labels(),
			Help: `Gauge reporting status of ingress orphanity, 1 indicates orphaned ingress.
			'namespace' is the string used to identify namespace of ingress, 'ingress' for ingress name and 'type' for 'no-service' or 'no-endpoint' of orphanity`,
		}, orphanityLabels),
	}
}

func (tm tableMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{readLocked{tm.mu, tm.sslExpire}, readLocked{tm.mu, tm.sslInfo}, readLocked{tm.mu, tm.orphan}}
}

// readLocked collects c under mu's read lock.
type readLocked struct {
	mu *sync.RWMutex
	c  prometheus.Collector
}

func (r readLocked) Describe(ch chan<- *prometheus.Desc) { r.c.Describe(ch) }

func (r readLocked) Collect(ch chan<- prometheus.Metric) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	r.c.Collect(ch)
}

// set replaces the series with those of t and of def, the default
// certificate served now (nil: none known), from the Secret secret
// ("namespace/name", "" for a self-signed one).
func (tm tableMetrics) set(t *match.Table, class string, def *tls.Certificate, secret string) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.sslExpire.Reset()
	tm.sslInfo.Reset()
	for c := range t.Certificates() {
		// A host listed under spec.tls without a rule has no server in
		// ingress-nginx, so no series, though its name gets the
		// certificate.
		hosts := slices.DeleteFunc(slices.Clone(c.Hosts), func(h string) bool {
			return t.IsTLSHost(h) && t.VirtualHostByName(h) == nil
		})
		tm.setCert(certLeaf(c), c.Secret, class, hosts)
	}
	if def != nil {
		hosts := []string{"_"}
		for vh := range t.VirtualHosts() {
			if vh.TLS && vh.Name != "" && t.Certificate(vh.Name) == nil {
				hosts = append(hosts, vh.Name)
			}
		}
		tm.setCert(certLeaf(&match.Certificate{Cert: def}), secret, class, hosts)
	}
	tm.orphan.Reset()
	// As createUpstreams: no-service is 1 or 0 for every Ingress with a
	// Service backend, no-endpoint 1 or 0 once a Service was found; 1
	// wins over 0 for an Ingress with several backends.
	orphaned := map[[3]string]bool{}
	mark := func(src match.Source, b *match.Backend) {
		if b == nil || src.Kind != "" && src.Kind != "Ingress" {
			return
		}
		set := func(typ string, on bool) {
			k := [3]string{src.Namespace, src.Name, typ}
			if was, ok := orphaned[k]; ok && (was || !on) {
				return
			}
			orphaned[k] = on
			tm.orphan.WithLabelValues(k[0], k[1], k[2]).Set(map[bool]float64{true: 1}[on])
		}
		switch b.State {
		case match.ServiceNotFound:
			set("no-service", true)
		case match.Serving:
			set("no-service", false)
			set("no-endpoint", len(b.Endpoints) == 0)
		}
	}
	for vh := range t.VirtualHosts() {
		for _, r := range vh.Routes {
			mark(r.Source, r.Backend)
		}
	}
}

// setCert sets the series of the certificate leaf from the Secret secret
// for hosts.
func (tm tableMetrics) setCert(leaf *x509.Certificate, secret, class string, hosts []string) {
	if leaf == nil || leaf.SerialNumber == nil {
		return
	}
	ns, name := splitRef(secret)
	// SSLCert.Identifier: the issuer's serialNumber attribute and the
	// certificate's serial.
	id := leaf.Issuer.SerialNumber + "-" + leaf.SerialNumber.String()
	org := ""
	if len(leaf.Issuer.Organization) > 0 {
		org = leaf.Issuer.Organization[0]
	}
	for _, host := range hosts {
		if host == match.AnyName {
			continue
		}
		tm.sslExpire.WithLabelValues(ns, class, host, name, id).Set(float64(leaf.NotAfter.Unix()))
		tm.sslInfo.WithLabelValues(ns, class, host, name, id, org, leaf.Issuer.CommonName, leaf.SerialNumber.String(), leaf.PublicKeyAlgorithm.String()).Set(1)
	}
}

// servesDefault names where published reads the default certificate
// served now and its Secret ("namespace/name", "" for none).
func (m *metrics) servesDefault(f func() (*tls.Certificate, string)) {
	if m != nil {
		m.defaultCert = f
	}
}

func certLeaf(c *match.Certificate) *x509.Certificate {
	if c == nil || c.Cert == nil {
		return nil
	}
	if c.Cert.Leaf != nil {
		return c.Cert.Leaf
	}
	if len(c.Cert.Certificate) == 0 {
		return nil
	}
	leaf, err := x509.ParseCertificate(c.Cert.Certificate[0])
	if err != nil {
		return nil
	}
	return leaf
}

func splitRef(ref string) (ns, name string) {
	for i := 0; i < len(ref); i++ {
		if ref[i] == '/' {
			return ref[:i], ref[i+1:]
		}
	}
	return "", ref
}
