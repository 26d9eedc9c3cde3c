//go:build tools

// Package tools pins the kube-apiserver that the end-to-end tests run
// against. It is never compiled into anything; it only records the
// dependency so that `go build k8s.io/kubernetes/cmd/kube-apiserver` in this
// module resolves to a fixed release.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
