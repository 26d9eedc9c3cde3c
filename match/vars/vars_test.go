package vars

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	script := &Place{Name: "a test", Vars: Of(Host, Capture, HTTP, Args)}
	tm, err := script.Parse("/$1x/${host}$12?$args&$http_x_y")
	if err != nil {
		t.Fatal(err)
	}
	want := Template{{Lit: "/"}, {Ref: Ref{Var: Capture, N: 1}}, {Lit: "x/"}, {Ref: Ref{Var: Host}},
		{Ref: Ref{Var: Capture, N: 1}}, {Lit: "2?"}, {Ref: Ref{Var: Args}}, {Lit: "&"}, {Ref: Ref{Var: HTTP, Name: "x_y"}}}
	if len(tm) != len(want) {
		t.Fatalf("got %+v", tm)
	}
	for i := range want {
		if tm[i] != want[i] {
			t.Fatalf("part %d: got %+v, want %+v", i, tm[i], want[i])
		}
	}
	for in, msg := range map[string]string{
		"$cookie_a": "$cookie_a is not a variable ramjet expands in a test (it expands $host, $args, $http_<name>, $1 to $9)",
		"a$":        `a "$" names no variable (a test expands $host, $args, $http_<name>, $1 to $9)`,
		"${host":    `"${" is not closed`,
	} {
		var e *Error
		if _, err := script.Parse(in); !errors.As(err, &e) || err.Error() != msg {
			t.Errorf("%q: got %v, want %s", in, err, msg)
		}
	}
	native := &Place{Name: "a target", Vars: Of(Host, Capture), Syntax: Native}
	if tm, err := native.Parse("${0}${host}"); err != nil || tm[0].Ref != (Ref{Var: Capture}) {
		t.Errorf("native: %+v %v", tm, err)
	}
	if _, err := native.Parse("$1"); err == nil || err.Error() != `a "$" must start ${name} (a target expands ${host}, ${0} to ${9})` {
		t.Errorf("native $1: %v", err)
	}
	log := &Place{Name: "the access log", Vars: Of(Host), Syntax: Log, Lenient: true}
	tm, err = log.Parse("$ $host $12 $x $x")
	if err != nil || len(tm.Unknown()) != 2 || tm.Unknown()[0] != "12" || tm[0].Lit != "$ " {
		t.Errorf("log: %+v %v", tm, err)
	}
}

// Every name of the table but the aliases' targets' is found again.
func TestTable(t *testing.T) {
	all := Set(1<<Unknown - 2)
	for v := Var(1); v < Unknown; v++ {
		name := Table[v].Name
		if v.Family() {
			name += "x"
		}
		if r, ok := all.Lookup(name); !ok || r.Var != v {
			t.Errorf("%s: got %v", name, r.Var)
		}
		if Table[v].Means == "" && Table[v].Alias == None {
			t.Errorf("%s says nothing of what it means", name)
		}
	}
}

// Escape's text reads back as itself in every syntax, a "$" as literal
// text, nothing expanded; $literal_dollar is a "$" where written too.
func TestEscape(t *testing.T) {
	for _, p := range []*Place{
		{Name: "a test", Vars: Of(Host, Capture, HTTP)},
		{Name: "a target", Vars: Of(Host, Capture), Syntax: Native},
		{Name: "the access log", Vars: Of(Host), Syntax: Log, Lenient: true},
	} {
		for _, s := range []string{"$", "$host", "a${1}$$b", "${literal_dollar}", "US$5$"} {
			tm, err := p.Parse(Escape(s))
			if err != nil || !tm.Literal() || tm[0].Lit != s {
				t.Errorf("%s: %q read back as %+v, %v", p.Name, s, tm, err)
			}
		}
	}
	tm, err := (&Place{Name: "a test", Vars: Of(Host)}).Parse("$host=$literal_dollar")
	if err != nil || len(tm) != 2 || tm[1].Lit != "=$" {
		t.Errorf("$literal_dollar: %+v %v", tm, err)
	}
}

func TestHeader(t *testing.T) {
	h := map[string][]string{"X-Team": {"blue", "red"}, "Cookie": {"a=1", "b=2"}, "Host": {"map.example"}, "X-One": {"1"}, "X-Empty": {""}}
	for _, c := range []struct {
		host, name, want string
		found            bool
	}{
		{"A.example:8080", "Host", "A.example:8080", true},
		{"", "Host", "map.example", true},
		{"a.example", "X-Team", "blue, red", true},
		{"a.example", "Cookie", "a=1; b=2", true},
		{"a.example", "X-One", "1", true},
		{"a.example", "X-Empty", "", true},
		{"a.example", "X-None", "", false},
	} {
		if got, found := Header(h, c.host, c.name); got != c.want || found != c.found {
			t.Errorf("Header(%q, %q) = %q, %v; want %q, %v", c.host, c.name, got, found, c.want, c.found)
		}
	}
	if got, found := Header(nil, "", "Host"); got != "" || found {
		t.Errorf("no Host line, no map: %q, %v", got, found)
	}
}

// TestHeaderSpellings: $http_x_user where nginx keeps '_' names reads
// X_User and x_user lines too, its own spelling's first, each line once;
// Cookie lines join with "; ".
func TestHeaderSpellings(t *testing.T) {
	for _, tc := range []struct {
		h    map[string][]string
		name string
		want string
		ok   bool
	}{
		{map[string][]string{"X_user": {"a"}}, "X-User", "a", true},
		{map[string][]string{"X-User": {"a"}, "X_user": {"b"}, "X_User": {"c", "d"}}, "X-User", "a, c, d, b", true},
		{map[string][]string{"X_user": {"b"}, "Y-User": {"y"}}, "X-User", "b", true},
		{map[string][]string{"Xuser": {"b"}}, "X-User", "", false},
		{map[string][]string{"Accept": {"a"}, "accept": {"b"}}, "Accept", "a", true},
		{map[string][]string{"Cookie": {"a=1"}}, "Cookie", "a=1", true},
	} {
		got, ok := HeaderSpellings(tc.h, "", tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("HeaderSpellings(%v, %q) = %q, %v; want %q, %v", tc.h, tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
