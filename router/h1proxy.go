package router

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h1"
)

// serveH1 proxies a request to an HTTP/1.1 backend, over TLS for HTTPS,
// through the router's own connection pools, on the handler's goroutine: the request head is written
// straight from the inbound request and the response is copied to the
// client from the connection's buffer. Only a request body is written on a
// second goroutine, so that a backend answering before it read the whole
// body cannot stall the exchange.
func (r *Router) serveH1(x *exchange, req *http.Request, trace *tracedWriter) {
	upgrade := upgradeType(req.Header)
	length := req.ContentLength
	hasBody := req.Body != nil && req.Body != http.NoBody
	if !hasBody {
		length = 0
	} else if length == 0 {
		length = -1 // a body of unknown length: chunked
	}
	fresh := false // the next try dials a new connection
	if !x.start.IsZero() {
		x.upstreamStart = time.Now()
	}
	p := x.proxying()
	var began time.Time // for proxy-next-upstream-timeout
	if p != nil && p.NextUpstreamTimeout > 0 {
		began = time.Now()
	}
	var rr *match.Retry // a Gateway API rule's retry, which replaces proxy-next-upstream
	var tryTimeout time.Duration
	if p != nil {
		rr, tryTimeout = p.Retry, p.TryTimeout
	}
	outer := req
	// The tries' timeouts, released when the exchange ends, last first:
	// one deferred call rather than a defer in the loop, which would cost
	// every request the runtime's defer handling.
	var cancelTries func()
	// sender ends when the body sender of the last try that started one
	// does: a sender may outlive its exchange, and the handler does not
	// return before it (see awaitSender).
	var sender <-chan struct{}
	defer func() {
		if sender != nil {
			r.awaitSender(x, sender)
		}
		if cancelTries != nil {
			cancelTries()
		}
	}()
	for {
		var dialAt time.Time
		if !x.start.IsZero() {
			dialAt = time.Now()
		}
		// Each try under the route's backend request timeout, from its
		// connection to its response's last byte; released when the
		// exchange ends.
		req := outer
		if tryTimeout > 0 {
			var cancel context.CancelFunc
			req, cancel = withTryTimeout(outer, tryTimeout)
			cancelTries = chainCancel(cancel, cancelTries)
		}
		ctx := req.Context()
		pool := r.h1
		if x.protocol() == match.HTTPS {
			pool = r.h1s
		}
		pc, err := pool.Get(ctx, x.endpoint.Addr, fresh, x.timeouts.connect)
		if !dialAt.IsZero() && (err != nil || !pc.Reused()) {
			x.connectTime += time.Since(dialAt)
		}
		if err != nil {
			err = routeTimedOut(ctx, err)
			if rr != nil && x.retryRoute(outer, rr, true) {
				fresh = false
				continue
			}
			if rr == nil && notConnected(err) && x.passOn(outer, p, failureClass(err), false, true, began) {
				fresh = false
				continue
			}
			r.exchangeFailed(x, req, err)
			return
		}
		t := h1Try{pc: pc, x: x, req: req, trace: trace}
		res, err := t.send(upgrade, length)
		if s := pc.BodySender(); s != nil {
			sender = s
		}
		if err != nil {
			err = routeTimedOut(ctx, err)
			// Once a sender started on the body it may be blocked reading
			// it, so a streamed body cannot be handed to another try even
			// if nothing of it has been read yet; one held whole is sent
			// again from its start (bodyAnew), as nginx resends the body
			// it buffered.
			clientErr := pc.ClientError()
			started := pc.BodyStarted()
			retry := pc.Reused() && !fresh && h1.NoResponse(err) && !timedOut(err) && ctx.Err() == nil &&
				idempotent(req.Method) && (!started || x.held() != nil && clientErr == nil && !sendTimedOut(pc))
			pc.End(false)
			if retry {
				// The backend closed the kept-alive connection before it
				// answered anything of this request: send it again, as
				// net/http and nginx do, on a new connection; nginx lists
				// the try that failed (502), which takes none of the tries.
				x.notePassed(x.endpoint.Addr, match.RetryError, true)
				fresh, outer = true, bodyAnew(x, outer, started)
				continue
			}
			if rr != nil && clientErr == nil && x.retryRoute(outer, rr, !started || x.held() != nil) {
				fresh, outer = false, bodyAnew(x, outer, started)
				continue
			}
			if rr == nil && p != nil && p.NextUpstream != 0 && clientErr == nil &&
				x.passOn(outer, p, failureClass(err), true, !started || x.held() != nil, began) {
				fresh, outer = false, bodyAnew(x, outer, started)
				continue
			}
			if clientErr != nil {
				// exchangeFailed answers it as the client's (see clientBody).
				err = clientErr
			} else if we := pc.WriteError(); we != nil && timedOut(we) {
				// The backend stopped taking the body for the send timeout:
				// 504, as nginx answers a proxy_send_timeout.
				err = we
			}
			r.exchangeFailed(x, req, err)
			return
		}
		if !x.start.IsZero() {
			x.gotHeader()
		}
		if res.Status == http.StatusSwitchingProtocols {
			r.switchProtocols(&t, res, upgrade)
			return
		}
		if rr != nil && rr.Retries(res.Status) {
			started := pc.BodyStarted() || pc.BodyUnsent()
			if x.retryRoute(outer, rr, !started || x.held() != nil) {
				pc.End(false)
				fresh, outer = false, bodyAnew(x, outer, started)
				continue
			}
			// An answer to retry that came as the request timeout ran out
			// is the timeout's: 504, as a try it cut off.
			if terr := routeTimedOut(outer.Context(), nil); terr != nil {
				pc.End(false)
				r.exchangeFailed(x, req, terr)
				return
			}
		}
		if p != nil {
			// proxy-next-upstream http_<status>: the response is dropped
			// for another endpoint's, unless none is left to try.
			started := pc.BodyStarted() || pc.BodyUnsent()
			if c := match.StatusCondition(res.Status); c != 0 && p.NextUpstream&c != 0 &&
				x.passOn(outer, p, c, true, !started || x.held() != nil, began) {
				pc.End(false)
				fresh, outer = false, bodyAnew(x, outer, started)
				continue
			}
			if p.Buffering && !pc.BodyUnsent() && !x.intercepts(res.Status) && !accelUnbuffered(res) {
				r.respondBuffered(&t, res, p, !p.HTTP10)
				if x.readErr != nil {
					x.cut()
				}
				return
			}
		}
		pc.End(t.respond(res) && (p == nil || !p.HTTP10))
		if x.readErr != nil {
			x.cut()
		}
		return
	}
}

