package router

import (
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"sync"
	"time"

	"ramjet.dev/ramjet/router/configmap"
)

// The TLS policy (SPEC §12): Options.TLS, the ssl-* keys, as TLSConfig
// serves them. Versions, cipher suites and curves are crypto/tls's own
// settings. Sessions follow nginx's ssl_session_cache, ssl_session_timeout
// and ssl_session_tickets:
//
//   - tickets on: Go's session tickets (encrypted session state held by
//     the client), accepted for SessionTimeout after they were issued,
//     under keys each router makes, or with ssl-session-ticket-key under
//     one derived from it, so that every replica resumes the others'
//     tickets (not nginx's: the ticket formats differ);
//   - tickets off, cache on (ingress-nginx's default): the session state
//     stays on the server, in a cache of SessionCacheSize (nginx's count:
//     4000 sessions a megabyte, oldest dropped first) for SessionTimeout,
//     and the client holds only a random name for it. Go resumes sessions
//     through the ticket extension only (no TLS 1.2 session IDs), so a
//     client resumes here if it sends that extension, as browsers do;
//   - both off: no session is resumed.
//
// A host's ssl-ciphers annotation replaces the cipher suites for the
// handshakes that name it (GetConfigForClient).

// tlsPolicy returns Options.TLS, else ingress-nginx's defaults.
func tlsPolicy(o *configmap.TLS) configmap.TLS {
	if o == nil {
		return configmap.DefaultTLS()
	}
	return *o
}

// applyTLSPolicy sets p on cfg, with cfg itself as the ticket encrypter.
func applyTLSPolicy(cfg *tls.Config, p configmap.TLS) {
	cfg.MinVersion, cfg.MaxVersion = p.MinVersion, p.MaxVersion
	cfg.CipherSuites = p.CipherSuites
	cfg.CurvePreferences = p.Curves
	timeout := sessionTimeout(p)
	switch {
	case timeout == 0:
		// ssl_session_timeout 0: nginx resumes no session, cached or
		// ticketed.
		cfg.SessionTicketsDisabled = true
	case p.SessionTickets:
		if len(p.SessionTicketKey) > 0 {
			cfg.SetSessionTicketKeys([][32]byte{ticketKey(p.SessionTicketKey)})
		}
		enc := cfg
		cfg.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
			ss.Extra = append(ss.Extra, stamp(time.Now()))
			return enc.EncryptTicket(cs, ss)
		}
		cfg.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
			ss, err := enc.DecryptTicket(identity, cs)
			if err != nil || ss == nil || len(ss.Extra) == 0 {
				return nil, nil
			}
			if t, ok := unstamp(ss.Extra[len(ss.Extra)-1]); !ok || time.Since(t) > timeout {
				return nil, nil
			}
			ss.Extra = ss.Extra[:len(ss.Extra)-1]
			return ss, nil
		}
	case p.SessionCache:
		c := newSessionCache(p.SessionCacheEntries(), timeout)
		cfg.WrapSession = c.wrap
		cfg.UnwrapSession = c.unwrap
	default:
		cfg.SessionTicketsDisabled = true
	}
}

// ticketKey derives Go's 32-byte ticket key from ssl-session-ticket-key's
// 48 or 80 bytes, all of which it depends on, alike on every router.
func ticketKey(material []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte("ramjet ssl-session-ticket-key\x00"))
	h.Write(material)
	return [32]byte(h.Sum(nil))
}

// sessionTimeout is how long a session resumes: ssl-session-timeout, which
// nginx.tmpl writes only with ssl-session-cache on (0: none resumes);
// else nginx's default ssl_session_timeout, 5 minutes, which session
// tickets then live.
func sessionTimeout(p configmap.TLS) time.Duration {
	if !p.SessionCache {
		return 5 * time.Minute
	}
	return max(p.SessionTimeout, 0)
}

// stamp and unstamp carry an issue time inside an encrypted ticket.
func stamp(t time.Time) []byte {
	b := make([]byte, 0, 12)
	b = append(b, "rjt:"...)
	return binary.BigEndian.AppendUint64(b, uint64(t.Unix()))
}

func unstamp(b []byte) (time.Time, bool) {
	if len(b) != 12 || string(b[:4]) != "rjt:" {
		return time.Time{}, false
	}
	return time.Unix(int64(binary.BigEndian.Uint64(b[4:])), 0), true
}

// sessionCache is the server's session cache: session states by random
// name, at most max of them, each for timeout, the oldest dropped first.
type sessionCache struct {
	max     int
	timeout time.Duration
	now     func() time.Time

	mu    sync.Mutex
	byKey map[[16]byte]*list.Element
	order list.List // of *cachedSession, oldest first
}

type cachedSession struct {
	key   [16]byte
	state []byte
	at    time.Time
}

func newSessionCache(max int, timeout time.Duration) *sessionCache {
	return &sessionCache{max: max, timeout: timeout, now: time.Now, byKey: make(map[[16]byte]*list.Element)}
}

func (c *sessionCache) wrap(_ tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
	state, err := ss.Bytes()
	if err != nil {
		return nil, err
	}
	var key [16]byte
	_, _ = rand.Read(key[:])
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.order.Len() >= c.max {
		c.drop(c.order.Front())
	}
	c.byKey[key] = c.order.PushBack(&cachedSession{key: key, state: state, at: now})
	return key[:], nil
}

func (c *sessionCache) unwrap(identity []byte, _ tls.ConnectionState) (*tls.SessionState, error) {
	if len(identity) != 16 {
		return nil, nil
	}
	key := [16]byte(identity)
	c.mu.Lock()
	e := c.byKey[key]
	var state []byte
	if e != nil {
		s := e.Value.(*cachedSession)
		if c.now().Sub(s.at) > c.timeout {
			c.drop(e)
		} else {
			state = s.state
		}
	}
	c.mu.Unlock()
	if state == nil {
		return nil, nil
	}
	ss, err := tls.ParseSessionState(state)
	if err != nil {
		return nil, nil
	}
	return ss, nil
}

func (c *sessionCache) drop(e *list.Element) {
	delete(c.byKey, e.Value.(*cachedSession).key)
	c.order.Remove(e)
}
