package router

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/htpasswd"
	"ramjet.dev/ramjet/match/urltemplate"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router/h1"
)

// The timeouts of an external-auth subrequest: ingress-nginx's auth
// location sets no proxy_*_timeout (nginx.tmpl), so nginx's defaults
// apply there, whatever the location's proxy-*-timeout say.
const (
	authConnectTimeout = 60 * time.Second // proxy_connect_timeout
	authReadTimeout    = 60 * time.Second // proxy_read_timeout
)

// Reasons of the answers of a location's authentication.
const (
	ReasonAuthDenied    = "auth-denied"    // 503: the route's authentication cannot be served (see match.Auth.Denied)
	ReasonUnauthorized  = "unauthorized"   // 401: basic or digest credentials missing or wrong, or the auth service said 401
	ReasonAuthForbidden = "auth-forbidden" // 403: the auth service said 403
	ReasonAuthSignin    = "auth-signin"    // 302: the auth service said 401 and the route has a sign-in page
	ReasonAuthError     = "auth-error"     // 500: the auth service failed, timed out or answered anything else
	// ReasonAuthBusy is the 503 answered when a password check found no
	// free slot in time (see Options.PasswordChecks).
	ReasonAuthBusy = "auth-busy"
	// ReasonAuthLockout is the 401 without a challenge that digest
	// authentication answers a client address after 5 failed logins, for
	// 300 seconds after the last (the module's auth_digest_maxtries and
	// auth_digest_evasion_time).
	ReasonAuthLockout = "auth-lockout"
)

// stepAuth applies the location's authentication (authorize). A location
// whose authentication cannot be served is denied before it (stepDenied).
var stepAuth = step{name: "auth", kind: kindAuth, reasons: []string{
	ReasonUnauthorized, ReasonAuthForbidden, ReasonAuthSignin, ReasonAuthError, ReasonAuthBusy, ReasonAuthLockout,
}}

// passwordCheckWait is how long a request waits for a free password
// check slot before it answers 503: long enough for a few bcrypt checks
// to finish, short enough that the waiting clients of a flood come back
// at a bounded rate.
const passwordCheckWait = time.Second

var (
	ansAuthDenied   = answer{http.StatusServiceUnavailable, ReasonAuthDenied, "503 Service Unavailable: this location's authentication is misconfigured\n"}
	ansUnauthorized = answer{http.StatusUnauthorized, ReasonUnauthorized, "401 Unauthorized: authorization required\n"}
	ansAuthForbid   = answer{http.StatusForbidden, ReasonAuthForbidden, "403 Forbidden: the authentication service refused the request\n"}
	ansAuthSignin   = answer{http.StatusFound, ReasonAuthSignin, "302 Found: sign in first\n"}
	ansAuthError    = answer{http.StatusInternalServerError, ReasonAuthError, "500 Internal Server Error: the authentication service failed\n"}
	ansAuthBusy     = answer{http.StatusServiceUnavailable, ReasonAuthBusy, "503 Service Unavailable: too many password checks at once; try again\n"}
	ansAuthLockout  = answer{http.StatusUnauthorized, ReasonAuthLockout, "401 Unauthorized: too many failed logins from this address; try again later\n"}
)

// authState is what authentication keeps across requests and tables.
type authState struct {
	// rt carries the router's own requests (mirrors, error pages):
	// Options.Transport, else the router's pooled net/http transport. ext
	// carries external-auth subrequests: Options.Transport, else a pool
	// of its own with the auth location's timeouts (authTransport).
	// timeout bounds each subrequest whole (Options.AuthTimeout; 0: no
	// bound but those).
	rt, ext http.RoundTripper
	timeout time.Duration
	cache   credCache
	// answers are the auth services' cached answers (authoptions.go).
	answers authCache
	// checks holds one token per slow password check running
	// (Options.PasswordChecks); nil: no bound.
	checks chan struct{}
	// digest is what digest authentication keeps (digest.go).
	digest digestState
}

