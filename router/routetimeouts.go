package router

import (
	"context"
	"errors"
	"io"
	"net/http"
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
