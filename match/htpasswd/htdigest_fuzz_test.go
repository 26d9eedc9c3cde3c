package htpasswd

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseHtdigest: any file parses without panicking; every entry it
// keeps came from a line of the file, with 32 lower-case hex digits of
// HA1 and no '#' in its user or realm; every problem names its line.
func FuzzParseHtdigest(f *testing.F) {
	f.Add([]byte("alice:private:d26b55c491fd648f2db95a6b937f019e\r\n# x\nbob:p:" + strings.Repeat("A", 32) + "\n"))
	f.Add([]byte("a:b\n::\n#:r:" + strings.Repeat("0", 32) + "\nu:r:" + strings.Repeat("0", 33)))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, problems := ParseHtdigest(data)
		for k, ha1 := range d.ha1 {
			user, realm := k.user, k.realm
			if user == "" || realm == "" || strings.ContainsAny(user+realm, "#\n") || !lowerHex32([]byte(ha1)) {
				t.Fatalf("kept %q/%q with HA1 %q", user, realm, ha1)
			}
			if !bytes.Contains(data, []byte(user+":"+realm+":"+ha1)) {
				t.Fatalf("%q/%q: entry not in the file", user, realm)
			}
		}
		for _, p := range problems {
			if p.Line < 1 {
				t.Fatalf("problem without a line: %+v", p)
			}
		}
	})
}
