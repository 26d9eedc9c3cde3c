package main

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
)

// firstPortUnknown stands for the port of a --default-backend-service that
// does not exist or has no ports: compiling then warns that the global
// default backend is unavailable, naming the Service.
const firstPortUnknown = "first-port"

// compileOptions are cfg's options for one compile of services: with
// --default-backend-service, the global default backend is that Service's
// first port as the Service is now (ingress-nginx's rule), so editing the
// Service's ports retargets it on the next rebuild.
func compileOptions(cfg config, services []*corev1.Service) compile.Options {
	opts := cfg.options
	opts.ExtensionKeys = modSecurityKeys // served by the hook (modsecurity.go)
	// No TCP or UDP service takes a port of the controller's own
	// (stream.go), nor one ingress-nginx keeps for nginx.
	opts.ReservedPorts = append(ownPorts(cfg.httpAddr, cfg.httpsAddr, cfg.debugAddr, cfg.webhookAddr), nginxReservedPorts...)
	ref := cfg.defaultBackendService
	if ref == nil {
		return opts
	}
	port := firstPortUnknown
	for _, svc := range services {
		if svc.Namespace == ref.Namespace && svc.Name == ref.Name && len(svc.Spec.Ports) > 0 {
			port = strconv.Itoa(int(svc.Spec.Ports[0].Port))
			break
		}
	}
	opts.DefaultBackend = &compile.ServiceRef{Namespace: ref.Namespace, Name: ref.Name, Port: port}
	return opts
}

// defaultCertificate serves the --default-ssl-certificate Secret to TLS
// names no table certificate covers, as the router's default certificate
// (router.SetDefaultCertificate). It is reloaded at every compile, so
// a rotated Secret is served from the next rebuild on, without a restart.
// Until the Secret first loads, the router's self-signed one is served; a
// Secret that disappears or stops parsing keeps the last good one.
type defaultCertificate struct {
	ref types.NamespacedName
	log *slog.Logger
	cur atomic.Pointer[tls.Certificate]
	rt  *router.Router // serves cur; nil until serveBy

	mu          sync.Mutex // serializes update
	fingerprint string
	problem     string // last problem logged, to log each once
}

func newDefaultCertificate(ref *types.NamespacedName, log *slog.Logger) *defaultCertificate {
	if ref == nil {
		return nil
	}
	return &defaultCertificate{ref: *ref, log: log}
}

// find returns the Secret the certificate comes from, or nil.
func (d *defaultCertificate) find(secrets []*corev1.Secret) *corev1.Secret {
	if d == nil {
		return nil
	}
	for _, s := range secrets {
		if s.Namespace == d.ref.Namespace && s.Name == d.ref.Name {
			return s
		}
	}
	return nil
}

// update loads sec, the Secret as it is now (nil: not found).
func (d *defaultCertificate) update(sec *corev1.Secret) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	cert, fingerprint, err := parseKeyPair(sec)
	if err != nil {
		problem := fmt.Sprintf("default certificate Secret %s: %v", d.ref, err)
		if problem != d.problem {
			d.problem = problem
			if d.fingerprint == "" {
				d.log.Warn(problem+"; serving a self-signed certificate made at start", "serving", "self-signed")
			} else {
				d.log.Warn(problem+"; serving the previous one", "serving", d.fingerprint)
			}
		}
		return
	}
	d.problem = ""
	if fingerprint == d.fingerprint {
		return
	}
	d.fingerprint = fingerprint
	d.cur.Store(cert)
	if d.rt != nil {
		d.rt.SetDefaultCertificate(cert)
	}
	d.log.Info("default certificate loaded", "secret", d.ref.String(), "sha256", fingerprint,
		"subject", cert.Leaf.Subject.String(), "notAfter", cert.Leaf.NotAfter)
}

// parseKeyPair reads a Secret's tls.crt and tls.key the way the API server
// stores them (stringData, in a manifest, overrides data).
func parseKeyPair(sec *corev1.Secret) (*tls.Certificate, string, error) {
	if sec == nil {
		return nil, "", fmt.Errorf("not found")
	}
	data := func(key string) []byte {
		if s, ok := sec.StringData[key]; ok {
			return []byte(s)
		}
		return sec.Data[key]
	}
	pair, err := tls.X509KeyPair(data(corev1.TLSCertKey), data(corev1.TLSPrivateKeyKey))
	if err != nil {
		return nil, "", fmt.Errorf("tls.crt and tls.key do not form a key pair: %w", err)
	}
	sum := sha256.Sum256(pair.Certificate[0])
	return &pair, hex.EncodeToString(sum[:]), nil
}

// served returns what serves the default certificate now and its Secret
// ("namespace/name"): the loaded one, else the router's self-signed one
// (no Secret).
func (d *defaultCertificate) served(rt *router.Router) func() (*tls.Certificate, string) {
	return func() (*tls.Certificate, string) {
		if d != nil {
			if own := d.cur.Load(); own != nil {
				return own, d.ref.String()
			}
		}
		return rt.DefaultCertificate(), ""
	}
}

// serveBy makes rt serve the certificate, the one loaded now and each
// one loaded later.
func (d *defaultCertificate) serveBy(rt *router.Router) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.rt = rt
	if own := d.cur.Load(); own != nil {
		rt.SetDefaultCertificate(own)
	}
}
