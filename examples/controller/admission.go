package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionv1beta1 "k8s.io/api/admission/v1beta1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwv1alpha2 "sigs.k8s.io/gateway-api/apis/v1alpha2"
	gwv1alpha3 "sigs.k8s.io/gateway-api/apis/v1alpha3"

	"ramjet.dev/ramjet/classify"
	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/gatewayapi"
)

// The validating admission webhook (SPEC §21), ingress-nginx's
// --validating-webhook: the API server sends each Ingress (and HTTPRoute)
// being created or changed; it is compiled with the snapshot of the last
// table published, replacing its old version. The answer carries the
// compile's warnings about it (kubectl prints them) and refuses it where
// ingress-nginx's webhook refuses, or with --admission-reject-severity for
// warnings that severe. Reviews read a copy of the snapshot indexed apart
// from the rebuild loop, so they never hold up a table.

// maxReviewBody bounds an AdmissionReview as ingress-nginx bounds it: its
// server reads 9 MiB and refuses a body that fills them.
const maxReviewBody = 9<<20 - 1

// maxConcurrentReviews bounds the CPU reviews take from serving and
// rebuilding; more wait their turn (the API server's timeout, 10 s by
// default, then fails open under failurePolicy Ignore).
const maxConcurrentReviews = 2

// reviewSource is what one published table was compiled from.
type reviewSource struct {
	snap     compile.Snapshot
	opts     compile.Options
	settings compile.AdmissionSettings
	// gateway translates the Gateway API objects after an edit that puts
	// the route under review in place of its old version (withRoute); nil
	// when the Gateway API is not served.
	gateway func(edit func(*gatewayapi.Objects)) gatewayapi.Translation
	// waf is the warning about an Ingress whose ModSecurity rules do not
	// build (its paths would answer 503), nil for none; nil when unset.
	waf func(*networkingv1.Ingress) *compile.Warning

	// The snapshot's Ingresses of our class, counted once (ours) for the
	// admission metrics rather than on each review: all of them, and how
	// many bear each namespace/name.
	oursOnce   sync.Once
	oursCount  int
	oursByName map[types.NamespacedName]int
}

type admission struct {
	log *slog.Logger
	// reject refuses warnings of this severity or worse; "" none.
	reject compile.Severity
	// namespace is --watch-namespace: Ingresses elsewhere are not ours.
	namespace string
	// metrics gets each admitted Ingress's timings; nil: none.
	metrics *metrics

	latest  atomic.Pointer[reviewSource]
	offered chan struct{} // capacity 1: a new source to index
	// lastReview is when the last review arrived (Unix nanoseconds): a
	// snapshot is indexed ahead only while reviews come in.
	lastReview atomic.Int64
	turns      chan struct{} // maxConcurrentReviews tokens

	mu       sync.Mutex // held while indexing
	indexed  *reviewSource
	reviewer *compile.Reviewer
}

func newAdmission(cfg config, log *slog.Logger) *admission {
	return &admission{
		log: log, reject: cfg.admissionRejectSeverity, namespace: cfg.namespace,
		offered: make(chan struct{}, 1),
		turns:   make(chan struct{}, maxConcurrentReviews),
	}
}

// offer makes src what the next reviews compile against; the index is
// built off the caller's goroutine (run).
func (a *admission) offer(src *reviewSource) {
	if a == nil {
		return
	}
	a.latest.Store(src)
	select {
	case a.offered <- struct{}{}:
	default:
	}
}

// indexAheadFor is how long after a review each new snapshot is still
// indexed ahead of the next one; after that the next review indexes it.
const indexAheadFor = time.Minute

// run indexes each offered source ahead of the reviews that need it,
// while reviews arrive: indexing 10,000 Ingresses takes tens of
// milliseconds of CPU, not worth spending on every table of a cluster
// nobody applies to.
func (a *admission) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.offered:
			if time.Since(time.Unix(0, a.lastReview.Load())) < indexAheadFor {
				a.current()
			}
		}
	}
}

// current is the reviewer of the latest source, indexed now if need be,
// and that source: one review reads both from the same snapshot.
func (a *admission) current() (*compile.Reviewer, *reviewSource) {
	src := a.latest.Load()
	if src == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// Read again under the lock: a review that waited here must not index
	// a source older than the one another review just indexed.
	src = a.latest.Load()
	if a.indexed != src {
		a.reviewer = compile.NewReviewer(src.snap, src.opts, src.settings)
		a.indexed = src
		src.ours()
	}
	return a.reviewer, a.indexed
}

