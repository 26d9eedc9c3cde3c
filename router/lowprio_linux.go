package router

import "syscall"

// lowerThreadPriority gives the calling thread, which must be locked to
// its goroutine, nice 10: when the process's threads compete for CPUs,
// serving requests wins over a password check. A refusal (a sandbox
// that forbids it) leaves the priority as it was.
func lowerThreadPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 10)
}
