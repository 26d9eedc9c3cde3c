package main

import (
	"io"
	"net/http"
)

// large-client-header-buffers ("4 8k", nginx's large_client_header_buffers)
// on the traffic listeners: a request line longer than one buffer is
// answered 414, a header field longer than one 400 "Request Header Or
// Cookie Too Large", as nginx answers them; the whole head is bounded by
// all the buffers (http.Server.MaxHeaderBytes, over which Go answers 431).

// headerBuffers wraps h with the per-line limits of size bytes.
func headerBuffers(h http.Handler, size int) http.Handler {
	if size <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor < 2 && len(r.Method)+1+len(r.RequestURI)+1+len(r.Proto)+2 > size {
			refuseHead(w, http.StatusRequestURITooLong, "414 Request-URI Too Large")
			return
		}
		for k, vs := range r.Header {
			for _, v := range vs {
				if len(k)+2+len(v)+2 > size {
					refuseHead(w, http.StatusBadRequest, "400 Request Header Or Cookie Too Large")
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

func refuseHead(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, text+"\n")
}
