package h1

import "net/http"

// hostFieldKey asks a request's context for what it keeps of the Host
// field of an absolute-form request (HostField).
type hostFieldKey struct{}

// absoluteHost is the Host field of an absolute-form request, kept by its
// context: Request.Host holds the target's host instead.
type absoluteHost struct {
	field   string
	present bool
}

// HostField is the Host field as sent with req when its request-target is
// in absolute form ("GET http://a.example/x"), whose host Request.Host
// holds instead, as net/http's server has it: nginx's $http_host beside
// $host. present is false when the request had no Host field (HTTP/1.0).
// ok is false for any other request, or one this package did not read,
// whose Request.Host is then the only host known.
func HostField(req *http.Request) (field string, present, ok bool) {
	h, _ := req.Context().Value(hostFieldKey{}).(*absoluteHost)
	if h == nil {
		return "", false, false
	}
	return h.field, h.present, true
}
