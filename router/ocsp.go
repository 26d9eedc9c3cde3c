package router

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ocsp"

	"ramjet.dev/ramjet/match"
)

// OCSP stapling (enable-ocsp, SPEC §12), as nginx's ssl_stapling serves
// it: each served certificate's status is fetched from the responder its
// Authority Information Access names (the first OCSP URL that answers),
// checked against the issuer (the next certificate of the chain, as nginx
// finds it), and a "good" response is stapled to the handshakes that
// choose the certificate until its NextUpdate. Fetching happens in the
// background: a certificate of a newly published table is fetched at once,
// one first seen in a handshake (StapleOCSP) from then on, and a handshake
// never waits; until a response is in, the certificate is served without
// one. A response is refreshed as nginx refreshes it (5 minutes before
// NextUpdate, at least once an hour, not more than once in 5 minutes); a
// failed fetch is retried with a doubling wait, from 5 seconds up to 5
// minutes, the last good response served meanwhile while it is valid.
// Revoked and unknown statuses are not stapled (nginx logs and drops
// them). A certificate out of the serving table and not handed to
// StapleOCSP for an hour is let go.

// ocspTiming are the stapler's waits (tests shorten them).
type ocspTiming struct {
	margin     time.Duration // refresh this long before NextUpdate
	minRefresh time.Duration // never sooner than this after a fetch
	maxRefresh time.Duration // at least this often
	retry      time.Duration // first wait after a failed fetch, doubling
	maxRetry   time.Duration
	idle       time.Duration // let go of an unused certificate out of the table
	timeout    time.Duration // one fetch
}

var nginxOCSPTiming = ocspTiming{
	margin: 5 * time.Minute, minRefresh: 5 * time.Minute, maxRefresh: time.Hour,
	retry: 5 * time.Second, maxRetry: 5 * time.Minute, idle: time.Hour, timeout: 15 * time.Second,
}

// maxOCSPResponse bounds a responder's answer.
const maxOCSPResponse = 1 << 20

// ocspFetchers bounds the fetches running at once (a table of many
// certificates is fetched a few at a time).
const ocspFetchers = 4

// stapler holds the OCSP responses of the certificates served.
type stapler struct {
	log    *slog.Logger
	client *http.Client
	timing ocspTiming
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{}

	mu sync.Mutex
	// byChain are the entries by the SHA-256 of the certificate chain;
	// byPtr finds them again for a *tls.Certificate seen before.
	byChain map[[32]byte]*ocspEntry
	byPtr   map[*tls.Certificate]*ocspEntry
	// tablePtrs are the serving table's certificates.
	tablePtrs map[*tls.Certificate]bool
}

// ocspEntry is one certificate chain's stapling.
type ocspEntry struct {
	leaf, issuer *x509.Certificate
	// cert is the first *tls.Certificate seen with this chain.
	cert *tls.Certificate
	name string // for logs: the leaf's subject and first name
	none bool   // nothing to fetch: no responder URL, or no issuer

	stapled  atomic.Pointer[stapledCert]
	lastUsed atomic.Int64 // unix nanoseconds
	inTable  atomic.Bool
	ptrs     []*tls.Certificate // the byPtr keys of this entry (under stapler.mu)
}

// stapledCert is a certificate with its OCSP response, served until valid.
type stapledCert struct {
	cert  *tls.Certificate
	valid time.Time
}

func newStapler(log *slog.Logger) *stapler {
	ctx, cancel := context.WithCancel(context.Background())
	return &stapler{
		log: log, client: &http.Client{}, timing: nginxOCSPTiming, ctx: ctx, cancel: cancel,
		slots:   make(chan struct{}, ocspFetchers),
		byChain: make(map[[32]byte]*ocspEntry), byPtr: make(map[*tls.Certificate]*ocspEntry),
	}
}

// StapleOCSP returns c with its OCSP response stapled when enable-ocsp is
// on (Options.TLS) and a good response for it is in; otherwise c itself,
// and with stapling on, the response is fetched in the background from
// now on. It never waits. GetCertificate staples the certificates it
// chooses; an embedder that serves a certificate of its own in their place
// (a default certificate it loads) passes it through StapleOCSP.
func (r *Router) StapleOCSP(c *tls.Certificate) *tls.Certificate {
	if r.ocsp == nil || c == nil {
		return c
	}
	return r.ocsp.staple(c, time.Now())
}

