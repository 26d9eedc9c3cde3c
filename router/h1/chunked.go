package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxChunkSize is the largest chunk size nginx reads: ngx_http_parse_chunked
// refuses a size line once its value, at the byte after a digit, is past
// NGX_MAX_OFF_T_VALUE / 16, so that no size it reads can overflow off_t
// (400 from a client, "upstream sent invalid chunked response" from a
// backend). net/http reads up to 2^64-1.
const maxChunkSize = 1<<59 - 1

// maxChunkLine bounds a chunk-size line, extensions included, as
// net/http's chunked reader bounds it.
const maxChunkLine = 4096

var (
	errChunkSize      = errors.New("http: malformed chunk size")
	errChunkTooLarge  = errors.New("http: chunk size past nginx's bound")
	errChunkLine      = errors.New("http: chunk line not ended by CRLF")
	errChunkLineLong  = errors.New("http: chunk line too long")
	errChunkEnd       = errors.New("http: chunk data not followed by CRLF")
	errChunkExcessive = errors.New("http: chunked encoding contains too much non-data")
)

// chunkedReader reads a chunked body from r up to its last chunk, as
// net/http's chunked reader does (lines ended by CRLF, the bound on
// overhead per byte of data, returning early rather than blocking on a
// chunk line once it has data), but the chunk-size line is nginx's
// (chunkSize). What follows the last chunk (the trailer) is the caller's.
type chunkedReader struct {
	r   *bufio.Reader
	n   uint64 // unread bytes of the chunk
	err error
	// checkEnd: the CRLF after the chunk's data is still to be read.
	checkEnd bool
	// excess is the overhead read beyond what the data read allows.
	excess int64
}

func newChunkedReader(r *bufio.Reader) *chunkedReader { return &chunkedReader{r: r} }

func (cr *chunkedReader) beginChunk() {
	line, err := cr.r.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull:
		cr.err = errChunkLineLong
		return
	case err == io.EOF:
		cr.err = io.ErrUnexpectedEOF
		return
	case err != nil:
		cr.err = err
		return
	}
	// A bare LF, or a CR before the end, ends no chunk line (nginx:
	// invalid; RFC 9112 erratum 7633).
	if len(line) < 2 || bytes.IndexByte(line, '\r') != len(line)-2 {
		cr.err = errChunkLine
		return
	}
	line = line[:len(line)-2]
	if len(line) >= maxChunkLine {
		cr.err = errChunkLineLong
		return
	}
	cr.excess += int64(len(line)) + 2
	if cr.n, cr.err = chunkSize(line); cr.err != nil {
		return
	}
	// As net/http: 16 bytes of overhead per chunk are free, and twice
	// the chunk's data; a sender of long extensions over tiny chunks
	// past that is refused.
	cr.excess = max(cr.excess-16-2*int64(cr.n), 0)
	if cr.excess > 16<<10 {
		cr.err = errChunkExcessive
		return
	}
	if cr.n == 0 {
		cr.err = io.EOF
	}
}

// chunkSize reads a chunk-size line (without its CRLF) as
// ngx_http_parse_chunked does: hex digits, as many leading zeros as
// come, up to maxChunkSize, then either the end or a space, tab or ';'
// that starts an extension, which is skipped.
func chunkSize(line []byte) (uint64, error) {
	var n uint64
	i := 0
	for ; i < len(line); i++ {
		d, ok := hexDigit(line[i])
		if !ok {
			break
		}
		if n > maxChunkSize>>4 {
			return 0, errChunkTooLarge
		}
		n = n<<4 | uint64(d)
	}
	switch {
	case i == 0:
		return 0, errChunkSize
	case n > maxChunkSize:
		return 0, errChunkTooLarge
	case i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != ';':
		return 0, errChunkSize
	}
	return n, nil
}

func (cr *chunkedReader) chunkLineBuffered() bool {
	n := cr.r.Buffered()
	if n == 0 {
		return false
	}
	peek, _ := cr.r.Peek(n)
	return bytes.IndexByte(peek, '\n') >= 0
}

func (cr *chunkedReader) Read(p []byte) (n int, err error) {
	for cr.err == nil {
		if cr.checkEnd {
			if n > 0 && cr.r.Buffered() < 2 {
				break // return what was read rather than wait
			}
			var crlf [2]byte
			if _, cr.err = io.ReadFull(cr.r, crlf[:]); cr.err != nil {
				if cr.err == io.EOF {
					cr.err = io.ErrUnexpectedEOF
				}
				break
			}
			if crlf != [2]byte{'\r', '\n'} {
				cr.err = errChunkEnd
				break
			}
			cr.checkEnd = false
		}
		if cr.n == 0 {
			if n > 0 && !cr.chunkLineBuffered() {
				break
			}
			cr.beginChunk()
			continue
		}
		if len(p) == 0 {
			break
		}
		q := p
		if uint64(len(q)) > cr.n {
			q = q[:cr.n]
		}
		var m int
		m, cr.err = cr.r.Read(q)
		n += m
		p = p[m:]
		cr.n -= uint64(m)
		if cr.n == 0 && cr.err == nil {
			cr.checkEnd = true
		} else if cr.err == io.EOF {
			cr.err = io.ErrUnexpectedEOF
		}
	}
	return n, cr.err
}
