package h1

import (
	"strconv"
	"strings"
	"testing"
)

// The field checks the server applies to a request head, as net/http's
// server applies them (its httpguts rules), so a request refused by one
// is refused by the other.
func TestFieldRules(t *testing.T) {
	for _, tc := range []struct {
		host string
		ok   bool
	}{
		{"example.com", true}, {"example.com:8080", true}, {"[::1]:80", true},
		{"[fe80::1%25eth0]", true}, {"a_b~c", true}, {"", true},
		{"exa mple.com", false}, {"example.com/", false}, {"ex\x00", false},
		{"ex\"a", false}, {"é.example", false}, {"a@b", false},
	} {
		if got := validHost(tc.host); got != tc.ok {
			t.Errorf("validHost(%q) = %v, want %v", tc.host, got, tc.ok)
		}
	}
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"X-Foo", true}, {"x_foo", true}, {"a!#$%&'*+-.^_`|~9", true},
		{"", false}, {"X Foo", false}, {"X:Foo", false}, {"Ä", false}, {"X\tF", false},
	} {
		if got := isToken(tc.name); got != tc.ok {
			t.Errorf("isToken(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{"plain", true}, {"a\tb c", true}, {"caf\xc3\xa9", true}, {"\x80\xff", true}, {"", true},
		{"a\rb", false}, {"a\nb", false}, {"a\x00", false}, {"a\x7f", false}, {"\x1f", false},
	} {
		if got := validValue(tc.value); got != tc.ok {
			t.Errorf("validValue(%q) = %v, want %v", tc.value, got, tc.ok)
		}
	}
	for _, tc := range []struct {
		values []string
		token  string
		ok     bool
	}{
		{[]string{"close"}, "close", true},
		{[]string{"Keep-Alive"}, "keep-alive", true},
		{[]string{"foo, \tCLOSE "}, "close", true},
		{[]string{"foo", "bar,close"}, "close", true},
		{[]string{"closed"}, "close", false},
		{[]string{"\u212aeep-alive"}, "keep-alive", false}, // Kelvin sign: no Unicode folding
		{[]string{"clo\u017fe"}, "close", false},           // long s
		{nil, "close", false},
	} {
		if got := ListsToken(tc.values, tc.token); got != tc.ok {
			t.Errorf("ListsToken(%q, %q) = %v, want %v", tc.values, tc.token, got, tc.ok)
		}
	}
}

// validValue reads eight bytes at a time: every byte value at every place
// of values 1 to 20 bytes long, around other bytes that pass and that do
// not (a tab, DEL, 0x80, 0xff), gives what a byte-by-byte check gives.
func TestValidValueWords(t *testing.T) {
	byBytes := func(v []byte) bool {
		for _, c := range v {
			if c < ' ' && c != '\t' || c == 0x7f {
				return false
			}
		}
		return true
	}
	for _, fill := range []byte{'a', '\t', 0x7e, 0x80, 0xff, 0x7f, 0x1f} {
		for n := 1; n <= 20; n++ {
			v := make([]byte, n)
			for i := range v {
				v[i] = fill
			}
			for at := 0; at < n; at++ {
				for c := 0; c < 256; c++ {
					v[at] = byte(c)
					if got, want := validValue(v), byBytes(v); got != want {
						t.Fatalf("validValue(%q) = %v, want %v", v, got, want)
					}
					if got, want := validValue(string(v)), byBytes(v); got != want {
						t.Fatalf("validValue(string %q) = %v, want %v", v, got, want)
					}
				}
				v[at] = fill
			}
		}
	}
}

// parseContentLength takes what strconv.ParseUint takes in 63 bits, from
// digits only, around the bound.
func TestParseContentLength(t *testing.T) {
	for _, cl := range []string{
		"0", "100", "007", " 42 ", "9223372036854775807", "9223372036854775808",
		"9223372036854775810", "18446744073709551615", "18446744073709551616",
		"99999999999999999999", "922337203685477580", "9223372036854775799",
		"", " ", "+1", "-1", "1_0", "0x10", "1 2", "12a",
	} {
		n, err := parseContentLength(cl)
		want, werr := strconv.ParseUint(strings.TrimSpace(cl), 10, 63)
		digits := strings.TrimSpace(cl) != "" && strings.Trim(strings.TrimSpace(cl), "0123456789") == ""
		if !digits {
			werr = strconv.ErrSyntax
		}
		if (err != nil) != (werr != nil) || err == nil && uint64(n) != want {
			t.Errorf("parseContentLength(%q) = %d, %v; want %d, %v", cl, n, err, want, werr)
		}
	}
}

// parseDecimal is strconv.ParseInt(s, 10, 64) for any s.
func TestParseDecimal(t *testing.T) {
	for _, s := range []string{
		"", "0", "100", "007", "+100", "-1", " 1", "1 ", "1_0", "0x1", "12a",
		"999999999999999999", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "99999999999999999999", "٣",
	} {
		n, err := parseDecimal(s)
		want, werr := strconv.ParseInt(s, 10, 64)
		if n != want || (err == nil) != (werr == nil) {
			t.Errorf("parseDecimal(%q) = %d, %v; want %d, %v", s, n, err, want, werr)
		}
	}
}
