package router

import (
	"testing"
	"time"

	"ramjet.dev/ramjet/router/configmap"
)

// nginx.tmpl writes ssl_session_timeout only with ssl_session_cache: with
// the cache off, session tickets live nginx's default 5 minutes, whatever
// ssl-session-timeout says.
func TestSessionTimeout(t *testing.T) {
	p := configmap.DefaultTLS()
	p.SessionTimeout = time.Hour
	for _, tc := range []struct {
		cache, tickets bool
		want           time.Duration
	}{
		{true, false, time.Hour},
		{true, true, time.Hour},
		{false, true, 5 * time.Minute},
	} {
		p.SessionCache, p.SessionTickets = tc.cache, tc.tickets
		if got := sessionTimeout(p); got != tc.want {
			t.Errorf("cache %v, tickets %v: %v, want %v", tc.cache, tc.tickets, got, tc.want)
		}
	}
}
