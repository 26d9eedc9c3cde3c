package compile

import (
	"net/netip"
	"testing"
)

// FuzzNotPod: an endpoint address is read from a hand-written
// EndpointSlice. Every spelling of a refused IPv4 address that a
// transition mechanism would deliver to it is refused too; the forms are
// laid out here from their RFCs, apart from embeddedIPv4. Other raw
// addresses must simply not panic.
func FuzzNotPod(f *testing.F) {
	for _, s := range []string{"fd00:ec2::254", "100.100.100.200", "64:ff9b::a9fe:a9fe", "::a9fe:a9fe",
		"2002:a9fe:a9fe::1", "::ffff:a9fe:a9fe", "64:ff9b:1::a9fe:a9fe", "fd20:ce::254", "10.0.0.1", "fd00::1"} {
		a := netip.MustParseAddr(s).As16()
		f.Add(a[:], byte(0))
	}
	for form := range byte(10) {
		f.Add([]byte{169, 254, 169, 254, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, form)
		f.Add([]byte{100, 100, 100, 200}, form)
	}
	b := &builder{}
	f.Fuzz(func(t *testing.T, data []byte, form byte) {
		if len(data) < 4 {
			return
		}
		var raw [16]byte
		copy(raw[:], data)
		b.notPod(netip.AddrFrom16(raw)) // any address: no panic
		v4 := netip.AddrFrom4([4]byte(data[:4]))
		if v4.IsUnspecified() || notPodAddr(v4, false) == "" {
			return
		}
		var fill [16]byte
		copy(fill[:], data[4:])
		a := [16]byte(fill)
		p := v4.As4()
		switch form % 8 {
		case 0: // IPv4-mapped ::ffff:0:0/96
			a = [16]byte{10: 0xff, 11: 0xff}
			copy(a[12:], p[:])
		case 1: // IPv4-compatible ::/96
			a = [16]byte{}
			copy(a[12:], p[:])
		case 2: // NAT64 well-known 64:ff9b::/96
			a = [16]byte{1: 0x64, 2: 0xff, 3: 0x9b}
			copy(a[12:], p[:])
		case 3: // local-use NAT64 64:ff9b:1::/48 at /48: bits 0-15, u octet, bits 16-31
			copy(a[:6], []byte{0, 0x64, 0xff, 0x9b, 0, 1})
			a[6], a[7], a[8], a[9], a[10] = p[0], p[1], 0, p[2], p[3]
		case 4: // at /56
			copy(a[:7], []byte{0, 0x64, 0xff, 0x9b, 0, 1, fill[6]})
			a[7], a[8], a[9], a[10], a[11] = p[0], 0, p[1], p[2], p[3]
		case 5: // at /64
			copy(a[:8], []byte{0, 0x64, 0xff, 0x9b, 0, 1, fill[6], fill[7]})
			a[8] = 0
			copy(a[9:13], p[:])
		case 6: // 6to4 2002::/16
			a[0], a[1] = 0x20, 0x02
			copy(a[2:6], p[:])
		case 7: // Teredo 2001::/32, client bits inverted
			a[0], a[1], a[2], a[3] = 0x20, 0x01, 0, 0
			for i := range 4 {
				a[12+i] = ^p[i]
			}
		}
		if addr := netip.AddrFrom16(a); b.notPod(addr) == "" {
			t.Fatalf("%s (form %d of %s, which is %s) is dialled", addr, form%8, v4, notPodAddr(v4, false))
		}
	})
}
