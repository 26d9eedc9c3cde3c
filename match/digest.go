package match

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// digestVersion names the encoding, so a change to it changes every digest.
const digestVersion = "ramjet table digest v1"

// digest is the hex SHA-256 of a canonical encoding of everything in t that
// affects a response (SPEC §15), after the inputs that produced it: each
// section's parts in list order (see digestPart). It walks the table in its
// sorted order (hosts by name, routes in precedence order, backends by ID,
// certificates by Secret) and never iterates a map, so it depends neither
// on input order nor on time. Every string and list is length prefixed, so
// no two tables share an encoding. Sources and declaration order do not
// change a response and are left out: renaming an Ingress or adding an
// unrelated older one does not republish a table.
func digest(t *Table, inputs []byte) string {
	e := &encoder{h: sha256.New()}
	e.buf = e.mem[:0]
	e.str(digestVersion)
	e.raw(inputs)
	present := digestPresence.present(t)
	for i := range digestBlocks {
		b := &digestBlocks[i]
		if present&(1<<i) == 0 {
			continue
		}
		if b.tag != "" {
			e.str(b.tag)
		}
		b.encode(e, t)
	}
	return e.sum()
}

// encoder writes length-prefixed fields into a hash through a buffer.
type encoder struct {
	h   hash.Hash
	buf []byte
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
	}
}

func (e *encoder) sum() string {
	e.h.Write(e.buf)
	return hex.EncodeToString(e.h.Sum(nil))
}
