package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// TLS 1.3 lets a server send records that carry no data at any time after
// the handshake: a NewSessionTicket (OpenSSL, and crypto/tls when it asks
// for client certificates, send them after the client's Finished, often
// as the connection already waits in the pool), a KeyUpdate. crypto/tls
// has no way to send either when the test wants, so the backend here does
// the handshake with crypto/tls and then runs the record layer itself,
// from the traffic secrets the handshake logged (RFC 8446 §7).

// recordSuite is a TLS 1.3 cipher suite's AEAD and hash.
type recordSuite struct {
	hash   func() hash.Hash
	keyLen int
	aead   func(key []byte) (cipher.AEAD, error)
}

func suiteOf(id uint16) (recordSuite, bool) {
	gcm := func(key []byte) (cipher.AEAD, error) {
		b, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		return cipher.NewGCM(b)
	}
	switch id {
	case tls.TLS_AES_128_GCM_SHA256:
		return recordSuite{sha256.New, 16, gcm}, true
	case tls.TLS_AES_256_GCM_SHA384:
		return recordSuite{sha512.New384, 32, gcm}, true
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return recordSuite{sha256.New, 32, chacha20poly1305.New}, true
	}
	return recordSuite{}, false
}

func (s recordSuite) expandLabel(secret []byte, label string, n int) []byte {
	info := binary.BigEndian.AppendUint16(nil, uint16(n))
	info = append(info, byte(len("tls13 ")+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0) // no context
	out, err := hkdf.Expand(s.hash, secret, string(info), n)
	if err != nil {
		panic(err)
	}
	return out
}

// recordKeys is one direction's traffic keys.
type recordKeys struct {
	suite  recordSuite
	secret []byte
	aead   cipher.AEAD
	iv     []byte
	seq    uint64
}

func (k *recordKeys) set(secret []byte) {
	k.secret = secret
	aead, err := k.suite.aead(k.suite.expandLabel(secret, "key", k.suite.keyLen))
	if err != nil {
		panic(err)
	}
	k.aead, k.iv, k.seq = aead, k.suite.expandLabel(secret, "iv", 12), 0
}

// update moves to the next traffic secret (a KeyUpdate).
func (k *recordKeys) update() {
	k.set(k.suite.expandLabel(k.secret, "traffic upd", k.suite.hash().Size()))
}

func (k *recordKeys) nonce() []byte {
	n := bytes.Clone(k.iv)
	for i := range 8 {
		n[len(n)-1-i] ^= byte(k.seq >> (8 * i))
	}
	k.seq++
	return n
}

// seal is one record of content type typ.
func (k *recordKeys) seal(typ byte, payload []byte) []byte {
	inner := append(bytes.Clone(payload), typ)
	n := len(inner) + k.aead.Overhead()
	hdr := []byte{23, 3, 3, byte(n >> 8), byte(n)}
	return k.aead.Seal(hdr, k.nonce(), inner, hdr)
}

// tls13Peer is the server's end of a TLS 1.3 connection past crypto/tls's
// handshake.
type tls13Peer struct {
	c          net.Conn
	br         *bufio.Reader
	read, send recordKeys
}

// recordingConn keeps what the handshake read: crypto/tls may have read
// the client's first records past its Finished.
type recordingConn struct {
	net.Conn
	got bytes.Buffer
}

func (r *recordingConn) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	r.got.Write(p[:n])
	return n, err
}

func acceptTLS13(t *testing.T, c net.Conn) (*tls13Peer, error) {
	var keys bytes.Buffer
	cfg := testTLSConfig(t)
	cfg.MinVersion, cfg.SessionTicketsDisabled, cfg.KeyLogWriter = tls.VersionTLS13, true, &keys
	rc := &recordingConn{Conn: c}
	tc := tls.Server(rc, cfg)
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	suite, ok := suiteOf(tc.ConnectionState().CipherSuite)
	if !ok {
		return nil, errors.New("unknown TLS 1.3 suite")
	}
	p := &tls13Peer{c: c, read: recordKeys{suite: suite}, send: recordKeys{suite: suite}}
	for line := range strings.Lines(keys.String()) {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		secret, err := hex.DecodeString(f[2])
		if err != nil {
			return nil, err
		}
		switch f[0] {
		case "CLIENT_TRAFFIC_SECRET_0":
			p.read.set(secret)
		case "SERVER_TRAFFIC_SECRET_0":
			p.send.set(secret)
		}
	}
	// What the handshake read past the client's Finished (its first
	// encrypted record) is the start of its data.
	got := rc.got.Bytes()
	for len(got) >= 5 {
		n := 5 + int(binary.BigEndian.Uint16(got[3:]))
		typ := got[0]
		got = got[n:]
		if typ == 23 {
			break
		}
	}
	p.br = bufio.NewReader(io.MultiReader(bytes.NewReader(bytes.Clone(got)), c))
	return p, nil
}

