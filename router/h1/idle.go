package h1

import (
	"errors"
	"net"
	"os"
	"time"

	"ramjet.dev/ramjet/router/rawsock"
)

// Bytes a backend sends on a connection that waits in the pool answer no
// request: read as the next request's response, they would hand one
// client what the backend (or whoever controls it) wrote after another's
// exchange. So a connection taken from the pool is looked at first, every
// time, whatever the request: one non-blocking MSG_PEEK (rawsock.Conn.Pending, or peeker). A
// connection with anything to read, bytes or an end, is closed and another
// taken or dialled. A goroutine parked on each idle connection would
// spare the request that system call but not the process: its wait in the
// poller starts with the same peek, and the hand-offs when a request takes
// the connection cost more (measured with the loopback harness: router
// CPU per request +5% against the peek's +1%). Nor can the poller's own
// readiness stand in for the peek: arming a wait clears it, and Go has no
// other way to look at it. nginx pays a call here too: it asks a
// kept-alive connection for SO_ERROR before each request it writes on it
// (issue 41: 6 system calls per proxied request, ramjet's controller 5).
// Bytes that arrive after the look, while the request is being written,
// cannot be told from its response, as with net/http's Transport and
// nginx.
//
// Under TLS what arrives is records, and TLS 1.3 has a backend send some
// that carry no data whenever it likes: NewSessionTickets (OpenSSL sends
// them after the handshake, often as the connection already waits here),
// a KeyUpdate. Those leave the connection as good as it was, and closing
// it for them would cost a handshake per ticket. So crypto/tls is let take
// the whole records waiting, and only those (tlsSock never lets it wait
// for more): a connection they gave data or an end (close_notify, an
// alert) is closed, one they gave nothing is used. Records crypto/tls read
// with the last response, past its end, are taken the same way: they are
// past the response as bytes left in the buffer are (Pool.put).

// idleClean reports whether nothing arrived on a connection just taken
// from the pool while it was idle.
func (pc *Conn) idleClean() bool {
	if pc.raw != nil {
		return !pc.raw.Pending()
	}
	if pc.sock != nil {
		return pc.tlsIdleClean()
	}
	return pc.peek.now()
}

const (
	// maxRecord is the longest TLS record, its header included.
	maxRecord = 5 + 1<<14 + 256
	// idleRounds bounds the looks at a TLS connection whose backend keeps
	// sending records as they are taken.
	idleRounds = 4
)

// tlsIdleClean is idleClean under TLS.
func (pc *Conn) tlsIdleClean() bool {
	var buf []byte
	for range idleRounds {
		whole := 0
		if pc.peek.now() {
			if !pc.sock.held {
				return true // and crypto/tls holds nothing past what it used
			}
		} else {
			if buf == nil {
				buf = make([]byte, maxRecord)
			}
			n := pc.peek.look(buf)
			if n <= 0 {
				return false // the end, or a socket that cannot be looked at
			}
			if whole = wholeRecords(buf[:n]); whole == 0 {
				return false // a record still on its way, or not a record at all
			}
		}
		if !pc.takeRecords(whole) {
			return false
		}
		if whole == 0 {
			return true
		}
	}
	return false
}

// wholeRecords is the length of the whole TLS records b starts with.
func wholeRecords(b []byte) int {
	off := 0
	for len(b)-off >= 5 {
		typ, n := b[off], int(b[off+3])<<8|int(b[off+4])
		if typ < 20 || typ > 23 || b[off+1] != 3 || n > maxRecord-5 {
			return 0
		}
		if off+5+n > len(b) {
			break
		}
		off += 5 + n
	}
	return off
}

// takeRecords has crypto/tls take what it holds and n more bytes of the
// socket, which are there already, and reports whether that gave neither
// data nor an end.
func (pc *Conn) takeRecords(n int) bool {
	if n > 0 {
		// A deadline that passed while the connection was idle would
		// refuse the read; what is read is there, so none is needed.
		pc.setReadDeadline(time.Time{})
	}
	pc.sock.limit = n
	got, err := pc.c.Read(pc.sock.one[:])
	pc.sock.limit = -1
	return got == 0 && errors.Is(err, os.ErrDeadlineExceeded)
}

// tlsSock is the socket beneath a backend's TLS connection. While limit
// is not negative, reads return at most limit bytes in all, then fail as
// a read past its deadline does, which crypto/tls takes for a pause, not
// an error: takeRecords has it take exactly the records waiting.
//
// It follows the records' framing in what it reads, so that a connection
// is spared takeRecords when crypto/tls cannot hold anything past what it
// used: crypto/tls reads only when the record it is at is not whole, so
// a read that ended exactly that record left it nothing more.
type tlsSock struct {
	net.Conn
	limit int
	one   [1]byte         // takeRecords' read, which nothing should fill
	rec   rawsock.Records // the framing of what was read
	// held: the last read did not end exactly one record, so crypto/tls
	// may hold records, or part of one, that it has not used.
	held bool
}

func (s *tlsSock) Read(p []byte) (int, error) {
	if s.limit == 0 {
		return 0, os.ErrDeadlineExceeded
	}
	if s.limit > 0 && len(p) > s.limit {
		p = p[:s.limit]
	}
	n, err := s.Conn.Read(p)
	if s.limit > 0 {
		s.limit -= n
	}
	s.frame(p[:n])
	return n, err
}

// frame follows the records' framing through b, just read, and sets held.
func (s *tlsSock) frame(b []byte) {
	completed := s.rec.Read(b)
	s.held = completed != 1 || !s.rec.Between()
}
