package h2

import (
	"bufio"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkServe: GETs answered with 100 bytes over one cleartext
// connection, streams 3 at a time (as the harness's h2load), by this
// package's server and, for comparison, net/http's. The client is frames
// written by hand, allocating nothing.
func BenchmarkServe(b *testing.B) {
	body := make([]byte, 100)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	})
	for _, own := range []bool{true, false} {
		name := "router-h2"
		if !own {
			name = "net-http"
		}
		b.Run(name, func(b *testing.B) {
			ts := httptest.NewUnstartedServer(h)
			ts.Config.Protocols = new(http.Protocols)
			ts.Config.Protocols.SetHTTP1(true)
			ts.Config.Protocols.SetUnencryptedHTTP2(true)
			ts.Config.ErrorLog = log.New(io.Discard, "", 0)
			if own {
				ConfigureServer(ts.Config, &Server{ErrorLog: ts.Config.ErrorLog})
			}
			ts.Start()
			defer ts.Close()
			c, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(time.Minute))
			bw := bufio.NewWriter(c)
			br := bufio.NewReaderSize(c, 64<<10)
			bw.WriteString(clientPreface)
			bw.Write(appendFrameHeader(nil, 0, frameSettings, 0, 0))
			// A connection window large enough for the whole run.
			bw.Write(appendWindowUpdate(nil, 0, 1<<30))
			block := request("/")
			var hdr []byte
			var frame [frameHeaderLen]byte
			payload := make([]byte, 1<<16)
			id := uint32(1)
			send := func() {
				hdr = appendFrameHeader(hdr[:0], len(block), frameHeaders, flagEndHeaders|flagEndStream, id)
				bw.Write(hdr)
				bw.Write(block)
				id += 2
			}
			// ends reads frames until a stream ends.
			ends := func() {
				for {
					if _, err := io.ReadFull(br, frame[:]); err != nil {
						b.Fatal(err)
					}
					fh := parseFrameHeader(frame[:])
					if _, err := io.ReadFull(br, payload[:fh.length]); err != nil {
						b.Fatal(err)
					}
					if fh.typ == frameSettings && fh.flags&flagAck == 0 {
						bw.Write(appendFrameHeader(hdr[:0], 0, frameSettings, flagAck, 0))
					}
					if (fh.typ == frameData || fh.typ == frameHeaders) && fh.flags&flagEndStream != 0 {
						return
					}
				}
			}
			const inFlight = 3
			for i := 0; i < inFlight; i++ {
				send()
			}
			bw.Flush()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ends()
				send()
				bw.Flush()
			}
			for i := 0; i < inFlight; i++ {
				ends()
			}
		})
	}
}
