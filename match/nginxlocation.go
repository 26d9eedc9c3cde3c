package match

import "slices"

// NginxLocationType is the type of the location ingress-nginx writes for a
// Regex route that a host in its regex mode made of a Prefix or Exact
// path (Route.NginxLocation). Such a host matches every path as a regular
// expression, but the locations keep the declared types, a Prefix path of
// an Ingress without use-regex becoming its "p/" Prefix location and its
// "p" Exact twin (controller/location.go updateServerLocations); the type
// and path name the route's external auth location (nginx.tmpl's
// buildAuthLocation), its URI in the auth subrequest.
type NginxLocationType uint8

const (
	NginxExact NginxLocationType = iota + 1
	NginxPrefix
)

func (t NginxLocationType) String() string {
	switch t {
	case NginxExact:
		return "Exact"
	case NginxPrefix:
		return "Prefix"
	}
	return ""
}

// nginxLocationSection encodes the type only where it names an external
// auth location, the one place it shows; a table without such routes
// encodes as if the section did not exist.
var nginxLocationSection = section{
	name:  "nginx-location",
	route: []string{"NginxLocation"},
	digest: []digestPart{{
		tag: "nginx-location",
		hostHas: func(vh *VirtualHost) bool {
			return slices.ContainsFunc(vh.Routes, func(r *Route) bool {
				return r.NginxLocation != 0 && r.Auth != nil && r.Auth.External != nil
			})
		},
		route: func(e *encoder, r *Route) { e.num(int(r.NginxLocation)) },
	}},
}
