// Package vars is ramjet's one vocabulary of nginx variables: the table of
// the variables ramjet knows, what each stands for when the table is built
// and per request, and the one parser of nginx's $name and ${name} syntax.
// Every place an Ingress or a ConfigMap writes a variable (auth URLs, the
// auth cache key and headers, rewrite targets, upstream-vhost, mirror
// targets, snippets and header values, the access log) is a Place: the
// subset of the table it expands and how it reads a "$". A variable a
// place cannot expand is refused with the same words everywhere.
package vars

import (
	"slices"
	"strings"
)

// Var is one variable of the table.
type Var uint8

// The variables. An alias (query_string for args) is a Var of its own, so
// a place accepts exactly the names it lists; Canon gives the variable it
// stands for.
const (
	None Var = iota
	// Known per request.
	Host
	HTTPHost
	BestHTTPHost
	ServerName
	Scheme
	PassAccessScheme
	RequestURI
	EscapedRequestURI
	URI
	DocumentURI
	Args
	QueryString
	IsArgs
	RemoteAddr
	RemoteUser
	RequestMethod
	RequestID
	ReqID
	HTTP    // $http_<name>
	Cookie  // $cookie_<name>
	Arg     // $arg_<name>
	Capture // $1 to $9 (${0} to ${9} in ramjet's syntax)
	// Known when the table is built: ingress-nginx sets them in each
	// location it writes.
	Namespace
	IngressName
	ServiceName
	ServicePort
	LocationPath
	// Known once the answer is sent: the access log's.
	Request
	ServerProtocol
	Status
	BodyBytesSent
	BytesSent
	RequestLength
	RequestTime
	Msec
	TimeISO8601
	TimeLocal
	UpstreamAddr
	UpstreamStatus
	UpstreamResponseTime
	UpstreamHeaderTime
	UpstreamConnectTime
	UpstreamResponseLength
	ProxyUpstreamName
	ProxyAlternativeUpstreamName
	// Unknown is a name of none of these, in a Lenient place.
	Unknown
	numVars
)

// When is when a variable's value is known.
type When uint8

const (
	PerRequest When = iota
	AtBuild
	AfterAnswer
)

// Info is a variable's row of the table.
type Info struct {
	// Name is the name without "$"; a family's ends in "_" ("http_").
	Name  string
	When  When
	Alias Var // the variable this name stands for, None if itself
	Means string
}

