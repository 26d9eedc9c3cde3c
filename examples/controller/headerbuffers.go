package main

import (
	"io"
	"net/http"
)

// large-client-header-buffers ("4 8k", nginx's large_client_header_buffers)
// on the traffic listeners, answered as nginx answers them: a request line
// longer than one buffer 414, a header field longer than one, or a head
// longer than all of them, 400 "Request Header Or Cookie Too Large".
// headerBuffers judges the heads the server parsed; a head the server
// stops reading (over http.Server.MaxHeaderBytes and its slack) is the
// loop's to answer the same (headTooLargeAnswer), or net/http's: 431.

// netHTTPHeadRoom is how far past the buffers net/http reads a head
// (HTTP/1 with -http1-server=net/http, and HTTP/2), for headerBuffers to
// answer; a longer one gets net/http's 431.
const netHTTPHeadRoom = 64 << 10

const (
	lineTooLarge = "414 Request-URI Too Large"
	headTooLarge = "400 Request Header Or Cookie Too Large"
)

// headerBuffers wraps h with the limits of number buffers of size bytes.
func headerBuffers(h http.Handler, number, size int) http.Handler {
	if size <= 0 {
		return h
	}
	total := number * size
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor >= 2 {
			// HTTP/2: every field, :path too, within a buffer, and the
			// list within all (nginx's ngx_http_v2 reads them so since
			// large_client_header_buffers replaced http2_max_field_size):
			// 400 either way.
			n := len(":method") + len(r.Method) + len(":path") + len(r.RequestURI) + len(":authority") + len(r.Host)
			if len(":path")+len(r.RequestURI) > size {
				refuseHead(w, http.StatusBadRequest, headTooLarge)
				return
			}
			for k, vs := range r.Header {
				for _, v := range vs {
					if len(k)+len(v) > size {
						refuseHead(w, http.StatusBadRequest, headTooLarge)
						return
					}
					n += len(k) + len(v)
				}
			}
			if n > total {
				refuseHead(w, http.StatusBadRequest, headTooLarge)
				return
			}
		} else {
			line := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
			if line > size {
				refuseHead(w, http.StatusRequestURITooLong, lineTooLarge)
				return
			}
			n := line + 2 // and the empty line
			if r.Host != "" {
				n += len("Host: ") + len(r.Host) + 2
			}
			for k, vs := range r.Header {
				for _, v := range vs {
					field := len(k) + 2 + len(v) + 2
					if field > size {
						refuseHead(w, http.StatusBadRequest, headTooLarge)
						return
					}
					n += field
				}
			}
			if n > total {
				refuseHead(w, http.StatusBadRequest, headTooLarge)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// headTooLargeAnswer is h1.Server.HeadTooLarge: nginx's answers.
func headTooLargeAnswer(requestLine bool) (int, string) {
	if requestLine {
		return http.StatusRequestURITooLong, lineTooLarge + "\n"
	}
	return http.StatusBadRequest, headTooLarge + "\n"
}

func refuseHead(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, text+"\n")
}
