package router

import (
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router/h2"
)

// echoBackend is an endpoint that reports what it received in response
// headers: its name, its own address, the request-target and Host it saw,
// and every request header under "Seen-<name>".
func echoBackend(t testing.TB, name string) (*httptest.Server, string) {
	t.Helper()
	s := httptest.NewServer(echoHandler(name))
	t.Cleanup(s.Close)
	return s, s.Listener.Addr().String()
}

func echoHandler(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Backend", name)
		h.Set("X-Endpoint", r.Context().Value(http.LocalAddrContextKey).(net.Addr).String())
		h.Set("X-Seen-Uri", r.RequestURI)
		h.Set("X-Seen-Host", r.Host)
		for k, v := range r.Header {
			h["Seen-"+k] = v
		}
		_, _ = io.WriteString(w, name+"\n")
	})
}

// deadAddr is an address nothing listens on.
func deadAddr(t testing.TB) string {
	t.Helper()
	// A TCP socket bound but never listening refuses every connection, and
	// holds its port for the whole test: a port merely closed again could be
	// taken by any test running beside this one, and the "dead" endpoint
	// would answer.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
}

func backend(id string, proto match.Protocol, state match.BackendState, endpoints ...string) *match.Backend {
	ns, rest, _ := strings.Cut(id, "/")
	name, _, _ := strings.Cut(rest, ":")
	return &match.Backend{ID: id, Namespace: ns, Name: name, Port: 80, Protocol: proto, State: state, Endpoints: endpoints}
}

func httpBackend(id string, endpoints ...string) *match.Backend {
	return backend(id, match.HTTP, match.Serving, endpoints...)
}

var routeOrder int32

func route(typ match.PathType, path string, b *match.Backend) *match.Route {
	routeOrder++
	key := path
	if typ == match.Prefix {
		key = strings.TrimRight(path, "/")
	}
	return &match.Route{Type: typ, Path: key, Backend: b, Order: routeOrder,
		Source: match.Source{Namespace: "prod", Name: "test", Field: "spec.rules[0].http.paths[0]"}}
}

func vhost(name string, fallback *match.Backend, routes ...*match.Route) *match.VirtualHost {
	return &match.VirtualHost{Name: name, Fallback: fallback, Routes: routes}
}

// table builds a table over hosts, listing every backend they reference;
// inputs go into the digest, so equal inputs and hosts give equal digests.
func table(inputs string, hosts ...*match.VirtualHost) *match.Table {
	seen := map[*match.Backend]bool{}
	var backends []*match.Backend
	add := func(b *match.Backend) {
		if b != nil && !seen[b] {
			seen[b] = true
			backends = append(backends, b)
		}
	}
	for _, vh := range hosts {
		add(vh.Fallback)
		for _, r := range vh.Routes {
			add(r.Backend)
		}
	}
	return mustTable(match.Spec{VirtualHosts: hosts, Backends: backends, Inputs: []byte(inputs)})
}

// mustTable is match.New for the tests' own specs, which are valid: a
// refusal is a broken test and panics.
func mustTable(s match.Spec) *match.Table {
	t, err := match.New(s)
	if err != nil {
		panic(err)
	}
	return t
}

// records collects Observer records: all and ch hold the fields that say
// what was decided (see decided), raw the records as observed.
type records struct {
	mu  sync.Mutex
	all []Record
	raw []Record
	ch  chan Record
}

// decided keeps the fields of a record that tests state in full; timings,
// the request and the other derived fields are tested on their own.
func decided(r Record) Record {
	return Record{Generation: r.Generation, Method: r.Method, Host: r.Host, Path: r.Path, Status: r.Status,
		Backend: r.Backend, Route: r.Route, Endpoint: r.Endpoint, Reason: r.Reason, Tries: r.Tries}
}

func newRecords() *records { return &records{ch: make(chan Record, 1024)} }

func (rs *records) observe(raw Record) {
	r := decided(raw)
	rs.mu.Lock()
	rs.raw = append(rs.raw, raw)
	rs.all = append(rs.all, r)
	rs.mu.Unlock()
	rs.ch <- r
}

func (rs *records) last(t testing.TB) Record {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	require.NotEmpty(t, rs.all, "no record observed")
	return rs.all[len(rs.all)-1]
}

func quietLogger() *slog.Logger {
	return slog.New(slog.DiscardHandler)
}

func newTestRouter(o Options) *Router {
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	return New(o)
}

// proxyPath is one of the router's two ways to a backend: its own
// HTTP/1.1 client (rt nil) or ReverseProxy over an Options.Transport.
type proxyPath struct {
	name string
	rt   http.RoundTripper
}

// proxyPaths are both ways, with a Transport of their own for the caller.
func proxyPaths() []proxyPath {
	return []proxyPath{{"fast", nil}, {"nethttp", &http.Transport{}}}
}

// serve runs one request through the handler without a listener.
func serve(r http.Handler, method, host, target string, header http.Header) *http.Response {
	req := httptest.NewRequest(method, target, nil)
	req.Host = host
	if host == "" {
		// Only HTTP/1.0 may omit the Host; later versions answer 400.
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/1.0", 1, 0
	}
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t testing.TB, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return string(b)
}

// rawServer listens on loopback and runs serve on each connection it
// accepts, for backends that must write bytes net/http never would. Every
// connection still open is closed, and every serve waited for, when the
// test ends; serve need not close its connection.
func rawServer(t testing.TB, serve func(c net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				serve(c)
			})
		}
	})
	return l.Addr().String()
}

// h1AndH2CServer serves h on loopback over HTTP/1.1 and over cleartext
// HTTP/2 with prior knowledge, until the test ends.
func h1AndH2CServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetHTTP1(true)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	ownH2(s.Config)
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// ownH2 has s serve HTTP/2 with router/h2, the project's own server,
// unless RAMJET_TEST_H2SERVER=net/http asks for net/http's: the router's
// HTTP/2 tests run against either.
func ownH2(s *http.Server) {
	if os.Getenv("RAMJET_TEST_H2SERVER") == "net/http" {
		return
	}
	h2.ConfigureServer(s, &h2.Server{ErrorLog: log.New(io.Discard, "", 0)})
}

// h2cTransport speaks cleartext HTTP/2 with prior knowledge; its idle
// connections close when the test ends.
func h2cTransport(t testing.TB) *http.Transport {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}