// Table is the vocabulary, by Var.
var Table = [numVars]Info{
	Host:                         {Name: "host", Means: "the request's host, lower case, without its port"},
	HTTPHost:                     {Name: "http_host", Means: "the Host header as sent"},
	BestHTTPHost:                 {Name: "best_http_host", Means: "the Host header as sent, or a trusted X-Forwarded-Host's first name"},
	ServerName:                   {Name: "server_name", Means: `the serving virtual host's name ("*.example.com" for a wildcard), "_" for the catch-all`},
	Scheme:                       {Name: "scheme", Means: `"http" or "https", the connection's`},
	PassAccessScheme:             {Name: "pass_access_scheme", Means: "the scheme the client used: a trusted X-Forwarded-Proto's (https behind a PROXY header naming port 443), else $scheme"},
	RequestURI:                   {Name: "request_uri", Means: "the request-target as received, with its query"},
	EscapedRequestURI:            {Name: "escaped_request_uri", Means: "$request_uri percent-encoded as a query value"},
	URI:                          {Name: "uri", Means: "the normalized path"},
	DocumentURI:                  {Name: "document_uri", Alias: URI},
	Args:                         {Name: "args", Means: "the query, without '?'"},
	QueryString:                  {Name: "query_string", Alias: Args},
	IsArgs:                       {Name: "is_args", Means: `"?" when the request has a query, else ""`},
	RemoteAddr:                   {Name: "remote_addr", Means: "the client's IP address"},
	RemoteUser:                   {Name: "remote_user", Means: "the user name of a Basic Authorization header"},
	RequestMethod:                {Name: "request_method", Means: "the method"},
	RequestID:                    {Name: "request_id", Means: "the request's X-Request-ID"},
	ReqID:                        {Name: "req_id", Alias: RequestID},
	HTTP:                         {Name: "http_", Means: "the request header <name>, '_' for '-' (or '_' where such names are kept)"},
	Cookie:                       {Name: "cookie_", Means: "the request's cookie <name>"},
	Arg:                          {Name: "arg_", Means: "the query argument <name>"},
	Capture:                      {Name: "1", Means: "a capture of the last regular expression matched"},
	Namespace:                    {Name: "namespace", When: AtBuild, Means: "the Ingress's namespace"},
	IngressName:                  {Name: "ingress_name", When: AtBuild, Means: "the Ingress's name"},
	ServiceName:                  {Name: "service_name", When: AtBuild, Means: "the backend Service's name"},
	ServicePort:                  {Name: "service_port", When: AtBuild, Means: "the backend Service's port, its number or else its name"},
	LocationPath:                 {Name: "location_path", When: AtBuild, Means: "the path the route declares"},
	Request:                      {Name: "request", When: AfterAnswer, Means: "the request line"},
	ServerProtocol:               {Name: "server_protocol", When: AfterAnswer, Means: "the protocol, HTTP/1.1"},
	Status:                       {Name: "status", When: AfterAnswer, Means: "the status answered"},
	BodyBytesSent:                {Name: "body_bytes_sent", When: AfterAnswer, Means: "the bytes of body answered"},
	BytesSent:                    {Name: "bytes_sent", When: AfterAnswer, Means: "the bytes answered"},
	RequestLength:                {Name: "request_length", When: AfterAnswer, Means: "the bytes received"},
	RequestTime:                  {Name: "request_time", When: AfterAnswer, Means: "the seconds the request took"},
	Msec:                         {Name: "msec", When: AfterAnswer, Means: "the time it ended, in seconds"},
	TimeISO8601:                  {Name: "time_iso8601", When: AfterAnswer, Means: "the time it began, ISO 8601"},
	TimeLocal:                    {Name: "time_local", When: AfterAnswer, Means: "the time it began, common log format"},
	UpstreamAddr:                 {Name: "upstream_addr", When: AfterAnswer, Means: "the endpoint that answered"},
	UpstreamStatus:               {Name: "upstream_status", When: AfterAnswer, Means: "the backend's status"},
	UpstreamResponseTime:         {Name: "upstream_response_time", When: AfterAnswer, Means: "the backend's seconds"},
	UpstreamHeaderTime:           {Name: "upstream_header_time", When: AfterAnswer, Means: "the seconds to the backend's head"},
	UpstreamConnectTime:          {Name: "upstream_connect_time", When: AfterAnswer, Means: "the seconds opening the backend's connection"},
	UpstreamResponseLength:       {Name: "upstream_response_length", When: AfterAnswer, Means: "the backend's bytes"},
	ProxyUpstreamName:            {Name: "proxy_upstream_name", When: AfterAnswer, Means: "namespace-service-port"},
	ProxyAlternativeUpstreamName: {Name: "proxy_alternative_upstream_name", When: AfterAnswer, Means: "the canary's upstream name"},
}

// Canon is the variable v stands for: itself, or what its alias names.
func (v Var) Canon() Var {
	if v < numVars && Table[v].Alias != None {
		return Table[v].Alias
	}
	return v
}

func (v Var) String() string {
	switch {
	case v == Capture:
		return "$1 to $9"
	case v >= numVars || Table[v].Name == "":
		return "$?"
	case v == HTTP || v == Cookie || v == Arg:
		return "$" + Table[v].Name + "<name>"
	}
	return "$" + Table[v].Name
}

// Family is a variable named by a prefix and a name ($http_<name>).
func (v Var) Family() bool { return v == HTTP || v == Cookie || v == Arg }

// byName finds an exact name of the table.
var byName = func() map[string]Var {
	m := make(map[string]Var)
	for v := Var(1); v < numVars; v++ {
		if n := Table[v].Name; n != "" && v != Capture && !v.Family() {
			m[n] = v
		}
	}
	return m
}()

// Set is a set of variables: what a place expands.
type Set uint64

