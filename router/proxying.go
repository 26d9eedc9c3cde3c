package router

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// A location's buffering, protocol and retry settings (match.Proxying,
// SPEC §11 "Also served"), served on the HTTP/1.1 upstream path. A
// location without them costs one nil check per setting read.

// proxying is the exchange's location's settings; nil for none. It is
// read from the table rather than kept in the exchange, which fills its
// allocation size class.
func (x *exchange) proxying() *match.Proxying {
	p := x.policy()
	if p == nil {
		return nil
	}
	return p.Proxy
}

// policy is the exchange's location's request policy; nil for none.
func (x *exchange) policy() *match.Policy {
	switch {
	case x.route != nil:
		return x.route.Policy
	case x.vhost != nil:
		return x.vhost.FallbackLocation.Policy
	}
	return nil
}

// headBudget is the largest response head accepted: proxy-buffer-size
// where the location sets it (nginx answers 502 "upstream sent too big
// header" past it), else h1.MaxResponseHead.
func headBudget(p *match.Proxying) int {
	if p != nil && p.BufferSize > 0 {
		return int(min(p.BufferSize, h1.MaxResponseHead))
	}
	return h1.MaxResponseHead
}

// failureClass is the proxy_next_upstream condition a failed try meets:
// a timeout; a connection that failed, was reset or closed before a
// response head came whole (error, as nginx counts a failed send or recv);
// or a head that did not parse or was too large (invalid_header, as nginx
// counts "upstream sent too big header").
func failureClass(err error) match.NextUpstream {
	var op *net.OpError
	switch {
	case timedOut(err):
		return match.RetryTimeout
	case unreachable(err), h1.NoResponse(err), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.As(err, &op):
		return match.RetryError
	}
	return match.RetryInvalidHeader
}

// passOn reports whether a try that failed with cond moves the request
// to another endpoint, and picks it. Without proxy-next-upstream
// (p nil, or its NextUpstream 0) that is the router's rule: only a
// connection that could not be opened, for idempotent methods. With it,
// nginx's: the conditions listed, non-idempotent methods that reached
// the backend (sent) only with non_idempotent, no body sent under
// proxy-request-buffering "off", never past proxy-next-upstream-timeout
// (began is when the first try started). replayable says whether the
// request body can be sent again.
func (x *exchange) passOn(req *http.Request, p *match.Proxying, cond match.NextUpstream, sent, replayable bool, began time.Time) bool {
	if req.Context().Err() != nil || x.balancer.Len() < 2 {
		return false
	}
	if p == nil || p.NextUpstream == 0 {
		return cond&(match.RetryError|match.RetryTimeout) != 0 && idempotent(req.Method) && x.passTo(cond, sent)
	}
	n := p.NextUpstream
	switch {
	case n&match.RetryOff != 0, n&cond == 0, !replayable:
		return false
	case sent && !idempotent(req.Method) && n&match.RetryNonIdempotent == 0:
		// As ngx_http_upstream_next, which adds non_idempotent to the
		// conditions once the request was sent: a connection that could
		// not be opened carried nothing the backend could act on.
		return false
	case sent && x.policy().StreamRequestBody && req.Body != nil && req.Body != http.NoBody && x.held() == nil:
		// nginx's request_body_no_buffering: nothing whose body streamed
		// is passed on once sent. A request without a body, or whose
		// body was read whole first (it came with the head, or a mirror
		// wants it), does not stream (ngx_http_read_client_request_body
		// clears the flag for them) and goes on as under buffering.
		return false
	case p.NextUpstreamTimeout > 0 && time.Since(began) >= p.NextUpstreamTimeout:
		return false
	}
	return x.passTo(cond, sent)
}

// passTo moves the request to another endpoint after a try failed with
// cond, and notes that try for the record; false when none is left.
// connected says whether the try opened its connection.
func (x *exchange) passTo(cond match.NextUpstream, connected bool) bool {
	from := x.endpoint.Addr
	if !x.pick() {
		return false
	}
	x.notePassed(from, cond, connected)
	return true
}

// notePassed notes a try to endpoint from that failed with cond for the
// record, as nginx lists each try in $upstream_addr and $upstream_status:
// one passed to another endpoint, or one sent again on a new connection
// after the backend dropped the kept-alive one (its connection reused:
// connected, 0).
func (x *exchange) notePassed(from string, cond match.NextUpstream, connected bool) {
	if !x.upstreamStart.IsZero() { // an Observer reads the record
		if x.passed == nil {
			x.passed = new([]Try)
		}
		t := Try{Endpoint: from, Status: condStatus(cond), Ended: time.Since(x.upstreamStart), Connect: -1}
		began := passedEnd(*x.passed)
		if connected {
			t.Connect = x.connectTime
		}
		switch {
		case x.headerAfter > 0:
			t.Header = max(x.headerAfter-began, 1)
		case cond&^(match.RetryError|match.RetryTimeout|match.RetryInvalidHeader) != 0:
			// A status passed on came with its head; the net/http way out
			// notes heads only for the answer it returns.
			t.Header = max(t.Ended-began, 1)
		}
		*x.passed = append(*x.passed, t)
		// The next try's own, as nginx times each try.
		x.connectTime, x.headerAfter = 0, 0
	}
}

