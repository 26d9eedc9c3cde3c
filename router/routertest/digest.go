package routertest

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
)

// DigestLogin make a request answer a digest challenge (auth-type
// digest, SPEC §11.7) as a browser does: the runner first sends the
// request without Authorization, takes the nonce and realm from the
// answer's WWW-Authenticate, and sends the request with an Authorization
// header computed from them (qop auth, cnonce "0a4f113b"). That first
// exchange is not checked or counted. The other fields replace what a
// browser would send, to check what the router refuses.
type DigestLogin struct {
	Username string `json:"username"`
	Password string `json:"password"`
	// Realm is sent (and hashed) instead of the challenge's.
	Realm string `json:"realm,omitempty"`
	// URI is the uri parameter instead of the request's target.
	URI string `json:"uri,omitempty"`
	// NC is the nonce count instead of 00000001.
	NC string `json:"nc,omitempty"`
	// Nonce is sent instead of the challenge's.
	Nonce string `json:"nonce,omitempty"`
	// Again sends the Authorization of the case's previous digest
	// request once more, without a new challenge: a replay. The other
	// fields are then left unset.
	Again bool `json:"again,omitempty"`
}

// withDigest returns r with the Authorization header answering the
// router's challenge for it. Without a Digest challenge it sends r as it
// is, and the checks of r report what came instead.
func (h *harness) withDigest(r Request) Request {
	if r.Digest.Again {
		headers := withoutAuthorization(r.Headers)
		if h.lastDigest != "" {
			headers["Authorization"] = h.lastDigest
		}
		r.Headers = headers
		return r
	}
	probe := r
	probe.Headers = withoutAuthorization(r.Headers)
	out := h.serve(probe)
	params := challengeParams(out.ResponseHeaders.Get("Www-Authenticate"))
	if params == nil {
		return r
	}
	d := r.Digest
	realm, nonce, uri, nc := params["realm"], params["nonce"], r.Path, "00000001"
	if d.Realm != "" {
		realm = d.Realm
	}
	if d.Nonce != "" {
		nonce = d.Nonce
	}
	if d.URI != "" {
		uri = d.URI
	}
	if d.NC != "" {
		nc = d.NC
	}
	const cnonce, qop = "0a4f113b", "auth"
	ha1 := md5hex(d.Username + ":" + realm + ":" + d.Password)
	ha2 := md5hex(r.Method + ":" + uri)
	response := md5hex(ha1 + ":" + nonce + ":" + nc + ":" + cnonce + ":" + qop + ":" + ha2)
	headers := withoutAuthorization(r.Headers)
	headers["Authorization"] = `Digest username="` + d.Username + `", realm="` + realm + `", nonce="` + nonce +
		`", uri="` + uri + `", qop=` + qop + `, nc=` + nc + `, cnonce="` + cnonce + `", response="` + response + `"`
	h.lastDigest = headers["Authorization"]
	r.Headers = headers
	return r
}

func withoutAuthorization(h map[string]string) map[string]string {
	out := make(map[string]string, len(h)+1)
	for k, v := range h {
		if !strings.EqualFold(k, "Authorization") {
			out[k] = v
		}
	}
	return out
}

// challengeParams reads the quoted parameters of a Digest challenge; nil
// for anything else.
func challengeParams(v string) map[string]string {
	rest, ok := strings.CutPrefix(v, "Digest ")
	if !ok {
		return nil
	}
	params := make(map[string]string)
	for _, p := range strings.Split(rest, ", ") {
		name, value, ok := strings.Cut(p, "=")
		if ok {
			params[name] = strings.Trim(value, `"`)
		}
	}
	return params
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// maskNonce writes the nonce of a Digest challenge as <nonce>, and the
// rspauth of an Authentication-Info as <rspauth>, so that a case can check
// the rest: both are unpredictable by design.
func maskNonce(v string) string {
	if strings.HasPrefix(v, "Digest ") {
		v = maskParam(v, "nonce")
	}
	return maskParam(v, "rspauth")
}

func maskParam(v, name string) string {
	i := strings.Index(v, name+`="`)
	if i < 0 || i > 0 && v[i-1] != ' ' {
		return v
	}
	i += len(name) + 2
	end := strings.IndexByte(v[i:], '"')
	if end < 0 {
		return v
	}
	return v[:i] + "<" + name + ">" + v[i+end:]
}
