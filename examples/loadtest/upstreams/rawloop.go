package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// serveRawLoop is a measuring device, not a server to deploy: it answers
// HTTP/1.1 keep-alive requests without bodies (what wrk sends) with one
// goroutine per connection, a request, header map and writer reused from
// one request to the next, and no background read. It has no timeouts,
// no HTTP/2, no TLS, no Upgrade, no 100-continue and no trailers; a
// request it does not handle closes the connection. It exists to measure
// how much of the router's CPU per request net/http's server accounts for
// (issue 26, role router-rawloop), before anyone writes a real loop.
func serveRawLoop(ln net.Listener, h http.Handler) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go rawConn(c, h)
	}
}

func rawConn(c net.Conn, h http.Handler) {
	defer c.Close()
	// A context per connection, cancelled when it ends, so that the
	// handler hooks its client-gone handling as it does under net/http.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	br := bufio.NewReaderSize(c, 4096)
	tp := textproto.NewReader(br)
	w := &rawWriter{bw: bufio.NewWriterSize(c, 4096), h: make(http.Header)}
	req := new(http.Request).WithContext(ctx) // the one request value of the connection
	hdr := make(http.Header)
	remote := c.RemoteAddr().String()
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		method, rest, ok1 := strings.Cut(line, " ")
		target, proto, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || proto != "HTTP/1.1" {
			return
		}
		clear(hdr)
		for {
			kv, err := tp.ReadLineBytes()
			if err != nil {
				return
			}
			if len(kv) == 0 {
				break
			}
			k, v, ok := strings.Cut(string(kv), ":")
			if !ok {
				return
			}
			k = textproto.CanonicalMIMEHeaderKey(k)
			hdr[k] = append(hdr[k], strings.TrimSpace(v))
		}
		if hdr.Get("Content-Length") != "" || hdr.Get("Transfer-Encoding") != "" || hdr.Get("Upgrade") != "" {
			return // not what this loop is for
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		host := hdr.Get("Host")
		delete(hdr, "Host")
		req.Method, req.URL, req.Proto, req.ProtoMajor, req.ProtoMinor = method, u, proto, 1, 1
		req.Header, req.Body, req.ContentLength, req.Host = hdr, http.NoBody, 0, host
		req.RequestURI, req.RemoteAddr = target, remote
		w.reset()
		h.ServeHTTP(w, req)
		if err := w.finish(); err != nil || w.close {
			return
		}
	}
}

// rawWriter writes a response with Content-Length when the handler set
// one and chunked otherwise.
type rawWriter struct {
	bw      *bufio.Writer
	h       http.Header
	status  int
	chunked bool
	close   bool
	err     error
}

func (w *rawWriter) reset() {
	clear(w.h)
	w.status, w.chunked, w.close, w.err = 0, false, false, nil
}

func (w *rawWriter) Header() http.Header { return w.h }

func (w *rawWriter) WriteHeader(code int) {
	if w.status != 0 || code < 200 {
		return
	}
	w.status = code
	bw := w.bw
	bw.WriteString("HTTP/1.1 ")
	bw.Write(strconv.AppendInt(bw.AvailableBuffer(), int64(code), 10))
	bw.WriteByte(' ')
	bw.WriteString(http.StatusText(code))
	bw.WriteString("\r\n")
	if w.h["Content-Length"] == nil {
		w.chunked = true
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	if w.h["Date"] == nil {
		w.h["Date"] = []string{"Tue, 01 Dec 2026 00:00:00 GMT"} // fixed: a device, not a server
	}
	for k, vs := range w.h {
		for _, v := range vs {
			bw.WriteString(k)
			bw.WriteString(": ")
			bw.WriteString(v)
			bw.WriteString("\r\n")
		}
	}
	bw.WriteString("\r\n")
}

func (w *rawWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.chunked && len(p) > 0 {
		w.bw.Write(strconv.AppendInt(w.bw.AvailableBuffer(), int64(len(p)), 16))
		w.bw.WriteString("\r\n")
		w.bw.Write(p)
		_, w.err = w.bw.WriteString("\r\n")
		return len(p), w.err
	}
	_, w.err = w.bw.Write(p)
	return len(p), w.err
}

func (w *rawWriter) finish() error {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.chunked {
		w.bw.WriteString("0\r\n\r\n")
	}
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

var errRawLoop = errors.New("rawloop: unsupported")

// Hijack is refused: the loop does not hand connections over.
func (w *rawWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) { return nil, nil, errRawLoop }

var _ io.Writer = (*rawWriter)(nil)
