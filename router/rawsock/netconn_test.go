//go:build linux

package rawsock

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestNetConnServesTLS: a TLS server on NetConn shakes hands, reads and
// writes both ways, keeps to its read deadline and reports the peer's
// close; NetConn finds the connection under it.
func TestNetConnServesTLS(t *testing.T) {
	_, c, peer := pair(t)
	nc := NetConn(c)
	if _, ok := nc.(*netConn); !ok {
		t.Fatalf("NetConn(TCP) is %T", nc)
	}
	if nc.(interface{ NetConn() net.Conn }).NetConn() != c {
		t.Error("NetConn does not give the TCP connection back")
	}
	srv := tls.Server(nc, &tls.Config{Certificates: []tls.Certificate{testCert(t)}})
	cli := tls.Client(peer, &tls.Config{InsecureSkipVerify: true})
	errs := make(chan error, 1)
	go func() {
		if _, err := cli.Write([]byte("ping")); err != nil {
			errs <- err
			return
		}
		b := make([]byte, 4)
		_, err := io.ReadFull(cli, b)
		if err == nil && string(b) != "pong" {
			err = errors.New("client read " + string(b))
		}
		errs <- err
	}()
	b := make([]byte, 4)
	if _, err := io.ReadFull(srv, b); err != nil || string(b) != "ping" {
		t.Fatalf("server read %q, %v", b, err)
	}
	if _, err := srv.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if err := srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Read(b); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	if err := cli.Close(); err != nil {
		t.Fatal(err)
	}
	// A deadline-exceeded TLS read poisons the conn (crypto/tls); the
	// socket under it sees the close as an end.
	_ = c.SetReadDeadline(time.Time{})
	if _, err := nc.Read(make([]byte, 64)); err != nil && !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("read after the peer closed: %v", err)
	}
}

func TestNetConnOnlyForTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if NetConn(a) != a {
		t.Error("NetConn(net.Pipe) is not the pipe itself")
	}
}

func testCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