// passwordCheckSlots is the bound on slow password checks at once:
// Options.PasswordChecks, else half the CPUs (at least one), so that a
// flood of wrong passwords leaves the other half to every other request.
// 0 means no bound.
func passwordCheckSlots(n int) int {
	switch {
	case n < 0:
		return 0
	case n > 0:
		return n
	}
	return max(runtime.GOMAXPROCS(0)/2, 1)
}

// authorize applies the location's authentication (SPEC §6, §11.7): basic
// first, then the external service, as nginx's access phase runs them. It
// reports whether it answered: the request may not go on.
func (r *Router) authorize(s *requestState) bool {
	a := s.loc.Auth
	if a == nil {
		return false
	}
	req := s.req
	if a.Basic != nil {
		switch r.basicAuth(req, a.Basic) {
		case denied:
			s.w.Header()["Www-Authenticate"] = a.Basic.Challenge()
			r.refuse(s, ansUnauthorized)
			return true
		case busy:
			r.refuse(s, ansAuthBusy)
			return true
		}
	}
	if d := a.Digest; d != nil {
		ds := &r.auth.digest
		now := ds.now()
		client := r.ClientAddr(req)
		if ds.clients.lockedOut(client, now.Unix()) {
			r.refuse(s, ansAuthLockout)
			return true
		}
		info, stale, ok := ds.authenticate(req, d, client, now)
		if !ok {
			s.w.Header()["Www-Authenticate"] = []string{ds.challenge(d.Realm, stale, now)}
			r.refuse(s, ansUnauthorized)
			return true
		}
		s.w.Header()["Authentication-Info"] = []string{info}
	}
	if a.External != nil {
		loc := authLocation(s.d.res.Route, s.d.path)
		var lg *authLog
		if r.authObs != nil {
			lg = &authLog{}
		}
		ans, ok := r.externalAuth(s.w, req, s.d.host, s.d.proto, serverName(&s.d), loc, s.id, a.External, &s.ph, s.trace, lg)
		if lg != nil && lg.status != 0 {
			r.observeAuth(s, loc, lg)
		}
		if !ok {
			r.refuse(s, ans)
			return true
		}
	}
	if a.Basic != nil || a.Digest != nil {
		// The backend never sees the credentials (nginx sets
		// Authorization to "" after basic or digest authentication).
		delete(req.Header, "Authorization")
	}
	return false
}

// authLocation is the URI of the location ingress-nginx writes for the
// external auth of the location rt (nginx.tmpl's buildAuthLocation):
// "/_external-auth-" + the location's path in unpadded base64url + "-" +
// its path type. A Prefix path other than "/" is two locations there
// (updateServerLocations): "path/" and an Exact twin "path", which a
// request for the path itself (escaped, as received) reaches. A Regex
// route is an ImplementationSpecific path's, or one a host in regex mode
// made of a Prefix or Exact path, whose location keeps its type
// (Route.NginxLocation). A host's fallback is the server's "/".
func authLocation(rt *match.Route, escaped string) string {
	path, typ := "/", "Prefix"
	if rt != nil {
		switch path = match.LocationPath(rt); rt.Type {
		case match.Exact:
			typ = "Exact"
		case match.Regex:
			typ = "ImplementationSpecific"
			if rt.NginxLocation != 0 {
				path, typ = rt.Path, rt.NginxLocation.String()
			}
		default:
			if path != "/" {
				if p, err := match.NormalizePath(escaped); err == nil && p == path {
					typ = "Exact"
				} else {
					path += "/"
				}
			}
		}
	}
	return "/_external-auth-" + base64.RawURLEncoding.EncodeToString([]byte(path)) + "-" + typ
}

// verdict is the outcome of a password check.
type verdict uint8

const (
	denied  verdict = iota
	granted         // the credentials are right
	busy            // no check slot came free in time
)

func verdictOf(ok bool) verdict {
	if ok {
		return granted
	}
	return denied
}

// basicAuth checks the request's Basic credentials.
func (r *Router) basicAuth(req *http.Request, ba *match.BasicAuth) verdict {
	v := req.Header["Authorization"]
	if len(v) == 0 {
		return denied
	}
	var buf [256]byte
	user, pass, ok := basicCredentials(v[0], buf[:])
	if !ok {
		return denied
	}
	c, ok := ba.Users.Lookup(user)
	if !ok {
		return denied
	}
	if !c.Kind.Slow() {
		return verdictOf(c.Verify(pass))
	}
	return r.auth.verifySlow(req.Context(), c, pass)
}

