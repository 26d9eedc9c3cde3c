package match

import (
	"strconv"
	"strings"
)

// ServerTLS is a host's own TLS settings: the cipher suites of its
// ssl-ciphers annotation (ingress-nginx's server-level ssl_ciphers), used
// for the handshakes whose SNI names the host.
type ServerTLS struct {
	// Ciphers is the annotation's OpenSSL cipher string as written;
	// CipherSuites are the Go suites it names (TLS 1.0 to 1.2).
	Ciphers      string
	CipherSuites []uint16
}

// ServerTLS returns the TLS settings of the host a handshake naming
// serverName (SNI) is served by; nil for the listener's own.
func (t *Table) ServerTLS(serverName string) *ServerTLS {
	if vh := t.ServerFor(serverName); vh != nil {
		return vh.ServerTLS
	}
	return nil
}

// serverTLSSection is a host's own TLS handshake settings.
var serverTLSSection = section{
	name: "server-tls",
	host: []string{"ServerTLS"},
	digest: []digestPart{{
		tag:     "server-tls",
		hostHas: func(vh *VirtualHost) bool { return vh.ServerTLS != nil },
		host: func(e *encoder, vh *VirtualHost) {
			s := vh.ServerTLS
			e.flag(s != nil)
			if s == nil {
				return
			}
			e.str(s.Ciphers)
			e.num(len(s.CipherSuites))
			for _, id := range s.CipherSuites {
				e.num(int(id))
			}
		},
	}},
	text: textParts{
		at: 91,
		hostLines: func(b *strings.Builder, vh *VirtualHost) {
			if s := vh.ServerTLS; s != nil {
				b.WriteString("  ssl-ciphers " + strconv.Quote(s.Ciphers) + " (" + strconv.Itoa(len(s.CipherSuites)) + " suites)\n")
			}
		},
	},
}
