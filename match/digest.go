package match

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"slices"

	"ramjet.dev/ramjet/balance"
)

// digestVersion names the encoding, so a change to it changes every digest.
const digestVersion = "ramjet table digest v1"

// digest is the hex SHA-256 of a canonical encoding of everything in t that
// affects a response (SPEC §15), after the inputs that produced it. It walks
// the table in its sorted order (hosts by name, routes in precedence order,
// backends by ID, certificates by Secret) and never iterates a map, so it
// depends neither on input order nor on time. Every string and list is
// length prefixed, so no two tables share an encoding. Sources and
// declaration order do not change a response and are left out: renaming an
// Ingress or adding an unrelated older one does not republish a table.
//
// It lives beside the types it encodes: a field added to a host, route or
// backend that changes answers belongs here too.
func digest(t *Table, inputs []byte) string {
	e := encoder{h: sha256.New(), buf: make([]byte, 0, 64<<10)}
	e.str(digestVersion)
	e.raw(inputs)

	e.num(len(t.hosts))
	for _, vh := range t.hosts {
		e.str(vh.Name)
		e.flag(vh.TLS)
		e.flag(vh.SSLRedirect)
		e.flag(vh.ForceSSLRedirect)
		e.backendRef(vh.Fallback)
		e.num(len(vh.Routes))
		for _, r := range vh.Routes {
			e.num(int(r.Type))
			e.str(r.Path)
			e.backendRef(r.Backend)
			e.flag(r.SSLRedirect)
			e.flag(r.ForceSSLRedirect)
		}
	}

	e.num(len(t.backends))
	for _, be := range t.backends {
		e.str(be.ID)
		e.str(be.Namespace)
		e.str(be.Name)
		e.num(int(be.Port))
		e.num(int(be.Protocol))
		e.num(int(be.State))
		e.strs(be.Endpoints)
	}

	// TLS hosts decide the redirect even where no virtual host has the name.
	e.strs(t.tlsHosts)

	e.num(len(t.certs))
	for _, c := range t.certs {
		e.str(c.Secret)
		e.str(c.Fingerprint)
		e.strs(c.Hosts)
		// The whole chain: renewing an intermediate changes what is served.
		var chain [][]byte
		if c.Cert != nil {
			chain = c.Cert.Certificate
		}
		e.num(len(chain))
		for _, der := range chain {
			e.bytes(der)
		}
	}

	// Balancing policies (SPEC §9) follow in an optional section, present
	// only when some backend is not round-robin, so a table balanced
	// round-robin throughout encodes as if it did not exist. Everything
	// before it is self-delimiting and each optional section opens with
	// its own tag, so presence and absence are unambiguous.
	if slices.ContainsFunc(t.backends, func(be *Backend) bool { return be.Policy != balance.RoundRobin }) {
		e.str("balancing")
		e.num(len(t.backends))
		for _, be := range t.backends {
			e.num(int(be.Policy))
			e.str(be.HashKey.String())
		}
	}

	// preserve-trailing-slash likewise, only when some host or route sets
	// it, one flag per host and route in the order encoded above.
	if preservesSlash(t) {
		e.str("preserve-trailing-slash")
		for _, vh := range t.hosts {
			e.flag(vh.PreserveTrailingSlash)
			for _, r := range vh.Routes {
				e.flag(r.PreserveTrailingSlash)
			}
		}
	}
	e.extensions(t)
	encodeRedirectActions(&e, t)
	encodeRewrites(&e, t)
	digestPolicies(&e, t)
	e.encodeTraffic(t)
	encodeAccess(&e, t)
	return e.sum()
}

func preservesSlash(t *Table) bool {
	for _, vh := range t.hosts {
		if vh.PreserveTrailingSlash {
			return true
		}
		for _, r := range vh.Routes {
			if r.PreserveTrailingSlash {
				return true
			}
		}
	}
	return false
}

// encoder writes length-prefixed fields into a hash through a buffer.
type encoder struct {
	h   hash.Hash
	buf []byte
}

func (e *encoder) num(n int) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(n))
	e.flushIfFull()
}

func (e *encoder) flag(b bool) {
	v := byte(0)
	if b {
		v = 1
	}
	e.buf = append(e.buf, v)
	e.flushIfFull()
}

// strs writes a list of strings: its length, then each.
func (e *encoder) strs(l []string) {
	e.num(len(l))
	for _, s := range l {
		e.str(s)
	}
}

func (e *encoder) str(s string) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
	e.flushIfFull()
}

func (e *encoder) raw(p []byte) {
	e.buf = append(e.buf, p...)
	e.flushIfFull()
}

func (e *encoder) bytes(p []byte) {
	e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(len(p)))
	e.buf = append(e.buf, p...)
	e.flushIfFull()
}

// backendRef encodes a reference by ID; nil (404) differs from every ID.
func (e *encoder) backendRef(be *Backend) {
	if be == nil {
		e.flag(false)
		return
	}
	e.flag(true)
	e.str(be.ID)
}

func (e *encoder) flushIfFull() {
	if len(e.buf) >= 32<<10 {
		e.h.Write(e.buf)
		e.buf = e.buf[:0]
	}
}

func (e *encoder) sum() string {
	e.h.Write(e.buf)
	return hex.EncodeToString(e.h.Sum(nil))
}
