package router

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"ramjet.dev/ramjet/match"
)

// DefaultAuthTimeout bounds an external-auth subrequest when
// Options.AuthTimeout is 0.
const DefaultAuthTimeout = 10 * time.Second

var (
	ansAuthDenied   = answer{http.StatusServiceUnavailable, ReasonAuthDenied, "503 Service Unavailable: this location's authentication is misconfigured\n"}
	ansUnauthorized = answer{http.StatusUnauthorized, ReasonUnauthorized, "401 Unauthorized: authorization required\n"}
	ansAuthForbid   = answer{http.StatusForbidden, ReasonAuthForbidden, "403 Forbidden: the authentication service refused the request\n"}
	ansAuthSignin   = answer{http.StatusFound, ReasonAuthSignin, "302 Found: sign in first\n"}
	ansAuthError    = answer{http.StatusInternalServerError, ReasonAuthError, "500 Internal Server Error: the authentication service failed\n"}
)

// authState is what authentication keeps across requests and tables.
type authState struct {
	// rt carries external-auth subrequests: Options.Transport, else the
	// router's pooled net/http transport. timeout bounds each one whole.
	rt      http.RoundTripper
	timeout time.Duration
	cache   credCache
}

// authorize applies the matched route's authentication (SPEC §11): basic
// first, then the external service, as nginx's access phase runs them. It
// reports whether the request may go on; otherwise it has answered.
func (r *Router) authorize(w http.ResponseWriter, req *http.Request, d *decision, a *match.Auth, ph *policyHeaders, start time.Time, id string) bool {
	grpc := isGRPC(req)
	if a.Denied != "" {
		r.refuse(w, req, grpc, d, ansAuthDenied, start, id)
		return false
	}
	if a.Basic != nil && !r.basicAuth(req, a.Basic) {
		w.Header()["Www-Authenticate"] = a.Basic.Challenge()
		r.refuse(w, req, grpc, d, ansUnauthorized, start, id)
		return false
	}
	if a.External != nil {
		ans, ok := r.externalAuth(w, req, d.host, d.proto, a.External, ph)
		if !ok {
			r.refuse(w, req, grpc, d, ans, start, id)
			return false
		}
	}
	if a.Basic != nil {
		// The backend never sees the password (nginx sets Authorization
		// to "" after basic authentication).
		delete(req.Header, "Authorization")
	}
	return true
}

