//go:build linux

package rawsock

import (
	"bytes"
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

// records follows TLS records however the reads cut them: a read that
// begins at a record's start and ends at the end of the one record it
// completed is OneRecord, and only such a read.
func TestRecords(t *testing.T) {
	rec := func(n int) []byte {
		return append([]byte{23, 3, 3, byte(n >> 8), byte(n)}, bytes.Repeat([]byte{'x'}, n)...)
	}
	one, two, big, empty := rec(40), append(rec(10), rec(20)...), rec(300), rec(0)
	for _, tc := range []struct {
		name  string
		reads [][]byte
		want  []bool
	}{
		{"one", [][]byte{one}, []bool{true}},
		{"two in one read", [][]byte{two}, []bool{false}},
		{"header apart", [][]byte{one[:3], one[3:]}, []bool{false, false}},
		{"body apart", [][]byte{big[:100], big[100:]}, []bool{false, false}},
		{"then one", [][]byte{big[:100], big[100:], one}, []bool{false, false, true}},
		{"one and a part", [][]byte{append(append([]byte(nil), one...), one[:7]...), one[7:]}, []bool{false, false}},
		{"empty record", [][]byte{empty, one}, []bool{true, true}},
		{"nothing read", [][]byte{one, nil}, []bool{true, false}},
	} {
		var r records
		for i, p := range tc.reads {
			r.read(p)
			if r.one != tc.want[i] {
				t.Errorf("%s: read %d: one %v, want %v", tc.name, i, r.one, tc.want[i])
			}
		}
	}
}

// Over NetConn a TLS server's reads say whether the TLS layer took more
// than one record from the socket (Under finds the Conn under the
// *tls.Conn): one record per client write is OneRecord, two in one write
// are not.
func TestUnderTLSOneRecord(t *testing.T) {
	_, c, peer := pair(t)
	srv := tls.Server(NetConn(c), &tls.Config{Certificates: []tls.Certificate{testCert(t)}})
	raw := Under(srv)
	if raw == nil {
		t.Fatal("Under(tls over NetConn) is nil")
	}
	if Under(tls.Server(c, &tls.Config{})) != nil || Under(c) != nil {
		t.Fatal("Under of a connection not over NetConn is not nil")
	}
	hold := &heldWriter{Conn: peer}
	cli := tls.Client(hold, &tls.Config{InsecureSkipVerify: true})
	go cli.Handshake()
	if err := srv.Handshake(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 64)
	// The client's handshake may end in the segment that carries its
	// first record: read one first.
	for i, two := range []bool{false, false, true, false} {
		want := "one"
		hold.hold = two
		cli.Write([]byte(want))
		if two {
			cli.Write([]byte("two"))
			want = "onetwo"
			hold.flush()
		}
		got := ""
		for len(got) < len(want) {
			n, err := srv.Read(b)
			if err != nil {
				t.Fatal(err)
			}
			got += string(b[:n])
		}
		if i > 0 && raw.OneRecord() == two {
			t.Errorf("write %d (two records: %v): OneRecord %v", i, two, raw.OneRecord())
		}
	}
}

// heldWriter holds what is written until flush, so that several TLS
// records go in one TCP write.
type heldWriter struct {
	net.Conn
	hold bool
	buf  []byte
}

func (w *heldWriter) Write(p []byte) (int, error) {
	if w.hold {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	return w.Conn.Write(p)
}

func (w *heldWriter) flush() {
	w.hold = false
	w.Conn.Write(w.buf)
	w.buf = w.buf[:0]
}

// A Conn under NetConn takes a Write from another goroutine (a TLS
// layer's Close writes its close_notify alert) while SendAwait writes and
// waits: under -race nothing races, and each goroutine's bytes arrive
// whole, the held ones first when the other came during the hold.
func TestNetConnWriteDuringSend(t *testing.T) {
	for range 20 {
		_, c, peer := pair(t)
		raw := Under(tls.Client(NetConn(c), &tls.Config{}))
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		raw.Hold()
		raw.Write([]byte("held"))
		done := make(chan struct{})
		go func() {
			defer close(done)
			raw.Write([]byte("alert"))
		}()
		if _, err := raw.SendAwait(); err != nil {
			t.Fatal(err)
		}
		<-done
		peer.SetReadDeadline(time.Now().Add(5 * time.Second))
		got := make([]byte, 9)
		if _, err := io.ReadFull(peer, got); err != nil {
			t.Fatal(err)
		}
		if s := string(got); s != "heldalert" {
			t.Fatalf("peer read %q", s)
		}
	}
}
