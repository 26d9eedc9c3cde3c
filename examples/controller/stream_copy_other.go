//go:build !linux

package main

// copyIO is nothing here: the copier reads and writes through net.Conn.
type copyIO struct{}

func (c *copier) initIO() {}

func (c *copier) read() (int, error) { return c.src.Read(c.buf) }

func (c *copier) write(b []byte) (int, error) { return c.dst.Write(b) }