// basicAuth checks the request's Basic credentials.
func (r *Router) basicAuth(req *http.Request, ba *match.BasicAuth) bool {
	v := req.Header["Authorization"]
	if len(v) == 0 {
		return false
	}
	var buf [256]byte
	user, pass, ok := basicCredentials(v[0], buf[:])
	if !ok {
		return false
	}
	c, ok := ba.Users.Lookup(user)
	if !ok {
		return false
	}
	if !c.Kind.Slow() {
		return c.Verify(pass)
	}
	return r.auth.cache.verify(c, pass)
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

// credCache remembers credentials that verified against slow hashes
// (bcrypt, apr1), so a client sending the same Authorization on every
// request pays for bcrypt once. An entry is the SHA-256 of the stored hash
// and the password: a new password for the user is a new hash, so a
// rotated Secret invalidates its entries by itself, and the cache holds no
// password. It is bounded: credShards × credSlots entries, each new one
// replacing whatever held its slot, so a flood of distinct credentials
// only evicts (and must still pay for bcrypt on each attempt).
type credCache struct {
	shards [credShards]credShard
}

const (
	credShards = 16
	credSlots  = 256 // per shard: 4,096 entries, 128 KiB in all
)

type credShard struct {
	mu    sync.Mutex
	slots [credSlots][sha256.Size]byte
}

func (cc *credCache) verify(c match.Credential, pass []byte) bool {
	var buf [512]byte
	if len(c.Hash)+1+len(pass) > len(buf) {
		return c.Verify(pass)
	}
	n := copy(buf[:], c.Hash)
	buf[n] = 0
	n++
	n += copy(buf[n:], pass)
	key := sha256.Sum256(buf[:n])
	s := &cc.shards[key[0]%credShards]
	slot := int(key[1]) % credSlots
	s.mu.Lock()
	hit := s.slots[slot] == key
	s.mu.Unlock()
	if hit {
		return true
	}
	if !c.Verify(pass) {
		return false
	}
	s.mu.Lock()
	s.slots[slot] = key
	s.mu.Unlock()
	return true
}

// externalAuth sends the subrequest ingress-nginx's auth_request sends and
// maps its answer: 2xx passes (copying auth-response-headers to the
// request), 401 is passed on (or redirected to the sign-in page), 403 is
// passed on, anything else — another status, a failure, the timeout — is
// 500. No body is sent.
func (r *Router) externalAuth(w http.ResponseWriter, req *http.Request, host, proto string, x *match.ExternalAuth, ph *policyHeaders) (answer, bool) {
	path, query, hasQuery, _ := requestTarget(req)
	uri := path
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
	if r.fullForwardedFor {
		if prior := strings.Join(req.Header["X-Forwarded-For"], ", "); prior != "" {
			xff = prior + ", " + peer
		} else {
			xff = peer
		}
	}
	vars := match.RequestVars{Host: host, HTTPHost: req.Host, Scheme: proto, RequestURI: uri, RemoteAddr: ip}
	method := x.Method
	if method == "" {
		method = http.MethodGet
	}
	ctx, cancel := context.WithTimeout(context.WithValue(req.Context(), externalAuthKey{}, true), r.auth.timeout)
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
	authHeaders(sub.Header, req, &vars, x, xff)
	res, err := r.auth.rt.RoundTrip(sub)
	if err != nil {
		if req.Context().Err() == nil {
			r.logger.Warn("external auth request failed", "url", sub.URL.Redacted(), "error", err)
		}
		return ansAuthError, false
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	cookies := res.Header["Set-Cookie"]
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		for _, name := range x.ResponseHeaders {
			delete(req.Header, name)
			if v := res.Header[name]; len(v) > 0 {
				req.Header[name] = v[:1:1]
				// The client's field of that name is gone; its
				// Connection header must not take the service's too.
				unlistConnection(req.Header, name)
			}
		}
		ph.cookies, ph.alwaysCookies = cookies, x.AlwaysSetCookie
		return answer{}, true
	case res.StatusCode == http.StatusUnauthorized && x.Signin != nil:
		h := w.Header()
		h.Set("Location", x.Signin.Expand(&vars))
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

type externalAuthKey struct{}

// IsExternalAuth reports whether a request is a subrequest the router sends
// to an external auth service (auth-url), so that a RoundTripper given in
// Options.Transport can tell it from a proxied request.
func IsExternalAuth(ctx context.Context) bool {
	v, _ := ctx.Value(externalAuthKey{}).(bool)
	return v
}

// authHeaders are the subrequest's headers, as ingress-nginx's auth
// location sets them: the client's headers (but hop-by-hop ones, its
// framing and the ones the proxy vouches for), then X-Original-URL,
// X-Original-Method, X-Sent-From, X-Real-IP, X-Forwarded-For (xff, as the
// backend gets it), X-Auth-Request-Redirect and X-Request-ID; with
// auth-method also X-Original-URI and X-Scheme. The client's
// X-Forwarded-Proto is not passed on.
func authHeaders(h http.Header, req *http.Request, v *match.RequestVars, x *match.ExternalAuth, xff string) {
	conn := req.Header["Connection"]
	for k, vs := range req.Header {
		switch k {
		case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
			"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length", "Expect":
			continue
		}
		if withheld(k) || len(conn) > 0 && connectionListed(conn, k) {
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
	// The backend gets the same request ID as the service.
	id := ""
	if ids := req.Header["X-Request-Id"]; len(ids) > 0 {
		id = ids[0]
	} else {
		id = newRequestID()
		req.Header["X-Request-Id"] = []string{id}
	}
	h.Set("X-Request-Id", id)
	if x.Method != "" {
		h.Set("X-Original-Uri", v.RequestURI)
		h.Set("X-Scheme", v.Scheme)
	}
}

// unlistConnection removes name from the Connection header h carries, so
// that hop-by-hop removal, which both upstream paths do later, keeps a
// field the router set itself.
func unlistConnection(h http.Header, name string) {
	conn := h["Connection"]
	if len(conn) == 0 || !connectionListed(conn, name) {
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