// staple returns c stapled, or c.
func (s *stapler) staple(c *tls.Certificate, now time.Time) *tls.Certificate {
	s.mu.Lock()
	e := s.byPtr[c]
	if e == nil {
		e = s.entryLocked(c)
	}
	s.mu.Unlock()
	if e == nil || e.none {
		return c
	}
	e.lastUsed.Store(now.UnixNano())
	if st := e.stapled.Load(); st != nil && now.Before(st.valid) {
		return st.cert
	}
	return c
}

// entryLocked finds or makes the entry of c's chain and starts its
// fetching; nil for a certificate without a chain.
func (s *stapler) entryLocked(c *tls.Certificate) *ocspEntry {
	if len(c.Certificate) == 0 {
		return nil
	}
	h := sha256.New()
	for _, der := range c.Certificate {
		h.Write(der)
	}
	var key [32]byte
	h.Sum(key[:0])
	e := s.byChain[key]
	if e == nil {
		e = s.newEntry(c)
		s.byChain[key] = e
		if !e.none {
			e.lastUsed.Store(time.Now().UnixNano())
			go s.run(e, key)
		}
	}
	s.byPtr[c] = e
	e.ptrs = append(e.ptrs, c)
	return e
}

// newEntry reads what fetching c's status needs; a certificate that lacks
// it is logged once and served as it is.
func (s *stapler) newEntry(c *tls.Certificate) *ocspEntry {
	e := &ocspEntry{cert: c, leaf: c.Leaf}
	if e.leaf == nil {
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			e.none = true
			return e
		}
		e.leaf = leaf
	}
	e.name = e.leaf.Subject.String()
	if len(e.leaf.DNSNames) > 0 {
		e.name = e.leaf.DNSNames[0]
	}
	switch {
	case len(e.leaf.OCSPServer) == 0:
		// nginx: "no OCSP responder URL in the certificate"; a
		// self-signed default certificate is the common case: no log.
		e.none = true
		if !bytes.Equal(e.leaf.RawIssuer, e.leaf.RawSubject) {
			s.log.Info("OCSP stapling: no OCSP responder URL in the certificate; served without a staple", "certificate", e.name)
		}
	case len(c.Certificate) < 2:
		e.none = true
		s.log.Warn("OCSP stapling: the issuer certificate is not in the chain (tls.crt); served without a staple", "certificate", e.name)
	default:
		issuer, err := x509.ParseCertificate(c.Certificate[1])
		if err != nil || e.leaf.CheckSignatureFrom(issuer) != nil {
			e.none = true
			s.log.Warn("OCSP stapling: the chain's second certificate did not issue the first; served without a staple", "certificate", e.name)
			break
		}
		e.issuer = issuer
	}
	return e
}

// run fetches e's response until e is let go or the stapler stops.
func (s *stapler) run(e *ocspEntry, key [32]byte) {
	t := s.timing
	retry := t.retry
	failing := false
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-timer.C:
		}
		if s.retire(e, key) {
			return
		}
		wait, err := s.fetch(e)
		switch {
		case err != nil:
			wait, retry = retry, min(2*retry, t.maxRetry)
			if !failing || wait >= t.maxRetry {
				s.log.Warn("OCSP stapling: fetching the certificate's status failed; retrying",
					"certificate", e.name, "error", err, "retryIn", wait)
			}
			failing = true
		case failing:
			failing, retry = false, t.retry
			s.log.Info("OCSP stapling: the certificate's status is stapled again", "certificate", e.name)
		}
		timer.Reset(wait)
	}
}

// retire lets go of e when it is out of the table and unused for a while.
func (s *stapler) retire(e *ocspEntry, key [32]byte) bool {
	if e.inTable.Load() || time.Since(time.Unix(0, e.lastUsed.Load())) < s.timing.idle {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byChain, key)
	for _, p := range e.ptrs {
		if s.byPtr[p] == e {
			delete(s.byPtr, p)
		}
	}
	return true
}