// Of is the set of vs.
func Of(vs ...Var) Set {
	var s Set
	for _, v := range vs {
		s |= 1 << v
	}
	return s
}

// Has reports whether s holds v.
func (s Set) Has(v Var) bool { return s&(1<<v) != 0 }

// Without is s less vs.
func (s Set) Without(vs ...Var) Set { return s &^ Of(vs...) }

// String lists s in the table's order: "$host, $scheme, $1 to $9".
func (s Set) String() string {
	var b strings.Builder
	for v := Var(1); v < Unknown; v++ {
		if s.Has(v) {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.String())
		}
	}
	return b.String()
}

// Lookup finds name (without "$") among s: an exact name first, then a
// family's prefix with a non-empty name after it.
func (s Set) Lookup(name string) (Ref, bool) {
	if v, ok := byName[name]; ok && s.Has(v) {
		return Ref{Var: v}, true
	}
	for _, f := range [...]Var{HTTP, Cookie, Arg} {
		if rest, ok := strings.CutPrefix(name, Table[f].Name); ok && rest != "" && s.Has(f) {
			return Ref{Var: f, Name: rest}, true
		}
	}
	if len(name) == 1 && name[0] >= '1' && name[0] <= '9' && s.Has(Capture) {
		return Ref{Var: Capture, N: name[0] - '0'}, true
	}
	return Ref{}, false
}

// RequestURIOf is $request_uri for a request-target as received. nginx
// keeps an absolute-form target ("http://h/p?q") from its path on ("/p?q"),
// from its query when it has no path ("http://h?q" is "?q"), and as "/"
// when it has neither; any other target is its own value. The result is a
// substring of target, or "/".
func RequestURIOf(target string) string {
	scheme, rest, ok := strings.Cut(target, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/?") {
		return target
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		return rest[i:]
	}
	return "/"
}

// Header is $http_<name> for the header name (canonical) of a request
// whose Host line is host, and whether the request sent it. A header sent
// on several lines is every line, joined with ", ", or "; " for Cookie, as
// nginx joins them. A header named Host is the Host line, which net/http
// keeps in Request.Host and out of Header; a map's Host counts only
// without a line (a request made by hand). The result allocates only to
// join several lines.
func Header(h map[string][]string, host, name string) (string, bool) {
	if name == "Host" && host != "" {
		return host, true
	}
	vs := h[name]
	switch len(vs) {
	case 0:
		return "", false
	case 1:
		return vs[0], true
	}
	if name == "Cookie" {
		return strings.Join(vs, "; "), true
	}
	return strings.Join(vs, ", "), true
}

// HeaderSpellings is Header where nginx keeps request header names with
// '_' (underscores_in_headers on, or ignore_invalid_headers off): its
// $http_<name> then reads every line whose name is name with '-' or '_'
// at each '-', in any case (ngx_http_variable_unknown_header); name is
// canonical, with '-' for each '_' of the variable's. Lines under other
// spellings join after name's own, in the order of their names, as a
// header map keeps no order between names.
func HeaderSpellings(h map[string][]string, host, name string) (string, bool) {
	v, ok := Header(h, host, name)
	if !strings.Contains(name, "-") {
		return v, ok // no other spelling
	}
	var others []string
	for k := range h {
		if k != name && sameVariableName(k, name) {
			others = append(others, k)
		}
	}
	if len(others) == 0 {
		return v, ok
	}
	slices.Sort(others)
	var vs []string
	if ok {
		vs = append(vs, v)
	}
	for _, k := range others {
		vs = append(vs, h[k]...)
	}
	sep := ", "
	if name == "Cookie" {
		sep = "; "
	}
	return strings.Join(vs, sep), true
}

// sameVariableName reports whether header names a and b are read by one
// $http_<name>: equal but for ASCII case and '-' against '_'.
func sameVariableName(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		if variableByte(a[i]) != variableByte(b[i]) {
			return false
		}
	}
	return true
}

// variableByte is c as nginx compares a header name with a variable's:
// lower case, '-' as '_'.
func variableByte(c byte) byte {
	switch {
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A'
	case c == '-':
		return '_'
	}
	return c
}
