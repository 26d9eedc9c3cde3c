package h2

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type sinkFunc func(field) error

func (s sinkFunc) field(f field) error { return s(f) }

func decodeAll(d *decoder, b []byte) ([]field, error) {
	var out []field
	err := d.decode(b, sinkFunc(func(f field) error { out = append(out, f); return nil }))
	return out, err
}

// TestHPACKRFCExamples decodes RFC 7541 Appendix C's header blocks in
// sequence, each example on its own decoder, checking the fields and the
// dynamic table's size after each block.
func TestHPACKRFCExamples(t *testing.T) {
	date1, date2 := "Mon, 21 Oct 2013 20:13:21 GMT", "Mon, 21 Oct 2013 20:13:22 GMT"
	cookie := "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
	req1 := []field{{":method", "GET"}, {":scheme", "http"}, {":path", "/"}, {":authority", "www.example.com"}}
	req2 := append(append([]field(nil), req1...), field{"cache-control", "no-cache"})
	req3 := []field{{":method", "GET"}, {":scheme", "https"}, {":path", "/index.html"}, {":authority", "www.example.com"}, {"custom-key", "custom-value"}}
	res1 := []field{{":status", "302"}, {"cache-control", "private"}, {"date", date1}, {"location", "https://www.example.com"}}
	res2 := []field{{":status", "307"}, {"cache-control", "private"}, {"date", date1}, {"location", "https://www.example.com"}}
	res3 := []field{{":status", "200"}, {"cache-control", "private"}, {"date", date2}, {"location", "https://www.example.com"}, {"content-encoding", "gzip"}, {"set-cookie", cookie}}
	type block struct {
		hex  string
		want []field
		size uint32
	}
	for _, ex := range []struct {
		name   string
		table  uint32
		blocks []block
	}{
		{"C.3", 4096, []block{
			{"8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", req1, 57},
			{"8286 84be 5808 6e6f 2d63 6163 6865", req2, 110},
			{"8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65", req3, 164},
		}},
		{"C.4", 4096, []block{
			{"8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", req1, 57},
			{"8286 84be 5886 a8eb 1064 9cbf", req2, 110},
			{"8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", req3, 164},
		}},
		{"C.5", 256, []block{
			{"4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", res1, 222},
			{"4803 3330 37c1 c0bf", res2, 222},
			{"88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31", res3, 215},
		}},
		{"C.6", 256, []block{
			{"4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3", res1, 222},
			{"4883 640e ffc1 c0bf", res2, 222},
			{"88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07", res3, 215},
		}},
	} {
		d := newDecoder(ex.table, 1<<16)
		for i, b := range ex.blocks {
			got, err := decodeAll(d, unhex(t, b.hex))
			if err != nil {
				t.Fatalf("%s.%d: %v", ex.name, i+1, err)
			}
			if !equalFields(got, b.want) {
				t.Errorf("%s.%d: got %q, want %q", ex.name, i+1, got, b.want)
			}
			if d.table.size != b.size {
				t.Errorf("%s.%d: table size %d, want %d", ex.name, i+1, d.table.size, b.size)
			}
		}
	}
}

func equalFields(a, b []field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHPACKIntegers is RFC 7541 C.1 and the bounds of readInt.
func TestHPACKIntegers(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		n    uint8
		want string
	}{{10, 5, "0a"}, {1337, 5, "1f9a0a"}, {42, 8, "2a"}, {31, 5, "1f00"}, {1<<32 - 1, 7, "7f80ffffff0f"}} {
		got := appendInt(nil, 0, c.n, c.v)
		if hex.EncodeToString(got) != c.want {
			t.Errorf("appendInt(%d, %d) = %x, want %s", c.v, c.n, got, c.want)
		}
		v, rest, err := readInt(got, c.n)
		if err != nil || v != c.v || len(rest) != 0 {
			t.Errorf("readInt(%x) = %d, %x, %v", got, v, rest, err)
		}
	}
	for _, bad := range []string{"", "1f", "1fff", "1fffffffffffff00", "7fffffffff1f"} {
		if _, _, err := readInt(unhex(t, bad), 5); err == nil {
			t.Errorf("readInt(%s) took it", bad)
		}
	}
}