// fetch asks e's responders for its status and, when good, staples it;
// it returns when to fetch again.
func (s *stapler) fetch(e *ocspEntry) (time.Duration, error) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-s.ctx.Done():
		return 0, s.ctx.Err()
	}
	req, err := ocsp.CreateRequest(e.leaf, e.issuer, &ocsp.RequestOptions{Hash: crypto.SHA1})
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, url := range e.leaf.OCSPServer {
		der, err := s.ask(url, req)
		if err == nil {
			var resp *ocsp.Response
			if resp, err = s.check(e, der, time.Now()); err == nil {
				return s.refreshIn(resp, time.Now()), nil
			}
		}
		errs = append(errs, fmt.Errorf("%s: %w", url, err))
	}
	return 0, errors.Join(errs...)
}

// ask posts an OCSP request to url and returns the response's bytes.
func (s *stapler) ask(url string, req []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.timing.timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(req))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/ocsp-request")
	hr.Header.Set("Accept", "application/ocsp-response")
	res, err := s.client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the responder answered %s", res.Status)
	}
	der, err := io.ReadAll(io.LimitReader(res.Body, maxOCSPResponse+1))
	if err != nil {
		return nil, err
	}
	if len(der) > maxOCSPResponse {
		return nil, errors.New("the response is over 1 MiB")
	}
	return der, nil
}

// check verifies der as e's status (signed by the issuer or a responder it
// delegated to, for e's serial number, current, good) and staples it.
func (s *stapler) check(e *ocspEntry, der []byte, now time.Time) (*ocsp.Response, error) {
	resp, err := ocsp.ParseResponseForCert(der, e.leaf, e.issuer)
	if err != nil {
		return nil, err
	}
	switch resp.Status {
	case ocsp.Good:
	case ocsp.Revoked:
		return nil, fmt.Errorf(`certificate status "revoked" in the OCSP response (at %s)`, resp.RevokedAt.UTC().Format(time.RFC3339))
	default:
		return nil, errors.New(`certificate status "unknown" in the OCSP response`)
	}
	// As nginx: no NextUpdate, valid until the next fetch replaces it.
	valid := time.Unix(1<<62, 0)
	if !resp.NextUpdate.IsZero() {
		valid = resp.NextUpdate
		if !now.Before(valid) {
			return nil, fmt.Errorf("the OCSP response expired at %s", valid.UTC().Format(time.RFC3339))
		}
	}
	if resp.ThisUpdate.After(now.Add(5 * time.Minute)) {
		return nil, fmt.Errorf("the OCSP response is not valid yet (thisUpdate %s)", resp.ThisUpdate.UTC().Format(time.RFC3339))
	}
	c := *e.cert
	c.OCSPStaple = der
	e.stapled.Store(&stapledCert{cert: &c, valid: valid})
	return resp, nil
}

// refreshIn is when a response is fetched again (nginx's
// ngx_ssl_stapling_ocsp_handler: max(min(valid-300, now+3600), now+300)).
func (s *stapler) refreshIn(resp *ocsp.Response, now time.Time) time.Duration {
	t := s.timing
	wait := t.maxRefresh
	if !resp.NextUpdate.IsZero() {
		wait = min(resp.NextUpdate.Sub(now)-t.margin, wait)
	}
	return max(wait, t.minRefresh)
}

// sync marks the certificates of a newly published table, fetching the new
// ones from now on, and forgets the previous table's *tls.Certificate keys
// that this one does not have.
func (s *stapler) sync(t *match.Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := make(map[*ocspEntry]bool)
	ptrs := make(map[*tls.Certificate]bool)
	for c := range t.Certificates() {
		if c.Cert == nil {
			continue
		}
		ptrs[c.Cert] = true
		e := s.byPtr[c.Cert]
		if e == nil {
			e = s.entryLocked(c.Cert)
		}
		if e != nil {
			in[e] = true
		}
	}
	for p := range s.tablePtrs {
		if e := s.byPtr[p]; e != nil && !ptrs[p] {
			delete(s.byPtr, p)
			e.ptrs = slices.DeleteFunc(e.ptrs, func(q *tls.Certificate) bool { return q == p })
		}
	}
	s.tablePtrs = ptrs
	for key, e := range s.byChain {
		e.inTable.Store(in[e])
		// Entries with nothing to fetch have no goroutine to let them go.
		if e.none && !in[e] && len(e.ptrs) == 0 {
			delete(s.byChain, key)
		}
	}
}

// stop ends every fetch.
func (s *stapler) stop() { s.cancel() }
