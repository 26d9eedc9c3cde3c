package gatewayapi

import (
	"net/textproto"
	"path/filepath"
	"strings"
	"testing"

	"ramjet.dev/ramjet/match"
)

// headerCase is one request of a header modifier conformance test: the
// headers sent (by the client, or with response by the backend), the
// headers the other side must see, joined by "," as the suite compares
// them, and those it must not.
type headerCase struct {
	path       string
	send, want map[string]string
	absent     []string
}

type hdr = map[string]string

var headerConformance = []struct {
	test     string
	response bool
	cases    []headerCase
}{
	{test: "httproute-request-header-modifier", cases: []headerCase{
		{"/set", hdr{"Some-Other-Header": "val"}, hdr{"Some-Other-Header": "val", "X-Header-Set": "set-overwrites-values"}, nil},
		{"/set", hdr{"Some-Other-Header": "val", "X-Header-Set": "some-other-value"}, hdr{"Some-Other-Header": "val", "X-Header-Set": "set-overwrites-values"}, nil},
		{"/add", hdr{"Some-Other-Header": "val"}, hdr{"Some-Other-Header": "val", "X-Header-Add": "add-appends-values"}, nil},
		{"/add", hdr{"Some-Other-Header": "val", "X-Header-Add": "some-other-value"}, hdr{"Some-Other-Header": "val", "X-Header-Add": "some-other-value,add-appends-values"}, nil},
		{"/remove", hdr{"X-Header-Remove": "val"}, nil, []string{"X-Header-Remove"}},
		{"/multiple", hdr{"X-Header-Set-2": "set-val-2", "X-Header-Add-2": "add-val-2", "X-Header-Remove-2": "remove-val-2", "Another-Header": "another-header-val"},
			hdr{"X-Header-Set-1": "header-set-1", "X-Header-Set-2": "header-set-2", "X-Header-Add-1": "header-add-1", "X-Header-Add-2": "add-val-2,header-add-2", "X-Header-Add-3": "header-add-3", "Another-Header": "another-header-val"},
			[]string{"X-Header-Remove-1", "X-Header-Remove-2"}},
		{"/case-insensitivity", hdr{"x-header-set": "original-val-set", "x-header-add": "original-val-add", "x-header-remove": "original-val-remove", "Another-Header": "another-header-val"},
			hdr{"X-Header-Set": "header-set", "X-Header-Add": "original-val-add,header-add", "Another-Header": "another-header-val"},
			[]string{"x-header-remove", "X-Header-Remove"}},
	}},
	{test: "httproute-response-header-modifier", response: true, cases: []headerCase{
		{"/set", hdr{"Some-Other-Header": "val"}, hdr{"Some-Other-Header": "val", "X-Header-Set": "set-overwrites-values"}, nil},
		{"/set", hdr{"Some-Other-Header": "val", "X-Header-Set": "some-other-value"}, hdr{"Some-Other-Header": "val", "X-Header-Set": "set-overwrites-values"}, nil},
		{"/add", hdr{"Some-Other-Header": "val"}, hdr{"Some-Other-Header": "val", "X-Header-Add": "add-appends-values"}, nil},
		{"/add", hdr{"Some-Other-Header": "val", "X-Header-Add": "some-other-value"}, hdr{"Some-Other-Header": "val", "X-Header-Add": "some-other-value,add-appends-values"}, nil},
		{"/remove", hdr{"X-Header-Remove": "val"}, nil, []string{"X-Header-Remove"}},
		{"/multiple", hdr{"X-Header-Set-2": "set-val-2", "X-Header-Add-2": "add-val-2", "X-Header-Remove-2": "remove-val-2", "Another-Header": "another-header-val", "X-Header-Remove-1": "val"},
			hdr{"X-Header-Set-1": "header-set-1", "X-Header-Set-2": "header-set-2", "X-Header-Add-1": "header-add-1", "X-Header-Add-2": "add-val-2,header-add-2", "X-Header-Add-3": "header-add-3", "Another-Header": "another-header-val"},
			[]string{"X-Header-Remove-1", "X-Header-Remove-2"}},
		{"/case-insensitivity", hdr{"x-header-set": "original-val-set", "x-header-add": "original-val-add", "x-header-remove": "original-val-remove", "Another-Header": "another-header-val"},
			hdr{"X-Header-Set": "header-set", "X-Header-Add": "original-val-add,header-add", "Another-Header": "another-header-val"},
			[]string{"x-header-remove", "X-Header-Remove"}},
	}},
}

// TestHeaderConformance replays the header modifier tests of the Gateway
// API conformance suite (tests/<name>.go, v1.6.3) through the route's
// snippet steps, as the router applies them.
func TestHeaderConformance(t *testing.T) {
	for _, c := range headerConformance {
		t.Run(c.test, func(t *testing.T) {
			w := load(t, filepath.Join("testdata", "conformance", "base.yaml"), filepath.Join("testdata", "conformance", c.test+".yaml"))
			res, ws := w.compile()
			if len(ws)+len(res.Warnings) != 0 {
				t.Fatalf("warnings: %v %v", ws, res.Warnings)
			}
			for _, hc := range c.cases {
				found := res.Table.Lookup("192.0.2.1", hc.path)
				if found.Route == nil || found.Route.Snippet == nil || found.Backend.Name != "infra-backend-v1" {
					t.Errorf("%s: no route with header steps to infra-backend-v1", hc.path)
					continue
				}
				h := map[string][]string{}
				for k, v := range hc.send {
					h[textproto.CanonicalMIMEHeaderKey(k)] = []string{v}
				}
				reqHeader := h
				if c.response {
					reqHeader = nil
				}
				out := found.Route.Snippet.Run(&match.SnippetRequest{Host: "192.0.2.1", URI: hc.path, Header: reqHeader})
				if c.response {
					match.ApplyResponse(out.Response, h, 200)
				} else {
					match.ApplyRequest(out.Request, h)
				}
				for k, v := range hc.want {
					if got := strings.Join(h[textproto.CanonicalMIMEHeaderKey(k)], ","); got != v {
						t.Errorf("%s %s: %s is %q, %s.go wants %q", c.test, hc.path, k, got, c.test, v)
					}
				}
				for _, k := range hc.absent {
					if v, ok := h[textproto.CanonicalMIMEHeaderKey(k)]; ok {
						t.Errorf("%s %s: %s is %q, %s.go wants it absent", c.test, hc.path, k, v, c.test)
					}
				}
			}
		})
	}
}
