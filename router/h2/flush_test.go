package h2

import (
	"bytes"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
)

// writeLog is a server connection that keeps a copy of each Write.
type writeLog struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, bytes.Clone(p))
	w.mu.Unlock()
	return w.Conn.Write(p)
}

// frames are the frames of stream id in one write, by type.
func framesOf(b []byte, id uint32) (types []uint8) {
	for len(b) >= frameHeaderLen {
		fh := parseFrameHeader(b)
		if fh.stream == id {
			types = append(types, fh.typ)
		}
		b = b[frameHeaderLen+int(fh.length):]
	}
	return types
}

// TestFlushLeavesWithEnd: a handler that flushes a piece and then ends
// with trailers, as a proxy relaying a unary gRPC answer does, sends its
// head, data and trailers in one write, where writing at the flush took
// two. One processor, so that the handler goes on before the write is
// taken up, as on the proxy's pinned core.
func TestFlushLeavesWithEnd(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		_, _ = w.Write([]byte("\x00\x00\x00\x00\x00"))
		w.(http.Flusher).Flush()
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "0")
	})}
	var log *writeLog
	rc := dialRawVia(t, s, func(c net.Conn) net.Conn { log = &writeLog{Conn: c}; return log })
	rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	if _, _, err := rc.next(frameHeaders); err != nil {
		t.Fatal(err)
	}
	fh, _, err := rc.next(frameHeaders)
	if err != nil || fh.flags&flagEndStream == 0 {
		t.Fatalf("trailers: %+v %v", fh, err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	var got [][]uint8
	for _, w := range log.writes {
		if f := framesOf(w, 1); len(f) > 0 {
			got = append(got, f)
		}
	}
	want := []uint8{frameHeaders, frameData, frameHeaders}
	if len(got) != 1 || !bytes.Equal(got[0], want) {
		t.Fatalf("stream 1's frames by write: %v, want %v in one", got, want)
	}
}

// TestFlushSentWhileHandlerWaits: what a flush queued reaches the client
// while the handler waits (here, for the client to have seen it) without
// another write of the handler's to take it along.
func TestFlushSentWhileHandlerWaits(t *testing.T) {
	for _, procs := range []int{1, 4} {
		t.Run("", func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			seen := make(chan struct{})
			late := make(chan bool, 1)
			s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte("first"))
				w.(http.Flusher).Flush()
				select {
				case <-seen:
					late <- false
				case <-time.After(5 * time.Second):
					late <- true
				}
				_, _ = w.Write([]byte("second"))
			})}
			rc := dialRaw(t, s)
			rc.frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
			_, p, err := rc.next(frameData)
			if err != nil || string(p) != "first" {
				t.Fatalf("first DATA %q, %v", p, err)
			}
			close(seen)
			if <-late {
				t.Fatal("the flushed piece reached the client only as the handler gave up waiting")
			}
			_, p, err = rc.next(frameData)
			if err != nil || string(p) != "second" {
				t.Fatalf("second DATA %q, %v", p, err)
			}
		})
	}
}