// passedEnd is when the last of the tries passed on ended, from the first
// try's send: when the next one began.
func passedEnd(passed []Try) time.Duration {
	if n := len(passed); n > 0 {
		return passed[n-1].Ended
	}
	return 0
}

// condStatus is the status nginx's $upstream_status gives a try that
// failed with cond (ngx_http_upstream_next).
func condStatus(cond match.NextUpstream) int {
	switch cond {
	case match.RetryTimeout, match.Retry504:
		return http.StatusGatewayTimeout
	case match.Retry500:
		return http.StatusInternalServerError
	case match.Retry503:
		return http.StatusServiceUnavailable
	case match.Retry403:
		return http.StatusForbidden
	case match.Retry404:
		return http.StatusNotFound
	case match.Retry429:
		return http.StatusTooManyRequests
	}
	return http.StatusBadGateway
}

// Response buffering defaults as ingress-nginx writes them.
const (
	defaultProxyBuffers    = 4
	defaultProxyBufferSize = 4 << 10
	defaultMaxTempFileSize = 1 << 30
)

// respondBuffered is respond for a location with proxy-buffering on:
// the response body is read from the backend first, BuffersNumber ×
// BufferSize bytes into memory and the rest into a temporary file of at
// most MaxTempFileSize bytes, so a slow client does not hold the backend
// connection, which goes back to the pool before the client is written
// to. A body longer than both is sent as far as it was read and the rest
// streams, as nginx stops buffering when its temporary file is full. It
// ends the try itself.
func (r *Router) respondBuffered(t *h1Try, res *h1.Response, p *match.Proxying, reuse bool) {
	x := t.x
	memory := int64(cmp.Or(p.BuffersNumber, defaultProxyBuffers)) * cmp.Or(p.BufferSize, defaultProxyBufferSize)
	maxTemp := p.MaxTempFileSize
	if maxTemp < 0 {
		maxTemp = defaultMaxTempFileSize
	}
	pc := t.pc
	body := pc.Body()
	var mem bytes.Buffer
	var spill *spillBody
	defer func() {
		if spill != nil {
			spill.Close()
		}
	}()
	n, err := io.Copy(&mem, io.LimitReader(body, memory))
	whole := err == nil && n < memory
	if err == nil && !whole && maxTemp > 0 {
		// A byte more than memory holds would tell a body of exactly
		// that length from a longer one; the file takes it either way.
		if spill, err = newSpill(r.bodyTempDir); err != nil {
			r.logger.Warn("response buffering: no temporary file; the response streams", "error", err)
			spill, err = nil, nil
		} else {
			var m int64
			m, err = io.Copy(struct{ io.Writer }{spill.f}, io.LimitReader(body, maxTemp))
			whole = err == nil && m < maxTemp
			if err == nil {
				_, err = spill.f.Seek(0, io.SeekStart)
			}
		}
	}
	if whole && !res.Chunked && res.Length < 0 {
		// Read to the connection's end: nothing more is coming.
		reuse = false
	}
	var trailer http.Header
	if err == nil && whole {
		trailer, err = pc.Trailer()
	}
	if err != nil {
		x.readErr = err
	}
	done := err == nil && whole
	// res is the connection's head: it is copied before End gives the
	// connection back, as the pool clears the head and the next request
	// on the connection reads its own into it.
	h := x.w.Header()
	own := len(h["Set-Cookie"])
	x.headers().backendServer(h)
	res.CopyTo(h, x.headers().hidden)
	untyped(h)
	x.rewriteHead(h, own)
	declared := passedTrailers(res.Trailer)
	if len(declared) > 0 {
		h["Trailer"] = declared
	}
	status := res.Status
	if done {
		// All of it is here: the backend's connection is free before the
		// client has read a byte.
		pc.End(reuse && !res.Close)
	}
	x.WriteHeader(status)
	if _, werr := x.Write(mem.Bytes()); werr != nil {
		if !done {
			pc.End(false)
		}
		return
	}
	if spill != nil {
		buf := copyBuffers.Get().(*[copyBufferSize]byte)
		_, werr := io.CopyBuffer(struct{ io.Writer }{x}, struct{ io.Reader }{spill.f}, buf[:])
		copyBuffers.Put(buf)
		if werr != nil {
			if !done {
				pc.End(false)
			}
			return
		}
	}
	if done {
		for k, vs := range trailer {
			if contains(declared, k) {
				h[k] = vs
			}
		}
		return
	}
	if err != nil {
		pc.End(false)
		return
	}
	// Past both buffers: the rest streams as respond sends a body.
	buf := copyBuffers.Get().(*[copyBufferSize]byte)
	defer copyBuffers.Put(buf)
	for {
		n, rerr := body.Read(buf[:])
		if n > 0 {
			if _, werr := x.Write(buf[:n]); werr != nil {
				pc.End(false)
				return
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			x.readErr = rerr
			pc.End(false)
			return
		}
	}
	tr, err := pc.Trailer()
	if err != nil {
		x.readErr = err
		pc.End(false)
		return
	}
	for k, vs := range tr {
		if contains(declared, k) {
			h[k] = vs
		}
	}
	pc.End(reuse && !res.Close)
}