// TestHuffman encodes RFC 7541 C.4's and C.6's strings and decodes them
// back, every byte value too, and refuses bad padding and EOS.
func TestHuffman(t *testing.T) {
	for s, want := range map[string]string{
		"www.example.com": "f1e3c2e5f23a6ba0ab90f4ff",
		"no-cache":        "a8eb10649cbf",
		"custom-key":      "25a849e95ba97d7f",
		"custom-value":    "25a849e95bb8e8b4bf",
		"302":             "6402",
		"private":         "aec3771a4b",
	} {
		got := appendHuff(nil, s)
		if hex.EncodeToString(got) != want {
			t.Errorf("appendHuff(%q) = %x, want %s", s, got, want)
		}
		if huffLen(s) != len(got) {
			t.Errorf("huffLen(%q) = %d, want %d", s, huffLen(s), len(got))
		}
	}
	all := make([]byte, 0, 512)
	for i := 0; i < 256; i++ {
		all = append(all, byte(i), byte(255-i))
	}
	for n := 0; n <= len(all); n += 7 {
		enc := appendHuff(nil, all[:n])
		dec, err := huffDecode(nil, enc, len(all))
		if err != nil || !bytes.Equal(dec, all[:n]) {
			t.Fatalf("round trip of %d bytes: %v", n, err)
		}
	}
	for _, bad := range []string{
		"ff",       // 8 bits of padding
		"fffffffc", // EOS within the string
		"00",       // '0' and then padding of zeros
	} {
		if _, err := huffDecode(nil, unhex(t, bad), 100); err == nil {
			t.Errorf("huffDecode(%s) took it", bad)
		}
	}
	if _, err := huffDecode(nil, appendHuff(nil, "abcdef"), 5); err != errFieldTooLong {
		t.Errorf("bound: %v", err)
	}
}

// TestHPACKTableBounds checks size updates and eviction.
func TestHPACKTableBounds(t *testing.T) {
	d := newDecoder(4096, 1<<16)
	// A size update above the advertised size.
	if _, err := decodeAll(d, appendInt(nil, 0x20, 5, 4097)); err == nil {
		t.Error("a size update over the limit was taken")
	}
	d = newDecoder(4096, 1<<16)
	// A size update after a field.
	if _, err := decodeAll(d, append([]byte{0x82}, appendInt(nil, 0x20, 5, 0)...)); err == nil {
		t.Error("a size update after a field was taken")
	}
	d = newDecoder(4096, 1<<16)
	blk := []byte{0x40}
	blk = appendString(blk, "x-a")
	blk = appendString(blk, strings.Repeat("v", 100))
	for i := 0; i < 100; i++ {
		if _, err := decodeAll(d, blk); err != nil {
			t.Fatal(err)
		}
	}
	if d.table.size > 4096 || d.table.n != 4096/135 {
		t.Errorf("table %d bytes in %d entries", d.table.size, d.table.n)
	}
	// Shrinking to 0 empties it, and an index into it fails.
	if _, err := decodeAll(d, appendInt(nil, 0x20, 5, 0)); err != nil || d.table.n != 0 {
		t.Fatalf("%v, %d entries", err, d.table.n)
	}
	if _, err := decodeAll(d, []byte{0xbe}); err == nil {
		t.Error("an index past the tables was taken")
	}
	// A string past the bound.
	d = newDecoder(4096, 10)
	long := appendString([]byte{0x00, 0x01, 'a'}, strings.Repeat("z", 11))
	if _, err := decodeAll(d, long); err != errFieldTooLong {
		t.Errorf("long string: %v", err)
	}
}

// TestHPACKEncoderRoundTrip decodes what the encoder writes.
func TestHPACKEncoderRoundTrip(t *testing.T) {
	var b []byte
	b = appendStatus(b, 200)
	b = appendStatus(b, 431)
	b = appendField(b, "content-type", "text/plain; charset=utf-8")
	b = appendField(b, "x-custom", "Z\x7f\xff")
	b = appendField(b, lowerName(make([]byte, 0, 64), "X-Request-Id"), "abc")
	got, err := decodeAll(newDecoder(4096, 1<<10), b)
	if err != nil {
		t.Fatal(err)
	}
	want := []field{{":status", "200"}, {":status", "431"}, {"content-type", "text/plain; charset=utf-8"}, {"x-custom", "Z\x7f\xff"}, {"x-request-id", "abc"}}
	if !equalFields(got, want) {
		t.Errorf("got %q", got)
	}
}

// FuzzHPACKDecode feeds arbitrary blocks to the decoder: it must not
// panic, must respect its bounds, and what it decodes must survive being
// encoded and decoded again.
func FuzzHPACKDecode(f *testing.F) {
	f.Add(unhex(f, "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff"))
	f.Add(unhex(f, "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3"))
	f.Add(unhex(f, "3fe11f 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf be"))
	f.Add([]byte{0x20, 0x82, 0x7f, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := newDecoder(256, 64)
		var out []field
		_ = d.decode(b, sinkFunc(func(fl field) error {
			if len(fl.name) > 64 || len(fl.value) > 64 {
				t.Fatalf("field over the bound: %d, %d", len(fl.name), len(fl.value))
			}
			out = append(out, fl)
			return nil
		}))
		if d.table.size > 256 {
			t.Fatalf("table over its size: %d", d.table.size)
		}
		var enc []byte
		for _, fl := range out {
			enc = appendField(enc, fl.name, fl.value)
		}
		again, err := decodeAll(newDecoder(256, 64), enc)
		if err != nil || !equalFields(again, out) {
			t.Fatalf("re-encoded %q: %q, %v", out, again, err)
		}
	})
}