// severityRank orders severities, the worst first.
var severityRank = map[compile.Severity]int{compile.TrafficMoves: 0, compile.FeatureMissing: 1, compile.Cosmetic: 2}

// parseRejectSeverity reads --admission-reject-severity.
func parseRejectSeverity(s string) (compile.Severity, error) {
	sev := compile.Severity(s)
	if _, ok := severityRank[sev]; !ok && s != "" {
		return "", fmt.Errorf("-admission-reject-severity %q: want %s, %s or %s", s, compile.TrafficMoves, compile.FeatureMissing, compile.Cosmetic)
	}
	return sev, nil
}

func (a *admission) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an admission.k8s.io/v1 or v1beta1 AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBody+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxReviewBody {
		http.Error(w, "AdmissionReview too large", http.StatusRequestEntityTooLarge)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil {
		http.Error(w, "not an AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	// The answer is read as the version sent: one this webhook does not
	// speak gets none (ingress-nginx's decoder refuses it alike).
	if v := review.APIVersion; review.Kind != "AdmissionReview" || v != admissionv1.SchemeGroupVersion.String() && v != admissionv1beta1.SchemeGroupVersion.String() {
		http.Error(w, fmt.Sprintf("apiVersion %q kind %q: want an admission.k8s.io/v1 or v1beta1 AdmissionReview", review.APIVersion, review.Kind), http.StatusBadRequest)
		return
	}
	if review.Request == nil {
		http.Error(w, "an AdmissionReview without a request", http.StatusBadRequest)
		return
	}
	a.lastReview.Store(time.Now().UnixNano())
	select {
	case a.turns <- struct{}{}:
		defer func() { <-a.turns }()
	case <-r.Context().Done():
		return
	}
	began := time.Now()
	resp := a.review(review.Request)
	resp.UID = review.Request.UID
	// The API server reads the answer as the version it sent; v1beta1's
	// response has v1's fields.
	out := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: review.APIVersion, Kind: "AdmissionReview"},
		Response: resp,
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(out); err != nil {
		a.log.Debug("admission answer not sent", "err", err)
	}
	attrs := []any{"kind", review.Request.Kind.Kind, "object", review.Request.Namespace + "/" + review.Request.Name,
		"operation", string(review.Request.Operation), "allowed", resp.Allowed, "warnings", len(resp.Warnings),
		"took", time.Since(began).Round(time.Microsecond)}
	if !resp.Allowed {
		a.log.Info("admission refused", append(attrs, "reason", resp.Result.Message)...)
		return
	}
	a.log.Debug("admission allowed", attrs...)
}

// review decides one request.
func (a *admission) review(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	allowed := &admissionv1.AdmissionResponse{Allowed: true}
	if req.Operation == admissionv1.Delete {
		return allowed
	}
	began := time.Now()
	rv, src := a.current()
	if rv == nil {
		return allowed // no table yet: nothing to compile against
	}
	var warnings []compile.Warning
	var refusal string
	var annotations map[string]string
	tested, testedIn := 0, time.Duration(0) // an Ingress's, for the metrics
	var checked *networkingv1.Ingress       // an Ingress of our class, for the metrics
	switch gk := (metav1.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}); gk {
	case metav1.GroupKind{Group: networkingv1.GroupName, Kind: "Ingress"}:
		var ing networkingv1.Ingress
		if err := json.Unmarshal(req.Object.Raw, &ing); err != nil {
			return refused(http.StatusBadRequest, "cannot read the Ingress: "+err.Error())
		}
		ing.Namespace = cmpOr(ing.Namespace, req.Namespace)
		if ing.CreationTimestamp.IsZero() {
			// The API server stamps it before validating webhooks run; a
			// review without it is of an object created now.
			ing.CreationTimestamp = metav1.Now()
		}
		if a.namespace != "" && ing.Namespace != a.namespace || ing.DeletionTimestamp != nil {
			// Being deleted, it only waits for its finalizers: ingress-nginx
			// judges and warns about none (CheckIngress, CheckWarning), and a
			// refusal would keep it Terminating.
			return allowed
		}
		testBegan := time.Now()
		res := rv.Review(&ing)
		if !res.Claimed {
			return allowed
		}
		tested, testedIn, checked = src.testedWith(&ing), time.Since(testBegan), &ing
		warnings, refusal, annotations = res.Warnings, res.Refusal, ing.Annotations
		if src.waf != nil {
			// The WAF is the controller's, not the compile's: nginx -t
			// fails on rules libmodsecurity refuses, so ingress-nginx's
			// webhook refuses them.
			if w := src.waf(&ing); w != nil {
				warnings = append(warnings, *w)
				if refusal == "" {
					refusal = warningText(*w)
				}
			}
		}
	case metav1.GroupKind{Group: gwv1.GroupName, Kind: "HTTPRoute"}, metav1.GroupKind{Group: gwv1.GroupName, Kind: "GRPCRoute"},
		metav1.GroupKind{Group: gwv1.GroupName, Kind: "TLSRoute"}:
		if src.gateway == nil {
			return allowed
		}
		var resp *admissionv1.AdmissionResponse
		if warnings, resp = reviewRoute(rv, src.gateway, req); resp != nil {
			return resp
		}
	default:
		return allowed // not a kind ramjet compiles
	}
	resp := &admissionv1.AdmissionResponse{Allowed: true}
	for _, w := range warnings {
		resp.Warnings = append(resp.Warnings, warningText(w))
	}
	if refusal == "" && a.reject != "" {
		var severe []string
		for _, w := range warnings {
			if sev := w.SeverityFor(annotations); severityRank[sev] <= severityRank[a.reject] {
				severe = append(severe, string(sev)+": "+warningText(w))
			}
		}
		if len(severe) > 0 {
			refusal = fmt.Sprintf("refused under --admission-reject-severity=%s: %s", a.reject, strings.Join(severe, "; "))
		}
	}
	if refusal != "" {
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: refusal}
		if checked != nil {
			a.metrics.refusedIngress(checked.Namespace, checked.Name)
		}
	} else if checked != nil {
		// ingress-nginx sets its admission gauges only for an Ingress it
		// admits.
		a.metrics.admitted(checked.Namespace, checked.Name, tested, testedIn, time.Since(began))
	}
	return resp
}

