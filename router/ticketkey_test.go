package router_test

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/router/configmap"
)

// ssl-session-ticket-key (nginx.tmpl: ssl_session_ticket_key
// /etc/ingress-controller/tickets.key, the ConfigMap's base64 of 48 or 80
// bytes): with ssl-session-tickets on, every replica given the same key
// resumes the sessions of tickets the others issued; one given another
// key does not.
func TestTLSSessionTicketKeySharedAcrossRouters(t *testing.T) {
	for _, n := range []int{48, 80} {
		key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n)))
		other := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n-1) + "l"))
		for _, ver := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
			t.Run(fmt.Sprintf("%d/%s", n, tls.VersionName(ver)), func(t *testing.T) {
				data := map[string]string{"ssl-session-tickets": "true", "ssl-session-ticket-key": key}
				_, a := tlsRouter(t, data)
				_, b := tlsRouter(t, data)
				_, c := tlsRouter(t, map[string]string{"ssl-session-tickets": "true", "ssl-session-ticket-key": other})
				cfg := &tls.Config{MaxVersion: ver, ClientSessionCache: tls.NewLRUClientSessionCache(8), ServerName: "shop.example.com"}
				st, err := handshake(a, cfg)
				require.NoError(t, err)
				require.False(t, st.DidResume)
				st, err = handshake(b, cfg)
				require.NoError(t, err)
				assert.True(t, st.DidResume, "%d-byte key: the other replica resumes the ticket", n)
				st, err = handshake(c, cfg)
				require.NoError(t, err)
				assert.False(t, st.DidResume, "%d-byte key: a router with another key", n)
			})
		}
	}
}

// Without the key, or with one that nginx would not load, each router
// keeps keys of its own: a ticket resumes only where it was issued.
func TestTLSSessionTicketKeyBadKeepsOwnKeys(t *testing.T) {
	for _, v := range []string{"", "not base64!", base64.StdEncoding.EncodeToString(make([]byte, 32))} {
		data := map[string]string{"ssl-session-tickets": "true", "ssl-session-ticket-key": v}
		s, warns := configmap.Parse("ingress-nginx", "ingress-nginx-controller", data)
		if v != "" {
			require.Len(t, warns, 1, "%q", v)
			assert.Equal(t, "ssl-session-ticket-key", warns[0].Key)
			assert.Equal(t, configmap.Rejected, warns[0].Reason)
			assert.NotContains(t, warns[0].Message, v, "the warning does not show the key")
		} else {
			assert.Empty(t, warns)
		}
		assert.Nil(t, s.TLS.SessionTicketKey, "%q", v)
		_, a := tlsRouter(t, data)
		_, b := tlsRouter(t, data)
		cfg := &tls.Config{ClientSessionCache: tls.NewLRUClientSessionCache(8), ServerName: "shop.example.com"}
		_, err := handshake(a, cfg)
		require.NoError(t, err)
		st, err := handshake(b, cfg)
		require.NoError(t, err)
		assert.False(t, st.DidResume, "%q: another router's ticket", v)
		st, err = handshake(b, cfg)
		require.NoError(t, err)
		assert.True(t, st.DidResume, "%q: the router's own ticket", v)
	}
}
