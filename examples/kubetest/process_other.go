//go:build !linux

package kubetest

import "syscall"

// sysProcAttr has nothing to add where the parent's death cannot be tied to
// the child's.
func sysProcAttr() *syscall.SysProcAttr { return nil }
