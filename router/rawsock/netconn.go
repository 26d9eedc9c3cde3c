package rawsock

import "net"

// NetConn is c with its reads and writes made raw, as a Conn makes them,
// for a layer that reads and writes c itself, such as a TLS server's
// connection: tls.Server(rawsock.NetConn(c), cfg). Without it a TLS
// connection's socket calls are Go's own, and pay what the package
// comment says raw calls spare. Deadlines, Close and the addresses are
// c's. Where New is nil, NetConn is c itself.
//
// The layer's Close may write (a TLS close_notify) while the loop above it
// is in Send, so the Conn under a NetConn orders its writes with a lock;
// it also follows the TLS records it reads (OneRecord).
func NetConn(c net.Conn) net.Conn {
	raw := New(c)
	if raw == nil {
		return c
	}
	raw.layered()
	return &netConn{Conn: c, raw: raw}
}

type netConn struct {
	net.Conn
	raw *Conn
}

func (c *netConn) Read(p []byte) (int, error)  { return c.raw.Read(p) }
func (c *netConn) Write(p []byte) (int, error) { return c.raw.Write(p) }

// NetConn is the connection under the raw calls, for code that looks
// through wrappers (as *tls.Conn's NetConn).
func (c *netConn) NetConn() net.Conn { return c.Conn }

// Under is the Conn beneath c, a TLS connection (any connection with a
// NetConn method) over a NetConn, for a server loop that reads and writes
// through c and ends a response with Hold and SendAwait on the socket; nil
// when c is not one.
func Under(c net.Conn) *Conn {
	if u, ok := c.(interface{ NetConn() net.Conn }); ok {
		if nc, ok := u.NetConn().(*netConn); ok {
			return nc.raw
		}
	}
	return nil
}

// Records follows the TLS records in the bytes read from a socket, as
// their headers give their lengths, for a layer beneath crypto/tls that
// needs to know whether what it read ends at a record's end.
type Records struct {
	left int     // bytes of the current record's body still to come
	hdr  [5]byte // a record header read in part
	hn   int     // its bytes so far
}

// Read follows p, the bytes just read, and returns how many records they
// completed.
func (r *Records) Read(p []byte) (completed int) {
	for len(p) > 0 {
		if r.left > 0 {
			k := min(r.left, len(p))
			r.left -= k
			p = p[k:]
			if r.left == 0 {
				completed++
			}
			continue
		}
		k := copy(r.hdr[r.hn:], p)
		r.hn += k
		p = p[k:]
		if r.hn == len(r.hdr) {
			r.hn = 0
			r.left = int(r.hdr[3])<<8 | int(r.hdr[4])
			if r.left == 0 {
				completed++
			}
		}
	}
	return completed
}

// Between reports whether the bytes read so far end at a record's end.
func (r *Records) Between() bool { return r.left == 0 && r.hn == 0 }

// records is a Conn's Records and what its last read was.
type records struct {
	Records
	// one: the last read began at a record's start and ended at the end
	// of the one record it completed.
	one bool
}

func (r *records) read(p []byte) {
	aligned := r.Between()
	completed := r.Records.Read(p)
	r.one = aligned && completed == 1 && r.Between()
}