// next is the next record's content type and content.
func (p *tls13Peer) next() (byte, []byte, error) {
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(p.br, hdr); err != nil {
		return 0, nil, err
	}
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	if _, err := io.ReadFull(p.br, body); err != nil {
		return 0, nil, err
	}
	inner, err := p.read.aead.Open(nil, p.read.nonce(), body, hdr)
	if err != nil {
		return 0, nil, err
	}
	inner = bytes.TrimRight(inner, "\x00")
	if len(inner) == 0 {
		return 0, nil, errors.New("empty record")
	}
	return inner[len(inner)-1], inner[:len(inner)-1], nil
}

// Records a test backend sends while the connection is idle.
var (
	recordTicket = func(p *tls13Peer) []byte {
		msg := []byte{4, 0, 0, 0}
		msg = binary.BigEndian.AppendUint32(msg, 3600) // lifetime
		msg = binary.BigEndian.AppendUint32(msg, 7)    // age add
		msg = append(msg, 1, 9)                        // nonce
		msg = append(msg, 0, 16)
		msg = append(msg, "a ticket, opaque"...)
		msg = append(msg, 0, 0) // no extensions
		msg[3] = byte(len(msg) - 4)
		return p.send.seal(22, msg)
	}
	recordKeyUpdate = func(ask bool) func(p *tls13Peer) []byte {
		return func(p *tls13Peer) []byte {
			req := byte(0)
			if ask {
				req = 1
			}
			rec := p.send.seal(22, []byte{24, 0, 0, 1, req})
			p.send.update()
			return rec
		}
	}
	recordCloseNotify = func(p *tls13Peer) []byte { return p.send.seal(21, []byte{1, 0}) }
	recordData        = func(p *tls13Peer) []byte {
		return p.send.seal(23, []byte("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate"))
	}
)

