//go:build !unix

package h1

import "net"

// peeker cannot look at a socket here without reading from it: a
// connection is not looked at, and one the backend closed is found out
// when the request is written (see serveH1's retry).
type peeker struct{}

func (p *peeker) init(net.Conn) {}

func (p *peeker) now() bool { return true }

func (p *peeker) look([]byte) int { return -1 }