// verifySlow checks a password against a slow hash (bcrypt, apr1): from
// the cache when these credentials were checked before, else in one of a
// bounded number of slots. A bcrypt check is tens of milliseconds of CPU;
// unbounded, a flood of wrong passwords takes every CPU and every other
// request waits behind it (nginx's auth_basic stalls its worker the same
// way). Bounded, the flood queues for the slots and, past
// passwordCheckWait, is answered 503, as nginx answers a client over
// limit-req; other requests keep their latency.
func (a *authState) verifySlow(ctx context.Context, c htpasswd.Credential, pass []byte) verdict {
	key := credKey(c, pass)
	if ok, hit := a.cache.get(key); hit {
		return verdictOf(ok)
	}
	if !a.acquire(ctx) {
		return busy
	}
	// A copy goes to the worker, so that the caller's password buffer
	// stays on its stack on the common path (a cache hit).
	own := bytes.Clone(pass)
	ok := lowPriority(func() bool { return c.Verify(own) })
	a.release()
	a.cache.put(key, ok)
	return verdictOf(ok)
}

// lowPriority runs check on one of a process-wide set of goroutines,
// each locked to an OS thread of lowered priority (lowerThreadPriority):
// the bound on concurrent checks keeps a flood from taking every CPU,
// and the priority keeps the checks that do run from delaying the
// threads serving other requests. A worker is started when none is idle;
// as callers are bounded by the routers' check slots, so are the workers,
// and they stay for the next checks.
func lowPriority(check func() bool) bool {
	job := checkJob{check: check, done: make(chan bool, 1)}
	select {
	case checkJobs <- job:
	default:
		if checkWorkers.Add(1) <= maxCheckWorkers {
			go checkWorker(job)
		} else {
			checkWorkers.Add(-1)
			checkJobs <- job
		}
	}
	return <-job.done
}

type checkJob struct {
	check func() bool
	done  chan bool
}

var (
	checkJobs    = make(chan checkJob)
	checkWorkers atomic.Int32
)

// maxCheckWorkers caps the workers whatever the routers' bounds add up
// to (Options.PasswordChecks may be set without a bound).
const maxCheckWorkers = 64

func checkWorker(job checkJob) {
	// Never unlocked: the thread keeps its lowered priority and serves
	// only checks.
	runtime.LockOSThread()
	lowerThreadPriority()
	for {
		job.done <- job.check()
		job = <-checkJobs
	}
}

