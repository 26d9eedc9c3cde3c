package match

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// digestVersion names the encoding, so a change to it changes every digest.
const digestVersion = "ramjet table digest v2"

// sum is the SHA-256 of one host's or backend's encoding.
type sum = [sha256.Size]byte

// digest is the hex SHA-256 of a canonical encoding of everything in t that
// affects a response (SPEC §15), after the inputs that produced it. Each
// host (with its fallback and routes) and each backend is encoded on its
// own and hashed (hostSum, backendSum); the table's encoding lists those
// sums in the table's sorted order (hosts by name, backends by ID), then
// the table-wide parts. So a table built from another by Update hashes only
// the hosts and backends it changed. Nothing here iterates a map, so the
// digest depends neither on input order nor on time. Every string and list
// is length prefixed, so no two tables share an encoding. Sources and
// declaration order do not change a response and are left out: renaming an
// Ingress or adding an unrelated older one does not republish a table,
// unless a location names its Ingress to an error backend
// (errorSourcesSection).
func digest(t *Table, inputs []byte) string {
	e := newEncoder()
	e.str(digestVersion)
	e.raw(inputs)
	e.num(len(t.hosts))
	for i := range t.hostSums {
		e.raw(t.hostSums[i][:])
	}
	e.num(len(t.backends))
	for i := range t.backendSums {
		e.raw(t.backendSums[i][:])
	}
	for i := range digestBlocks {
		b := &digestBlocks[i]
		if b.table == nil || !b.tablePresent(t) {
			continue
		}
		if b.tag != "" {
			e.str(b.tag)
		}
		b.table(e, t)
	}
	return e.sum()
}

// summer hashes hosts and backends one at a time with one encoder.
type summer struct{ e *encoder }

func (s *summer) enc() *encoder {
	if s.e == nil {
		s.e = newEncoder()
	} else {
		s.e.h.Reset()
		s.e.buf, s.e.flushed = s.e.buf[:0], false
	}
	return s.e
}

// host is the sum of vh's encoding: for each block in digest order that
// the host has (the routing block always), its tag, the host's entry and
// its routes'. A host's encoding depends on the host alone.
func (s *summer) host(vh *VirtualHost) sum {
	e := s.enc()
	for i := range digestBlocks {
		b := &digestBlocks[i]
		if len(b.host) == 0 && len(b.route) == 0 || b.tag != "" && !b.hostPresent(vh) {
			continue
		}
		if b.tag != "" {
			e.str(b.tag)
		}
		for _, f := range b.host {
			f(e, vh)
		}
		if len(b.route) > 0 {
			for _, r := range vh.Routes {
				for _, f := range b.route {
					f(e, r)
				}
			}
		}
	}
	return e.sumTo()
}

// backend is the sum of be's encoding, as host's for a host.
func (s *summer) backend(be *Backend) sum {
	e := s.enc()
	for i := range digestBlocks {
		b := &digestBlocks[i]
		if len(b.backend) == 0 || b.tag != "" && !b.backendPresent(be) {
			continue
		}
		if b.tag != "" {
			e.str(b.tag)
		}
		for _, f := range b.backend {
			f(e, be)
		}
	}
	return e.sumTo()
}

// encoder writes length-prefixed fields into a hash through a buffer.
type encoder struct {
	h   hash.Hash
	buf []byte
	// flushed: some of the encoding went to h.
	flushed bool
	// mem backs buf, allocated with the encoder: the sections' encode
	// functions take it by pointer, so it lives on the heap anyway. Less
	// than 64 KiB, so that with the encoder it fits a 64 KiB allocation.
	mem [60 << 10]byte
}

func (e *encoder) num(n int) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(n))
	e.flushIfFull()
}

func (e *encoder) flag(b bool) {
	v := byte(0)
	if b {
		v = 1
	}
	e.buf = append(e.buf, v)
	e.flushIfFull()
}

// strs writes a list of strings: its length, then each.
func (e *encoder) strs(l []string) {
	e.num(len(l))
	for _, s := range l {
		e.str(s)
	}
}

func (e *encoder) str(s string) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
	e.flushIfFull()
}

func (e *encoder) raw(p []byte) {
	e.buf = append(e.buf, p...)
	e.flushIfFull()
}

func (e *encoder) bytes(p []byte) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(len(p)))
	e.buf = append(e.buf, p...)
	e.flushIfFull()
}

// backendRef encodes a reference by ID; nil (404) differs from every ID.
func (e *encoder) backendRef(be *Backend) {
	if be == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.str(be.ID)
}

func (e *encoder) flushIfFull() {
	if len(e.buf) >= 32<<10 {
		e.h.Write(e.buf)
		e.buf = e.buf[:0]
		e.flushed = true
	}
}

func (e *encoder) sum() string {
	e.h.Write(e.buf)
	return hex.EncodeToString(e.h.Sum(nil))
}

// sumTo is the sum of what was encoded since the encoder was reset: in
// one call, without allocating, when it all fits the buffer.
func (e *encoder) sumTo() sum {
	if !e.flushed {
		return sha256.Sum256(e.buf)
	}
	e.h.Write(e.buf)
	return sum(e.h.Sum(nil))
}

func newEncoder() *encoder {
	e := &encoder{h: sha256.New()}
	e.buf = e.mem[:0]
	return e
}
