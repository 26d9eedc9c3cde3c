package gatewayapi

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// The suite's tlsroute-*.go tests. Those that make connections are served
// here through a loopback "Gateway" that does what the controller's TLS
// listener does (router.PeekClientHello, router.Router.PassthroughFor,
// router.PeekedConn.Splice) to loopback TLS backends, each answering with
// its name; the suite gives each Gateway an address of its own, so each
// runs with its Gateway alone. The others check status only.

// tlsSuiteCert is a self-signed certificate for every name, as the
// suite's backends present one for the name asked.
func tlsSuiteCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "backend"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"*.example.com", "*.com", "example.com"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// loadTLSConformance reads test's manifest over the suite's base keeping
// only Gateway gateway, points every Service's endpoints at a loopback
// TLS server answering with the Service's name, and serves the table on a
// loopback Gateway published as port 443. It returns the Gateway's
// address.
func loadTLSConformance(t *testing.T, test, gateway string) (string, *sync.Map) {
	t.Helper()
	var kept []string
	for _, f := range []string{"conformance/base.yaml", "conformance/" + test + ".yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		for doc := range strings.SplitSeq(string(data), "\n---") {
			var meta metav1.PartialObjectMetadata
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatal(err)
			}
			if meta.Kind == "Gateway" && meta.Name != gateway {
				continue
			}
			kept = append(kept, doc)
		}
	}
	objects := filepath.Join(t.TempDir(), test+".yaml")
	if err := os.WriteFile(objects, []byte(strings.Join(kept, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	Register()
	snap, _, err := manifest.Load(filepath.Join("testdata", "suite", "gatewayclass.yaml"), objects)
	if err != nil {
		t.Fatal(err)
	}
	cert := tlsSuiteCert(t)
	snap.EndpointSlices = nil
	for _, svc := range snap.Services {
		ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Served-By", svc.Namespace+"/"+svc.Name)
		}), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		port := int32(ln.Addr().(*net.TCPAddr).Port)
		sl := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: svc.Name,
				Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"},
				Conditions: discoveryv1.EndpointConditions{Ready: new(true)}}},
		}
		for _, sp := range svc.Spec.Ports {
			sl.Ports = append(sl.Ports, discoveryv1.EndpointPort{Name: new(sp.Name), Port: new(port)})
		}
		snap.EndpointSlices = append(snap.EndpointSlices, sl)
	}
	res := compile.Compile(*snap, compile.Options{AllowLoopbackEndpoints: true})
	for _, w := range res.Warnings {
		t.Logf("warning: %s", w)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	local := ln.Addr().(*net.TCPAddr).Port
	rt := router.New(router.Options{Logger: slog.New(slog.DiscardHandler), GatewayPorts: map[int]int32{local: 443}})
	rt.Publish(res.Table)
	verdicts := &sync.Map{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go passthroughGateway(rt, c, local, verdicts)
		}
	}()
	return ln.Addr().String(), verdicts
}

// passthroughGateway is the controller's TLS listener for one connection,
// for passthrough only: a connection that is not spliced is closed.
// verdicts records each server name's verdict.
func passthroughGateway(rt *router.Router, c net.Conn, local int, verdicts *sync.Map) {
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	name, replay, err := router.PeekClientHello(c)
	if err != nil {
		_ = c.Close()
		return
	}
	addr, release, v := rt.PassthroughFor(local, name)
	verdicts.Store(name, v)
	if v != router.Splice {
		_ = c.Close()
		return
	}
	defer release()
	backend, err := net.Dial("tcp", addr)
	if err != nil {
		_ = c.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	replay.Splice(backend)
}

// tlsRequest connects to the Gateway naming serverName and returns the
// backend that answers, or the error of a refused connection.
func tlsRequest(addr, serverName string) (string, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr,
		&tls.Config{ServerName: serverName, InsecureSkipVerify: true}) //nolint:gosec // the backends' own certificate; the test checks who answers
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+serverName+"\r\nConnection: close\r\n\r\n"); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", errors.New("status " + strconv.Itoa(resp.StatusCode))
	}
	return resp.Header.Get("X-Served-By"), nil
}

