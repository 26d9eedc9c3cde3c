package router

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClientAddr(t *testing.T) {
	lb := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::ffff:192.168.0.0/112")}
	tests := []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		xff     []string
		want    string
	}{
		{"no trusted ranges: the peer, whatever the header says", nil, "10.1.2.3:5000", []string{"203.0.113.9"}, "10.1.2.3"},
		{"untrusted peer: its header is ignored", lb, "198.51.100.4:5000", []string{"203.0.113.9"}, "198.51.100.4"},
		{"trusted peer: the client it names", lb, "10.1.2.3:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"trusted peer without the header: the peer", lb, "10.1.2.3:5000", nil, "10.1.2.3"},
		{"recursive: trusted hops are skipped from the right", lb, "10.1.2.3:5000", []string{"203.0.113.9, 10.9.9.9, 10.8.8.8"}, "203.0.113.9"},
		{"a spoofed entry left of the real client is not believed", lb, "10.1.2.3:5000", []string{"1.1.1.1, 203.0.113.9"}, "203.0.113.9"},
		{"several header lines read as one list", lb, "10.1.2.3:5000", []string{"203.0.113.9", "10.4.4.4"}, "203.0.113.9"},
		{"all entries trusted: the leftmost", lb, "10.1.2.3:5000", []string{"10.7.7.7, 10.8.8.8"}, "10.7.7.7"},
		{"garbage at the right: the peer", lb, "10.1.2.3:5000", []string{"203.0.113.9, unknown"}, "10.1.2.3"},
		{"garbage left of the client is never read", lb, "10.1.2.3:5000", []string{"unknown, 203.0.113.9"}, "203.0.113.9"},
		{"garbage after trusted hops: the last address read", lb, "10.1.2.3:5000", []string{"203.0.113.9, unknown, 10.5.5.5"}, "10.5.5.5"},
		{"garbage in a later line: the address before it", lb, "10.1.2.3:5000", []string{"unknown", "10.5.5.5"}, "10.5.5.5"},
		{"a space separates entries too", lb, "10.1.2.3:5000", []string{"203.0.113.9 10.5.5.5"}, "203.0.113.9"},
		{"a line that starts with a separator is not read", lb, "10.1.2.3:5000", []string{"203.0.113.9", ",10.5.5.5"}, "10.1.2.3"},
		{"an empty first entry ends the walk", lb, "10.1.2.3:5000", []string{"203.0.113.9", ", 10.5.5.5"}, "10.5.5.5"},
		{"port 0 is not a port", lb, "10.1.2.3:5000", []string{"203.0.113.9, 10.5.5.5:0"}, "10.1.2.3"},
		{"an entry with a port", lb, "10.1.2.3:5000", []string{"203.0.113.9:4711"}, "203.0.113.9"},
		{"IPv6 entries, bracketed with a port", lb, "10.1.2.3:5000", []string{"[2001:db8::7]:443"}, "2001:db8::7"},
		{"a zone names another machine's interface", lb, "10.1.2.3:5000", []string{"fe80::1%eth0"}, "10.1.2.3"},
		{"empty entries are skipped", lb, "10.1.2.3:5000", []string{"203.0.113.9, ,"}, "203.0.113.9"},
		{"IPv4-mapped peer inside a mapped range", lb, "[::ffff:192.168.3.4]:5000", []string{"203.0.113.9"}, "203.0.113.9"},
		{"mapped entries come out as IPv4", lb, "10.1.2.3:5000", []string{"::ffff:203.0.113.9"}, "203.0.113.9"},
		// A range shorter than /96 written with a mapped address is an
		// IPv6 range: it holds no IPv4 peer (nginx's cidr match wants the
		// peer's family), and certainly not all of them.
		{"a mapped address over a /64 trusts no IPv4 peer", []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.1/64")}, "198.51.100.4:5000", []string{"203.0.113.9"}, "198.51.100.4"},
		{"a mapped /90 trusts no mapped peer", []netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.1/90")}, "[::ffff:198.51.100.4]:5000", []string{"203.0.113.9"}, "198.51.100.4"},
		{"a peer without a port", lb, "10.1.2.3", []string{"203.0.113.9"}, "203.0.113.9"},
		{"an IPv6 peer with a port", nil, "[2001:db8::5]:443", nil, "2001:db8::5"},
		{"an IPv6 peer without a port", nil, "2001:db8::5", nil, "2001:db8::5"},
		{"a link-local peer keeps its zone", nil, "[fe80::1%eth0]:80", nil, "fe80::1%eth0"},
		{"an unreadable peer", lb, "pipe", []string{"203.0.113.9"}, "invalid IP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RemoteAddr = tt.peer
			if tt.xff != nil {
				req.Header["X-Forwarded-For"] = tt.xff
			}
			r := newTestRouter(Options{ProxyRealIPCIDR: tt.trusted, TrustForwardedFor: true})
			assert.Equal(t, tt.want, r.ClientAddr(req).String())

			// Without TrustForwardedFor (behind a PROXY protocol load
			// balancer, say) the ranges name whose PROXY header counts,
			// never whose X-Forwarded-For: the peer, always.
			peerOnly := newTestRouter(Options{ProxyRealIPCIDR: tt.trusted})
			assert.Equal(t, peerAddr(tt.peer).String(), peerOnly.ClientAddr(req).String(), "without TrustForwardedFor")

			// Nor on a connection marked PeerIsClient (PROXY UNKNOWN, v2
			// LOCAL); a mark that says no changes nothing.
			marked := req.WithContext(PeerIsClient(req.Context(), func() bool { return true }))
			assert.Equal(t, peerAddr(tt.peer).String(), r.ClientAddr(marked).String(), "PeerIsClient")
			unmarked := req.WithContext(PeerIsClient(req.Context(), func() bool { return false }))
			assert.Equal(t, tt.want, r.ClientAddr(unmarked).String(), "PeerIsClient false")
		})
	}
}

// TestRealIPForwarded: X-Real-IP carries the client address on both
// upstream paths; X-Forwarded-For is that address alone, as ingress-nginx's
// $remote_addr, unless both TrustForwardedFor and ComputeFullForwardedFor
// are on, when the peer is appended to the client's header, as its
// $full_x_forwarded_for. The client's header always goes on as
// X-Original-Forwarded-For.
func TestRealIPForwarded(t *testing.T) {
	addr, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Real-Ip", r.Header.Get("X-Real-Ip"))
		w.Header()["X-Seen-Xff"] = r.Header["X-Forwarded-For"]
		w.Header()["X-Seen-Original"] = r.Header["X-Original-Forwarded-For"]
	})
	lb := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, path := range []string{"own", "net/http"} {
		for _, tt := range []struct {
			name         string
			o            Options
			peer         string
			xff          []string
			wantReal     string
			wantXFF      []string
			wantOriginal []string
		}{
			{"trusted peer", Options{TrustForwardedFor: true}, "10.0.0.5:1000", []string{"203.0.113.9"},
				"203.0.113.9", []string{"203.0.113.9"}, []string{"203.0.113.9"}},
			{"untrusted peer", Options{TrustForwardedFor: true}, "198.51.100.4:1000", []string{"203.0.113.9"},
				"198.51.100.4", []string{"198.51.100.4"}, []string{"203.0.113.9"}},
			{"not trusting the header", Options{}, "10.0.0.5:1000", []string{"203.0.113.9"},
				"10.0.0.5", []string{"10.0.0.5"}, []string{"203.0.113.9"}},
			{"full", Options{TrustForwardedFor: true, ComputeFullForwardedFor: true}, "10.0.0.5:1000", []string{"203.0.113.9"},
				"203.0.113.9", []string{"203.0.113.9, 10.0.0.5"}, []string{"203.0.113.9"}},
			{"full from an untrusted peer", Options{TrustForwardedFor: true, ComputeFullForwardedFor: true}, "198.51.100.4:1000", []string{"1.1.1.1", "203.0.113.9"},
				"198.51.100.4", []string{"1.1.1.1, 203.0.113.9, 198.51.100.4"}, []string{"1.1.1.1, 203.0.113.9"}},
			{"full without a header", Options{TrustForwardedFor: true, ComputeFullForwardedFor: true}, "10.0.0.5:1000", nil,
				"10.0.0.5", []string{"10.0.0.5"}, nil},
			{"full needs TrustForwardedFor", Options{ComputeFullForwardedFor: true}, "10.0.0.5:1000", []string{"203.0.113.9"},
				"10.0.0.5", []string{"10.0.0.5"}, []string{"203.0.113.9"}},
			{"an empty header is none", Options{}, "10.0.0.5:1000", []string{""},
				"10.0.0.5", []string{"10.0.0.5"}, nil},
		} {
			t.Run(path+" "+tt.name, func(t *testing.T) {
				o := tt.o
				o.ProxyRealIPCIDR = lb
				if path == "net/http" {
					o.Transport = http.DefaultTransport
				}
				r, _ := singleBackendRouter(t, addr, o)
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				req.Host = "web"
				req.RemoteAddr = tt.peer
				req.Header["X-Forwarded-For"] = tt.xff
				req.Header.Set("X-Original-Forwarded-For", "forged")
				rec := httptest.NewRecorder()
				r.ServeHTTP(rec, req)
				require.Equal(t, http.StatusOK, rec.Code)
				_, _ = io.Copy(io.Discard, rec.Body)
				assert.Equal(t, tt.wantReal, rec.Header().Get("X-Seen-Real-Ip"))
				assert.Equal(t, tt.wantXFF, rec.Header()["X-Seen-Xff"])
				assert.Equal(t, tt.wantOriginal, rec.Header()["X-Seen-Original"])
			})
		}
	}
}