// testedWith is the number of Ingresses ing is compiled with, itself
// included: the snapshot's that are ours (ingress-nginx's store holds
// only the Ingresses of its class), its old version replaced.
func (src *reviewSource) testedWith(ing *networkingv1.Ingress) int {
	src.ours()
	return 1 + src.oursCount - src.oursByName[types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}]
}

// ours counts the snapshot's Ingresses of our class, once; the claim
// follows the snapshot's compile options.
func (src *reviewSource) ours() {
	src.oursOnce.Do(func() {
		opts := src.opts
		c := classify.New(src.snap.IngressClasses, classify.Options{IngressClass: opts.IngressClass, ControllerName: opts.ControllerName, WatchWithoutClass: opts.WatchIngressWithoutClass})
		src.oursByName = make(map[types.NamespacedName]int)
		for _, ing := range src.snap.Ingresses {
			if ing == nil {
				continue
			}
			if ours, _ := c.Decide(ing); ours {
				src.oursCount++
				src.oursByName[types.NamespacedName{Namespace: ing.Namespace, Name: ing.Name}]++
			}
		}
	})
}

// reviewRoute reviews a Gateway API route (SPEC §21): translated with the
// Gateway API objects, itself in place of its old version, and compiled
// with the Ingresses that share its hosts. resp is set only when the
// object cannot be read.
func reviewRoute(rv *compile.Reviewer, gateway func(func(*gatewayapi.Objects)) gatewayapi.Translation, req *admissionv1.AdmissionRequest) ([]compile.Warning, *admissionv1.AdmissionResponse) {
	kind := req.Kind.Kind
	var obj metav1.Object
	var edit func(*gatewayapi.Objects)
	var err error
	switch {
	case kind == "HTTPRoute":
		r := &gwv1.HTTPRoute{}
		err, obj, edit = json.Unmarshal(req.Object.Raw, r), r, func(o *gatewayapi.Objects) { o.HTTPRoutes = withRoute(o.HTTPRoutes, r) }
	case kind == "GRPCRoute":
		r := &gwv1.GRPCRoute{}
		err, obj, edit = json.Unmarshal(req.Object.Raw, r), r, func(o *gatewayapi.Objects) { o.GRPCRoutes = withRoute(o.GRPCRoutes, r) }
	default:
		// TLSRoute: v1, or an experimental channel's version, read as v1.
		var r *gwv1.TLSRoute
		switch req.Kind.Version {
		case gwv1alpha2.GroupVersion.Version:
			a2 := &gwv1alpha2.TLSRoute{}
			err, r = json.Unmarshal(req.Object.Raw, a2), gatewayapi.TLSRouteV1(a2)
		case gwv1alpha3.GroupVersion.Version:
			a3 := &gwv1alpha3.TLSRoute{}
			err, r = json.Unmarshal(req.Object.Raw, a3), gatewayapi.TLSRouteV1(a3)
		default:
			r = &gwv1.TLSRoute{}
			err = json.Unmarshal(req.Object.Raw, r)
		}
		obj, edit = r, func(o *gatewayapi.Objects) { o.TLSRoutes = withRoute(o.TLSRoutes, r) }
	}
	if err != nil {
		return nil, refused(http.StatusBadRequest, "cannot read the "+kind+": "+err.Error())
	}
	if obj.GetDeletionTimestamp() != nil {
		return nil, &admissionv1.AdmissionResponse{Allowed: true} // waiting for its finalizers, as an Ingress
	}
	obj.SetNamespace(cmpOr(obj.GetNamespace(), req.Namespace))
	if ts := obj.GetCreationTimestamp(); ts.IsZero() {
		// Stamped by the API server before validating webhooks run.
		obj.SetCreationTimestamp(metav1.Now())
	}
	tr := gateway(edit)
	ref := compile.Ref{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if kind == "TLSRoute" {
		return rv.ReviewTLSRoute(ref, tr.TLSRoutes, tr.PassthroughListeners, tr.Warnings), nil
	}
	return rv.ReviewRoute(ref, tr.HTTPRoutes, tr.Warnings), nil
}

func refused(code int32, msg string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: metav1.StatusReasonBadRequest, Message: msg}}
}

