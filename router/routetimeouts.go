package router

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// A Gateway API rule's timeouts (match.Proxying.RequestTimeout and
// TryTimeout, SPEC §20) end a context of their own with these causes, so
// that what they cut off is told apart from a client that went away.
var (
	errRequestTimeout = errors.New("the route's request timeout ran out")
	errTryTimeout     = errors.New("the route's backend request timeout ran out")
)

// routeTimeoutError is the error of an exchange or a try a route's
// timeout ended: a timeout (504, and a failure a retry follows).
type routeTimeoutError struct{ cause error }

func (e routeTimeoutError) Error() string { return e.cause.Error() }
func (routeTimeoutError) Timeout() bool   { return true }

// routeTimedOut returns the error of a try that failed with err under
// ctx: routeTimeoutError when a route's timeout ended ctx, else err.
func routeTimedOut(ctx context.Context, err error) error {
	switch c := context.Cause(ctx); {
	case ctx.Err() == nil:
		return err
	case errors.Is(c, errRequestTimeout), errors.Is(c, errTryTimeout):
		return routeTimeoutError{c}
	}
	return err
}

// withRequestTimeout bounds the exchange by the route's request timeout:
// req with a context that ends after d, and the function that releases it.
func withRequestTimeout(req *http.Request, d time.Duration) (*http.Request, context.CancelFunc) {
	if d <= 0 {
		return req, func() {}
	}
	ctx, cancel := context.WithTimeoutCause(req.Context(), d, errRequestTimeout)
	return req.WithContext(ctx), cancel
}

// withTryTimeout is one try's request under the route's backend request
// timeout d (req itself when d is 0).
func withTryTimeout(req *http.Request, d time.Duration) (*http.Request, context.CancelFunc) {
	if d <= 0 {
		return req, func() {}
	}
	ctx, cancel := context.WithTimeoutCause(req.Context(), d, errTryTimeout)
	return req.WithContext(ctx), cancel
}

// tryRoundTrip is one try through a transport under the route's backend
// request timeout d: the timeout runs until the response body is closed.
func tryRoundTrip(rt http.RoundTripper, req *http.Request, d time.Duration) (*http.Response, error) {
	if d <= 0 {
		return rt.RoundTrip(req)
	}
	out, cancel := withTryTimeout(req, d)
	res, err := rt.RoundTrip(out)
	if err != nil {
		err = routeTimedOut(out.Context(), err)
		cancel()
		return nil, err
	}
	res.Body = &cancelBody{ReadCloser: res.Body, ctx: out.Context(), cancel: cancel}
	return res, nil
}

// cancelBody ends a try's timeout when its body is closed, and reports a
// read the timeout cut off as a timeout.
type cancelBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelFunc
}

func (b *cancelBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = routeTimedOut(b.ctx, err)
	}
	return n, err
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// errHeadTimeout ends a try whose response head did not come within the
// read timeout through an Options.Transport (headTimed).
var errHeadTimeout = errors.New("no response head within the read timeout (proxy-read-timeout)")

// headTimed bounds the wait for each try's response head by the
// exchange's read timeout, from when the transport reports the request
// written (httptrace's WroteRequest), as nginx's proxy_read_timeout
// bounds it once the request is sent: an Options.Transport has settings
// of its own, which may not bound that wait at all, where the default
// transports are made per read timeout (transportVariants).
type headTimed struct {
	rt   http.RoundTripper
	read time.Duration
}

func (h headTimed) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	var (
		mu    sync.Mutex
		timer *time.Timer
		done  bool // the round trip returned: no timer starts after it
		fired atomic.Bool
	)
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
		mu.Lock()
		defer mu.Unlock()
		if !done && timer == nil {
			timer = time.AfterFunc(h.read, func() {
				fired.Store(true)
				cancel()
			})
		}
	}}
	res, err := h.rt.RoundTrip(req.WithContext(httptrace.WithClientTrace(ctx, trace)))
	mu.Lock()
	done = true
	if timer != nil {
		timer.Stop()
	}
	mu.Unlock()
	switch {
	case fired.Load():
		// The head came too late, or not at all: 504, and a try that
		// proxy-next-upstream's "timeout" passes on.
		if err == nil {
			res.Body.Close()
		}
		cancel()
		return nil, routeTimeoutError{errHeadTimeout}
	case err != nil:
		cancel()
		return nil, err
	case res.StatusCode == http.StatusSwitchingProtocols:
		// The tunnel's connection is the body, which must stay writable:
		// the context ends with the request's.
		return res, nil
	}
	res.Body = &cancelBody{ReadCloser: res.Body, ctx: ctx, cancel: cancel}
	return res, nil
}
