package h1

import "testing"

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
