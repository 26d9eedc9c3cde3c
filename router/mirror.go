package router

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/match"
)

// mirrorState counts the mirrored copies (mirror-target) across tables.
type mirrorState struct {
	inFlight        atomic.Int64
	dropped, failed atomic.Uint64
	// turn spreads the copies to a mirror's Backend over its endpoints.
	turn atomic.Uint64
	// h2c and h2 carry the copies to a GRPC (H2C) or GRPCS mirror
	// Service, as the Router's upstream does its calls.
	h2c, h2 http.RoundTripper
	// send sends one copy on its own goroutine: Router.sendMirror, which
	// BenchmarkMirror replaces to count the request's own allocations
	// apart from the copy's.
	send func(m *match.Mirror, req *http.Request, c mirrorCopy)
}

type mirrorKey struct{}

// IsMirror reports whether an outgoing request is a mirrored copy
// (mirror-target), for a RoundTripper given in Options.Transport: its
// answer is read and thrown away.
func IsMirror(ctx context.Context) bool { return ctx.Value(mirrorKey{}) != nil }

// mirror sends a copy of the request to the location's mirror target, as
// nginx's mirror module does, on a goroutine of its own: the real request
// neither waits for it nor learns how it went. The body is the one read
// whole before the backend was chosen (wrapBody reads it so for a location
// that mirrors it, as mirror_request_body does), in memory or in its
// temporary file, which the copy keeps open until it is sent. A gRPC
// call's body is never read whole: the copy, to a Service (the Gateway
// API's) or to a mirror-target URL (an Ingress's), is fed it as it goes
// to the backend (grpcTee); one to a URL gathers it and goes with its
// length once it is over, as nginx's. At most MirrorInFlight copies are in flight;
// one over that is not sent and is counted in Stats.MirrorsDropped.
// Taking the copy costs the request the goroutine
// and a copy of its method, host and headers; everything else is done on
// that goroutine.
//
// A mirror with a share (the Gateway API's percent or fraction) copies
// exactly that share of its requests, spread evenly (mirrorShares); one
// to a Backend without ready endpoints copies nothing.
func (r *Router) mirror(s *requestState, m *match.Mirror) {
	if m.Denominator > 0 && !s.d.st.mirrorShares[m].take(m.Numerator, m.Denominator) {
		return
	}
	if m.Backend != nil && len(m.Backend.Endpoints) == 0 {
		return
	}
	d := &s.d
	c := mirrorCopy{path: d.path, query: d.query, scheme: connScheme(s.req), host: d.host, hdr: &r.live.Load().headers}
	if !m.NoBody && s.req.Body != nil && s.req.Body != http.NoBody {
		switch b := s.req.Body.(type) {
		case *heldBody:
			c.body = b.b
		case *spillBody:
			c.spill = b
		case *clientBody:
			if !s.grpc || b.n.Load() > 0 {
				r.mirrors.dropped.Add(1)
				return
			}
			c.tee = &grpcTee{wake: make(chan struct{}, 1), dropped: &r.mirrors.dropped}
		default:
			r.mirrors.dropped.Add(1)
			return
		}
	}
	if r.mirrors.inFlight.Add(1) > MirrorInFlight || c.spill != nil && !c.spill.hold() {
		r.mirrors.inFlight.Add(-1)
		r.mirrors.dropped.Add(1)
		return
	}
	if c.tee != nil {
		// Before the backend reads a byte: the call is sent after this.
		cb := s.req.Body.(*clientBody)
		cb.tees = append(cb.tees, c.tee)
	}
	// What the copy reads of the request is copied here: a server may
	// reuse the request once the handler returned (the example
	// controller's own HTTP/1 loop does), and the copy outlives it.
	req := &http.Request{Method: s.req.Method, Host: s.req.Host, Header: s.req.Header.Clone()}
	// ingress-nginx's mirror location propagates no trace context: the
	// client's trace headers go as received.
	s.trace.clientContext(req.Header, true)
	// $request_uri is the request-target as received, also after a
	// snippet's rewrite moved the request (d then holds the new URI).
	c.requestURI = d.path
	if path, query, hasQuery, ok := requestTarget(s.req); ok {
		c.requestURI = path
		if hasQuery {
			c.requestURI += "?" + query
		}
	}
	go r.mirrors.send(m, req, c)
}

// mirrorCopy is what a copy needs from the request's decision, copied
// because the decision lives on the handler's stack, and the body it
// sends: body, or the file spill the copy holds open (nil for none).
type mirrorCopy struct {
	requestURI, path, query, scheme, host string
	body                                  []byte
	spill                                 *spillBody
	// tee is a gRPC call's body as it streams (nil for none).
	tee *grpcTee
	// hdr are the header keys' settings the request was served with.
	hdr *headerSettings
}