// acquire takes a check slot, waiting at most passwordCheckWait, and not
// past the client's going away.
func (a *authState) acquire(ctx context.Context) bool {
	if a.checks == nil {
		return true
	}
	select {
	case a.checks <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(passwordCheckWait)
	defer t.Stop()
	select {
	case a.checks <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (a *authState) release() {
	if a.checks != nil {
		<-a.checks
	}
}

// basicCredentials decodes "Basic base64(user:password)" into buf (or a
// new buffer when it does not fit). The scheme is case-insensitive.
func basicCredentials(h string, buf []byte) (user, pass []byte, ok bool) {
	const prefix = "Basic "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return nil, nil, false
	}
	enc := strings.TrimRight(strings.TrimLeft(h[len(prefix):], " "), "=")
	n := base64.RawStdEncoding.DecodedLen(len(enc))
	if n+len(enc) > len(buf) {
		buf = make([]byte, n+len(enc))
	}
	src := buf[n : n+len(enc)]
	copy(src, enc)
	m, err := base64.RawStdEncoding.Decode(buf[:n], src)
	if err != nil {
		return nil, nil, false
	}
	dec := buf[:m]
	for i, c := range dec {
		if c == ':' {
			return dec[:i], dec[i+1:], true
		}
	}
	return nil, nil, false
}

// credCache remembers the outcome of password checks against slow hashes
// (bcrypt, apr1), so a client sending the same Authorization on every
// request pays for bcrypt once, and so does one repeating a wrong
// password (a script with a stale password, or a flood of one guess). A
// key is the SHA-256 of the stored hash and the password: a new password
// for the user is a new hash, so a rotated Secret invalidates its entries
// by itself, and the cache holds no password. A check's outcome depends
// on nothing else, so a remembered failure is as exact as a success. It is
// bounded: credShards × credSlots entries, each new one replacing whatever
// held its slot, except that a failure never evicts a success, so a flood
// of distinct wrong passwords cannot push out the users who got theirs
// right.
type credCache struct {
	shards [credShards]credShard
}

const (
	credShards = 16
	credSlots  = 256 // per shard: 4,096 entries, 132 KiB in all
)

type credShard struct {
	mu    sync.Mutex
	slots [credSlots]credEntry
}

type credEntry struct {
	key [sha256.Size]byte
	ok  bool
}

// credKey is the cache key of a password checked against c.
func credKey(c htpasswd.Credential, pass []byte) [sha256.Size]byte {
	var buf [512]byte
	if len(c.Hash)+1+len(pass) > len(buf) {
		h := sha256.New()
		h.Write([]byte(c.Hash))
		h.Write([]byte{0})
		h.Write(pass)
		var key [sha256.Size]byte
		h.Sum(key[:0])
		return key
	}
	n := copy(buf[:], c.Hash)
	buf[n] = 0
	n++
	n += copy(buf[n:], pass)
	return sha256.Sum256(buf[:n])
}

func (cc *credCache) slot(key *[sha256.Size]byte) (*credShard, *credEntry) {
	s := &cc.shards[key[0]%credShards]
	return s, &s.slots[int(key[1])%credSlots]
}

// get reports the remembered outcome for key, and whether there is one.
func (cc *credCache) get(key [sha256.Size]byte) (ok, hit bool) {
	s, e := cc.slot(&key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.key != key {
		return false, false
	}
	return e.ok, true
}

func (cc *credCache) put(key [sha256.Size]byte, ok bool) {
	s, e := cc.slot(&key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok && e.ok {
		return
	}
	*e = credEntry{key: key, ok: ok}
}

// externalAuth sends the subrequest ingress-nginx's auth_request sends and
// maps its answer: 2xx passes (copying auth-response-headers to the
// request), 401 is passed on (or redirected to the sign-in page), 403 is
// passed on, anything else — another status, a failure, a timeout — is
// 500. No body is sent. server is the server block's name
// (serverName), loc the auth location's URI (authLocation); id is the
// request ID the client gets back, if any.
// lg, when not nil, takes what the subrequest's record needs.
func (r *Router) externalAuth(w http.ResponseWriter, req *http.Request, host, proto, server, loc, id string, x *match.ExternalAuth, ph *policyHeaders, trace *tracedWriter, lg *authLog) (answer, bool) {
	if lg != nil {
		lg.start = time.Now()
	}
	path, query, hasQuery, _ := requestTarget(req)
	uri := path
	if strings.HasPrefix(vars.RequestURIOf(req.RequestURI), "?") {
		uri = "" // "http://h?q": $request_uri has no path
	}
	if hasQuery {
		uri += "?" + query
	}
	// $remote_addr is the client as the realip module found it; the
	// X-Forwarded-For sent is the backend's (SPEC §13).
	peer, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		peer = req.RemoteAddr
	}
	ip, xff := peer, peer
	if a := r.realIP(req); a != "" {
		ip, xff = a, a
	}
	live := r.live.Load()
	if live.fullForwardedFor {
		if prior := strings.Join(req.Header["X-Forwarded-For"], ", "); prior != "" {
			xff = prior + ", " + peer
		} else {
			xff = peer
		}
	}
	scheme := connScheme(req)
	// $http_host is the Host field as sent, not an absolute-form target's.
	sentHost, _ := httpHost(req)
	vars := urltemplate.RequestVars{Host: host, HTTPHost: sentHost, BestHTTPHost: r.redirectHost(req), Scheme: scheme, PassAccessScheme: proto, RequestURI: uri, RemoteAddr: ip}
	method := x.Method
	if method == "" {
		method = http.MethodGet
	}
	ctx, cancel := context.WithCancel(context.WithValue(req.Context(), externalAuthKey{}, true))
	if r.auth.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, r.auth.timeout)
	}
	defer cancel()
	sub, err := http.NewRequestWithContext(ctx, method, x.URL.Expand(&vars), nil)
	if err != nil {
		r.logger.Warn("external auth URL does not expand to a URL", "url", x.URL.Raw, "error", err)
		return ansAuthError, false
	}
	// nginx sends the auth URL's host name without its port.
	if h := sub.URL.Hostname(); h != "" && !strings.Contains(h, ":") {
		sub.Host = h
	}
	authHeaders(sub.Header, req, &vars, x, xff, &live.headers, id)
	if lg != nil {
		lg.id = sub.Header.Get("X-Request-Id")
	}
	if trace != nil || x.NoTraceContext && r.tracer != nil {
		// The auth location's opentelemetry_propagate sets both from the
		// subrequest's own trace context, which ingress-nginx's module
		// never makes (it starts no span for an internal request): empty,
		// so neither the span's context nor the client's is sent
		// (open-telemetry/opentelemetry-cpp-contrib#143).
		delete(sub.Header, "Traceparent")
		delete(sub.Header, "Tracestate")
	}
	var res *http.Response
	var key [sha256.Size]byte
	o := x.Options
	cached := o != nil && o.CacheKey != nil
	if o != nil {
		av := authVars{req: req, host: host, location: loc, scheme: scheme, remoteAddr: ip, hdr: &live.headers}
		setAuthHeaders(sub.Header, o, &av)
		if cached {
			// A remembered answer stands for the service's: it is not asked.
			key = authCacheKey(o, x, server, loc, &av)
			if e, hit := r.auth.answers.get(key, time.Now(), req.Header); hit {
				res = &http.Response{StatusCode: e.status, Header: e.header.Clone(), Body: http.NoBody}
				if lg != nil {
					lg.status = e.status
				}
			}
		}
	}
	if res == nil {
		if lg != nil {
			sub = lg.trace(sub)
		}
		res, err = r.auth.ext.RoundTrip(sub)
		if lg != nil {
			lg.sent(sub, res, err)
		}
		if err != nil {
			if req.Context().Err() == nil {
				r.logger.Warn("external auth request failed", "url", sub.URL.Redacted(), "error", err)
			}
			return ansAuthError, false
		}
		if cached {
			r.auth.answers.put(key, o, res.StatusCode, res.Header, time.Now(), req.Header)
		}
	}
	defer res.Body.Close()
	// nginx reads no body of the answer (auth_request's subrequest is
	// header_only); it is drained for the connection's reuse, as long as
	// the read timeout allows.
	drain := time.AfterFunc(authReadTimeout, cancel)
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	drain.Stop()
	if lg != nil && lg.tries > 0 {
		lg.upstream = time.Since(lg.send)
	}
	cookies := res.Header["Set-Cookie"]
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		for i, name := range x.ResponseHeaders {
			// A name listed again is one more proxy_set_header line in
			// nginx, which sends each: the field goes once per listing.
			again := slices.Contains(x.ResponseHeaders[:i], name)
			if !again {
				delete(req.Header, name)
			}
			if v := upstreamField(res.Header, name); len(v) > 0 {
				if len(v) > 1 {
					// One field, its lines joined as nginx's
					// $upstream_http_<name> joins them.
					v = []string{strings.Join(v, ", ")}
				}
				if again {
					req.Header[name] = append(req.Header[name], v[0])
					continue
				}
				req.Header[name] = v[:1:1]
				// The client's field of that name is gone; its
				// Connection header must not take the service's too.
				unlistConnection(req.Header, name)
			}
		}
		ph.cookies, ph.alwaysCookies = cookies, x.AlwaysSetCookie
		return answer{}, true
	case res.StatusCode == http.StatusUnauthorized && x.Signin != nil:
		loc := x.Signin.Expand(&vars)
		if strings.HasPrefix(loc, "/") && host != "" && !x.SigninRelative {
			// nginx's absolute_redirect: its header filter completes a
			// Location starting with "/" with the connection's scheme
			// and the host name, without the port (ingress-nginx sets
			// port_in_redirect off).
			loc = scheme + "://" + host + loc
		}
		h := w.Header()
		h.Set("Location", loc)
		if len(cookies) > 0 {
			h["Set-Cookie"] = cookies
		}
		return ansAuthSignin, false
	case res.StatusCode == http.StatusUnauthorized:
		if v := res.Header["Www-Authenticate"]; len(v) > 0 {
			w.Header()["Www-Authenticate"] = v
		}
		if x.AlwaysSetCookie && len(cookies) > 0 {
			w.Header()["Set-Cookie"] = cookies
		}
		return ansUnauthorized, false
	case res.StatusCode == http.StatusForbidden:
		if x.AlwaysSetCookie && len(cookies) > 0 {
			w.Header()["Set-Cookie"] = cookies
		}
		return ansAuthForbid, false
	}
	r.logger.Warn("external auth answered an unexpected status", "url", sub.URL.Redacted(), "status", res.StatusCode)
	return ansAuthError, false
}

