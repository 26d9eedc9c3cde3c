//go:build linux && race

package rawsock

import "syscall"

// Under the race detector the syscall package's calls are used instead:
// they tell it what the kernel orders (a write happens before any read
// that sees its bytes), whichever side reads or writes with net.Conn.

func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return n, errno(err)
}

func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return n, errno(err)
}

func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	return err.(syscall.Errno)
}