// sendTimedOut reports a try whose body the backend stopped taking for
// the send timeout: a slow backend, not a kept-alive connection it closed.
func sendTimedOut(pc *h1.Conn) bool {
	we := pc.WriteError()
	return we != nil && timedOut(we)
}

// cut ends an answer whose backend broke off its body. The status is
// given: the only way left to tell the client the response is incomplete
// is to cut its connection, as ReverseProxy does; otherwise a chunked
// response would end with a well-formed last chunk. What was written goes
// out first, as nginx sends the head and the bytes it read before it
// closes the connection: the server would drop a head and body still in
// its buffers, and the client would get no answer at all.
func (x *exchange) cut() {
	_ = http.NewResponseController(x.w).Flush()
	panic(http.ErrAbortHandler)
}

// accelUnbuffered reports a response that turns proxy-buffering off for
// itself with X-Accel-Buffering: no (any case), as nginx reads the field
// (ngx_http_upstream_process_buffering): an event stream or a long poll
// reaches the client as it comes. The field itself is hidden.
func accelUnbuffered(res *h1.Response) bool {
	return strings.EqualFold(res.Get("X-Accel-Buffering"), "no")
}

// awaitSender waits for a body sender still running as the exchange
// ends, which happens when the backend answered before it had the whole
// body: the sender may be blocked reading the client's body, and a read
// of it once the handler returned would race the server for the client's
// connection, which by then reads the next request. The backend's
// connection was closed under it (End), so it ends with the read under
// way: the answer is flushed first, for a client that sends the rest of
// its body only once it has it, and that read is bounded by the client
// body timeout. Without that timeout, or without a whole answer to flush
// (none, the backend's broken off, the client gone), the read is cut
// short at once with a read deadline already past. The server then
// drains what is left of the body, or closes the connection, as for any
// body a handler left unread.
func (r *Router) awaitSender(x *exchange, sender <-chan struct{}) {
	select {
	case <-sender:
		return
	default:
	}
	rc := http.NewResponseController(x.w)
	answered := x.status != 0 && x.reason != ReasonClientClosed && x.readErr == nil
	if r.bodyTimeout <= 0 || !answered || rc.Flush() != nil {
		_ = rc.SetReadDeadline(time.Unix(1, 0))
	}
	<-sender
}

