package h1

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// sendBufferSize is what the sender reads of a request body at a time.
const sendBufferSize = 32 << 10

var sendBuffers = sync.Pool{New: func() any { return new([sendBufferSize]byte) }}

// bodySender writes the request body to the backend on its own goroutine.
type bodySender struct {
	done   chan struct{}
	err    error                 // set before done is closed
	client atomic.Pointer[error] // reading the client's body failed
	// writeErr: writing the body to the backend failed (see failWrite).
	writeErr atomic.Pointer[error]

	// The wait for the response head (Request.Read) starts when the
	// body is sent, as net/http's ResponseHeaderTimeout does: a long
	// upload is not a slow backend.
	mu       sync.Mutex
	timeout  time.Duration
	send     time.Duration // between two writes (Request.Send); 0: none
	sentAt   time.Time     // zero until sent
	headDone bool          // the final response head arrived: no more deadlines
}

// startBody sends body: the body, not the request, as the sender may
// outlive the handler, and a server may reuse the request (and its Body
// field) once it returned.
func startBody(pc *Conn, body io.Reader, length int64, timeout, send time.Duration) *bodySender {
	s := &bodySender{done: make(chan struct{}), timeout: timeout, send: send}
	go s.run(pc, body, length)
	return s
}

// setHeaderDeadline bounds the reader's wait: none while the body is
// still being sent, ReadTimeout from the end of the body after. The
// sender sets the deadline itself when it finishes; the lock keeps the
// two from undoing each other.
func (s *bodySender) setHeaderDeadline(pc *Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sentAt.IsZero() {
		_ = pc.c.SetReadDeadline(time.Time{})
	} else {
		_ = pc.c.SetReadDeadline(s.sentAt.Add(s.timeout))
	}
}

// sent starts the wait for the response, its head or the next piece of
// its body, once the body is sent.
func (s *bodySender) sent(pc *Conn) {
	s.mu.Lock()
	s.sentAt = time.Now()
	_ = pc.c.SetReadDeadline(s.sentAt.Add(s.timeout))
	s.mu.Unlock()
}

// bodyDeadline bounds the wait for the next piece of the response body by
// the read timeout (proxy-read-timeout between two reads), but only once
// the request body is sent: until then sent will set it, as a long upload
// is not a slow backend.
func (s *bodySender) bodyDeadline(pc *Conn) {
	s.mu.Lock()
	if !s.sentAt.IsZero() {
		_ = pc.c.SetReadDeadline(time.Now().Add(s.timeout))
	}
	s.mu.Unlock()
}

// headReceived lifts the head's deadline: the body's reads set their own
// (bodyDeadline).
func (s *bodySender) headReceived(pc *Conn) {
	s.mu.Lock()
	s.headDone = true
	_ = pc.c.SetReadDeadline(time.Time{})
	s.mu.Unlock()
}

func (s *bodySender) clientError() error {
	if s == nil {
		return nil
	}
	if p := s.client.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *bodySender) run(pc *Conn, body io.Reader, length int64) {
	defer close(s.done)
	defer s.sent(pc)
	bw := pc.bw
	chunked := length < 0
	buf := sendBuffers.Get().(*[sendBufferSize]byte)
	defer sendBuffers.Put(buf)
	var total int64 // bytes read of the body
	for {
		n, rerr := body.Read(buf[:])
		total += int64(n)
		switch {
		case chunked:
		case total > length:
			// More than the head declared: written, they would be read as
			// the start of another request.
			n, rerr = 0, errBodyLength
		case rerr == io.EOF && total < length:
			// Ended short: the backend would wait for the rest, or read
			// the next request's bytes as it, and a retry could not tell
			// a complete body from this one.
			rerr = errBodyLength
		}
		if n > 0 {
			if chunked {
				bw.Write(appendHex(bw.AvailableBuffer(), n))
				bw.WriteString("\r\n")
			}
			bw.Write(buf[:n])
			if chunked {
				bw.WriteString("\r\n")
			}
			// Flushed piece by piece: a client streaming its body may be
			// waiting for the backend's answer to each piece.
			if s.send > 0 {
				_ = pc.c.SetWriteDeadline(time.Now().Add(s.send))
			}
			if err := bw.Flush(); err != nil {
				s.failWrite(pc, err)
				return
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			s.err = rerr
			s.client.Store(&rerr)
			// The backend waits for the rest of a body that will never
			// come; closing the connection ends its wait and ours.
			_ = pc.c.Close()
			return
		}
	}
	if chunked {
		// The client's trailer stays here, as nginx passes none on.
		bw.WriteString("0\r\n\r\n")
	}
	if s.send > 0 {
		_ = pc.c.SetWriteDeadline(time.Now().Add(s.send))
	}
	if err := bw.Flush(); err != nil {
		s.failWrite(pc, err)
	}
}

// failWrite ends a body the backend stopped taking (a send timeout,
// a reset): the reader waiting for the response head, with no deadline
// while the body is sent, is woken by closing the connection, and learns
// why from writeErr.
func (s *bodySender) failWrite(pc *Conn, err error) {
	s.err = err
	s.writeErr.Store(&err)
	_ = pc.c.Close()
}

// writeFailure is the error that broke off sending the body, nil if none.
func (s *bodySender) writeFailure() error {
	if s == nil {
		return nil
	}
	if p := s.writeErr.Load(); p != nil {
		return *p
	}
	return nil
}

// errBodyLength is a request body whose length is not the Content-Length
// its head declared.
var errBodyLength = errors.New("h1: request body length differs from its Content-Length")

func appendHex(b []byte, n int) []byte {
	const digits = "0123456789abcdef"
	var tmp [16]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = digits[n&0xf]
		n >>= 4
		if n == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}
