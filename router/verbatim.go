package router

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"strconv"
	"time"
)

// verbatimTransport sends one request on a connection of its own with the
// request line written by hand. net/http cannot write every target byte
// for byte: a URL whose path starts with "//" cannot go through
// URL.Opaque (it would be written as "http://..."), and URL.RawPath is
// re-escaped whenever it holds a byte like '\' that RFC 3986 does not
// allow. nginx passes such targets on unchanged (SPEC §13), so the few
// requests that need it take this path; it closes the connection after
// the response, as a pooled connection gains nothing for a rare target.
// Nor can net/http write an HTTP/1.0 request, or an empty Host: a location
// with proxy-http-version 1.0 whose backend is not on the router's own
// pool (HTTPS) takes this path too, a connection per request being
// HTTP/1.0's own way, and so does a request whose client sent no Host.
type verbatimTransport struct {
	dialer *net.Dialer
	// handshake bounds the TLS handshake, header the wait for the
	// response headers once the request is written.
	handshake, header time.Duration
	// tlsConfig is the TLS client configuration; nil: no verification.
	tlsConfig *tls.Config
}

func (t *verbatimTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	x, _ := req.Context().Value(exchangeKey{}).(*exchange)
	// A connection of its own, traced as net/http traces one it opens.
	trace := httptrace.ContextClientTrace(req.Context())
	if trace != nil && trace.GetConn != nil {
		trace.GetConn(req.URL.Host)
	}
	conn, err := t.dialer.DialContext(req.Context(), "tcp", req.URL.Host)
	if err != nil {
		return nil, err
	}
	if req.URL.Scheme == "https" {
		ctx, cancel := context.WithTimeout(req.Context(), t.handshake)
		cfg := t.tlsConfig
		if cfg == nil {
			cfg = &tls.Config{InsecureSkipVerify: true} // see Options.Transport
		}
		tc := tls.Client(conn, cfg)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: conn})
	}
	stop := context.AfterFunc(req.Context(), func() { conn.Close() })
	http10 := false
	if p := x.proxying(); p != nil {
		http10 = p.HTTP10
	}
	res, err := t.exchange(conn, req, x.path, x.query, x.hasQuery, http10)
	if err != nil {
		stop()
		conn.Close()
		return nil, err
	}
	res.Body = &connBody{ReadCloser: res.Body, conn: conn, stop: stop}
	return res, nil
}

func (t *verbatimTransport) exchange(conn net.Conn, req *http.Request, path, query string, hasQuery, http10 bool) (*http.Response, error) {
	bw := bufio.NewWriter(conn)
	target := path
	if hasQuery {
		target += "?" + query
	}
	// The client's Host, empty when an HTTP/1.0 client sent none: never
	// the endpoint's address (SPEC §13).
	host := req.Host
	// The body follows at once, so a 100 Continue would only get in the way.
	h := req.Header.Clone()
	h.Del("Expect")
	h.Del("Connection")
	h.Del("Content-Length")
	h.Del("Transfer-Encoding")
	if ua := h["User-Agent"]; len(ua) == 1 && ua[0] == "" {
		// ReverseProxy's way of telling net/http to add none; written
		// here it would send an empty User-Agent the client never did.
		delete(h, "User-Agent")
	}
	hasBody := req.Body != nil && req.Body != http.NoBody
	version := " HTTP/1.1"
	if http10 {
		// HTTP/1.0 has no upgrade, as the pool's head leaves it out; its
		// body was read whole (bodyLimits), so it has its length.
		version = " HTTP/1.0"
		h.Del("Upgrade")
	}
	_, _ = io.WriteString(bw, req.Method+" "+target+version+"\r\nHost: "+host+"\r\nConnection: close\r\n")
	switch {
	case hasBody && req.ContentLength > 0:
		h.Set("Content-Length", strconv.FormatInt(req.ContentLength, 10))
	case hasBody:
		h.Set("Transfer-Encoding", "chunked")
	}
	if err := h.Write(bw); err != nil {
		return nil, err
	}
	_, _ = io.WriteString(bw, "\r\n")
	if hasBody {
		var w io.Writer = bw
		var cw io.WriteCloser
		if req.ContentLength <= 0 {
			cw = httputil.NewChunkedWriter(bw)
			w = cw
		}
		if _, err := io.Copy(w, req.Body); err != nil {
			return nil, err
		}
		if cw != nil {
			_ = cw.Close()
			_, _ = io.WriteString(bw, "\r\n")
		}
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(t.header))
	res, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Time{})
	return res, nil
}

// connBody closes the connection with the response body.
type connBody struct {
	io.ReadCloser
	conn net.Conn
	stop func() bool
}

func (b *connBody) Close() error {
	b.stop()
	err := b.ReadCloser.Close()
	b.conn.Close()
	return err
}
