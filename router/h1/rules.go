package h1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// The HTTP/1 rules the server, the framing guard and the backend client
// share, so that both sides of the router read a message alike. Only
// ListsToken is the router's too: it reads Connection and TE when it
// builds a backend's request head.

// tokenByte: the bytes of an HTTP token (RFC 9110 section 5.6.2).
var tokenByte = alnumAnd("!#$%&'*+-.^_`|~")

// isTokenByte reports a byte allowed in a token: a method, a field name.
func isTokenByte(c byte) bool { return tokenByte[c] }

// hostByte: the bytes a Host field may hold, as net/http's server allows
// them: a reg-name, an IP literal with its brackets and zone, a port.
var hostByte = alnumAnd("!$%&'()*+,-.:;=[]_~")

// validHost reports a Host value net/http's server would take: only
// hostByte bytes. Like net/http it does not parse the host further.
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if !hostByte[h[i]] {
			return false
		}
	}
	return true
}

// isToken reports a non-empty token: a method, a field name.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !tokenByte[s[i]] {
			return false
		}
	}
	return s != ""
}

// validValue reports a field value (or reason phrase) without control
// bytes other than HTAB (RFC 9110 section 5.5): visible ASCII, spaces and
// obs-text, which net/http lets through too.
func validValue[S ~string | ~[]byte](v S) bool {
	i := 0
	// Eight bytes at a time while none is below a space or DEL; a word
	// with one (a tab, most likely) is checked by bytes from there.
	for ; len(v)-i >= 8; i += 8 {
		b := v[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if hasCtl(w) {
			break
		}
	}
	for ; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// hasCtl reports whether a byte of w is below 0x20 or is 0x7f (exact for
// the word as a whole, not for which byte).
func hasCtl(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	d := w ^ (ones * 0x7f)
	return ((w-ones*0x20)&^w|(d-ones)&^d)&highs != 0
}

// equalFoldASCII compares a token case-insensitively in ASCII only, as
// nginx and net/http do: no Unicode folding ("K" is not "k").
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// parseContentLength reads a Content-Length value as net/http does:
// optional whitespace around decimal digits, at most 2^63-1.
func parseContentLength(cl string) (int64, error) {
	if n, ok := shortDecimal(cl); ok {
		return n, nil
	}
	cl = textproto.TrimString(cl)
	if cl == "" {
		return -1, errors.New("bad Content-Length")
	}
	for i := 0; i < len(cl); i++ {
		if cl[i] < '0' || cl[i] > '9' {
			return -1, fmt.Errorf("bad Content-Length %q", cl)
		}
	}
	// The digits are checked: only the bound is left (strconv.ParseUint's
	// 63 bits, here without its general loop).
	var n uint64
	for i := 0; i < len(cl); i++ {
		if n > math.MaxInt64/10 {
			return -1, fmt.Errorf("bad Content-Length %q", cl)
		}
		n = n*10 + uint64(cl[i]-'0')
		if n > math.MaxInt64 {
			return -1, fmt.Errorf("bad Content-Length %q", cl)
		}
	}
	return int64(n), nil
}

// shortDecimal reads a value of 1 to 18 digits and nothing else, which
// cannot overflow: as most lengths are sent, without the trimming and the
// bound the general case needs.
func shortDecimal(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseDecimal is strconv.ParseInt(s, 10, 64), quicker for up to 18
// digits without a sign (as a Content-Length is written): those cannot
// overflow.
func parseDecimal(s string) (int64, error) {
	if n, ok := shortDecimal(s); ok {
		return n, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// refusedFraming is nginx's refusal of a request's body framing (SPEC §13):
// Transfer-Encoding on HTTP/1.0, or beside Content-Length unless it is one
// coding other than chunked (unknown: nginx answers that 501 whether or
// not Content-Length is there, ngx_http_process_request_header).
func refusedFraming(te, unknown, cl, http10 bool) bool { return te && (http10 || cl && !unknown) }

// forbiddenTrailer reports a field name a Trailer field may not announce.
func forbiddenTrailer(canonical string) bool {
	switch canonical {
	case "Transfer-Encoding", "Trailer", "Content-Length":
		return true
	}
	return false
}

// expectsContinue reports a request that waits for 100 Continue before it
// sends its body: net/http's rule, for its server and its Transport alike.
func expectsContinue(h http.Header) bool {
	return hasToken(headerGet(h, "Expect"), "100-continue") // Get would canonicalize "Expect" again
}

// headBuffered reports whether br holds a whole message head, so that
// reading it cannot wait: an empty line ("\r\n" or a bare "\n", as the
// head parsers end it) after the start line. Empty lines before the start
// line do not count (a server skips them between requests).
//
// It looks at each line's end once, up to the head's: where two searches
// of the whole buffer for either ending cost most of a thousand
// instructions a request, a head of a few lines and the body behind it
// take a few dozen here.
func headBuffered(br *bufio.Reader) bool {
	b, _ := br.Peek(br.Buffered())
	i := 0
	for i < len(b) && (b[i] == '\r' || b[i] == '\n') {
		i++
	}
	b = b[i:]
	for {
		j := bytes.IndexByte(b, '\n')
		if j < 0 {
			return false
		}
		b = b[j+1:]
		if len(b) > 0 && b[0] == '\n' || len(b) > 1 && b[0] == '\r' && b[1] == '\n' {
			return true
		}
	}
}

// ListsToken reports whether a comma-separated field (Connection, TE),
// over all its values, names token.
func ListsToken(values []string, token string) bool {
	for _, v := range values {
		for v != "" {
			var tok string
			tok, v, _ = strings.Cut(v, ",")
			if equalFoldASCII(trimOWS(tok), token) { // optional whitespace: SP and HTAB
				return true
			}
		}
	}
	return false
}

// hasToken is net/http's test for a token in a header value (the first
// value of a field, where net/http looks), with its idea of boundaries.
func hasToken(v, token string) bool {
	if len(token) > len(v) || token == "" {
		return false
	}
	if v == token {
		return true
	}
	boundary := func(b byte) bool { return b == ' ' || b == ',' || b == '\t' }
	for sp := 0; sp <= len(v)-len(token); sp++ {
		if b := v[sp]; b != token[0] && b|0x20 != token[0] {
			continue
		}
		if sp > 0 && !boundary(v[sp-1]) {
			continue
		}
		if end := sp + len(token); end != len(v) && !boundary(v[end]) {
			continue
		}
		if strings.EqualFold(v[sp:sp+len(token)], token) {
			return true
		}
	}
	return false
}

// trimOWS and trimLeftOWS drop optional whitespace (SP and HTAB) from a
// field line or value: what strings.Trim(s, " \t") does, without the
// cutset table it builds on every call (issue 41: those calls were ~1% of
// the loop's CPU).
func trimOWS[S ~string | ~[]byte](s S) S {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return s[i:j]
}

func trimLeftOWS[S ~string | ~[]byte](s S) S {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}
