package h2

import "errors"

// HPACK (RFC 7541): the decoder reads the client's header blocks with the
// static and dynamic tables; the encoder writes the server's fields as
// literals that are never indexed (RFC 7541 §6.2.2), so that the encoder
// keeps no table, and a client's SETTINGS_HEADER_TABLE_SIZE matters to it
// only when lowered below the table size in use, which the next block
// must then acknowledge with a dynamic table size update (§4.2,
// conn.appendHeaders).

// errCompression is a header block that cannot be decoded: a connection
// error of type COMPRESSION_ERROR (RFC 9113 §4.3).
var errCompression = errors.New("h2: malformed header block")

// errFieldTooLong is a string literal past the decoder's bound.
var errFieldTooLong = errors.New("h2: header field too long")

type field struct{ name, value string }

// size is the field's size as the dynamic table counts it (§4.1).
func (f field) size() uint32 { return uint32(len(f.name) + len(f.value) + 32) }

// staticTable is RFC 7541 Appendix A; index i+1 is staticTable[i].
var staticTable = [61]field{
	{":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"},
	{":path", "/index.html"}, {":scheme", "http"}, {":scheme", "https"}, {":status", "200"},
	{":status", "204"}, {":status", "206"}, {":status", "304"}, {":status", "400"},
	{":status", "404"}, {":status", "500"}, {"accept-charset", ""}, {"accept-encoding", "gzip, deflate"},
	{"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""}, {"access-control-allow-origin", ""},
	{"age", ""}, {"allow", ""}, {"authorization", ""}, {"cache-control", ""},
	{"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""}, {"content-length", ""},
	{"content-location", ""}, {"content-range", ""}, {"content-type", ""}, {"cookie", ""},
	{"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""},
	{"from", ""}, {"host", ""}, {"if-match", ""}, {"if-modified-since", ""},
	{"if-none-match", ""}, {"if-range", ""}, {"if-unmodified-since", ""}, {"last-modified", ""},
	{"link", ""}, {"location", ""}, {"max-forwards", ""}, {"proxy-authenticate", ""},
	{"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
	{"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
	{"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""},
	{"www-authenticate", ""},
}

// staticName is the first static index of each name, for the encoder.
var staticName = func() map[string]uint8 {
	m := make(map[string]uint8, len(staticTable))
	for i := len(staticTable) - 1; i >= 0; i-- {
		m[staticTable[i].name] = uint8(i + 1)
	}
	return m
}()

// dynTable is the decoder's dynamic table (§2.3.2): a ring of entries,
// the newest at the end, evicted from the oldest as size passes max.
type dynTable struct {
	ring       []field
	start, n   int
	size, max  uint32
	maxAllowed uint32 // SETTINGS_HEADER_TABLE_SIZE as advertised
}

// get returns dynamic entry i, 1 the newest.
func (t *dynTable) get(i uint64) (field, bool) {
	if i == 0 || i > uint64(t.n) {
		return field{}, false
	}
	return t.ring[(t.start+t.n-int(i))%len(t.ring)], true
}

func (t *dynTable) evictTo(max uint32) {
	for t.size > max && t.n > 0 {
		f := &t.ring[t.start]
		t.size -= f.size()
		*f = field{}
		t.start = (t.start + 1) % len(t.ring)
		t.n--
	}
}

// add inserts f (§4.4): an entry larger than the table empties it.
func (t *dynTable) add(f field) {
	s := f.size()
	if s > t.max {
		t.evictTo(0)
		return
	}
	t.evictTo(t.max - s)
	if t.n == len(t.ring) {
		ring := make([]field, max(2*len(t.ring), 16))
		for i := 0; i < t.n; i++ {
			ring[i] = t.ring[(t.start+i)%len(t.ring)]
		}
		t.ring, t.start = ring, 0
	}
	t.ring[(t.start+t.n)%len(t.ring)] = f
	t.n++
	t.size += s
}

func (t *dynTable) setMax(m uint32) {
	t.max = m
	t.evictTo(m)
}

// decoder decodes header blocks. maxString bounds one string literal
// (decoded), so that no field can make it allocate more than that.
type decoder struct {
	table     dynTable
	maxString int
	buf       []byte // Huffman scratch
}

func newDecoder(tableSize uint32, maxString int) *decoder {
	return &decoder{table: dynTable{max: tableSize, maxAllowed: tableSize}, maxString: maxString}
}

// fieldSink takes decoded fields in order.
type fieldSink interface{ field(f field) error }

// decode decodes a whole header block, passing each field to sink in
// order. An error from sink stops it and is returned as it is; any other
// error is a COMPRESSION_ERROR.
func (d *decoder) decode(b []byte, sink fieldSink) error {
	first := true
	for len(b) > 0 {
		c := b[0]
		switch {
		case c&0x80 != 0: // indexed field (§6.1)
			i, rest, err := readInt(b, 7)
			if err != nil {
				return err
			}
			b = rest
			f, ok := d.at(i)
			if !ok {
				return errCompression
			}
			if err := sink.field(f); err != nil {
				return err
			}
		case c&0xe0 == 0x20: // dynamic table size update (§6.3)
			if !first {
				return errCompression
			}
			m, rest, err := readInt(b, 5)
			if err != nil {
				return err
			}
			if m > uint64(d.table.maxAllowed) {
				return errCompression
			}
			d.table.setMax(uint32(m))
			b = rest
			continue
		default: // literals (§6.2)
			prefix, index := uint8(4), false
			if c&0xc0 == 0x40 {
				prefix, index = 6, true
			}
			i, rest, err := readInt(b, prefix)
			if err != nil {
				return err
			}
			b = rest
			var f field
			if i > 0 {
				nf, ok := d.at(i)
				if !ok {
					return errCompression
				}
				f.name = nf.name
			} else {
				if f.name, b, err = d.readString(b); err != nil {
					return err
				}
			}
			if f.value, b, err = d.readString(b); err != nil {
				return err
			}
			if index {
				d.table.add(f)
			}
			if err := sink.field(f); err != nil {
				return err
			}
		}
		first = false
	}
	return nil
}

// at is field i of the static then dynamic tables (§2.3.3).
func (d *decoder) at(i uint64) (field, bool) {
	switch {
	case i == 0:
		return field{}, false
	case i <= uint64(len(staticTable)):
		return staticTable[i-1], true
	}
	return d.table.get(i - uint64(len(staticTable)))
}

// readInt reads an integer with an n-bit prefix (§5.1), at most 2^32-1.
func readInt(b []byte, n uint8) (uint64, []byte, error) {
	if len(b) == 0 {
		return 0, b, errCompression
	}
	mask := uint64(1)<<n - 1
	v := uint64(b[0]) & mask
	b = b[1:]
	if v < mask {
		return v, b, nil
	}
	for shift := uint(0); ; shift += 7 {
		if len(b) == 0 || shift > 28 {
			return 0, b, errCompression
		}
		c := b[0]
		b = b[1:]
		v += uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			break
		}
	}
	if v > 1<<32-1 {
		return 0, b, errCompression
	}
	return v, b, nil
}

// readString reads a string literal (§5.2).
func (d *decoder) readString(b []byte) (string, []byte, error) {
	if len(b) == 0 {
		return "", b, errCompression
	}
	huff := b[0]&0x80 != 0
	n, b, err := readInt(b, 7)
	if err != nil {
		return "", b, err
	}
	if n > uint64(len(b)) {
		return "", b, errCompression
	}
	raw := b[:n]
	b = b[n:]
	if !huff {
		if len(raw) > d.maxString {
			return "", b, errFieldTooLong
		}
		return string(raw), b, nil
	}
	d.buf, err = huffDecode(d.buf[:0], raw, d.maxString)
	if err != nil {
		return "", b, err
	}
	return string(d.buf), b, nil
}

// huffDecoding is the Huffman code as a tree of 256-way nodes, each level
// consuming eight bits; built once from huffCode.
type huffNode struct {
	next *[256]huffNode // nil: a leaf
	sym  uint8
	bits uint8 // a leaf's code bits within its level
}

var huffRoot = func() *[256]huffNode {
	root := new([256]huffNode)
	for sym := 0; sym < 256; sym++ {
		code, bits := huffCode[sym].code, huffCode[sym].bits
		level := root
		for bits > 8 {
			bits -= 8
			i := uint8(code >> bits)
			if level[i].next == nil {
				level[i].next = new([256]huffNode)
			}
			level = level[i].next
		}
		// A leaf's code fills the top bits of every index it prefixes.
		shift := 8 - bits
		start := int(code<<shift) & 0xff
		for j := start; j < start+1<<shift; j++ {
			level[j] = huffNode{sym: uint8(sym), bits: bits}
		}
	}
	return root
}()

// huffDecode appends the decoding of src (§5.2) to dst, at most max bytes.
// Padding longer than 7 bits, padding that is not EOS's prefix, and EOS
// itself are errors.
func huffDecode(dst, src []byte, max int) ([]byte, error) {
	var cur uint64 // bits not yet decoded, the last nbits of it
	var nbits uint8
	level := huffRoot
	var consumed uint8 // bits taken by the levels passed in this code
	for len(src) > 0 || nbits > 0 {
		for nbits < 8 && len(src) > 0 {
			cur = cur<<8 | uint64(src[0])
			src = src[1:]
			nbits += 8
		}
		if nbits < 8 {
			// The last bits: a code ending within them, or padding.
			idx := uint8(cur << (8 - nbits))
			n := &level[idx]
			if n.next != nil || n.bits == 0 || n.bits > nbits {
				break
			}
			if len(dst) >= max {
				return dst, errFieldTooLong
			}
			dst = append(dst, n.sym)
			nbits -= n.bits
			level, consumed = huffRoot, 0
			continue
		}
		idx := uint8(cur >> (nbits - 8))
		n := &level[idx]
		if n.next == nil && n.bits == 0 {
			return dst, errCompression // EOS
		}
		if n.next != nil {
			level = n.next
			nbits -= 8
			consumed += 8
			continue
		}
		if len(dst) >= max {
			return dst, errFieldTooLong
		}
		dst = append(dst, n.sym)
		nbits -= n.bits
		level, consumed = huffRoot, 0
	}
	// What is left is padding: fewer than 8 bits in all (counting a code
	// begun on an earlier level) and all ones.
	if consumed > 0 || nbits > 7 {
		return dst, errCompression
	}
	if mask := uint64(1)<<nbits - 1; cur&mask != mask {
		return dst, errCompression
	}
	return dst, nil
}

// huffLen is the length of s Huffman-coded, in bytes.
func huffLen[S ~string | ~[]byte](s S) int {
	var bits uint64
	for i := 0; i < len(s); i++ {
		bits += uint64(huffCode[s[i]].bits)
	}
	return int((bits + 7) / 8)
}

// appendHuff appends s Huffman-coded, padded with ones (§5.2).
func appendHuff[S ~string | ~[]byte](dst []byte, s S) []byte {
	var cur uint64
	var n uint8
	for i := 0; i < len(s); i++ {
		c := huffCode[s[i]]
		cur = cur<<c.bits | uint64(c.code)
		n += c.bits
		for n >= 8 {
			n -= 8
			dst = append(dst, byte(cur>>n))
		}
	}
	if n > 0 {
		dst = append(dst, byte(cur<<(8-n)|0xff>>n))
	}
	return dst
}

// appendInt appends v with an n-bit prefix; first holds the bits above it.
func appendInt(dst []byte, first byte, n uint8, v uint64) []byte {
	mask := uint64(1)<<n - 1
	if v < mask {
		return append(dst, first|byte(v))
	}
	dst = append(dst, first|byte(mask))
	v -= mask
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// appendString appends a string literal, Huffman-coded when shorter.
func appendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	if h := huffLen(s); h < len(s) {
		dst = appendInt(dst, 0x80, 7, uint64(h))
		return appendHuff(dst, s)
	}
	dst = appendInt(dst, 0, 7, uint64(len(s)))
	return append(dst, s...)
}

// appendField appends name: value as a literal never indexed by this
// encoder (§6.2.2, "without indexing"), naming a static entry when one
// has the name. name must be lower case.
func appendField[N, V ~string | ~[]byte](dst []byte, name N, value V) []byte {
	if i, ok := staticName[string(name)]; ok {
		dst = appendInt(dst, 0, 4, uint64(i))
	} else {
		dst = append(dst, 0)
		dst = appendString(dst, name)
	}
	return appendString(dst, value)
}

// appendStatus appends :status, indexed when the static table has it.
func appendStatus(dst []byte, code int) []byte {
	switch code {
	case 200:
		return append(dst, 0x88)
	case 204:
		return append(dst, 0x89)
	case 206:
		return append(dst, 0x8a)
	case 304:
		return append(dst, 0x8b)
	case 400:
		return append(dst, 0x8c)
	case 404:
		return append(dst, 0x8d)
	case 500:
		return append(dst, 0x8e)
	}
	dst = append(dst, 0x08, 3)
	return append(dst, byte('0'+code/100%10), byte('0'+code/10%10), byte('0'+code%10))
}

// lowerName is a header name in lower case, in buf when it fits.
func lowerName(buf []byte, name string) []byte {
	b := buf[:0]
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}
