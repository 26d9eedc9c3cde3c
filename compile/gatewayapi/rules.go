package gatewayapi

import (
	"slices"
	"strconv"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
)

// conditions translates a match's method, headers and query parameters
// (Exact and RegularExpression). A type this translation does not know,
// or a method outside the API's enum, refuses the match.
func (t *translator) conditions(r *gwv1.HTTPRoute, field string, m gwv1.HTTPRouteMatch) (compile.HTTPRouteMatch, bool) {
	var cm compile.HTTPRouteMatch
	if m.Method != nil {
		if !knownMethod(*m.Method) {
			t.warn(Unsupported, r, field+".method", "method "+strconv.Quote(string(*m.Method))+" is not one the API defines; this match is not served")
			return cm, false
		}
		cm.Method = string(*m.Method)
	}
	for i, h := range m.Headers {
		regex, ok := valueType(deref(h.Type, gwv1.HeaderMatchExact))
		if !ok {
			t.warn(Unsupported, r, field+".headers["+strconv.Itoa(i)+"].type", "header match type "+strconv.Quote(string(*h.Type))+" is unknown; this match is not served")
			return cm, false
		}
		cm.Headers = append(cm.Headers, match.ValueMatch{Name: string(h.Name), Value: h.Value, Regex: regex})
	}
	for i, q := range m.QueryParams {
		regex, ok := valueType(deref(q.Type, gwv1.QueryParamMatchExact))
		if !ok {
			t.warn(Unsupported, r, field+".queryParams["+strconv.Itoa(i)+"].type", "query parameter match type "+strconv.Quote(string(*q.Type))+" is unknown; this match is not served")
			return cm, false
		}
		cm.QueryParams = append(cm.QueryParams, match.ValueMatch{Name: string(q.Name), Value: q.Value, Regex: regex})
	}
	return cm, true
}

// httpMethods are the API's HTTPMethod enum.
var httpMethods = []gwv1.HTTPMethod{gwv1.HTTPMethodGet, gwv1.HTTPMethodHead, gwv1.HTTPMethodPost, gwv1.HTTPMethodPut, gwv1.HTTPMethodDelete,
	gwv1.HTTPMethodConnect, gwv1.HTTPMethodOptions, gwv1.HTTPMethodTrace, gwv1.HTTPMethodPatch}

// knownMethod reports a method of the API's enum, which is case-sensitive.
func knownMethod(m gwv1.HTTPMethod) bool { return slices.Contains(httpMethods, m) }

// valueType reads a header or query parameter match type: regex is true
// for RegularExpression; ok is false for a type neither Exact nor that.
func valueType[T ~string](typ T) (regex, ok bool) {
	switch string(typ) {
	case "Exact":
		return false, true
	case "RegularExpression":
		return true, true
	}
	return false, false
}

// mirror translates a RequestMirror filter of owner ("the rule" or "the
// backend"): its Service reference, checked as a backendRef is, and its
// share (percent, or fraction with a default denominator of 100). An
// invalid reference leaves the mirror out of owner (Invalid).
func (t *translator) mirror(r *gwv1.HTTPRoute, field string, f *gwv1.HTTPRequestMirrorFilter, owner string) compile.RequestMirror {
	m := compile.RequestMirror{Field: field}
	switch {
	case f.Percent != nil:
		m.Numerator, m.Denominator = *f.Percent, 100
	case f.Fraction != nil:
		m.Numerator, m.Denominator = f.Fraction.Numerator, deref(f.Fraction.Denominator, 100)
	}
	ref := &f.BackendRef
	invalid := func(reason compile.Reason, f, why string) compile.RequestMirror {
		t.warn(reason, r, field+".requestMirror.backendRef"+f, why+"; "+owner+" is served without this mirror")
		m.Invalid = why
		return m
	}
	if g, k := deref(ref.Group, ""), deref(ref.Kind, "Service"); (g != "" && g != "core") || k != "Service" {
		return invalid(Unsupported, ".kind", "mirror backend "+string(k)+" is not a Service")
	}
	if ref.Port == nil {
		return invalid(Unsupported, ".port", "a Service mirror backendRef needs a port")
	}
	ns := string(deref(ref.Namespace, gwv1.Namespace(r.Namespace)))
	if ns != r.Namespace && !t.granted(r.Namespace, ns, string(ref.Name)) {
		return invalid(RefNotPermitted, ".namespace",
			"no ReferenceGrant in namespace "+ns+" lets "+t.routeKind()+"s of "+r.Namespace+" use Service "+string(ref.Name))
	}
	m.Service = compile.ServiceRef{Namespace: ns, Name: string(ref.Name), Port: strconv.Itoa(int(*ref.Port))}
	return m
}

