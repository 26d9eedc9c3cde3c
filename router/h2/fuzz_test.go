package h2

import (
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"
)

// FuzzServeConn sends arbitrary frames after the preface: the server must
// neither panic nor hang, and ends when the client goes.
func FuzzServeConn(f *testing.F) {
	frame := func(typ, flags uint8, stream uint32, p []byte) []byte {
		return append(appendFrameHeader(nil, len(p), typ, flags, stream), p...)
	}
	settings := frame(frameSettings, 0, 0, appendSetting(nil, settingInitialWindowSize, 10))
	get := frame(frameHeaders, flagEndHeaders|flagEndStream, 1, request("/"))
	post := append(frame(frameHeaders, flagEndHeaders, 3, request("/p")), frame(frameData, flagEndStream|flagPadded, 3, []byte{2, 'a', 0, 0})...)
	f.Add(append(append([]byte(nil), settings...), get...))
	f.Add(append(append([]byte(nil), settings...), post...))
	f.Add(append(frame(frameHeaders, 0, 1, request("/")), frame(frameContinuation, flagEndHeaders, 1, nil)...))
	f.Add(frame(frameWindowUpdate, 0, 0, []byte{0x7f, 0xff, 0xff, 0xff}))
	f.Add(frame(framePing, 0, 0, make([]byte, 8)))
	f.Add(frame(frameRSTStream, 0, 1, []byte{0, 0, 0, 8}))
	f.Add(frame(frameHeaders, flagEndHeaders|flagPriority, 5, append([]byte{0, 0, 0, 5, 16}, request("/")...)))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &Server{ErrorLog: log.New(io.Discard, "", 0), IdleTimeout: time.Second,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(w, r.Body)
			})}
		cc, sc := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.ServeConn(sc)
		}()
		go func() { _, _ = io.Copy(io.Discard, cc) }()
		_ = cc.SetWriteDeadline(time.Now().Add(2 * time.Second))
		_, _ = cc.Write(append(append([]byte(clientPreface), frame(frameSettings, 0, 0, nil)...), b...))
		cc.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("ServeConn did not return")
		}
	})
}
