//go:build !linux

package router

// lowerThreadPriority does nothing here: only Linux sets a priority per
// thread. Password checks are still bounded (see authState.acquire).
func lowerThreadPriority() {}
