package h1

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

// isTimeout answers as errors.As to a net.Error does, whether or not the
// error is the *net.OpError it tests first.
func TestIsTimeout(t *testing.T) {
	deadline := &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"EOF", io.EOF, false},
		{"deadline", os.ErrDeadlineExceeded, true},
		{"OpError deadline", deadline, true},
		{"OpError reset", reset, false},
		{"wrapped OpError deadline", fmt.Errorf("peek: %w", deadline), true},
		{"wrapped OpError reset", fmt.Errorf("peek: %w", reset), false},
		{"OpError around a timeout syscall error", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ETIMEDOUT)}, true},
	} {
		var ne net.Error
		ref := errors.As(c.err, &ne) && ne.Timeout()
		if got := isTimeout(c.err); got != c.want || got != ref {
			t.Errorf("%s: isTimeout = %v, want %v (errors.As: %v)", c.name, got, c.want, ref)
		}
	}
}