// chainCancel is cancel, then then (when not nil).
func chainCancel(cancel context.CancelFunc, then func()) func() {
	if then == nil {
		return cancel
	}
	return func() {
		cancel()
		then()
	}
}

// h1Try is one attempt to exchange a request with a backend over pc.
type h1Try struct {
	pc  *h1.Conn
	x   *exchange
	req *http.Request
	// trace is the request's span, whose context the request head
	// carries; nil when the request is not traced.
	trace *tracedWriter
}

// send writes the request and reads the head of the final response.
// Informational responses are passed on to the client, at most
// maxInformational of them in all tries (none to HTTP/1.0), except the
// backend's 100 Continue: the client's own comes from net/http's server
// when the body is first read.
func (t *h1Try) send(upgrade string, length int64) (*h1.Response, error) {
	req := t.req
	bw := t.pc.Begin(h1.Request{
		Ctx: req.Context(), Method: req.Method, Header: req.Header,
		Body: req.Body, Length: length, Inline: inlineBody(req, length),
		Upgrade: upgrade != "",
		Send:    t.x.timeouts.send, Read: t.x.timeouts.read,
		MaxHead: headBudget(t.x.proxying()),
	})
	writeRequestHead(bw, t.x, req, upgrade, length, t.trace)
	for {
		res, err := t.pc.Next()
		if err != nil || res.Status >= 200 || res.Status == http.StatusSwitchingProtocols {
			return res, err
		}
		if t.x.informed < maxInformational {
			t.x.informed++
			t.inform(res)
		}
	}
}

// maxInformational bounds the informational responses relayed to the
// client per request (SPEC §13); later ones are read and dropped.
const maxInformational = 5

// inlineBody is a held request body small enough to be written with the
// request head (see h1.Request.Inline), nil for any other.
func inlineBody(req *http.Request, length int64) []byte {
	if hb, ok := req.Body.(*heldBody); ok && len(hb.b) > 0 && len(hb.b) <= h1.InlineMax && length == int64(len(hb.b)) {
		return hb.b
	}
	return nil
}

// bodyAnew is the request for another try (a Gateway API retry, or
// proxy-next-upstream) after a try: req itself unless the try started on
// its body, then a copy whose body, held whole (exchange.held), starts
// again (anew).
func bodyAnew(x *exchange, req *http.Request, started bool) *http.Request {
	if !started || x.held() == nil {
		return req
	}
	out := shallowCopy(req)
	out.Body = anew(x.held())
	return out
}

// inform passes an informational response (103 Early Hints and the like)
// on to the client.
func (t *h1Try) inform(res *h1.Response) {
	h := t.x.w.Header()
	var added []string
	for _, f := range res.Fields {
		if h1.HopByHop(f.Key) || t.x.headers().hidden(f.Key) || h[f.Key] != nil && !contains(added, f.Key) {
			continue // hop-by-hop, or the final response's own
		}
		h[f.Key] = append(h[f.Key], f.Value)
		added = append(added, f.Key)
	}
	t.x.w.WriteHeader(res.Status)
	for _, k := range added {
		delete(h, k)
	}
}