// sendMirror sends the copy and reads its answer away: req is mirror's
// copy of the request's method, host and headers. nginx's mirror
// subrequest passes the client's headers (its mirror location sets only
// Host), and its body when mirror-request-body is on.
//
// A copy's exchange is bounded by the router's connect and read timeouts
// together. A gRPC call's copy lasts as long as the call's body first, as
// nginx's mirror subrequest lasts as long as its request: its bound
// starts once that body is whole, or the call over.
func (r *Router) sendMirror(m *match.Mirror, req *http.Request, c mirrorCopy) {
	defer r.mirrors.inFlight.Add(-1)
	ctx := context.WithValue(context.Background(), mirrorKey{}, true)
	bound := r.timeouts.connect + r.timeouts.read
	var cancel context.CancelFunc
	if c.tee != nil {
		ctx, cancel = context.WithCancel(ctx)
		defer c.tee.bound(bound, cancel)()
	} else {
		ctx, cancel = context.WithTimeout(ctx, bound)
	}
	defer cancel()
	var rd io.Reader
	size := int64(-1)
	switch {
	case c.spill != nil:
		defer c.spill.release()
		rd, size = io.NewSectionReader(c.spill.f, 0, c.spill.size), c.spill.size
	case c.body != nil:
		rd, size = bytes.NewReader(c.body), int64(len(c.body))
	case c.tee != nil:
		defer c.tee.Close()
		rd = c.tee
	}
	rt, h2 := r.auth.rt, false
	url := m.URL(c.requestURI, c.path, c.query, c.scheme, c.host)
	if b := m.Backend; b != nil {
		url = m.URLAt(b.Endpoints[r.mirrors.turn.Add(1)%uint64(len(b.Endpoints))], c.requestURI, c.path, c.query, c.scheme, c.host)
		switch b.Protocol {
		case match.GRPC, match.H2C:
			rt, h2 = r.mirrors.h2c, true
		case match.GRPCS:
			rt, h2, url = r.mirrors.h2, true, "https"+strings.TrimPrefix(url, "http")
		}
	}
	if c.tee != nil && !h2 {
		// nginx's mirror subrequest sends a body it read whole
		// (mirror_request_body), with its length: a call's copy to a
		// mirror-target URL goes once the call's body is over.
		b, err := c.tee.whole(grpcMirrorWholeLimit)
		if err != nil {
			if !c.tee.abandoned() {
				r.mirrors.failed.Add(1)
			}
			return
		}
		rd, size = bytes.NewReader(b), int64(len(b))
	}
	out, err := http.NewRequestWithContext(ctx, req.Method, url, rd)
	if err != nil {
		c.tee.Close()
		r.mirrors.failed.Add(1)
		return
	}
	// The names nginx calls invalid it dropped as the request came
	// (ignore_invalid_headers), so the subrequest has none of them.
	for k, vs := range req.Header {
		if !c.hdr.invalidName(k) && !hopHeader(k) && k != "Content-Length" {
			out.Header[k] = vs
		}
	}
	out.Host = m.Host
	if m.Host == "" {
		out.Host = req.Host
	}
	if size >= 0 {
		out.ContentLength = size
		out.Header["Content-Length"] = []string{strconv.FormatInt(size, 10)}
	}
	if c.tee != nil && h2 {
		// A gRPC call, as the router's upstream sends it (grpc_pass).
		out.Header["Te"] = []string{"trailers"}
	}
	res, err := rt.RoundTrip(out)
	if err != nil {
		if !c.tee.abandoned() {
			r.mirrors.failed.Add(1)
		}
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
}

// mirrorShare counts the requests of a mirror with a share: the k-th is
// copied when it carries floor(k·n/d) past floor((k-1)·n/d), so every d
// requests copy n, evenly spread.
type mirrorShare struct{ k atomic.Uint64 }

func (c *mirrorShare) take(n, d int) bool {
	if c == nil {
		return false
	}
	k := c.k.Add(1) % uint64(d)
	return (k+1)*uint64(n)/uint64(d) > k*uint64(n)/uint64(d)
}

// mirrorShares gives every mirror with a share in t its counter. A
// rebuilt table starts them afresh, which moves a share by less than one
// copy per mirror.
func mirrorShares(t *match.Table) map[*match.Mirror]*mirrorShare {
	var m map[*match.Mirror]*mirrorShare
	add := func(ms ...*match.Mirror) {
		for _, mr := range ms {
			if mr == nil || mr.Denominator == 0 {
				continue
			}
			if m == nil {
				m = make(map[*match.Mirror]*mirrorShare)
			}
			m[mr] = &mirrorShare{}
		}
	}
	addResponse := func(rp *match.Response) {
		if rp != nil {
			add(rp.Mirror)
			add(rp.Mirrors...)
		}
	}
	for vh := range t.VirtualHosts() {
		addResponse(vh.FallbackLocation.Response)
		for _, rt := range vh.Routes {
			addResponse(rt.Response)
			if rt.Split != nil {
				for _, a := range rt.Split.Alternatives {
					add(a.Mirrors...)
				}
			}
		}
	}
	return m
}

// grpcTeeLimit bounds what a gRPC call's body holds for its mirrored copy
// that has not taken it yet: past it the copy has fallen behind the call
// and is abandoned, never the call slowed.
const grpcTeeLimit = 256 << 10

// grpcMirrorWholeLimit bounds a gRPC call's body read whole for a copy
// sent with its length (grpcTee.whole): past it the copy is abandoned.
const grpcMirrorWholeLimit = 8 << 20

var errMirrorTooLong = errors.New("the call's body is too long to copy whole")

var (
	errMirrorBehind = errors.New("mirrored copy fell behind the call")
	errMirrorCut    = errors.New("the call ended before its body did")
	errMirrorGone   = errors.New("mirrored copy over")
)

// grpcTee is a gRPC call's body fed to its mirrored copy as the call's
// sender reads it (clientBody.Read), through a bounded buffer: feeding
// never waits, so the copy can neither slow nor break the call. A copy
// abandoned (behind the call, or the call over before its body) counts
// in Stats.MirrorsDropped and its request fails.
type grpcTee struct {
	mu   sync.Mutex
	buf  []byte
	err  error // io.EOF: the body is whole; else why the copy ends
	gone bool  // the copy's sender is done with it
	// ended is called once err is set (bound).
	ended func()
	// wake tells the copy's reader that buf or err changed.
	wake    chan struct{}
	dropped *atomic.Uint64
}

func (t *grpcTee) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// feed adds what the call's sender read, and err, the read's error
// (io.EOF at the end).
func (t *grpcTee) feed(p []byte, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil || t.gone {
		return
	}
	if len(t.buf)+len(p) > grpcTeeLimit {
		t.abandon(errMirrorBehind)
		return
	}
	t.buf = append(t.buf, p...)
	if err != nil {
		t.err = err
		t.end()
	}
	t.signal()
}

// abandon ends a copy that cannot be whole; t.mu is held.
func (t *grpcTee) abandon(why error) {
	t.err, t.buf = why, nil
	t.dropped.Add(1)
	t.end()
	t.signal()
}

// end calls ended once the body's feed is over; t.mu is held.
func (t *grpcTee) end() {
	if f := t.ended; f != nil {
		t.ended = nil
		f()
	}
}

// bound has cancel called d after the call's body is whole or the copy
// was abandoned (d from now if it is already); stop undoes it.
func (t *grpcTee) bound(d time.Duration, cancel func()) (stop func()) {
	var timer *time.Timer // under t.mu, as stopped
	stopped := false
	start := func() {
		if !stopped {
			timer = time.AfterFunc(d, cancel)
		}
	}
	t.mu.Lock()
	if t.err != nil {
		start()
	} else {
		t.ended = start
	}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		stopped, t.ended = true, nil
		if timer != nil {
			timer.Stop()
		}
	}
}