// timeouts reads a rule's timeouts into out; "0s" (or any zero) is no
// timeout. A duration that does not parse refuses the rule.
func (t *translator) timeouts(r *gwv1.HTTPRoute, field string, to *gwv1.HTTPRouteTimeouts, out *compile.HTTPRouteRule) bool {
	if to == nil {
		return true
	}
	for _, d := range []struct {
		name string
		v    *gwv1.Duration
		into *time.Duration
	}{{"request", to.Request, &out.RequestTimeout}, {"backendRequest", to.BackendRequest, &out.BackendRequestTimeout}} {
		if d.v == nil {
			continue
		}
		v, err := time.ParseDuration(string(*d.v))
		if err != nil || v < 0 {
			t.warn(Unsupported, r, field+".timeouts."+d.name, "timeout "+strconv.Quote(string(*d.v))+" is not a duration; the rule is not served")
			return false
		}
		*d.into = v
	}
	return true
}

// defaultRetryAttempts is a retry's attempts when it names none (the
// Gateway API leaves it to the implementation): one retry, Envoy's too.
const defaultRetryAttempts = 1

// retry is a rule's retry for the router (match.Retry, SPEC §20): the
// codes, attempts (default defaultRetryAttempts) and backoff. ok is false
// when a value is not one (the rule is not served).
func (t *translator) retry(r *gwv1.HTTPRoute, field string, rt *gwv1.HTTPRouteRetry) (*match.Retry, bool) {
	out := &match.Retry{Attempts: deref(rt.Attempts, defaultRetryAttempts)}
	for j, c := range rt.Codes {
		if c < 400 || c > 599 {
			t.warn(Unsupported, r, field+".codes["+strconv.Itoa(j)+"]", "code "+strconv.Itoa(int(c))+" is not a status from 400 to 599; the rule is not served")
			return nil, false
		}
		if !slices.Contains(out.Codes, int(c)) {
			out.Codes = append(out.Codes, int(c))
		}
	}
	slices.Sort(out.Codes)
	if out.Attempts < 0 {
		t.warn(Unsupported, r, field+".attempts", "attempts "+strconv.Itoa(out.Attempts)+" is negative; the rule is not served")
		return nil, false
	}
	if rt.Backoff != nil {
		v, err := time.ParseDuration(string(*rt.Backoff))
		if err != nil || v < 0 {
			t.warn(Unsupported, r, field+".backoff", "backoff "+strconv.Quote(string(*rt.Backoff))+" is not a duration; the rule is not served")
			return nil, false
		}
		out.Backoff = v
	}
	return out, true
}

// sessionPersistence maps a rule's sessionPersistence onto the session
// affinity ramjet has (SPEC §9, §20): a cookie named sessionName (else
// ramjet's default) that pins a session to its endpoint (affinity-mode
// persistent), with Max-Age absoluteTimeout for a Permanent cookie. What
// has no such form warns and is left out: header-based persistence (the
// rule is served without persistence) and absoluteTimeout on a Session
// cookie, which the cookie cannot bound. (The API this reads, v1.6, has no
// idleTimeout.)
func (t *translator) sessionPersistence(r *gwv1.HTTPRoute, field string, sp *gwv1.SessionPersistence) *match.SessionAffinity {
	if typ := deref(sp.Type, gwv1.CookieBasedSessionPersistence); typ != gwv1.CookieBasedSessionPersistence {
		t.warn(Unsupported, r, field+".type", "session persistence of type "+string(typ)+" is not served, only Cookie; the rule is served without it")
		return nil
	}
	a := &match.SessionAffinity{Mode: balance.Persistent, CookieName: deref(sp.SessionName, "")}
	if a.CookieName != "" && !validCookieName(a.CookieName) {
		t.warn(Unsupported, r, field+".sessionName", "session name "+strconv.Quote(a.CookieName)+" is not a cookie name; the rule is served without session persistence")
		return nil
	}
	permanent := sp.CookieConfig != nil && deref(sp.CookieConfig.LifetimeType, gwv1.SessionCookieLifetimeType) == gwv1.PermanentCookieLifetimeType
	if sp.AbsoluteTimeout != nil {
		d, err := time.ParseDuration(string(*sp.AbsoluteTimeout))
		switch {
		case err != nil || d < time.Second:
			t.warn(Unsupported, r, field+".absoluteTimeout", "absoluteTimeout "+strconv.Quote(string(*sp.AbsoluteTimeout))+" is not a duration of a second or more; the cookie has no lifetime")
		case permanent:
			a.MaxAge = strconv.Itoa(int(d / time.Second))
		default:
			t.warn(Unsupported, r, field+".absoluteTimeout", "a Session cookie's absoluteTimeout is not enforced: the session lasts as long as the client keeps the cookie")
		}
	}
	return a
}

// validCookieName reports an RFC 6265 cookie name (a token).
func validCookieName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return name != ""
}