// authLog is what the record of an external-auth subrequest takes from
// its exchange (Options.AuthObserver).
type authLog struct {
	start, send time.Time
	// id is the X-Request-ID sent: nginx's $req_id, the request's.
	id string
	// status is what nginx logs as the subrequest's $status: the
	// service's answer, 502 or 504 when none came; 0 when none was
	// asked for (the URL did not expand).
	status   int
	reason   string
	endpoint string
	tries    int
	// connect, header and upstream are the exchange's
	// $upstream_connect_time, _header_time and _response_time.
	connect, header, upstream time.Duration
	getConn                   time.Time
}

// trace is sub, its exchange traced for the record.
func (lg *authLog) trace(sub *http.Request) *http.Request {
	lg.send = time.Now()
	return sub.WithContext(httptrace.WithClientTrace(sub.Context(), &httptrace.ClientTrace{
		GetConn: func(string) { lg.getConn = time.Now() },
		GotConn: func(info httptrace.GotConnInfo) {
			if !info.Reused && !lg.getConn.IsZero() {
				lg.connect = time.Since(lg.getConn)
			}
			if info.Conn != nil {
				lg.endpoint = info.Conn.RemoteAddr().String()
			}
		},
		GotFirstResponseByte: func() { lg.header = time.Since(lg.send) },
	}))
}