// respond copies the response to the client and reports whether it was
// read to its end.
func (t *h1Try) respond(res *h1.Response) bool {
	x := t.x
	declared := passedTrailers(res.Trailer)
	// As ReverseProxy: flush every piece of a response of unknown length
	// and of server-sent events; the rest is flushed before each wait for
	// more of the body (see below).
	var flush bool
	x.headers().backendServer(x.w.Header())
	if x.relay(res, declared) {
		flush = res.Length < 0 || relaysEventStream(res, x.headers())
	} else {
		h := x.w.Header()
		own := len(h["Set-Cookie"])
		res.CopyTo(h, x.headers().hidden)
		untyped(h)
		x.rewriteHead(h, own)
		if len(declared) > 0 {
			h["Trailer"] = declared
		}
		x.WriteHeader(res.Status)
		flush = res.Length < 0 || isEventStream(h)
	}
	if b, ok := t.pc.WholeBody(); ok {
		// It came with the head: one write, without a copy buffer, as the
		// loop below would make it.
		if len(b) > 0 {
			if _, werr := x.Write(b); werr != nil {
				return false
			}
			if flush {
				if ferr := http.NewResponseController(x.w).Flush(); ferr != nil && x.writeErr == nil {
					x.writeErr = ferr
					return false
				}
			}
		}
		return !res.Close
	}
	if x.intercepts(res.Status) {
		// The body is dropped unread; the connection cannot be reused.
		return false
	}
	t.pc.WatchClient()
	buf := copyBuffers.Get().(*[copyBufferSize]byte)
	defer copyBuffers.Put(buf)
	body := t.pc.Body()
	for {
		if !flush && t.pc.BodyWaits() {
			// What came, the head included, goes to the client before
			// the wait for more, as nginx sends it with proxy_buffering
			// off (ingress-nginx's default): a body that comes in pieces
			// is not held until the buffer fills or the body ends.
			if ferr := http.NewResponseController(x.w).Flush(); ferr != nil && x.writeErr == nil {
				x.writeErr = ferr
				return false
			}
		}
		n, err := body.Read(buf[:])
		if n > 0 {
			if _, werr := x.Write(buf[:n]); werr != nil {
				return false
			}
			if flush && err == nil {
				if ferr := http.NewResponseController(x.w).Flush(); ferr != nil && x.writeErr == nil {
					x.writeErr = ferr
					return false
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			x.readErr = err
			return false
		}
	}
	trailer, err := t.pc.Trailer()
	if err != nil {
		x.readErr = err
		return false
	}
	if len(declared) > 0 {
		h := x.w.Header()
		for k, vs := range trailer {
			if contains(declared, k) {
				h[k] = vs
			}
		}
	}
	return !res.Close
}

func contains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

func isEventStream(h http.Header) bool {
	ct := h["Content-Type"]
	return len(ct) > 0 && isEventStreamType(ct[0])
}

// isEventStreamType reports a Content-Type value of server-sent events.
func isEventStreamType(ct string) bool {
	// strings.ToLower then HasPrefix, without the copy: no rune lowers to
	// an ASCII letter of the prefix but ASCII ones (İ and K lower to i and
	// k), so an ASCII fold decides the same.
	const p = "text/event-stream"
	v := strings.TrimSpace(ct)
	if len(v) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := v[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[i] {
			return false
		}
	}
	return true
}

// passedTrailers are the announced trailer fields a client may be given:
// names, a slice of announced when all of them are, a copy otherwise. Only
// an announced field is passed on, as it is announced to the client before
// the body; what was not announced could be meant for a parser that reads
// a trailer as a header (SPEC §13).
func passedTrailers(announced []string) []string {
	for i, k := range announced {
		if !trailerPassed(k) {
			out := append([]string(nil), announced[:i]...)
			for _, k := range announced[i+1:] {
				if trailerPassed(k) {
					out = append(out, k)
				}
			}
			return out
		}
	}
	return announced
}

// trailerPassed reports whether a trailer field may reach the client:
// never one that frames or routes the message, controls caching or
// authentication, or sets a cookie or a location (RFC 9110 §6.5.1; the
// list is net/http's badTrailer, with the cookie, location and hop-by-hop
// fields).
func trailerPassed(k string) bool {
	switch k {
	case "Authorization", "Cache-Control", "Connection", "Content-Encoding", "Content-Length",
		"Content-Range", "Content-Type", "Expect", "Host", "Keep-Alive", "Max-Forwards", "Pragma",
		"Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection", "Range", "Realm", "Te",
		"Trailer", "Transfer-Encoding", "Www-Authenticate", "Set-Cookie", "Set-Cookie2", "Location",
		"Content-Location", "Refresh", "Upgrade", "Age", "Date", "Expires", "Vary", "Retry-After",
		"Status", "Strict-Transport-Security", "Alt-Svc":
		return false
	}
	return true
}

// hiddenResponseHeader: what nginx's proxy_hide_header hides by default
// (ngx_http_proxy_hide_headers): Date, which the server then writes from
// its own clock, Server (servertokens.go), X-Pad and the X-Accel-*
// instructions to nginx, such as an internal redirect's path.
func hiddenResponseHeader(k string) bool {
	switch k {
	case "Date", "Server", "X-Pad", "X-Accel-Expires", "X-Accel-Redirect", "X-Accel-Limit-Rate", "X-Accel-Buffering", "X-Accel-Charset":
		return true
	}
	return false
}

// switchProtocols tunnels an Upgrade once the backend answered 101: the
// client's connection is taken over from the server and bytes are copied
// both ways until either side closes. A body the request declared (its
// sender may still wait for it when the 101 comes, as the client may send
// it only then) is the backend's before anything of the new protocol: the
// tunnel starts once the sender forwarded it whole, which its reads and
// writes bound by the client body and send timeouts, and a body that
// failed closes both connections, the 101 being already the client's.
// Until then the sender alone reads the client's connection and writes
// the backend's, so their bytes stay in order.
func (r *Router) switchProtocols(t *h1Try, res *h1.Response, upgrade string) {
	x, pc := t.x, t.pc
	got := res.Get("Upgrade")
	if upgrade == "" || !strings.EqualFold(got, upgrade) {
		pc.End(false)
		r.exchangeFailed(x, t.req, errors.New("backend switched protocols to "+got+" when "+upgrade+" was asked for"))
		return
	}
	if !pc.Detach() {
		pc.End(false)
		x.status, x.reason = 499, ReasonClientClosed
		return
	}
	tun := r.tunnels.begin()
	defer r.tunnels.end(tun)
	cc, brw, err := x.hijack()
	if err != nil {
		pc.End(false)
		r.exchangeFailed(x, t.req, err)
		return
	}
	r.tunnels.hold(tun, cc)
	defer cc.Close()
	defer pc.Close()
	brw.WriteString("HTTP/1.1 101")
	if res.Reason != "" {
		brw.WriteString(" ")
		brw.WriteString(res.Reason)
	}
	brw.WriteString("\r\n")
	h := x.w.Header()
	fields := res.Fields
	merged := x.added.any() || x.proxying().HasHeaderRewrites()
	if merged {
		// The location's header edits (custom-headers, more_set_headers,
		// add_header … always) act on the whole head, the backend's
		// fields among it, and so do proxy_redirect and proxy_cookie_*,
		// which nginx applies to a 101 too: the map then holds them all.
		own := len(h["Set-Cookie"])
		x.headers().backendServer(h)
		mergeUpgradeFields(h, fields, x.headers())
		x.rewriteHead(h, own)
		x.added.apply(h, http.StatusSwitchingProtocols)
		fields = nil
	}
	// The session cookie the pick set (affinity.go) goes first, as the
	// sticky balancer sets it before the backend's head comes, and as
	// ReverseProxy's 101 sends it.
	for _, v := range h["Set-Cookie"] {
		writeHeader(brw.Writer, "Set-Cookie", v)
	}
	// Server (servertokens.go): nginx's header filter writes its own on
	// a 101 as on any answer, as ReverseProxy's 101 carries the map's;
	// with passServer the backend's, among its fields (or merged into
	// the map), instead.
	if !x.headers().passServer || merged {
		for _, v := range h["Server"] {
			writeHeader(brw.Writer, "Server", v)
		}
	}
	// The rest of the map is what the router puts on every answer (the
	// request ID, HSTS, the ConfigMap's add-headers, CORS): nginx's
	// header filters (more_set_headers, the Lua header phase) run on a 101
	// too, and replace a field of the backend's with the same name where
	// it stands; the others follow the backend's fields, in name order.
	var replaced []string
	for _, f := range fields {
		switch {
		case h1.HopByHop(f.Key) || x.headers().hidden(f.Key):
		case replacesOnUpgrade(h, f.Key):
			if !slices.Contains(replaced, f.Key) {
				replaced = append(replaced, f.Key)
				for _, v := range h[f.Key] {
					writeHeader(brw.Writer, f.Key, v)
				}
			}
		default:
			writeHeader(brw.Writer, f.Key, f.Value)
		}
	}
	rest := make([]string, 0, len(h))
	for k := range h {
		if replacesOnUpgrade(h, k) && !slices.Contains(replaced, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range rest {
		for _, v := range h[k] {
			writeHeader(brw.Writer, k, v)
		}
	}
	writeHeader(brw.Writer, "Connection", "Upgrade")
	writeHeader(brw.Writer, "Upgrade", got)
	// Written here past the server, which dates other answers; the
	// backend's Date is hidden, and nginx dates the 101 from its clock.
	writeHeader(brw.Writer, "Date", time.Now().UTC().Format(http.TimeFormat))
	brw.WriteString("\r\n")
	if err := brw.Flush(); err != nil {
		return
	}
	if err := pc.AwaitBody(); err != nil {
		return
	}
	bc, br := pc.Tunnel()
	r.tunnels.hold(tun, bc)
	idle := watchIdle(x.timeouts.read, func() {
		_ = cc.Close()
		_ = bc.Close()
	})
	defer idle.stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(bc, idle.reader(brw.Reader))
		closeWrite(bc)
	}()
	// What the backend sends through the tunnel is the response's body
	// to nginx ($body_bytes_sent).
	n, _ := io.Copy(cc, idle.reader(br))
	x.written += n
	// One side is finished: closing both ends the other copy.
	_ = cc.Close()
	_ = bc.Close()
	<-done
}

// replacesOnUpgrade reports a field k the router set on h, the answer's
// map, that a 101 carries in place of the backend's fields named k: all
// but the session cookie, which goes beside the backend's, Server, which
// servertokens.go decides, the 101's own Date, and hop-by-hop fields.
func replacesOnUpgrade(h http.Header, k string) bool {
	return len(h[k]) > 0 && k != "Set-Cookie" && k != "Server" && k != "Date" && !h1.HopByHop(k)
}

// mergeUpgradeFields adds to h the backend's fields of a 101 that it
// carries beside the router's, as switchProtocols writes them: all but
// hop-by-hop and hidden fields and those the router's replace.
func mergeUpgradeFields(h http.Header, fields []h1.Field, hs *headerSettings) {
	var own []string
	for k := range h {
		if replacesOnUpgrade(h, k) {
			own = append(own, k)
		}
	}
	for _, f := range fields {
		if !h1.HopByHop(f.Key) && !hs.hidden(f.Key) && !slices.Contains(own, f.Key) {
			h[f.Key] = append(h[f.Key], f.Value)
		}
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
