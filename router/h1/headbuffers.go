package h1

import (
	"bytes"
	"net/http"
)

// HeaderBuffers bound request heads as nginx's client_header_buffer_size
// and large_client_header_buffers do (ingress-nginx's
// client-header-buffer-size "1k" and large-client-header-buffers "4 8k";
// nginx docs, ngx_http_core_module, and ngx_http_request.c's
// ngx_http_alloc_large_header_buffer).
//
// nginx reads a head into a First-byte buffer. When a line does not end
// in the buffer it is in, the part read so far moves to a new Size-byte
// buffer, at most Number of them per request: a line longer than Size
// never fits, and neither does a head whose lines, packed so (a line never
// split between two buffers), need more than Number buffers. A request
// line that does not fit answers 414 (Request-URI Too Large); a header
// line, or the head's end, 400 "Request Header Or Cookie Too Large"
// (nginx's 494, sent as 400). So a head is at most First + Number×Size
// bytes, and fewer when its lines leave the ends of buffers unused; a
// head within First or Size always fits.
//
// A pipelined head is judged as if it came alone (nginx packs it after
// the previous one's bytes, in whatever buffer those ended), and a PROXY
// protocol header takes none of First (nginx reads it into the same
// buffer).
type HeaderBuffers struct {
	// First is client_header_buffer_size; 0 is nginx's default, 1 KiB.
	First int
	// Number and Size are large_client_header_buffers; Size 0 turns the
	// bounds off (MaxHeaderBytes and its 431 apply).
	Number, Size int
}

// The answers to heads the buffers do not take, as nginx's texts.
const (
	lineTooLargeBody = "414 Request-URI Too Large\n"
	headTooLargeBody = "400 Request Header Or Cookie Too Large\n"
)

var (
	errLineTooLarge    = &badRequest{code: http.StatusRequestURITooLong, body: lineTooLargeBody}
	errHeadersTooLarge = &badRequest{code: http.StatusBadRequest, body: headTooLargeBody}
)

// on reports whether the bounds apply.
func (b *HeaderBuffers) on() bool { return b.Size > 0 }

func (b *HeaderBuffers) first() int {
	if b.First > 0 {
		return b.First
	}
	return 1 << 10
}

// limit is the most a head can hold: every buffer full.
func (b *HeaderBuffers) limit() int64 {
	return int64(b.first()) + int64(max(b.Number, 1))*int64(b.Size)
}

// fits reports whether a head of n bytes fits whatever its lines.
func (b *HeaderBuffers) fits(n int) bool { return n <= max(b.first(), b.Size) }

// packer follows nginx's buffers along a head's lines.
type packer struct {
	b         *HeaderBuffers
	cap, used int // of the buffer being filled
	busy      int // large buffers taken
}

func newPacker(b *HeaderBuffers) packer { return packer{b: b, cap: b.first()} }

// line takes the next line, n bytes with its line ending, and reports
// whether it fits.
func (p *packer) line(n int) bool {
	if p.used+n <= p.cap {
		p.used += n
		return true
	}
	// The buffer fills inside the line (or the line starts at its very
	// end): what was read of the line moves to a new buffer, unless it
	// is a buffer long already or none is left.
	if p.cap-p.used >= p.b.Size || p.busy >= p.b.Number {
		return false
	}
	p.busy++
	p.cap, p.used = p.b.Size, n
	return n <= p.b.Size
}

// judge is nil when the head fits: reqLine bytes of request line (with
// its line ending), then fields, the field lines as they came, up to and
// including the empty line.
func (b *HeaderBuffers) judge(reqLine int, fields []byte) error {
	p := newPacker(b)
	if !p.line(reqLine) {
		return errLineTooLarge
	}
	for len(fields) > 0 {
		n := bytes.IndexByte(fields, '\n') + 1
		if n == 0 {
			n = len(fields)
		}
		if !p.line(n) {
			return errHeadersTooLarge
		}
		fields = fields[n:]
	}
	return nil
}

// judgeLines is judge with the field lines' lengths.
func (b *HeaderBuffers) judgeLines(reqLine int, fields []int32) error {
	p := newPacker(b)
	if !p.line(reqLine) {
		return errLineTooLarge
	}
	for _, n := range fields {
		if !p.line(int(n)) {
			return errHeadersTooLarge
		}
	}
	return nil
}