// sent notes the exchange's outcome: the service's status, else nginx's
// for a failed one (504 for a timeout, else 502).
func (lg *authLog) sent(sub *http.Request, res *http.Response, err error) {
	lg.tries, lg.upstream = 1, time.Since(lg.send)
	if lg.endpoint == "" {
		// A Transport that reports no connection: the address asked.
		lg.endpoint = sub.URL.Host
	}
	var ne net.Error
	switch {
	case err == nil:
		lg.status = res.StatusCode
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		lg.status, lg.reason = http.StatusGatewayTimeout, ReasonUpstreamTimeout
	default:
		lg.status, lg.reason = http.StatusBadGateway, ReasonUpstreamError
	}
}

// observeAuth hands the record of the request's auth subrequest to
// loc, as nginx logs it (log_subrequest on in nginx.tmpl), to the
// AuthObserver.
func (r *Router) observeAuth(s *requestState, loc string, lg *authLog) {
	rec := r.record(s)
	rec.Subrequest, rec.Status, rec.Reason = loc, lg.status, lg.reason
	rec.Start, rec.Duration = lg.start, time.Since(lg.start)
	// The auth location has its own access_log (enable-auth-access-log).
	rec.NoAccessLog = false
	if lg.id != "" {
		rec.RequestID = lg.id
	}
	rec.Endpoint, rec.Tries = lg.endpoint, lg.tries
	rec.UpstreamConnectTime, rec.UpstreamHeaderTime, rec.UpstreamTime = lg.connect, lg.header, lg.upstream
	r.authObs(rec)
}

// upstreamField is the service's field name as nginx's
// $upstream_http_<name> reads it: the lines of every field whose name,
// lower-cased and with '-' as '_', is the variable's ("X-User" and
// "X_User" for X_User), in name order.
func upstreamField(h http.Header, name string) []string {
	want := upstreamVar(name)
	var v []string
	for _, k := range slices.Sorted(maps.Keys(h)) {
		if len(k) == len(name) && upstreamVar(k) == want {
			v = append(v, h[k]...)
		}
	}
	return v
}

