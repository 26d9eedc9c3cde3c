package router

import (
	"io"
	"net/http"
)

// ReasonBadBody: 400, the client's request body framing was malformed (a
// bad chunk size or line ending).
const ReasonBadBody = "bad-body"

var ansBadBody = answer{http.StatusBadRequest, ReasonBadBody, "400 Bad Request: malformed request body\n"}

// clientBody wraps the client's request body so that a failure reading it
// is known to be the client's: a transport sees only that writing the
// request failed, which would otherwise answer 502 and log the backend.
type clientBody struct {
	r   io.ReadCloser
	err error // the first error other than io.EOF
}

func (b *clientBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *clientBody) Close() error { return b.r.Close() }

// answer is the router's answer for a request whose body failed, and
// whether it failed.
func (b *clientBody) answer() (answer, bool) {
	if b == nil || b.err == nil {
		return answer{}, false
	}
	return ansBadBody, true
}
