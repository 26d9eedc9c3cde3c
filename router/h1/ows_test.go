package h1

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzTrimOWS holds trimOWS and trimLeftOWS to what they replace:
// strings.Trim and strings.TrimLeft with the cutset " \t", on strings and
// on byte slices.
func FuzzTrimOWS(f *testing.F) {
	for _, s := range []string{"", " ", "\t", "a", " a ", "\t a\t ", "a b", " \t\t ", "\r a \n", "\xff \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := trimOWS(s), strings.Trim(s, " \t"); got != want {
			t.Errorf("trimOWS(%q) = %q, want %q", s, got, want)
		}
		if got, want := trimLeftOWS(s), strings.TrimLeft(s, " \t"); got != want {
			t.Errorf("trimLeftOWS(%q) = %q, want %q", s, got, want)
		}
		if got, want := trimOWS([]byte(s)), bytes.Trim([]byte(s), " \t"); !bytes.Equal(got, want) {
			t.Errorf("trimOWS([]byte(%q)) = %q, want %q", s, got, want)
		}
		if got, want := cleanValue(s), strings.Trim(strings.NewReplacer("\n", " ", "\r", " ").Replace(s), " \t"); got != want {
			t.Errorf("cleanValue(%q) = %q, want %q", s, got, want)
		}
	})
}
