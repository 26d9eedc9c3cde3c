package kubetest

import "syscall"

// sysProcAttr kills the child when the test binary dies without running its
// cleanups (a panic or a -timeout), so no server outlives the test run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
