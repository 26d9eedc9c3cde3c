package match

import (
	"strconv"
	"strings"
	"testing"
)

// checkCleanPath reports what is wrong with a successful NormalizePath
// result, or "".
func checkCleanPath(out string) string {
	switch {
	case !strings.HasPrefix(out, "/"):
		return "does not start with /"
	case strings.Contains(out, "//"):
		return "contains //"
	}
	for i, seg := range strings.Split(out[1:], "/") {
		if seg == "." || seg == ".." {
			return "contains a dot segment"
		}
		if seg == "" && i != strings.Count(out[1:], "/") {
			return "contains an empty segment"
		}
	}
	// Without '%' there is nothing left to decode, so a clean result is a
	// fixed point. (With '%', from "%25", normalizing again would decode twice.)
	if !strings.Contains(out, "%") {
		again, err := NormalizePath(out)
		if err != nil || again != out {
			return "not idempotent: " + again
		}
		if !isClean(out) {
			return "not recognized as clean by the fast path"
		}
	}
	return ""
}

func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{
		"/", "", "/a/b/", "//a//b", "/a/./b/../c", "/%2e%2e/x", "/a%2Fb", "/%", "/%zz",
		"/100%25", "/%25%32%35", "a", "/..", "/a/..", "/.well-known/x", "/a%2F..%2F..",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := NormalizePath(in)
		// The fast path agrees with the full algorithm.
		if in != "" && in[0] == '/' {
			slow, slowErr := normalizeSlow(in)
			if slow != out || slowErr != err {
				t.Fatalf("NormalizePath(%q) = %q, %v; the full algorithm gives %q, %v", in, out, err, slow, slowErr)
			}
		}
		if err != nil {
			if out != "" {
				t.Fatalf("NormalizePath(%q) = %q with error %v", in, out, err)
			}
			if in != "" && in[0] == '/' && err == ErrNotAbsolute {
				t.Fatalf("NormalizePath(%q): ErrNotAbsolute for an absolute path", in)
			}
			return
		}
		if msg := checkCleanPath(out); msg != "" {
			t.Fatalf("NormalizePath(%q) = %q: %s", in, out, msg)
		}
		// Decoding never makes the path longer than its escaped form.
		if len(out) > max(len(in), 1) {
			t.Fatalf("NormalizePath(%q) = %q is longer than the input", in, out)
		}
		// A trailing slash (or a final dot segment) survives.
		if trailing := strings.HasSuffix(in, "/") && !strings.Contains(in, "%"); trailing && !strings.HasSuffix(out, "/") {
			t.Fatalf("NormalizePath(%q) = %q lost the trailing slash", in, out)
		}
	})
}

func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"shop.example.com", "/api/v1/users"},
		{"Shop.Example.com:8080", "/api/%2e%2e/checkout"},
		{"foo.example.com.", "//static//x"},
		{"[::1]:80", "/img/cat.png"},
		{"a.b.example.com", "/healthz/"},
		{"", ""},
		{"x.apps.example.com", "/v2/../legacy"},
		{"10.0.0.1:80", "/"},
		{"a.0.0.1", "/x"},
		{" .eXAmple.Com", "/"},
	} {
		f.Add(s[0], s[1])
	}
	tab := lookupTable(f)
	f.Fuzz(func(t *testing.T, rawHost, rawPath string) {
		host := NormalizeHost(rawHost)
		if strings.ContainsAny(host, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Fatalf("NormalizeHost(%q) = %q keeps upper case", rawHost, host)
		}
		if !strings.HasPrefix(host, "[") && strings.Contains(host, ":") {
			t.Fatalf("NormalizeHost(%q) = %q keeps a port", rawHost, host)
		}
		if !strings.HasSuffix(host, ".") && NormalizeHost(host) != host {
			t.Fatalf("NormalizeHost(%q) = %q is not a fixed point", rawHost, host)
		}

		// Lookup must not panic even on input that was never normalized.
		tab.Lookup(rawHost, rawPath)

		path, err := NormalizePath(rawPath)
		if err != nil {
			return
		}
		if msg := checkCleanPath(path); msg != "" {
			t.Fatalf("NormalizePath(%q) = %q: %s", rawPath, path, msg)
		}
		res := tab.Lookup(host, path)
		if res.Host == nil {
			t.Fatalf("Lookup(%q, %q): no virtual host", host, path)
		}
		if res.Route != nil && res.Backend != res.Route.Backend {
			t.Fatalf("Lookup(%q, %q): backend is not the route's", host, path)
		}
		if res.Route == nil && res.Backend != res.Host.Fallback {
			t.Fatalf("Lookup(%q, %q): backend is not the host's fallback", host, path)
		}
		if res.Route != nil && !routeMatches(res.Route, path) {
			t.Fatalf("Lookup(%q, %q) chose %v %q, which does not match", host, path, res.Route.Type, res.Route.Path)
		}
		if want := referenceHost(tab, host); res.Host != want {
			t.Fatalf("Lookup(%q, %q) chose host %q, want %q", host, path, res.Host.Name, want.Name)
		}
		if res.RegexTimedOut || res.RegexBudgetExceeded {
			// A match cut off by its timeout counts as none (SPEC §13): on a
			// loaded machine that is not a wrong answer.
			return
		}
		if want := referenceRoute(res.Host, path); res.Route != want {
			t.Fatalf("Lookup(%q, %q) chose %v, want %v", host, path, res.Route, want)
		}
	})
}

// routeMatches is SPEC §4 written plainly, without the index.
func routeMatches(r *Route, path string) bool {
	switch r.Type {
	case Exact:
		return path == r.Path
	case Prefix:
		return path == r.Path || strings.HasPrefix(path, r.Path+"/")
	default:
		return r.Regexp.MatchString(path)
	}
}

// referenceRoute is SPEC §5 by linear scan: the first route in precedence
// order that matches.
func referenceRoute(vh *VirtualHost, path string) *Route {
	for _, r := range vh.Routes {
		if routeMatches(r, path) {
			return r
		}
	}
	return nil
}

// referenceHost is SPEC §3 and §5 by linear scan over the sorted hosts.
func referenceHost(t *Table, host string) *VirtualHost {
	for _, vh := range t.hosts {
		if vh.Name != "" && vh.Name == host && !strings.HasPrefix(vh.Name, "*.") {
			return vh
		}
	}
	if isDottedQuad(host) {
		return t.hosts[0]
	}
	for _, vh := range t.hosts {
		if suffix, ok := strings.CutPrefix(vh.Name, "*."); ok {
			// ingress-nginx's server_name ^(?<subdomain>[\w-]+)\.suffix$:
			// a first label of word bytes only.
			label, rest, found := strings.Cut(host, ".")
			word := strings.Trim(label, "abcdefghijklmnopqrstuvwxyz0123456789_-") == ""
			if found && label != "" && word && rest == suffix {
				return vh
			}
		}
	}
	return t.hosts[0]
}

func isDottedQuad(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || len(p) == 0 || len(p) > 3 || n < 0 || n > 255 || p[0] == '+' || p[0] == '-' {
			return false
		}
	}
	return true
}