// With forwarded-for-header naming another header, X-Original-Forwarded-For
// carries that header's value, as ingress-nginx sends
// $http_<forwarded-for-header> there; the full X-Forwarded-For still
// appends the peer to the client's X-Forwarded-For ($http_x_forwarded_for).
func TestOriginalForwardedForFollowsForwardedForHeader(t *testing.T) {
	addr, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Real-Ip", r.Header.Get("X-Real-Ip"))
		w.Header()["X-Seen-Xff"] = r.Header["X-Forwarded-For"]
		w.Header()["X-Seen-Original"] = r.Header["X-Original-Forwarded-For"]
	})
	lb := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, path := range []string{"own", "net/http"} {
		for _, full := range []bool{false, true} {
			t.Run(fmt.Sprint(path, " full=", full), func(t *testing.T) {
				o := Options{TrustForwardedFor: true, ComputeFullForwardedFor: full, ProxyRealIPCIDR: lb, ForwardedForHeader: "X-Client-Chain"}
				if path == "net/http" {
					o.Transport = http.DefaultTransport
				}
				r, _ := singleBackendRouter(t, addr, o)
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				req.Host, req.RemoteAddr = "web", "10.0.0.5:1000"
				req.Header.Set("X-Client-Chain", "203.0.113.9")
				req.Header.Set("X-Forwarded-For", "1.1.1.1")
				rec := httptest.NewRecorder()
				r.ServeHTTP(rec, req)
				require.Equal(t, http.StatusOK, rec.Code)
				_, _ = io.Copy(io.Discard, rec.Body)
				assert.Equal(t, "203.0.113.9", rec.Header().Get("X-Seen-Real-Ip"))
				wantXFF := []string{"203.0.113.9"}
				if full {
					wantXFF = []string{"1.1.1.1, 10.0.0.5"}
				}
				assert.Equal(t, wantXFF, rec.Header()["X-Seen-Xff"])
				assert.Equal(t, []string{"203.0.113.9"}, rec.Header()["X-Seen-Original"])
			})
		}
	}
}