// cut abandons the copy when the call is over before its body was.
func (t *grpcTee) cut() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil && !t.gone {
		t.abandon(errMirrorCut)
	}
}

// abandoned reports a copy abandoned (already counted as dropped).
func (t *grpcTee) abandoned() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err == errMirrorBehind || t.err == errMirrorCut || t.err == errMirrorTooLong
}

// whole reads the call's body to its end, at most limit bytes: past that
// the copy is abandoned (counted as dropped).
func (t *grpcTee) whole(limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(t, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.abandon(errMirrorTooLong)
		return nil, errMirrorTooLong
	}
	return b, nil
}

func (t *grpcTee) Read(p []byte) (int, error) {
	for {
		t.mu.Lock()
		switch {
		case t.gone:
			t.mu.Unlock()
			return 0, errMirrorGone
		case len(t.buf) > 0:
			n := copy(p, t.buf)
			if t.buf = t.buf[n:]; len(t.buf) == 0 {
				t.buf = nil
			}
			t.mu.Unlock()
			return n, nil
		case t.err != nil:
			err := t.err
			t.mu.Unlock()
			return 0, err
		}
		t.mu.Unlock()
		<-t.wake
	}
}

// Close ends the copy's side: the call feeds it no more.
func (t *grpcTee) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gone, t.buf = true, nil
	t.signal()
	return nil
}
