package rawsock

import "net"

// NetConn is c with its reads and writes made raw, as a Conn makes them,
// for a layer that reads and writes c itself, such as a TLS server's
// connection: tls.Server(rawsock.NetConn(c), cfg). Without it a TLS
// connection's socket calls are Go's own, and pay what the package
// comment says raw calls spare. Deadlines, Close and the addresses are
// c's. Where New is nil, NetConn is c itself.
func NetConn(c net.Conn) net.Conn {
	raw := New(c)
	if raw == nil {
		return c
	}
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
