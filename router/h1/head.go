package h1

import (
	"bytes"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
)

// A request head that came whole, in the plain shape nearly every client
// sends, is parsed here from the buffer in one pass, into one string and a
// header map and URL the connection reuses: net/textproto's parse makes a
// string per line and per value, a map and a URL per request, 7 of the
// loop's 12 allocations per request (issue 26). Any other head is left to
// that parse (readHead), as net/http's server runs it. For
// a head it takes, the result is the one that parse gives
// (FuzzPlainHead).
//
// The plain shape: lines end in CRLF and hold no control byte but a tab
// in a value; the request line is a method token, an origin-form target
// of path bytes URL parsing keeps as they are (and any query), and
// HTTP/1.1 or HTTP/1.0; each header line is a token, a colon and a value,
// with no continuation lines.

// plainHead is a parsed head.
type plainHead struct {
	method, target, proto string
	major, minor          int
	url                   *url.URL
	header                http.Header
	// hosts are the Host field's values, which a plain parse keeps out of
	// header (the server takes Host out of it anyway: one map insert, a
	// lookup and a delete fewer per request, and every later lookup in a
	// map left empty is a length test); nil when there is none. A head
	// read by textproto leaves them in header and hostsInHeader set.
	hosts         []string
	hostsInHeader bool
	// has are the framing fields present in header; every bit when the
	// head was read by textproto.
	has fieldSet
	// dupUnique: a field nginx takes once came twice (uniqueField); set
	// by parsePlainHead only.
	dupUnique bool
}

// fieldSet says which of the fields the server looks up while it reads a
// request are present, so that it looks up only those.
type fieldSet uint8

const (
	hasConnection fieldSet = 1 << iota
	hasPragma
	hasTransferEncoding
	hasContentLength
	hasTrailer
	hasExpect
	hasAll fieldSet = 1<<iota - 1
)

// uniqueFields are the request fields nginx refuses to take twice
// (ngx_http_headers_in's ngx_http_process_unique_header_line: "client sent
// duplicate header line", 400), Host aside.
var uniqueFields = []string{"Content-Length", "Transfer-Encoding", "Expect", "Authorization", "Content-Range",
	"If-Modified-Since", "If-Unmodified-Since", "If-Match", "If-None-Match", "If-Range"}

// UniqueField reports whether name, in canonical form, is a field nginx
// refuses to take twice (Host aside), which the router refuses for the
// servers that pass it on twice.
func UniqueField(name string) bool { return slices.Contains(uniqueFields, name) }

// uniqueField reports whether the canonical name key is one of uniqueFields.
func uniqueField(key string) bool { return slices.Contains(uniqueFields, key) }

// fieldBit is the fieldSet bit of the canonical name key, 0 for others.
func fieldBit(key string) fieldSet {
	switch key {
	case "Connection":
		return hasConnection
	case "Pragma":
		return hasPragma
	case "Transfer-Encoding":
		return hasTransferEncoding
	case "Content-Length":
		return hasContentLength
	case "Trailer":
		return hasTrailer
	case "Expect":
		return hasExpect
	}
	return 0
}

// headScratch is what a connection reuses from one head to the next: only
// while nobody may hold the previous request (see conn.next), but for
// line and text, strings, which anyone may hold.
type headScratch struct {
	header http.Header
	vals   []string
	url    url.URL
	// line and text are the last head's request line and field lines,
	// shared by a head that repeats them.
	line, text string
}