// warningText is a warning as kubectl shows it after "Warning: ": the
// object is the one applied, so the field leads.
func warningText(w compile.Warning) string {
	s := string(w.Reason) + " "
	if w.Field != "" {
		s += w.Field + ": "
	}
	s += strings.ReplaceAll(w.Message, "\n", " ")
	if winner := w.WinnerText(); winner != "" {
		s += " (winner: " + winner + ")"
	}
	return s
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// webhookCertificate serves the -validating-webhook-certificate and -key
// pair, read again when either file changes (cert-manager and the
// chart's job rotate them in place), checked at most every certRecheck.
// The files are compared by content: a rotation within the filesystem's
// timestamp tick keeps the size and modification time.
type webhookCertificate struct {
	certFile, keyFile string
	mu                sync.Mutex
	cert              *tls.Certificate
	certPEM, keyPEM   []byte
	checked           time.Time
}

const certRecheck = 10 * time.Second

func newWebhookCertificate(certFile, keyFile string) (*webhookCertificate, error) {
	c := &webhookCertificate{certFile: certFile, keyFile: keyFile}
	if _, err := c.get(nil); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *webhookCertificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil && time.Since(c.checked) < certRecheck {
		return c.cert, nil
	}
	c.checked = time.Now()
	certPEM, err := os.ReadFile(c.certFile)
	var keyPEM []byte
	if err == nil {
		keyPEM, err = os.ReadFile(c.keyFile)
	}
	if err != nil {
		if c.cert != nil {
			return c.cert, nil // keep serving the last good pair
		}
		return nil, fmt.Errorf("-validating-webhook-certificate/-key: %w", err)
	}
	if c.cert != nil && bytes.Equal(certPEM, c.certPEM) && bytes.Equal(keyPEM, c.keyPEM) {
		return c.cert, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if c.cert != nil {
			return c.cert, nil
		}
		return nil, fmt.Errorf("-validating-webhook-certificate/-key: %w", err)
	}
	c.cert, c.certPEM, c.keyPEM = &cert, certPEM, keyPEM
	return c.cert, nil
}

// listenWebhook opens the webhook's TLS listener on l's instance.
func (l *listening) listenWebhook(cfg config, a *admission, log *slog.Logger) error {
	cert, err := newWebhookCertificate(cfg.webhookCert, cfg.webhookKey)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.webhookAddr)
	if err != nil {
		return fmt.Errorf("-validating-webhook: %w", err)
	}
	l.listeners = append(l.listeners, ln)
	l.inst.WebhookAddr = ln.Addr().String()
	srv := &http.Server{
		Handler:           a,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       defaultIdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: cert.get, NextProtos: []string{"h2", "http/1.1"}},
	}
	l.servers = append(l.servers, srv)
	l.serve = append(l.serve, func() error {
		err := srv.ServeTLS(ln, "", "")
		if errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return fmt.Errorf("admission webhook: %w", err)
	})
	return nil
}
