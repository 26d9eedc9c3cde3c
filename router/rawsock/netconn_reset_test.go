//go:build linux

package rawsock

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestNetConnReadAfterReset: a read on a connection its peer reset
// fails with ECONNRESET, and nothing of the failed call's return (-1) is
// taken for bytes read: the TLS record follower sees none.
func TestNetConnReadAfterReset(t *testing.T) {
	_, c, peer := pair(t)
	nc := NetConn(c)
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	time.Sleep(20 * time.Millisecond)
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Read on a reset connection panicked: %v", r)
			}
		}()
		_, err = nc.Read(make([]byte, 64))
	}()
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("Read after a reset: %v; want ECONNRESET", err)
	}
}

// TestTLSHandshakeAfterReset: a TLS handshake over NetConn (as the
// controller's listener runs one per connection, with no recover) on a
// connection the client reset fails with an error: one client's RST
// cannot end the process.
func TestTLSHandshakeAfterReset(t *testing.T) {
	_, c, peer := pair(t)
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	time.Sleep(20 * time.Millisecond)
	srv := tls.Server(NetConn(c), &tls.Config{Certificates: []tls.Certificate{testCert(t)}})
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("TLS handshake on a reset connection panicked: %v", r)
			}
		}()
		err = srv.Handshake()
	}()
	if err == nil {
		t.Fatal("handshake on a reset connection succeeded")
	}
}
