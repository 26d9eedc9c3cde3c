package router

import (
	"bufio"
	"testing"
)

// countingWriter counts the writes that reach it.
type countingWriter struct {
	writes int
	b      []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.b = append(w.b, p...)
	return len(p), nil
}

// A piece that fills exactly what is left of bw's buffer stays in it; one
// byte more sends what is there first. Nothing is lost or written twice
// either way.
func TestHeadBufStrAtCapacity(t *testing.T) {
	for _, extra := range []int{0, 1} {
		var w countingWriter
		bw := bufio.NewWriterSize(&w, 32)
		hb := headBuf{bw: bw, b: bw.AvailableBuffer()}
		hb.str("GET / HTTP/1.1")
		rest := string(make([]byte, 32-len("GET / HTTP/1.1")+extra))
		hb.str(rest)
		if extra == 0 && (w.writes != 0 || len(hb.b) != 32) {
			t.Fatalf("an exact fit: %d writes, %d bytes held, want 0 and 32", w.writes, len(hb.b))
		}
		hb.done()
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		if want := "GET / HTTP/1.1" + rest; string(w.b) != want {
			t.Fatalf("extra %d: %q, want %q", extra, w.b, want)
		}
	}
}