// TestConformanceTLSRoutePassthrough: the connections of the suite's
// TLSRoute tests, each to the Gateway it names: the backend that answers,
// or "" for a connection the Gateway refuses.
func TestConformanceTLSRoutePassthrough(t *testing.T) {
	const (
		tlsBackend  = infra + "tls-backend"
		tlsBackend2 = infra + "tls-backend-2"
		tcpBackend  = infra + "tcp-backend"
	)
	type conn struct{ sni, backend string }
	for _, c := range []struct {
		test, gateway string
		conns         []conn
	}{
		{"tlsroute-simple-same-namespace", "gateway-tlsroute", []conn{{"abc.example.com", tcpBackend}, {"other.example.com", ""}}},
		{"tlsroute-hostname-intersection", "gw-tlsroute-exact-hostname-x-1",
			[]conn{{"abc.example.com", tlsBackend}, {"non.matching.com", ""}}},
		{"tlsroute-hostname-intersection", "gw-tlsroute-more-specific-wc-hostname-x-2",
			[]conn{{"abc.example.com", tlsBackend}, {"other.example.com", tlsBackend2}, {"non.matching.com", ""}}},
		{"tlsroute-hostname-intersection", "gw-tlsroute-less-specific-wc-hostname-x-3",
			[]conn{{"abc.example.com", tlsBackend}, {"other.example.com", tlsBackend2}, {"non.matching.com", ""}}},
		{"tlsroute-hostname-intersection", "gw-tlsroute-empty-hostname-x-4",
			[]conn{{"abc.example.com", tlsBackend}, {"other.example.com", tlsBackend2}, {"non.matching.org", ""}}},
		{"tlsroute-invalid-backendref-nonexistent", "gateway-tlsroute-invalid-backend-ref-nonexistent", []conn{{"example.com", ""}}},
		{"tlsroute-invalid-backendref-unknown-kind", "gateway-tlsroute-invalid-backend-ref-unknown-kind", []conn{{"example.com", ""}}},
		{"tlsroute-invalid-reference-grant", "gateway-tlsroute-referencegrant", []conn{{"abc.example.com", ""}}},
	} {
		t.Run(c.test+"/"+c.gateway, func(t *testing.T) {
			addr, verdicts := loadTLSConformance(t, c.test, c.gateway)
			for _, cn := range c.conns {
				got, err := tlsRequest(addr, cn.sni)
				switch {
				case cn.backend == "" && err == nil:
					t.Errorf("%s.go: %s: answered by %s, want the connection refused", c.test, cn.sni, got)
				case cn.backend != "" && err != nil:
					t.Errorf("%s.go: %s: %v, want an answer from %s", c.test, cn.sni, err, cn.backend)
				case got != cn.backend:
					t.Errorf("%s.go: %s: answered by %q, want %q", c.test, cn.sni, got, cn.backend)
				}
				// A refused connection is the TLS listener's, not one
				// handed on to be terminated.
				if v, _ := verdicts.Load(cn.sni); cn.backend == "" && v != router.Refuse {
					t.Errorf("%s.go: %s: verdict %v, want Refuse", c.test, cn.sni, v)
				}
			}
		})
	}
}

