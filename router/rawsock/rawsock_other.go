//go:build !linux

package rawsock

import (
	"errors"
	"net"
)

// Conn is not made here: New is always nil.
type Conn struct{}

// New is nil: raw calls are used on Linux only.
func New(net.Conn) *Conn { return nil }

var errNone = errors.New("rawsock: no raw socket on this system")

func (*Conn) Read([]byte) (int, error)  { return 0, errNone }
func (*Conn) Write([]byte) (int, error) { return 0, errNone }
func (*Conn) Hold()                     {}
func (*Conn) Borrow()                   {}
func (*Conn) Send() error               { return errNone }
func (*Conn) Pending() bool             { return true }
func (*Conn) SendAwait() (bool, error)  { return false, errNone }
func (*Conn) Waited() bool              { return false }
func (*Conn) ResetWaited()              {}
func (*Conn) OneRecord() bool           { return false }
func (*Conn) layered()                  {}

// AckNow does nothing here (TCP_QUICKACK is Linux's).
func AckNow(net.Conn) {}
