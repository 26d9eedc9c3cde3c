package match

import (
	"io"
	"strconv"
	"strings"
)

// WriteText writes the table as stable, line-oriented text for golden files
// and debugging: one fact per line, the same bytes for the same table.
//
//	digest <hex digest>
//	host <name, or "* catch-all">[ tls]          sorted by name
//	  fallback <backend ID> from <source>        or "fallback none (404)"
//	  route Exact <path> -> <backend ID> from <source>
//	  route Prefix <path> -> <backend ID> from <source>      "/" for the root
//	  route Regex <linear|backtracking> <pattern> -> <backend ID> from <source>
//	  www-redirect -> <host>                     a from-to-www-redirect name
//	  alias <name>                               server-alias
//	  app-root <path> from <source>
//	  unmatched redirect <code> <url>[ relative] the creator's redirect, for requests no route matches
//	    cors origin <*|list|none> methods "..." headers "..."[ expose "..."][ credentials] max-age <s>
//	    cors closed (<annotation> rejected: no origin allowed)
//	    auth denied (503): <why>
//	    auth basic realm "<realm>" secret <ns/name> <auth-file|auth-map> <n> users
//	    auth external <url>[ method M][ signin <url>][ response-headers A,B][ request-redirect <v>][ always-set-cookie]
//	    affinity cookie path <path>/ (the path as declared)   a Prefix path declared with its slash
//	backend <ID> <protocol> <state>[ <policy>]    sorted by ID
//	  canary <backend ID> from <source> [header <name> [value <q>|pattern <q>]] [cookie <name>] weight <w>/<total>[ sticky]
//	  affinity cookie <name> <balanced|persistent>[ path <p>][ domain <d>][ max-age <s>][ expires <s>][ samesite <v>]...
//	  endpoint <ip:port>                          or "no ready endpoints"
//	tls-host <name>                               sorted; plain HTTP to it is redirected
//	certificate <secret> sha256:<fingerprint>     sorted by secret
//	  host <name>
//	l4 <tcp|udp> <port> -> <ns/name:port> <state>[ proxy-protocol-in][ proxy-protocol-out] from <source>
//	  endpoint <ip:port>                          or "no ready endpoints"
//	l4-settings timeout <d> connect-timeout <d> next-upstream <on|off> tries <n> next-upstream-timeout <d> responses <n>
//
// Fallback and route lines end in " force-ssl-redirect" or " ssl-redirect"
// when plain HTTP is redirected there: forced, or on a tls host; then
// " preserve-trailing-slash" when that redirect keeps the trailing slash,
// then " use-port-in-redirects" when its Location names the HTTPS port.
// Route lines end in " redirect <code> <url>" (then " relative") when the
// route answers a redirect instead of proxying.
// A route or fallback line then ends in its rewrite, each part when set:
// " rewrite <nginx|native> <target>" (" rewrite-redirect ..." for an
// absolute URL), " upstream-vhost <host>", " x-forwarded-prefix <value>".
// Then, when the Ingress sets a request policy, " policy " and its
// settings (see policyLine). The cors and auth lines follow the fallback
// or route they belong to: a fallback carries those of the Ingress that
// supplies its settings (SPEC §6).
// A backend's policy is written only when it is not round_robin:
// "least_conn", or "hash <upstream-hash-by expression>".
// A backend ID is followed by " port <name>" where the declaration wrote
// the Service port by name.
// Routes are listed in precedence order. A path or pattern that is empty or
// holds spaces, quotes, control or non-ASCII bytes is written Go-quoted. A
// source with no Ingress (the global default backend) is written as its
// field, e.g. "from --default-backend".
func (t *Table) WriteText(w io.Writer) error {
	_, err := io.WriteString(w, t.String())
	return err
}

// String returns the WriteText rendering.
func (t *Table) String() string {
	var b strings.Builder
	t.writeText(&b)
	return b.String()
}

// writeText writes the lines that say where requests go, and at each place
// on them the sections' text parts (see textParts).
func (t *Table) writeText(b *strings.Builder) {
	b.WriteString("digest " + t.digest + "\n")
	st := &sectionText

	for _, vh := range t.hosts {
		name := vh.Name
		if name == "" {
			name = "* catch-all"
		}
		b.WriteString("host " + name)
		for _, f := range st.hostSuffix {
			f(b, vh)
		}
		b.WriteString("\n")
		if vh.Fallback == nil {
			b.WriteString("  fallback none (404)")
		} else {
			b.WriteString("  fallback " + vh.Fallback.ID + portText(vh.Fallback, vh.FallbackPortName) + sourceText(vh.FallbackSource))
		}
		for _, f := range st.fallbackSuffix {
			f(b, vh)
		}
		b.WriteString("\n")
		for _, f := range st.fallbackLines {
			f(b, vh)
		}
		for _, f := range st.hostLines {
			f(b, vh)
		}
		for _, r := range vh.Routes {
			b.WriteString("  route " + r.Type.String() + " ")
			switch r.Type {
			case Prefix:
				b.WriteString(quoteText(r.Path, r.Path == ""))
			case Regex:
				engine := "uncompiled"
				if r.Regexp != nil {
					engine = "backtracking"
					if r.Regexp.Linear() {
						engine = "linear"
					}
				}
				b.WriteString(engine + " " + quoteText(r.Path, false))
			default:
				b.WriteString(quoteText(r.Path, false))
			}
			backend := "none"
			if r.Backend != nil {
				backend = r.Backend.ID + portText(r.Backend, r.PortName)
			}
			b.WriteString(" -> " + backend + sourceText(r.Source))
			for _, f := range st.routeSuffix {
				f(b, vh, r)
			}
			b.WriteString("\n")
			for _, f := range st.routeLines {
				f(b, vh, r)
			}
		}
	}

	for _, be := range t.backends {
		b.WriteString("backend " + be.ID + " " + be.Protocol.String() + " " + be.State.String())
		for _, f := range st.backendSuffix {
			f(b, be)
		}
		b.WriteString("\n")
		for _, f := range st.backendLines {
			f(b, be)
		}
		if len(be.Endpoints) == 0 {
			b.WriteString("  no ready endpoints\n")
		}
		for _, ep := range be.Endpoints {
			b.WriteString("  endpoint " + ep + "\n")
		}
	}

	for _, h := range t.tlsHosts {
		b.WriteString("tls-host " + h + "\n")
	}

	for _, c := range t.certs {
		b.WriteString("certificate " + c.Secret + " sha256:" + c.Fingerprint + "\n")
		for _, h := range c.Hosts {
			b.WriteString("  host " + h + "\n")
		}
	}
	t.writeL4Text(b)
	t.writePassthroughText(b)
}

// quoteText writes s bare unless that would be ambiguous on a line.
// rootPrefix writes the root Prefix (key "") as "/".
func quoteText(s string, rootPrefix bool) string {
	if rootPrefix {
		return "/"
	}
	if s == "" {
		return `""`
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' {
			return strconv.Quote(s)
		}
	}
	return s
}

// portText is " port <name>" for a declaration that wrote its Service
// port by name (a PortName field), "" for one that wrote the number or
// whose port did not resolve (the backend ID spells it then).
func portText(be *Backend, name uint8) string {
	if name == 0 || be == nil || be.Port == 0 || int(name) > len(be.PortNames) {
		return ""
	}
	return " port " + be.PortNames[name-1]
}

func sourceText(s Source) string {
	switch {
	case s.Name != "":
		return " from " + s.String()
	case s.Field != "":
		return " from " + s.Field
	}
	return ""
}
