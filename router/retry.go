package router

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"time"

	"ramjet.dev/ramjet/match"
)

// maxTries bounds the endpoints one request is sent to (SPEC §13).
const maxTries = 3

// roundTrip sends the outgoing request to the exchange's endpoint. When the
// connection cannot be opened (refused, unreachable, a connect timeout, a
// failed TLS handshake), nothing of the request has reached the backend,
// and it is sent to another endpoint of the same backend, at most maxTries
// endpoints in all. Like nginx's default (proxy_next_upstream error
// timeout, without non_idempotent), every method but POST, LOCK and PATCH
// is retried (see idempotent); so is a gRPC call whose connection was
// lost before its HEADERS were written (notSent). A failure
// after the request was sent is never retried: the backend may have
// acted on the request. Every endpoint left behind is released at once,
// the last one when the request ends. A location's proxy-next-upstream
// replaces the rule with nginx's conditions (see passOn).
func (x *exchange) roundTrip(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	if resendsStale(x, req) {
		rt = staleResend{rt: rt, x: x}
	}
	p := x.proxying()
	if p != nil && p.Retry != nil {
		return x.roundTripRetry(rt, req, p.Retry, p.TryTimeout)
	}
	if p != nil && p.TryTimeout > 0 {
		// A rule's backend request timeout without a retry bounds each
		// try, which a dial failure still passes on as below.
		rt = tryTimeoutTransport{rt, p.TryTimeout}
	}
	explicit := p != nil && p.NextUpstream != 0
	if x.balancer.Len() < 2 || !explicit && !idempotent(req.Method) || explicit && p.NextUpstream&match.RetryOff != 0 {
		return rt.RoundTrip(req)
	}
	var began time.Time
	if explicit && p.NextUpstreamTimeout > 0 {
		began = time.Now()
	}
	out := req
	var body *unclosedBody
	if req.Body != nil && req.Body != http.NoBody {
		// A transport closes the body when it fails; keep it open so that a
		// retry can send it, and know whether any of it was read.
		body = &unclosedBody{r: req.Body}
		out = shallowCopy(req)
		out.Body = body
	}
	for {
		res, err := rt.RoundTrip(out)
		// A body the router holds whole is sent again from its start; one
		// read as it comes only while no try took any of it.
		replayable := body == nil || !body.read || x.held() != nil
		switch {
		case err == nil:
			c := match.StatusCondition(res.StatusCode)
			if !explicit || c == 0 || p.NextUpstream&c == 0 || !x.passOn(req, p, c, true, replayable, began) {
				return res, nil
			}
			res.Body.Close()
		case !explicit && (!notSent(err) || !replayable):
			return nil, err
		case !x.passOn(req, p, failureClass(err), !notSent(err), replayable, began):
			return nil, err
		}
		if out == req {
			out = shallowCopy(req)
		}
		if body != nil && body.read {
			body = &unclosedBody{r: anew(x.held())}
			out.Body = body
		}
		u := *req.URL
		u.Host = x.endpoint.Addr
		out.URL = &u
	}
}

