//go:build tools

// Package tools pins the kube-apiserver that the end-to-end tests run
// against, and the etcd it stores into (the release that kube-apiserver's
// own module requires). It is never compiled into anything; it only records
// the dependencies so that `go build k8s.io/kubernetes/cmd/kube-apiserver`
// and `go build go.etcd.io/etcd/server/v3` in this module resolve to fixed
// releases.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
