package main

import (
	"crypto/x509"

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
// Ingress gone from the table is gone from the scrape.

var (
	sslLabelHost    = []string{"namespace", "class", "host", "secret_name", "identifier"}
	sslInfoLabels   = []string{"namespace", "class", "host", "secret_name", "identifier", "issuer_organization", "issuer_common_name", "serial_number", "public_key_algorithm"}
	orphanityLabels = []string{"namespace", "ingress", "type"} // with the controller_* constant labels
)

// tableMetrics are the metrics read from each published table.
type tableMetrics struct {
	sslExpire, sslInfo, orphan *prometheus.GaugeVec
}

func newTableMetrics(id metricsIdentity) tableMetrics {
	return tableMetrics{
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
	return []prometheus.Collector{tm.sslExpire, tm.sslInfo, tm.orphan}
}

// set replaces the series with those of t.
func (tm tableMetrics) set(t *match.Table, class string) {
	tm.sslExpire.Reset()
	tm.sslInfo.Reset()
	for c := range t.Certificates() {
		leaf := certLeaf(c)
		if leaf == nil || leaf.SerialNumber == nil {
			continue
		}
		ns, name := splitRef(c.Secret)
		// SSLCert.Identifier: the issuer's serialNumber attribute and the
		// certificate's serial.
		id := leaf.Issuer.SerialNumber + "-" + leaf.SerialNumber.String()
		org := ""
		if len(leaf.Issuer.Organization) > 0 {
			org = leaf.Issuer.Organization[0]
		}
		for _, host := range c.Hosts {
			if host == match.AnyName {
				continue
			}
			tm.sslExpire.WithLabelValues(ns, class, host, name, id).Set(float64(leaf.NotAfter.Unix()))
			tm.sslInfo.WithLabelValues(ns, class, host, name, id, org, leaf.Issuer.CommonName, leaf.SerialNumber.String(), leaf.PublicKeyAlgorithm.String()).Set(1)
		}
	}
	tm.orphan.Reset()
	seen := map[[3]string]bool{}
	mark := func(src match.Source, b *match.Backend) {
		if b == nil || src.Kind != "" && src.Kind != "Ingress" {
			return
		}
		typ := ""
		switch {
		case b.State == match.ServiceNotFound:
			typ = "no-service"
		case b.State == match.Serving && len(b.Endpoints) == 0:
			typ = "no-endpoint"
		default:
			return
		}
		k := [3]string{src.Namespace, src.Name, typ}
		if !seen[k] {
			seen[k] = true
			tm.orphan.WithLabelValues(k[0], k[1], k[2]).Set(1)
		}
	}
	for vh := range t.VirtualHosts() {
		for _, r := range vh.Routes {
			mark(r.Source, r.Backend)
		}
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