// With forwarded-host-header naming another header, X-Original-Forwarded-Host
// carries that header's value on both upstream ways, as ingress-nginx sends
// $http_<forwarded-host-header> there (nginx.tmpl, buildForwardedHost: '_'
// and '-' alike); the client's X-Forwarded-Host is then not read, and a
// change while serving takes effect at the next request.
func TestOriginalForwardedHostFollowsForwardedHostHeader(t *testing.T) {
	addr, _ := countingBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header()["X-Seen-Original-Host"] = r.Header["X-Original-Forwarded-Host"]
		w.Header()["X-Seen-Host"] = r.Header["X-Forwarded-Host"]
	})
	for _, path := range []string{"own", "net/http"} {
		for _, tt := range []struct {
			name, header string
			in           http.Header
			want         []string
		}{
			{"named header", "X-Real-Host", http.Header{"X-Real-Host": {"real.example"}, "X-Forwarded-Host": {"fwd.example"}}, []string{"real.example"}},
			{"underscores", "x_real_host", http.Header{"X-Real-Host": {"real.example"}}, []string{"real.example"}},
			{"repeated, joined", "X-Real-Host", http.Header{"X-Real-Host": {"a.example", "b.example"}}, []string{"a.example, b.example"}},
			{"not sent", "X-Real-Host", http.Header{"X-Forwarded-Host": {"fwd.example"}}, nil},
			{"Host", "host", http.Header{"X-Forwarded-Host": {"fwd.example"}}, []string{"web"}},
			{"default", "", http.Header{"X-Real-Host": {"real.example"}, "X-Forwarded-Host": {"fwd.example"}}, []string{"fwd.example"}},
		} {
			t.Run(path+" "+tt.name, func(t *testing.T) {
				o := Options{ForwardedHostHeader: tt.header}
				if path == "net/http" {
					o.Transport = http.DefaultTransport
				}
				r, _ := singleBackendRouter(t, addr, o)
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				req.Host = "web"
				req.Header = tt.in.Clone()
				req.Header.Set("X-Original-Forwarded-Host", "forged")
				rec := httptest.NewRecorder()
				r.ServeHTTP(rec, req)
				require.Equal(t, http.StatusOK, rec.Code)
				assert.Equal(t, tt.want, rec.Header()["X-Seen-Original-Host"])
				assert.Equal(t, []string{"web"}, rec.Header()["X-Seen-Host"])
			})
		}
		t.Run(path+" live", func(t *testing.T) {
			o := Options{}
			if path == "net/http" {
				o.Transport = http.DefaultTransport
			}
			r, _ := singleBackendRouter(t, addr, o)
			seen := func() []string {
				req := httptest.NewRequest(http.MethodGet, "/", nil)
				req.Host = "web"
				req.Header.Set("X-Real-Host", "real.example")
				req.Header.Set("X-Forwarded-Host", "fwd.example")
				rec := httptest.NewRecorder()
				r.ServeHTTP(rec, req)
				require.Equal(t, http.StatusOK, rec.Code)
				return rec.Header()["X-Seen-Original-Host"]
			}
			assert.Equal(t, []string{"fwd.example"}, seen())
			r.SetConfigMapOptions(Options{ForwardedHostHeader: "X-Real-Host"})
			assert.Equal(t, []string{"real.example"}, seen())
		})
	}
}

// TestPeerHost: a peer address without a port (a handler
// driven without a listener) keeps every group of an IPv6 address.
func TestPeerHost(t *testing.T) {
	for in, want := range map[string]string{
		"10.1.2.3:5000": "10.1.2.3", "10.1.2.3": "10.1.2.3", "[2001:db8::5]:443": "2001:db8::5",
		"2001:db8::5": "2001:db8::5", "[fe80::1%eth0]:80": "fe80::1%eth0", "pipe": "pipe",
	} {
		assert.Equal(t, want, peerHost(in), in)
	}
}

func BenchmarkClientAddr(b *testing.B) {
	r := newTestRouter(Options{ProxyRealIPCIDR: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, TrustForwardedFor: true})
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "10.1.2.3:5000"
	req.Header.Set("X-Forwarded-For", "203.0.113.9, 10.9.9.9")
	b.ReportAllocs()
	for b.Loop() {
		if !r.ClientAddr(req).IsValid() {
			b.Fatal("no address")
		}
	}
}
