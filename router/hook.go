package router

import (
	"net/http"
	"sync"
)

// Hook is the embedder's per-route step (Options.Hook). It runs after the
// redirects and before the backend's state, the location's rate limits,
// source ranges and authentication and the request body are looked at,
// where ingress-nginx runs ModSecurity (nginx's rewrite and preaccess
// phases): a request refused by it never reaches a backend or the auth
// service, and a backend with no endpoints does not hide the refusal. It
// is not called for a request no backend was chosen for (404). m is the
// table's choice, from the table the request is then
// proxied with; m.Extensions() holds the location's embedder annotations
// (see compile.Options.ExtensionPrefixes), the route's or, when the virtual
// host's fallback serves the request (m.Route nil), the fallback's.
//
// To answer, write the response to w and return true: the record then has
// Reason ReasonHook and the status written. To pass the request on, return
// false without writing; request headers set on req.Header go to the
// backend, except those the router sets itself (X-Real-IP,
// X-Forwarded-Host, -Port, -Proto, X-Request-ID); an X-Forwarded-For set
// here counts as the client's: it goes on as X-Original-Forwarded-For, and
// with Options.ComputeFullForwardedFor the peer is appended to it.
// A Hook must be safe for concurrent use, and must not use w once it has
// returned, as an http.Handler must not.
//
// Options.BodyHook is a Hook too, run later: after a backend with no
// ready endpoints has answered 503 and before the location's rate limits,
// source ranges and authentication, where nginx's preaccess phase runs
// ModSecurity's request-body phase (ModSecurity-nginx reads the body
// there, past ingress-nginx's balancer, which answers that 503 at the end
// of the rewrite phase). It gets the same req as Hook, so what Hook
// leaves for it may be keyed by req; it is not called when Hook or the
// 503 answered. The body it reads must be put back on req.Body for the
// backend.
type Hook func(w http.ResponseWriter, req *http.Request, m Match) (answered bool)

// ReasonHook is the Record.Reason of an answer Options.Hook wrote (any
// status).
const ReasonHook = "hook"

// ReasonBodyHook is the Record.Reason of an answer Options.BodyHook wrote
// (any status).
const ReasonBodyHook = "body-hook"

// stepHook runs Options.Hook, stepBodyHook Options.BodyHook (runHook).
var (
	stepHook     = step{name: "hook", kind: kindHook, reasons: []string{ReasonHook}}
	stepBodyHook = step{name: "body hook", kind: kindBodyHook, reasons: []string{ReasonBodyHook}}
)

// runHook runs hook, if there is one, for a request the table sent to a
// backend and, when it answered, records that with reason.
func (r *Router) runHook(s *requestState, hook Hook, reason string) bool {
	d := &s.d
	if hook == nil || d.at == &stepNoBackend && d.ans.status != 0 {
		return false
	}
	m := Match{Generation: d.st.gen, Table: d.st.table, VirtualHost: d.res.Host, Route: d.res.Route, Backend: d.res.Backend}
	if r.observer == nil {
		return hook(s.w, s.req, m)
	}
	// The writer that counts the hook's answer is pooled: with an Observer
	// it would otherwise be one allocation on every request of every
	// location, whether the hook answers or not.
	hw := hookWriters.Get().(*hookWriter)
	hw.ResponseWriter = s.w
	answered := hook(hw, s.req, m)
	status, n := hw.status, hw.n
	*hw = hookWriter{}
	hookWriters.Put(hw)
	if !answered {
		return false
	}
	rec := r.record(s)
	rec.Status, rec.Reason, rec.BytesOut = status, reason, n
	if rec.Status == 0 {
		rec.Status = http.StatusOK // net/http sends 200 when nothing was written
	}
	r.observe(s.w, rec)
	return true
}

// hookWriter notes what a hook's answer sent, for the record.
var hookWriters = sync.Pool{New: func() any { return new(hookWriter) }}

type hookWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *hookWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *hookWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

func (w *hookWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