// idleRecordsBackend answers each request with "ok\n" over TLS 1.3 and,
// after a connection's first response, sends the records idle makes: with
// the response when withResponse, else once go is closed (the connection
// is idle in the pool by then); sent is closed once they are written. It
// counts connections.
func idleRecordsBackend(t *testing.T, idle []func(*tls13Peer) []byte, withResponse bool) (addr string, conns *atomic.Int32, goSend, sent chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns, goSend, sent = new(atomic.Int32), make(chan struct{}), make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			first := conns.Add(1) == 1
			go func() {
				defer c.Close()
				p, err := acceptTLS13(t, c)
				if err != nil {
					t.Error(err)
					return
				}
				var in []byte
				for {
					typ, b, err := p.next()
					if err != nil {
						return
					}
					switch {
					case typ == 22 && len(b) == 5 && b[0] == 24:
						p.read.update() // the client's KeyUpdate
						continue
					case typ != 23:
						return
					}
					in = append(in, b...)
					for {
						i := bytes.Index(in, []byte("\r\n\r\n"))
						if i < 0 {
							break
						}
						in = in[i+4:]
						out := p.send.seal(23, []byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"))
						if first && !withResponse {
							if _, err := c.Write(out); err != nil {
								return
							}
							out = nil
							<-goSend
						}
						wrote := first
						if first {
							first = false
							for _, r := range idle {
								out = append(out, r(p)...)
							}
						}
						_, err := c.Write(out)
						if wrote {
							close(sent)
						}
						if err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return ln.Addr().String(), conns, goSend, sent
}

// TestTLSIdleRecords: a pooled TLS connection on which the backend sent
// records carrying no data while it waited (a NewSessionTicket, a
// KeyUpdate, one asking for the client's own) is reused, the records
// taken as crypto/tls takes them; one on which it sent data or its
// close_notify is closed and the request goes on a new connection. The
// same holds for records that came with the last response, past its end.
func TestTLSIdleRecords(t *testing.T) {
	for _, tt := range []struct {
		name   string
		idle   []func(*tls13Peer) []byte
		reused bool
	}{
		{"NewSessionTicket", []func(*tls13Peer) []byte{recordTicket}, true},
		{"two NewSessionTickets", []func(*tls13Peer) []byte{recordTicket, recordTicket}, true},
		{"KeyUpdate", []func(*tls13Peer) []byte{recordKeyUpdate(false)}, true},
		{"KeyUpdate asking for one back", []func(*tls13Peer) []byte{recordKeyUpdate(true)}, true},
		{"NewSessionTicket then KeyUpdate", []func(*tls13Peer) []byte{recordTicket, recordKeyUpdate(false)}, true},
		{"close_notify", []func(*tls13Peer) []byte{recordCloseNotify}, false},
		{"data", []func(*tls13Peer) []byte{recordData}, false},
		{"NewSessionTicket then data", []func(*tls13Peer) []byte{recordTicket, recordData}, false},
		{"NewSessionTicket then close_notify", []func(*tls13Peer) []byte{recordTicket, recordCloseNotify}, false},
	} {
		for _, withResponse := range []bool{false, true} {
			name := tt.name + " while idle"
			if withResponse {
				name = tt.name + " with the response"
			}
			t.Run(name, func(t *testing.T) {
				addr, conns, goSend, sent := idleRecordsBackend(t, tt.idle, withResponse)
				p := NewPool(time.Second)
				defer p.CloseIdle()
				p.SetTLS(&tls.Config{InsecureSkipVerify: true, ClientSessionCache: tls.NewLRUClientSessionCache(8)})
				first := poolExchange(t, p, addr)
				close(goSend)
				<-sent
				if !withResponse {
					// Until the records are there to be seen.
					for start := time.Now(); first.peek.now(); {
						if time.Since(start) > 5*time.Second {
							t.Fatal("the records never arrived")
						}
						time.Sleep(time.Millisecond)
					}
				}
				got := poolExchange(t, p, addr)
				if reused := got == first; reused != tt.reused {
					t.Fatalf("reused the connection: %v, want %v", reused, tt.reused)
				}
				if again := poolExchange(t, p, addr); again != got {
					t.Fatal("the connection of the second request was not reused")
				}
				want := int32(1)
				if !tt.reused {
					want = 2
				}
				if n := conns.Load(); n != want {
					t.Errorf("%d connections, want %d", n, want)
				}
			})
		}
	}
}

// TestTLSIdleRecordsRequest: a request sent on a connection whose backend
// sent a KeyUpdate asking for one back while it was idle gets its answer
// (the client's KeyUpdate goes before it).
func TestTLSIdleRecordsRequest(t *testing.T) {
	addr, conns, goSend, sent := idleRecordsBackend(t, []func(*tls13Peer) []byte{recordTicket, recordKeyUpdate(true)}, false)
	p := NewPool(time.Second)
	defer p.CloseIdle()
	p.SetTLS(&tls.Config{InsecureSkipVerify: true})
	first := poolExchange(t, p, addr)
	close(goSend)
	<-sent
	for first.peek.now() {
		time.Sleep(time.Millisecond)
	}
	pc, err := p.Get(context.Background(), addr, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bw := pc.Begin(Request{Ctx: context.Background(), Method: "POST", Header: http.Header{}, Read: time.Minute, MaxHead: 1 << 16})
	bw.WriteString("POST / HTTP/1.1\r\nHost: backend\r\nContent-Length: 0\r\n\r\n")
	res, err := pc.Next()
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(pc.Body())
	if err != nil || res.Status != 200 || string(body) != "ok\n" {
		t.Fatalf("response %d %q, %v", res.Status, body, err)
	}
	pc.End(true)
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// TestTLSSockFraming: the socket beneath TLS says crypto/tls may hold
// something unused unless its last read ended exactly one record, however
// the records were cut into reads.
func TestTLSSockFraming(t *testing.T) {
	rec := func(n int) []byte { return append([]byte{23, 3, 3, byte(n >> 8), byte(n)}, make([]byte, n)...) }
	two := append(rec(3), rec(2)...)
	for _, tt := range []struct {
		name  string
		reads [][]byte
		held  bool
	}{
		{"one record", [][]byte{rec(3)}, false},
		{"two records in one read", [][]byte{two}, true},
		{"a record and part of the next", [][]byte{two[:10]}, true},
		{"the rest of a record", [][]byte{two[:10], two[10:]}, false},
		{"a header cut in two", [][]byte{rec(3)[:2], rec(3)[2:]}, false},
		{"a header alone", [][]byte{rec(3)[:5]}, true},
		{"an empty record", [][]byte{rec(0)}, false},
		{"nothing", [][]byte{{}}, true},
	} {
		s := &tlsSock{}
		for _, b := range tt.reads {
			s.frame(b)
		}
		if s.held != tt.held {
			t.Errorf("%s: held %v, want %v", tt.name, s.held, tt.held)
		}
	}
}