// resendsStale reports a request that staleResend sends again when the
// backend drops the kept-alive connection it went out on, as the router's
// own pool does (serveH1): an idempotent one to an HTTP/1 backend whose
// body is held whole, or which has none. net/http's transport sends a
// request again on its own only when it may replay it (GET, HEAD, OPTIONS
// and TRACE without a body), which the router leaves to it.
func resendsStale(x *exchange, req *http.Request) bool {
	if p := x.backend.Protocol; p != match.HTTP && p != match.HTTPS || !idempotent(req.Method) {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody {
		return x.held() != nil
	}
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}

// staleResend sends a request again, once, when it failed before any
// response on a connection the transport had kept alive: the backend
// closed it as the request arrived, and nginx sends such a request to
// the next try too, its buffered body from the start. The body is kept
// open for that (the reverse proxy closes it when the request ends).
type staleResend struct {
	rt http.RoundTripper
	x  *exchange
}

func (s staleResend) RoundTrip(req *http.Request) (*http.Response, error) {
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
	first := req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	if req.Body != nil && req.Body != http.NoBody {
		first.Body = &unclosedBody{r: req.Body}
	}
	res, err := s.rt.RoundTrip(first)
	if err == nil || !reused || timedOut(err) || req.Context().Err() != nil {
		return res, err
	}
	// nginx lists the try that failed (502), which takes none of the tries.
	s.x.notePassed(s.x.endpoint.Addr, match.RetryError, true)
	again := shallowCopy(req)
	if held := s.x.held(); held != nil {
		again.Body = anew(held)
	}
	return s.rt.RoundTrip(again)
}

// shallowCopy copies the request for another try: the copy may get its own
// URL and body, and shares everything else, which no try modifies.
func shallowCopy(req *http.Request) *http.Request {
	c := new(http.Request)
	*c = *req
	return c
}

// idempotent is nginx's reading: every method but POST, LOCK and PATCH
// may go to another endpoint (SPEC §13), WebDAV's PROPFIND or MKCOL too.
func idempotent(method string) bool {
	switch method {
	case http.MethodPost, "LOCK", http.MethodPatch:
		return false
	}
	return true
}

// unclosedBody hands a request body to one try after another: Close is
// left to the reverse proxy, which closes the original when the request
// ends, and read reports that a try consumed some of it.
type unclosedBody struct {
	r    io.ReadCloser
	read bool
}

func (b *unclosedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 || err != io.EOF {
		b.read = true
	}
	return n, err
}

func (b *unclosedBody) Close() error { return nil }

// tryTimeoutTransport sends each try under a route's backend request
// timeout (tryRoundTrip).
type tryTimeoutTransport struct {
	rt http.RoundTripper
	d  time.Duration
}

func (t tryTimeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return tryRoundTrip(t.rt, req, t.d)
}

// roundTripRetry is roundTrip under a Gateway API rule's retry rr (see
// match.Retry and retryRoute), each try under tryTimeout.
func (x *exchange) roundTripRetry(rt http.RoundTripper, req *http.Request, rr *match.Retry, tryTimeout time.Duration) (*http.Response, error) {
	out := req
	var body *unclosedBody
	if req.Body != nil && req.Body != http.NoBody {
		body = &unclosedBody{r: req.Body}
		out = shallowCopy(req)
		out.Body = body
	}
	for {
		res, err := tryRoundTrip(rt, out, tryTimeout)
		// A body the router holds whole is sent again from its start; one
		// read as it comes only while no try took any of it.
		replayable := body == nil || !body.read || x.held() != nil
		if err == nil {
			if !rr.Retries(res.StatusCode) {
				return res, nil
			}
			if !x.retryRoute(req, rr, replayable) {
				// An answer to retry that came as the request timeout ran
				// out is the timeout's: 504, as a try it cut off.
				if terr := routeTimedOut(req.Context(), nil); terr != nil {
					res.Body.Close()
					return nil, terr
				}
				return res, nil
			}
			res.Body.Close()
		} else if !x.retryRoute(req, rr, replayable) {
			return nil, err
		}
		if out == req {
			out = shallowCopy(req)
		}
		if body != nil && body.read {
			body = &unclosedBody{r: anew(x.held())}
			out.Body = body
		}
		u := *req.URL
		u.Host = x.endpoint.Addr
		out.URL = &u
	}
}

// held is the client's request body when the router read it whole before
// the backend was chosen (clientBody.buffer), which anew gives again for a
// retry; nil when there is none or it is streamed.
func (x *exchange) held() io.ReadCloser {
	if x.reqBody == nil {
		return nil
	}
	return x.reqBody.whole
}

// anew is a body held whole (exchange.held), from its start, for another
// try: a reader of its own, as an earlier try's sender may still hold the
// one it was given; a spilled body is read at offsets, which leave the
// file's position to that reader. Closing it leaves the body to the
// request.
func anew(b io.ReadCloser) io.ReadCloser {
	switch h := b.(type) {
	case *heldBody:
		return &heldBody{b: h.b}
	case *spillBody:
		return io.NopCloser(io.NewSectionReader(h.f, 0, h.size))
	}
	return b
}

// retryRoute reports whether a try that failed is sent again under a
// Gateway API rule's retry rr, and readies it: the retries left, a
// request body no try began to send (replayable), a client still there;
// then it waits rr.Backoff and moves the request to an endpoint not tried
// yet, or keeps the last one when every endpoint was tried (a retry is
// not a next upstream: one endpoint is retried too). The caller checks
// that a response's status is one rr retries.
func (x *exchange) retryRoute(req *http.Request, rr *match.Retry, replayable bool) bool {
	ctx := req.Context()
	if !replayable || ctx.Err() != nil || int(x.retries) >= rr.Attempts {
		return false
	}
	x.retries++
	if rr.Backoff > 0 {
		t := time.NewTimer(rr.Backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
	if x.tried == nil {
		x.tried = x.triedBuf[:0]
	}
	if e, ok := x.pickEndpoint(x.tried); ok {
		if x.picked {
			x.endpoint.Release()
		}
		x.endpoint, x.picked = e, true
		x.tried = append(x.tried, e)
		x.tries++
	}
	return true
}