func upstreamVar(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "-", "_")
}

type externalAuthKey struct{}

// authTransport is t for external-auth subrequests, with the auth
// location's timeouts.
func authTransport(t *http.Transport) *http.Transport {
	a := t.Clone()
	a.DialContext = (&net.Dialer{Timeout: authConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	a.TLSHandshakeTimeout = authConnectTimeout
	a.ResponseHeaderTimeout = authReadTimeout
	return a
}

// IsExternalAuth reports whether a request is a subrequest the router sends
// to an external auth service (auth-url), so that a RoundTripper given in
// Options.Transport can tell it from a proxied request.
func IsExternalAuth(ctx context.Context) bool {
	v, _ := ctx.Value(externalAuthKey{}).(bool)
	return v
}

// authHeaders are the subrequest's headers, as ingress-nginx's auth
// location sets them: the client's headers (but hop-by-hop ones, its
// framing, the ones the proxy vouches for and the names hs calls invalid,
// as the backend gets them), then X-Original-URL (with $scheme, the
// connection's, where X-Scheme has $pass_access_scheme),
// X-Original-Method, X-Sent-From, X-Real-IP, X-Forwarded-For (xff, as the
// backend gets it), X-Auth-Request-Redirect and X-Request-ID; with
// auth-method also X-Original-URI and X-Scheme. The client's
// X-Forwarded-Proto is not passed on.
func authHeaders(h http.Header, req *http.Request, v *urltemplate.RequestVars, x *match.ExternalAuth, xff string, hs *headerSettings, id string) {
	conn := req.Header["Connection"]
	for k, vs := range req.Header {
		switch k {
		case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
			"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length", "Expect":
			continue
		}
		// proxy-add-original-uri-header sets X-Original-URI in the
		// backend's location only: the client's reaches the service.
		if k != "X-Original-Uri" && withheld(k, hs) || len(conn) > 0 && h1.ListsToken(conn, k) {
			continue
		}
		h[k] = vs
	}
	h.Set("X-Original-Url", v.Scheme+"://"+v.HTTPHost+v.RequestURI)
	h.Set("X-Original-Method", req.Method)
	h.Set("X-Sent-From", "nginx-ingress-controller")
	h.Set("X-Real-Ip", v.RemoteAddr)
	h.Set("X-Forwarded-For", xff)
	redirect := x.RequestRedirect
	if redirect == "" {
		redirect = v.RequestURI
	}
	h.Set("X-Auth-Request-Redirect", redirect)
	// nginx's $req_id, which the backend and the client get too: the ID
	// returned to the client, else the client's first (an empty one is
	// none), else a new one, kept for the backend; none with
	// generate-request-id off.
	if id == "" {
		if ids := req.Header["X-Request-Id"]; len(ids) > 0 && ids[0] != "" {
			id = ids[0]
		} else if !hs.noRequestID {
			id = newRequestID()
			req.Header["X-Request-Id"] = []string{id}
		}
	}
	if id != "" {
		h.Set("X-Request-Id", id)
	}
	if x.Method != "" {
		h.Set("X-Original-Uri", v.RequestURI)
		h.Set("X-Scheme", v.PassAccessScheme)
	}
}

// unlistConnection removes name from the Connection header h carries, so
// that hop-by-hop removal, which both upstream paths do later, keeps a
// field the router set itself.
func unlistConnection(h http.Header, name string) {
	conn := h["Connection"]
	if len(conn) == 0 || !h1.ListsToken(conn, name) {
		return
	}
	var kept []string
	for _, v := range conn {
		for v != "" {
			var tok string
			tok, v, _ = strings.Cut(v, ",")
			if tok = strings.Trim(tok, " \t"); tok != "" && !strings.EqualFold(tok, name) {
				kept = append(kept, tok)
			}
		}
	}
	if len(kept) == 0 {
		delete(h, "Connection")
		return
	}
	h["Connection"] = []string{strings.Join(kept, ", ")}
}