// parsePlainHead parses the head at the start of buf if it is whole there
// and plain, returning its length; end is where the first CRLF CRLF of buf
// is when the caller found it already, -1 when not known. reuse says
// whether the scratch may be reused, or must be made anew.
func parsePlainHead(buf []byte, end int, s *headScratch, reuse bool) (h plainHead, n int, ok bool) {
	if end < 0 {
		end = bytes.Index(buf, []byte("\r\n\r\n"))
	}
	if end < 0 {
		return h, 0, false
	}
	raw := buf[:end+2] // each line with its CRLF
	i := bytes.IndexByte(raw, '\r')
	if raw[i+1] != '\n' {
		return h, 0, false
	}
	line := raw[:i]
	sp1 := bytes.IndexByte(line, ' ')
	if sp1 <= 0 {
		return h, 0, false
	}
	sp2 := bytes.IndexByte(line[sp1+1:], ' ')
	if sp2 <= 0 {
		return h, 0, false
	}
	sp2 += sp1 + 1
	switch string(line[sp2+1:]) {
	case "HTTP/1.1":
		h.major, h.minor = 1, 1
	case "HTTP/1.0":
		h.major = 1
	default:
		return h, 0, false
	}
	for _, c := range line[:sp1] {
		if !tokenByte[c] {
			return h, 0, false
		}
	}
	target := line[sp1+1 : sp2]
	q := bytes.IndexByte(target, '?')
	path := target
	if q >= 0 {
		path = target[:q]
		for _, c := range target[q+1:] {
			if c <= ' ' || c == 0x7f {
				return h, 0, false
			}
		}
	}
	if len(path) == 0 || path[0] != '/' {
		return h, 0, false
	}
	for _, c := range path {
		if !pathByte[c] {
			return h, 0, false
		}
	}
	// The header lines, checked before anything is made; where the first
	// ones end and have their colon is kept for the pass that makes them.
	var spans [16]lineSpan
	fields := 0
	for at, rest := i+2, raw[i+2:]; len(rest) > 0; fields++ {
		j := bytes.IndexByte(rest, '\r')
		if rest[j+1] != '\n' {
			return h, 0, false
		}
		l := rest[:j]
		rest = rest[j+2:]
		colon := bytes.IndexByte(l, ':')
		if colon <= 0 {
			return h, 0, false
		}
		if fields < len(spans) {
			spans[fields] = lineSpan{colon: int32(at + colon), end: int32(at + j)}
		}
		at += j + 2
		for _, c := range l[:colon] {
			if !tokenByte[c] {
				return h, 0, false
			}
		}
		if !validValue(l[colon+1:]) {
			return h, 0, false
		}
	}

	// At most one allocation, for every string below: the request line
	// (rl) and the field lines (text, raw from i+2 on) share the last head's
	// strings where they are its byte for byte (a client repeating itself
	// on a keep-alive connection, or sending the same fields to another
	// path), which no one can change.
	rl, text := s.line, s.text
	switch sameLine, sameText := string(raw[:i]) == rl, string(raw[i+2:]) == text; {
	case sameLine && sameText:
	case sameText:
		rl = string(raw[:i])
	case sameLine:
		text = string(raw[i+2:])
	default:
		str := string(raw)
		rl, text = str[:i], str[i+2:]
	}
	s.line, s.text = rl, text
	h.method = rl[:sp1]
	h.target = rl[sp1+1 : sp2]
	h.proto = rl[sp2+1:]
	if !reuse || s.header == nil {
		s.header = make(http.Header, fields)
		s.vals = make([]string, 0, max(fields, 8))
		s.url = url.URL{}
		h.url = new(url.URL)
	} else {
		clear(s.header)
		s.vals = s.vals[:0]
		h.url = &s.url
	}
	*h.url = url.URL{Path: h.target}
	if q >= 0 {
		h.url.Path = h.target[:q]
		if q == len(h.target)-1 {
			h.url.ForceQuery = true
		} else {
			h.url.RawQuery = h.target[q+1:]
		}
	}
	vals := s.vals
	base := i + 2 // text[o-base] is raw[o]
	for k, start := 0, base; k < fields; k++ {
		var end, colon int
		if k < len(spans) {
			end, colon = int(spans[k].end), int(spans[k].colon)
		} else {
			end = start + strings.IndexByte(text[start-base:], '\r')
			colon = start + strings.IndexByte(text[start-base:end-base], ':')
		}
		key := canonicalRequestKey(text[start-base : colon-base])
		v := trimOWS(text[colon+1-base : end-base])
		start = end + 2
		if key == "Host" {
			if h.hosts == nil {
				vals = append(vals, v)
				h.hosts = vals[len(vals)-1 : len(vals) : len(vals)]
			} else {
				h.hosts = append(h.hosts, v)
			}
			continue
		}
		h.has |= fieldBit(key)
		if vv, dup := s.header[key]; dup {
			s.header[key] = append(vv, v)
			h.dupUnique = h.dupUnique || uniqueField(key)
			continue
		}
		// Capped, so that a handler's append copies rather than writes
		// over the next key's value.
		vals = append(vals, v)
		s.header[key] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	s.vals = vals
	h.header = s.header
	return h, end + 4, true
}

// lineSpan is where in a head a field line's colon and CR are.
type lineSpan struct{ colon, end int32 }

// pathByte: the bytes net/url keeps as they are in a path (no RawPath is
// set, nothing is unescaped).
var pathByte = alnumAnd("-_.~$&+,/:;=@")

// alnumAnd is the set of ASCII letters and digits and the bytes of extra.
func alnumAnd(extra string) (t [256]bool) {
	for c := range 256 {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for _, c := range []byte(extra) {
		t[c] = true
	}
	return t
}

// canonicalRequestKey is textproto.CanonicalMIMEHeaderKey(k) for a token
// k: the names clients send most, sent canonical, are kept as they are
// after one switch, instead of a pass over their bytes and a map lookup.
func canonicalRequestKey(k string) string {
	switch k {
	case "Host", "User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Connection",
		"Content-Length", "Content-Type", "Cookie", "Authorization", "Referer", "Origin",
		"Cache-Control", "Upgrade-Insecure-Requests", "X-Forwarded-For", "X-Request-Id",
		"If-None-Match", "If-Modified-Since", "Pragma", "Priority":
		return k
	}
	return textproto.CanonicalMIMEHeaderKey(k)
}
