package router

import (
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstClientHello is the first TLS record a client sends for sni.
func firstClientHello(t *testing.T, sni string) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() {
		_ = tls.Client(a, &tls.Config{ServerName: sni, InsecureSkipVerify: true}).Handshake()
	}()
	hdr := make([]byte, 5)
	_, err := io.ReadFull(b, hdr)
	require.NoError(t, err)
	body := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	_, err = io.ReadFull(b, body)
	require.NoError(t, err)
	return append(hdr, body...)
}

// A ClientHello cut into one-byte handshake records, each written on its
// own, is read whole: the SNI is found and every byte is replayed.
func TestPeekClientHelloFragmented(t *testing.T) {
	rec := firstClientHello(t, "frag.example.com")
	body := rec[5:]
	var frags []byte
	for _, c := range body {
		frags = append(frags, 0x16, 0x03, 0x01, 0x00, 0x01, c)
	}
	client, server := tcpPair(t)
	go func() {
		for i := 0; i < len(frags); i += 97 {
			_, _ = client.Write(frags[i:min(i+97, len(frags))])
			time.Sleep(time.Millisecond)
		}
	}()
	require.NoError(t, server.SetDeadline(time.Now().Add(5*time.Second)))
	name, replay, err := PeekClientHello(server)
	require.NoError(t, err)
	assert.Equal(t, "frag.example.com", name)
	got := make([]byte, len(frags))
	_, err = io.ReadFull(replay, got)
	require.NoError(t, err)
	assert.Equal(t, frags, got)
}

// A passthrough connection's backend that ends its side (FIN) after
// answering may still be reading what the client sends: the backend's
// half-close must be passed on as a half-close, the client's bytes sent
// after it still reaching the backend, as the client's own FIN is passed
// on (closeWrite) with the backend's answers still flowing.
func TestSpliceBackendHalfClose(t *testing.T) {
	client, front := tcpPair(t)
	back, backend := tcpPair(t)
	pc := &PeekedConn{Conn: front, Peeked: []byte("hello\n")}
	spliced := make(chan struct{})
	go func() { pc.Splice(back); close(spliced) }()

	backendGot := make(chan string, 1)
	go func() {
		_ = backend.SetDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 6)
		if _, err := io.ReadFull(backend, buf); err != nil {
			backendGot <- "error: " + err.Error()
			return
		}
		_, _ = io.WriteString(backend, "answer")
		_ = backend.(*net.TCPConn).CloseWrite() // done answering, still reading
		rest, err := io.ReadAll(backend)
		if err != nil {
			backendGot <- string(rest) + " error: " + err.Error()
			return
		}
		backendGot <- string(rest)
	}()

	require.NoError(t, client.SetDeadline(time.Now().Add(5*time.Second)))
	answer, err := io.ReadAll(client) // until the backend's FIN
	require.NoError(t, err)
	assert.Equal(t, "answer", string(answer))
	time.Sleep(50 * time.Millisecond)
	_, werr := io.WriteString(client, "upload after the backend's FIN")
	_ = client.(*net.TCPConn).CloseWrite()
	select {
	case got := <-backendGot:
		assert.NoError(t, werr)
		assert.Equal(t, "upload after the backend's FIN", got, "what the backend read after its half-close")
	case <-time.After(5 * time.Second):
		t.Fatal("backend never finished")
	}
	select {
	case <-spliced:
	case <-time.After(5 * time.Second):
		t.Fatal("Splice never returned")
	}
}
