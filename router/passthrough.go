package router

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"time"
)

// SSL passthrough (ssl-passthrough with the controller's
// --enable-ssl-passthrough, SPEC §12): a TLS listener reads the SNI of a
// connection's ClientHello without consuming it (PeekClientHello); a
// passthrough host's connection is spliced to an endpoint of its backend
// (PassthroughEndpoint) unterminated, every other connection handed on to
// the TLS server with the ClientHello replayed.

// errHelloRead stops the handshake PeekClientHello runs once the
// ClientHello has been read.
var errHelloRead = errors.New("router: ClientHello read")

// PeekClientHello reads the TLS ClientHello at the start of c and returns
// the server name it asks for (SNI, "" for none) and a connection that
// reads the same bytes again, then the rest of c: hand it to tls.Server,
// or write Peeked to a backend and copy c's bytes after it. Nothing is
// written to c. c's deadline bounds the read; err is set when the bytes
// are not a ClientHello.
func PeekClientHello(c net.Conn) (serverName string, replay *PeekedConn, err error) {
	rec := &helloRecorder{r: c}
	var name string
	var seen bool
	srv := tls.Server(rec, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		name, seen = h.ServerName, true
		return nil, errHelloRead
	}})
	err = srv.Handshake()
	replay = &PeekedConn{Conn: c, Peeked: rec.buf.Bytes()}
	if !seen {
		if err == nil {
			err = errors.New("router: no ClientHello")
		}
		return "", replay, err
	}
	return name, replay, nil
}

// helloRecorder is the connection PeekClientHello's handshake runs on:
// it keeps every byte read and writes nothing (the handshake's alert).
type helloRecorder struct {
	r   net.Conn
	buf bytes.Buffer
}

func (h *helloRecorder) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.buf.Write(p[:n])
	return n, err
}

func (h *helloRecorder) Write(p []byte) (int, error)        { return len(p), nil }
func (h *helloRecorder) Close() error                       { return nil }
func (h *helloRecorder) LocalAddr() net.Addr                { return h.r.LocalAddr() }
func (h *helloRecorder) RemoteAddr() net.Addr               { return h.r.RemoteAddr() }
func (h *helloRecorder) SetDeadline(t time.Time) error      { return h.r.SetDeadline(t) }
func (h *helloRecorder) SetReadDeadline(t time.Time) error  { return h.r.SetReadDeadline(t) }
func (h *helloRecorder) SetWriteDeadline(t time.Time) error { return h.r.SetWriteDeadline(t) }

// PeekedConn is a connection whose first bytes were read by
// PeekClientHello: Read returns Peeked first, then reads Conn.
type PeekedConn struct {
	net.Conn
	Peeked []byte
	off    int
}

func (p *PeekedConn) Read(b []byte) (int, error) {
	if p.off < len(p.Peeked) {
		n := copy(b, p.Peeked[p.off:])
		p.off += n
		return n, nil
	}
	return p.Conn.Read(b)
}

// Splice sends p (the peeked bytes, then the rest) to backend and
// backend's bytes back to p's connection until both sides end, then
// closes both. Either side's end (FIN) is passed on to the other as its
// own, the other direction still flowing, as between the two directly;
// an error either way closes both. io.Copy between *net.TCPConn uses
// splice(2) on Linux: no copy through user space, no allocation per byte.
func (p *PeekedConn) Splice(backend net.Conn) {
	defer p.Conn.Close()
	defer backend.Close()
	if _, err := backend.Write(p.Peeked[p.off:]); err != nil {
		return
	}
	p.off = len(p.Peeked)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := io.Copy(p.Conn, backend)
		cw, ok := p.Conn.(interface{ CloseWrite() error })
		if err != nil || !ok || cw.CloseWrite() != nil {
			// Closing the client's connection ends the other copy too.
			_ = p.Conn.Close()
		}
	}()
	_, _ = io.Copy(backend, p.Conn)
	// The client is finished sending; the backend may still answer.
	closeWrite(backend)
	<-done
}

// PassthroughEndpoint picks the endpoint ("ip:port") a passthrough
// connection naming serverName (SNI) goes to, by the backend's balancer,
// counting the connection as in flight until release is called; ok is
// false when serverName is no passthrough host of the serving table or
// its backend has no ready endpoint.
func (r *Router) PassthroughEndpoint(serverName string) (addr string, release func(), ok bool) {
	st := r.state.Load()
	if st == nil {
		return "", nil, false
	}
	b := st.table.Passthrough(serverName)
	if b == nil {
		return "", nil, false
	}
	bal := st.balancers[b]
	if bal == nil {
		return "", nil, false
	}
	e, ok := bal.Pick("")
	if !ok {
		return "", nil, false
	}
	return e.Addr, e.Release, true
}