// tlsSuiteObjects is suiteObjects with the test's TLSRoutes and
// ReferenceGrants too, and of the Gateways only the test's own: the
// suite gives each an address of its own, where ramjet's share ports.
func tlsSuiteObjects(t *testing.T, test string) Objects {
	t.Helper()
	o := suiteObjects(t, test)
	data, err := os.ReadFile(filepath.Join("testdata", "conformance", test+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	o.Gateways = slices.DeleteFunc(o.Gateways, func(g *gwv1.Gateway) bool {
		return !strings.Contains(string(data), "\n  name: "+g.Name+"\n")
	})
	for doc := range strings.SplitSeq(string(data), "\n---") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		var obj any
		switch meta.Kind {
		case "TLSRoute":
			o.TLSRoutes = append(o.TLSRoutes, &gwv1.TLSRoute{})
			obj = o.TLSRoutes[len(o.TLSRoutes)-1]
		case "ReferenceGrant":
			o.ReferenceGrants = append(o.ReferenceGrants, &gwv1.ReferenceGrant{})
			obj = o.ReferenceGrants[len(o.ReferenceGrants)-1]
		default:
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s: %v", meta.Kind, err)
		}
	}
	return o
}

// TestConformanceTLSRouteStatus: the conditions the suite's TLSRoute
// tests want of routes and listeners.
func TestConformanceTLSRouteStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	routeCond := func(t *testing.T, tr Translation, o Objects, route, gateway, typ string) brief {
		t.Helper()
		for _, r := range o.TLSRoutes {
			if r.Namespace+"/"+r.Name != route {
				continue
			}
			got, _ := tr.Status.TLSRoute(r, now)
			if got == nil {
				got = r
			}
			for _, p := range got.Status.Parents {
				if string(p.ParentRef.Name) != gateway {
					continue
				}
				for _, c := range p.Conditions {
					if c.Type == typ {
						return brief{c.Type, string(c.Status), c.Reason}
					}
				}
			}
			t.Fatalf("%s: no %s condition for %s in %+v", route, typ, gateway, got.Status.Parents)
		}
		t.Fatalf("no TLSRoute %s", route)
		return brief{}
	}
	listeners := func(t *testing.T, tr Translation, o Objects, gateway string) map[string]gwv1.ListenerStatus {
		t.Helper()
		for _, g := range o.Gateways {
			if g.Name == gateway {
				got, _ := tr.Status.Gateway(g, nil, now)
				out := map[string]gwv1.ListenerStatus{}
				for _, l := range got.Status.Listeners {
					out[string(l.Name)] = l
				}
				return out
			}
		}
		t.Fatalf("no Gateway %s", gateway)
		return nil
	}
	cond := func(l gwv1.ListenerStatus, typ string) brief {
		for _, c := range l.Conditions {
			if c.Type == typ {
				return brief{c.Type, string(c.Status), c.Reason}
			}
		}
		return brief{}
	}
	tlsRouteKinds := []gwv1.RouteGroupKind{{Group: new(gwv1.Group(Group)), Kind: "TLSRoute"}}

	routes := []struct {
		test, route, gateway string
		want                 brief
	}{
		{"tlsroute-simple-same-namespace", infra + "gateway-conformance-infra-test", "gateway-tlsroute", brief{"Accepted", "True", "Accepted"}},
		{"tlsroute-simple-same-namespace", infra + "gateway-conformance-infra-test", "gateway-tlsroute", brief{"ResolvedRefs", "True", "ResolvedRefs"}},
		{"tlsroute-hostname-intersection", infra + "tlsroute-more-specific-wc-hostname-x-1", "gw-tlsroute-exact-hostname-x-1", brief{"Accepted", "True", "Accepted"}},
		{"tlsroute-hostname-intersection", infra + "tlsroute-less-specific-wc-hostname-x-4", "gw-tlsroute-empty-hostname-x-4", brief{"ResolvedRefs", "True", "ResolvedRefs"}},
		{"tlsroute-invalid-backendref-nonexistent", infra + "invalid-backend-ref-nonexistent", "gateway-tlsroute-invalid-backend-ref-nonexistent", brief{"Accepted", "True", "Accepted"}},
		{"tlsroute-invalid-backendref-nonexistent", infra + "invalid-backend-ref-nonexistent", "gateway-tlsroute-invalid-backend-ref-nonexistent", brief{"ResolvedRefs", "False", "BackendNotFound"}},
		{"tlsroute-invalid-backendref-unknown-kind", infra + "invalid-backend-ref-unknown-kind", "gateway-tlsroute-invalid-backend-ref-unknown-kind", brief{"ResolvedRefs", "False", "InvalidKind"}},
		{"tlsroute-invalid-reference-grant", infra + "gateway-conformance-infra-test", "gateway-tlsroute-referencegrant", brief{"ResolvedRefs", "False", "RefNotPermitted"}},
		{"tlsroute-invalid-no-matching-listener", infra + "tlsroute-not-allowed-protocol-http", "gateway-tlsroute-http-only", brief{"Accepted", "False", "NotAllowedByListeners"}},
		{"tlsroute-invalid-no-matching-listener", infra + "tlsroute-not-allowed-protocol-https", "gateway-tlsroute-https-only", brief{"Accepted", "False", "NotAllowedByListeners"}},
		{"tlsroute-invalid-no-matching-listener", infra + "tlsroute-no-matching-section-name", "gateway-tlsroute-tls-passthrough-only", brief{"Accepted", "False", "NoMatchingParent"}},
		{"tlsroute-invalid-no-matching-listener-hostname", infra + "tlsroute-hostname-mismatch-1", "gateway-tls-exact-hostname", brief{"Accepted", "False", "NoMatchingListenerHostname"}},
		{"tlsroute-invalid-no-matching-listener-hostname", infra + "tlsroute-hostname-mismatch-2", "gateway-tls-wildcard-hostname", brief{"Accepted", "False", "NoMatchingListenerHostname"}},
	}
	for _, c := range routes {
		t.Run(c.test+"/"+c.route+"/"+c.want.Type, func(t *testing.T) {
			o := tlsSuiteObjects(t, c.test)
			tr := TranslateAll(o)
			if got := routeCond(t, tr, o, c.route, c.gateway, c.want.Type); got != c.want {
				t.Errorf("%s.go: %s on %s: %+v, want %+v", c.test, c.route, c.gateway, got, c.want)
			}
		})
	}

	// Gateways with no route attached (GatewayMustHaveZeroRoutes), and
	// the listener conditions of the listener tests.
	type want struct {
		listener string
		cond     brief
		kinds    []gwv1.RouteGroupKind // nil: not checked
		attached int32
	}
	for _, c := range []struct {
		test, gateway string
		want          []want
	}{
		{"tlsroute-simple-same-namespace", "gateway-tlsroute", []want{{"https", brief{"Accepted", "True", "Accepted"}, tlsRouteKinds, 1}}},
		{"tlsroute-invalid-no-matching-listener", "gateway-tlsroute-http-only", []want{{"http", brief{"Accepted", "True", "Accepted"}, nil, 0}}},
		{"tlsroute-invalid-no-matching-listener", "gateway-tlsroute-https-only", []want{{"https", brief{"Accepted", "True", "Accepted"}, nil, 0}}},
		{"tlsroute-invalid-no-matching-listener-hostname", "gateway-tls-exact-hostname", []want{{"tls", brief{"Accepted", "True", "Accepted"}, tlsRouteKinds, 0}}},
		{"tlsroute-invalid-no-matching-listener-hostname", "gateway-tls-wildcard-hostname", []want{{"tls", brief{"Accepted", "True", "Accepted"}, tlsRouteKinds, 0}}},
		{"tlsroute-listener-passthrough-supported-kinds", "gateway-tlsroute-passthrough-supported-kind",
			[]want{{"tls-passthrough", brief{"ResolvedRefs", "False", "InvalidRouteKinds"}, tlsRouteKinds, 0}}},
		{"tlsroute-listener-terminate-not-supported", "gateway-tlsroute-terminate-unsupported",
			[]want{{"tls-terminate", brief{"Accepted", "False", "UnsupportedValue"}, nil, 0}}},
		{"tlsroute-listener-mixed-termination-not-supported", "gateway-tlsroute-mixed-termination-not-supported",
			[]want{{"tls-terminate", brief{"Conflicted", "True", "ProtocolConflict"}, nil, 0}, {"tls-passthrough", brief{"Conflicted", "True", "ProtocolConflict"}, nil, 0}}},
	} {
		t.Run(c.test+"/"+c.gateway, func(t *testing.T) {
			o := tlsSuiteObjects(t, c.test)
			ls := listeners(t, TranslateAll(o), o, c.gateway)
			for _, w := range c.want {
				l, ok := ls[w.listener]
				if !ok {
					t.Fatalf("%s.go: no listener %s", c.test, w.listener)
				}
				if got := cond(l, w.cond.Type); got != w.cond {
					t.Errorf("%s.go: listener %s: %+v, want %+v", c.test, w.listener, got, w.cond)
				}
				if w.kinds != nil {
					if d := cmp.Diff(w.kinds, l.SupportedKinds); d != "" {
						t.Errorf("%s.go: listener %s supportedKinds (-want +got):\n%s", c.test, w.listener, d)
					}
				}
				if l.AttachedRoutes != w.attached {
					t.Errorf("%s.go: listener %s: %d routes attached, want %d", c.test, w.listener, l.AttachedRoutes, w.attached)
				}
			}
		})
	}
}
