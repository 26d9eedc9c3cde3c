package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"maps"
	"net/http"
	"sync"
	"time"
)

// body is a request body read from the connection: Content-Length bytes
// or chunked with trailers, as net/http's body; reused per connection.
// The handler reads it through a bodyReader of its request's generation.
type body struct {
	c       *conn
	req     *http.Request
	mu      sync.Mutex
	gen     uint64    // counts the requests the body has served
	src     io.Reader // &lr or chunked; nil: none
	lr      io.LimitedReader
	chunked io.Reader
	// expect: a 100 Continue is due before the first read; expectBody:
	// the request asked for one (a body it left unread is not drained).
	expect, expectBody bool
	// eofReturned: a Read returned io.EOF, the body's clean end.
	eofReturned bool
	sawEOF      bool
	closed      bool
	// earlyClose: closed by the handler before its end; limitHit: the
	// unread rest was too much to read and drop.
	earlyClose, limitHit bool
}

func (b *body) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen++
	b.req, b.src, b.chunked, b.lr = nil, nil, nil, io.LimitedReader{}
	b.expect, b.expectBody, b.eofReturned, b.sawEOF, b.closed, b.earlyClose, b.limitHit = false, false, false, false, false, false, false
}

var errTrailerEOF = errors.New("http: unexpected EOF reading trailer")

// bodyReader is a request's Body: the connection's body, for as long as
// that request is the connection's. A goroutine that reads it after its
// handler returned reads nothing of the next request's body (as under
// net/http, whose body is closed when the handler returns).
type bodyReader struct {
	b   *body
	gen uint64
}

func (r *bodyReader) Read(p []byte) (int, error) { return r.b.read(r.gen, p) }
func (r *bodyReader) Close() error               { return r.b.close(r.gen) }

// Buffered reports whether the rest of a body of known length is in the
// connection's read buffer, as it is when it came with the head: reading
// it waits for nothing, as for a body nginx pre-read whole.
func (r *bodyReader) Buffered() bool {
	b := r.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.gen != r.gen || b.src == nil || b.chunked != nil {
		return false
	}
	return b.sawEOF || int64(b.c.br.Buffered()) >= b.lr.N
}

func (b *body) read(gen uint64, p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.gen != gen {
		return 0, http.ErrBodyReadAfterClose
	}
	n, err := b.readLocked(p)
	if err == io.EOF {
		b.eofReturned = true
	}
	return n, err
}

func (b *body) readLocked(p []byte) (n int, err error) {
	if b.sawEOF {
		return 0, io.EOF
	}
	if b.expect {
		b.c.w.sendContinue()
	}
	n, err = b.src.Read(p)
	if err == io.EOF {
		// As net/http's body: the end of the source ends the body, early
		// or not.
		b.sawEOF = true
		if b.chunked != nil {
			if err = b.readTrailer(); err == nil {
				err = io.EOF
			} else {
				// As net/http: after a bad trailer nothing more is read,
				// of this body or of the connection.
				b.sawEOF, b.closed = false, true
			}
		} else if b.lr.N > 0 {
			err = io.ErrUnexpectedEOF
		}
	} else if b.chunked == nil && err == nil && b.lr.N == 0 {
		b.sawEOF, err = true, io.EOF
	}
	if b.sawEOF {
		b.c.cr.bodyDone()
	}
	return n, err
}

// readTrailer reads what follows the last chunk, as net/http's
// body.readTrailer.
func (b *body) readTrailer() error {
	br := b.c.br
	buf, err := br.Peek(2)
	if bytes.Equal(buf, []byte("\r\n")) {
		_, _ = br.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return errTrailerEOF
	}
	if err != nil {
		return err
	}
	if !seeUpcomingDoubleCRLF(br) {
		return errors.New("http: suspiciously long trailer after chunked body")
	}
	hdr, err := b.c.tp.ReadMIMEHeader()
	if err != nil {
		if err == io.EOF {
			return errTrailerEOF
		}
		return err
	}
	if b.req.Trailer == nil {
		b.req.Trailer = http.Header(hdr)
	} else {
		maps.Copy(b.req.Trailer, http.Header(hdr))
	}
	return nil
}

func seeUpcomingDoubleCRLF(r *bufio.Reader) bool {
	for peekSize := 4; ; peekSize++ {
		buf, err := r.Peek(peekSize)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			break
		}
	}
	return false
}

func (b *body) close(gen uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.gen != gen {
		return nil
	}
	b.closed = true
	if !b.sawEOF {
		// As net/http's server: a body closed early is not read on; the
		// connection closes after the response.
		b.earlyClose = true
	}
	return nil
}

func (b *body) closedEarly() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.earlyClose
}

// unread reports whether the request has a body not read to its end:
// the client may still be sending it.
func (b *body) unread() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.src != nil && !b.sawEOF
}

// drain is called as the head is sent (net/http's writeHeader): a body the
// handler left unread is read and dropped, up to maxPostHandlerReadBytes,
// so that the connection can carry the next request; past that, or after
// a failure, the connection closes. Unless the handler set a read
// deadline of its own (which then bounds the drain; one already past
// ends it at once), each read waits at most lingeringTimeout, and all of
// them lingeringTime, as nginx discards a body
// (ngx_http_discarded_request_body_handler): a client that stalls before
// sending it does not hold the answer and the connection for good. It
// reports whether the connection may stay open.
func (b *body) drain() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.expectBody:
		// As net/http: unless the body was read to a clean end, the
		// client may still wait for 100 Continue, or still be sending.
		return b.eofReturned
	case b.src == nil || b.sawEOF:
		return true
	case b.closed:
		return false
	case b.chunked == nil && b.lr.N >= maxPostHandlerReadBytes:
		b.limitHit = true
		return false
	}
	var buf [4096]byte
	var total int64
	c := b.c
	timed := !c.w.wroteReadDeadline
	if timed {
		// A request with a body is read without a deadline: the drain's
		// goes with it.
		defer c.setReadDeadline(time.Time{})
	}
	end := time.Now().Add(lingeringTime)
	for {
		if timed {
			d := time.Now().Add(lingeringTimeout)
			if d.After(end) {
				d = end
			}
			c.setReadDeadline(d)
		}
		n, err := b.readLocked(buf[:])
		total += int64(n)
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		if total > maxPostHandlerReadBytes {
			b.limitHit = true
			return false
		}
	}
}
