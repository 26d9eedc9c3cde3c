package main

import (
	"log/slog"
	"time"

	"ramjet.dev/ramjet/match"
)

// certExpiryWarning is how long before its expiry a served certificate is
// warned about: ingress-nginx's 240 hours.
const certExpiryWarning = 240 * time.Hour

// logCertExpiry warns, for each host of t served an expired certificate or
// one that expires within certExpiryWarning, as ingress-nginx's
// createServers does on every sync; here once per published table, so a
// resync does not repeat it. The certificate is served either way.
func logCertExpiry(log *slog.Logger, t *match.Table, now time.Time) {
	if t == nil {
		return
	}
	for c := range t.Certificates() {
		leaf := certLeaf(c)
		if leaf == nil {
			continue
		}
		msg := ""
		switch {
		case leaf.NotAfter.Before(now):
			msg = "TLS certificate expired"
		case leaf.NotAfter.Before(now.Add(certExpiryWarning)):
			msg = "TLS certificate expires within 10 days"
		default:
			continue
		}
		for _, host := range c.Hosts {
			log.Warn(msg, "host", host, "secret", c.Secret, "notAfter", leaf.NotAfter.UTC())
		}
	}
}
