package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/router/configmap"
	"ramjet.dev/ramjet/router/h1"
	"ramjet.dev/ramjet/router/h2"
)

// instance is a started controller: its bound addresses and the servers
// behind them.
type instance struct {
	// HTTPAddr, HTTPSAddr and DebugAddr are the bound addresses ("" when
	// that listener is off), so ":0" in the flags is usable.
	HTTPAddr, HTTPSAddr, DebugAddr string
	// WebhookAddr is the admission webhook's bound address ("" when off).
	WebhookAddr string

	router  *router.Router
	cluster *clusterController // cluster mode, else nil
	offline *controller        // offline mode, else nil
	// streams are the TCP and UDP service listeners (stream.go).
	streams *streams
	// draining is set from the stop signal until exit; /readyz fails.
	draining *atomic.Bool

	done chan error
}

// Wait blocks until the context given to start is done and every server and
// worker has stopped.
func (i *instance) Wait() error { return <-i.done }

// listening holds the opened listeners of one instance until it runs.
type listening struct {
	inst    *instance
	servers []*http.Server
	// loops are the traffic listeners' HTTP/1 servers (-http1-server
	// ramjet), each with its http.Server in servers as the fallback for
	// HTTP/2; shut down before servers.
	loops     []*h1.Server
	serve     []func() error
	listeners []net.Listener
	// streams, when set, are shut down with the servers.
	streams *streams
	// conns counts the traffic listeners' connections, for the metrics
	// and /nginx_status.
	conns *h1.ConnStats
}

// close releases the listeners of an instance that failed to start.
func (l *listening) close() {
	for _, ln := range l.listeners {
		ln.Close()
	}
}

// listen opens the traffic and debug listeners cfg names. On error the
// ones already opened are closed.
func listen(cfg config, rt *router.Router, debug http.Handler, draining *atomic.Bool, log *slog.Logger) (_ *listening, err error) {
	l := &listening{inst: &instance{router: rt, draining: draining, done: make(chan error, 1)}}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	open := func(addr string) (net.Listener, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		l.listeners = append(l.listeners, ln)
		return ln, nil
	}
	conns := cfg.connections()
	headerTimeout := conns.HeaderTimeout
	// The connection counts of the metrics and of /nginx_status.
	l.conns = new(h1.ConnStats)
	// openTraffic opens a listener for requests, reading PROXY headers
	// when asked to.
	openTraffic := func(addr string) (net.Listener, error) {
		ln, err := net.Listen(listenAddr("tcp", addr, cfg.routerKeys.DisableIPv6))
		if err == nil {
			l.listeners = append(l.listeners, ln)
		}
		if err != nil || !cfg.useProxyProtocol {
			return ln, err
		}
		return proxyProtocolListener(ln, cfg.proxyRealIPCIDR, headerTimeout), nil
	}
	errorLog := slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	// Every listener gets nginx's client timeouts (SPEC §13). A stalled
	// request body is the router's to time out (between reads, as nginx's
	// client_body_timeout): http.Server's ReadTimeout bounds the whole
	// request, which would cut long uploads and gRPC client streams.
	newServer := func(h http.Handler) *http.Server {
		return &http.Server{
			Handler:           h,
			IdleTimeout:       cmp.Or(conns.KeepAlive, defaultIdleTimeout),
			ReadHeaderTimeout: headerTimeout,
			ErrorLog:          errorLog,
		}
	}
	// newTrafficServer serves the router's listeners: behind PROXY
	// protocol with X-Forwarded-For believed, a connection whose header
	// named no client has the peer for its client.
	// The header keys of the listeners: use-http2 and the head's buffers
	// (large-client-header-buffers, client-header-buffer-size), which
	// bound HTTP/1 heads as nginx does in the loop (h1.HeaderBuffers:
	// 414, 400). HTTP/2, and HTTP/1 under -http1-server net/http, are
	// net/http's: a head over number×size (with net/http's slack) 431.
	hk := cfg.routerKeys.Headers
	if hk.LargeBufferSize == 0 {
		hk = configmap.DefaultHeaders()
	}
	traffic := catchAllHealth(rt, cfg.healthPath, cfg.liveNginxStatus, l.conns)
	newTrafficServer := func() *http.Server {
		srv := newServer(traffic)
		// OPTIONS * goes to the router, which refuses it as nginx and the
		// loop do (400, logged), rather than net/http's own 200.
		srv.DisableGeneralOptionsHandler = true
		srv.MaxHeaderBytes = hk.LargeBufferNumber * hk.LargeBufferSize
		// http2-max-concurrent-streams, for net/http's HTTP/2 and router/h2.
		srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: hk.HTTP2MaxConcurrentStreams}
		if cfg.useProxyProtocol {
			// Whether X-Forwarded-For is believed can change live
			// (use-forwarded-headers); the mark is read only then.
			srv.ConnContext = proxyPeerIsClient
		}
		// keep-alive "0": nginx's keepalive_timeout 0 closes every
		// connection after its response.
		srv.SetKeepAlivesEnabled(conns.KeepAlive > 0)
		return srv
	}

	// nginx's keepalive_time default (1.19.10 on), which ingress-nginx's
	// template leaves as it is: a connection older takes no new request.
	const keepaliveTime = time.Hour
	var ownLoop bool
	switch cfg.http1Server {
	case "", http1Ramjet:
		ownLoop = true
	case http1NetHTTP:
	default:
		return nil, fmt.Errorf("-http1-server: %q is neither %q nor %q", cfg.http1Server, http1Ramjet, http1NetHTTP)
	}
	var ownH2 bool
	switch cfg.http2Server {
	case "", http1Ramjet:
		ownH2 = ownLoop
	case http1NetHTTP:
	default:
		return nil, fmt.Errorf("-http2-server: %q is neither %q nor %q", cfg.http2Server, http1Ramjet, http1NetHTTP)
	}
	// serveTraffic serves a traffic listener: with the loop, HTTP/1 is the
	// loop's and srv serves what it hands over (HTTP/2 over TLS and with
	// prior knowledge), with the same handler, timeouts and ConnContext.
	serveTraffic := func(srv *http.Server, ln net.Listener) func() error {
		l.servers = append(l.servers, srv)
		if !ownLoop {
			countRequests(srv, conns.KeepAliveRequests)
			countConns(srv, l.conns, true)
			return func() error { return srv.Serve(ln) }
		}
		loop := &h1.Server{
			Handler:           srv.Handler,
			HeaderBuffers:     h1.HeaderBuffers{First: hk.FirstBufferSize, Number: hk.LargeBufferNumber, Size: hk.LargeBufferSize},
			ReadHeaderTimeout: srv.ReadHeaderTimeout,
			IdleTimeout:       srv.IdleTimeout,
			MaxRequests:       conns.KeepAliveRequests,
			MaxConnAge:        keepaliveTime,
			ErrorLog:          srv.ErrorLog,
			ConnContext:       srv.ConnContext,
			Fallback:          srv,
			// Heads the loop refuses are logged as nginx logs them.
			Refused: rt.Refused,
			Conns:   l.conns,
		}
		if ownH2 {
			loop.HTTP2 = &h2.Server{
				Handler:           srv.Handler,
				IdleTimeout:       srv.IdleTimeout,
				ReadHeaderTimeout: srv.ReadHeaderTimeout,
				MaxHeaderBytes:    srv.MaxHeaderBytes,
				// SETTINGS_MAX_CONCURRENT_STREAMS, as nginx's.
				MaxConcurrentStreams: uint32(srv.HTTP2.MaxConcurrentStreams),
				ErrorLog:             srv.ErrorLog,
				ConnContext:          srv.ConnContext,
				// keepalive_requests counts HTTP/2 streams too.
				MaxRequests: conns.KeepAliveRequests,
				MaxConnAge:  keepaliveTime,
				// Requests it refuses are logged as nginx logs them.
				Refused: rt.Refused,
				Conns:   l.conns,
			}
		} else {
			// srv serves the HTTP/2 the loop hands over.
			countRequests(srv, conns.KeepAliveRequests)
			countConns(srv, l.conns, false)
		}
		loop.SetKeepAlivesEnabled(conns.KeepAlive > 0)
		l.loops = append(l.loops, loop)
		return func() error { return loop.Serve(ln) }
	}

	if cfg.httpAddr != "" {
		ln, err := openTraffic(cfg.httpAddr)
		if err != nil {
			return nil, fmt.Errorf("-http-addr: %w", err)
		}
		l.inst.HTTPAddr = ln.Addr().String()
		protocols := new(http.Protocols)
		protocols.SetHTTP1(true)
		// gRPC clients with prior knowledge. use-http2 "false" takes "http2
		// on" out of nginx.tmpl's servers, which in nginx also stops a
		// cleartext listener reading the HTTP/2 preface.
		protocols.SetUnencryptedHTTP2(hk.UseHTTP2)
		srv := newTrafficServer()
		srv.Protocols = protocols
		if !ownLoop {
			// The loop refuses these framings itself.
			ln = h1.GuardFraming(ln)
		}
		l.serve = append(l.serve, serveTraffic(srv, ln))
	}
	if cfg.httpsAddr != "" {
		ln, err := openTraffic(cfg.httpsAddr)
		if err != nil {
			return nil, fmt.Errorf("-https-addr: %w", err)
		}
		l.inst.HTTPSAddr = ln.Addr().String()
		// The router's TLS config picks the certificate per SNI from the
		// serving table, so a rotated Secret takes effect on the next
		// handshake without restarting the listener. The handshake is done
		// before the server sees the connection, so that HTTP/1 requests
		// read through h1.GuardFramingConn (tlsListener).
		srv := newTrafficServer()
		srv.TLSConfig = rt.TLSConfig()
		if !hk.UseHTTP2 {
			// use-http2 "false": no "http2 on" in the HTTPS server.
			srv.TLSConfig.NextProtos = []string{"http/1.1"}
			protocols := new(http.Protocols)
			protocols.SetHTTP1(true)
			srv.Protocols = protocols
		}
		tcfg := srv.TLSConfig.Clone()
		tcfg.GetConfigForClient = rt.GetConfigForClient(tcfg)
		// The handshakes are tcfg's (tlsListener); srv's HTTP/2 serves
		// whatever suite ssl-ciphers gave them, as nginx does: net/http
		// would refuse to serve HTTP/2 at all on a list without
		// AES-128-GCM, and end connections on a suite RFC 9113 prohibits.
		srv.TLSConfig.CipherSuites = nil
		srv.HTTP2.PermitProhibitedCipherSuites = true
		// ssl-passthrough hosts (--enable-ssl-passthrough) and Gateway
		// TLS passthrough listeners (SPEC §12, §20); the ClientHello is
		// read first only while the table has some.
		passthrough := rt.PassthroughFor
		if m := cfg.streamEndpoint; m != nil {
			passthrough = func(port int, name string) (string, func(), router.PassthroughVerdict) {
				addr, release, v := rt.PassthroughFor(port, name)
				return m(addr), release, v
			}
		}
		tln := newTLSListener(ln, tcfg, headerTimeout, log, passthrough, rt.PeeksClientHello, !ownLoop, l.conns)
		l.listeners = append(l.listeners, tln)
		l.serve = append(l.serve, serveTraffic(srv, tln))
	}
	// The ports as bound, which ":0" leaves to the system.
	rt.SetGatewayPorts(gatewayPorts(l.inst.HTTPAddr, l.inst.HTTPSAddr, cfg))
	if cfg.debugAddr != "" {
		ln, err := open(cfg.debugAddr)
		if err != nil {
			return nil, fmt.Errorf("-debug-addr: %w", err)
		}
		l.inst.DebugAddr = ln.Addr().String()
		srv := newServer(debug)
		l.servers = append(l.servers, srv)
		l.serve = append(l.serve, func() error { return srv.Serve(ln) })
	}
	return l, nil
}

// run serves on every listener and runs the workers with ctx until stop
// is done or a listener fails; cancel is ctx's. On stop it drains first:
// /readyz fails and keep-alive connections close after their next
// response, while the listeners go on serving (load balancers need time
// to notice) and the workers go on publishing tables for drain. Then it
// closes the listeners, gives the requests in flight and the Upgrade
// tunnels up to shutdownTimeout, stops the workers, runs cleanup and reports on
// inst.done. A failed listener skips the drain.
func (l *listening) run(stop context.Context, ctx context.Context, cancel context.CancelFunc, cfg config, log *slog.Logger, workers []func(context.Context), cleanup func()) *instance {
	var servingWG, workerWG sync.WaitGroup
	serveErrs := make(chan error, len(l.serve))
	for _, s := range l.serve {
		servingWG.Go(func() {
			if err := s(); !errors.Is(err, http.ErrServerClosed) {
				serveErrs <- err
			}
		})
	}
	for _, w := range workers {
		workerWG.Go(func() { w(ctx) })
	}
	go func() {
		var serveErr error
		select {
		case <-stop.Done():
		case <-ctx.Done():
		case serveErr = <-serveErrs:
			log.Error("listener failed; shutting down", "err", serveErr)
		}
		l.inst.draining.Store(true)
		if serveErr == nil && cfg.drain > 0 {
			log.Info("draining: /readyz fails, listeners keep serving", "period", cfg.drain)
			for _, loop := range l.loops {
				loop.SetKeepAlivesEnabled(false)
			}
			for _, srv := range l.servers {
				srv.SetKeepAlivesEnabled(false)
			}
			t := time.NewTimer(cfg.drain)
			select {
			case <-t.C:
			case serveErr = <-serveErrs:
				log.Error("listener failed while draining; shutting down", "err", serveErr)
			}
			t.Stop()
		}
		timeout := cfg.connections().ShutdownTimeout
		log.Info("shutting down", "timeout", timeout)
		sctx, stopTimeout := stopContext(timeout)
		defer stopTimeout()
		errs := []error{serveErr}
		streamsDone := make(chan error, 1)
		go func() { streamsDone <- l.streams.Shutdown(sctx) }()
		for _, loop := range l.loops {
			if err := loop.Shutdown(sctx); err != nil {
				errs = append(errs, err)
				loop.Close() // the timeout ran out: drop what is left
			}
		}
		for _, srv := range l.servers {
			if err := srv.Shutdown(sctx); err != nil {
				errs = append(errs, err)
				srv.Close() // the timeout ran out: drop what is left
			}
		}
		// Upgrade tunnels (WebSockets), which the servers stop counting
		// once taken over, are kept until they end or the timeout runs
		// out, as nginx keeps upgraded connections.
		if err := l.inst.router.Shutdown(sctx); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, <-streamsDone)
		// Every request has ended its span: send them to the collector
		// in what is left of the timeout (otel.go).
		if err := cfg.tracing.shutdown(sctx); err != nil {
			errs = append(errs, err)
		}
		servingWG.Wait()
		cancel()
		workerWG.Wait()
		if cleanup != nil {
			cleanup()
		}
		l.inst.done <- errors.Join(errs...)
	}()
	return l.inst
}

// countRequests gives srv, a net/http server, nginx's keepalive_requests
// (keep-alive-requests), which it lacks and router/h1 and router/h2 have
// (MaxRequests): from a connection's nth request on, the response says
// Connection: close, which net/http's HTTP/1 server takes as the
// connection's last and its HTTP/2 server as the cue for GOAWAY, so that
// long-lived clients reconnect and spread over the replicas. Set after
// srv's Handler and ConnContext; n <= 0: no limit.
func countRequests(srv *http.Server, n int) {
	if n <= 0 {
		return
	}
	type countKey struct{}
	connContext := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		ctx = context.WithValue(ctx, countKey{}, new(atomic.Int64))
		if connContext != nil {
			ctx = connContext(ctx, c)
		}
		return ctx
	}
	h := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if count, _ := req.Context().Value(countKey{}).(*atomic.Int64); count != nil && count.Add(1) >= int64(n) {
			w = &lastResponse{ResponseWriter: w}
		}
		h.ServeHTTP(w, req)
	})
}

// countConns counts srv's connections in stats (nil: none) as nginx's
// stub_status, from its ConnState, which tells less: a new connection
// counts as reading (net/http reports nothing before its first head is
// whole, which most clients send at once), an active one as writing (a
// request being served), an idle one as waiting, the next head's bytes
// included; a hijacked one leaves the count, as net/http reports
// nothing more of it. Each request counts
// as its handler starts (a head net/http refuses is not counted). accepts:
// srv accepts its connections itself, rather than taking those the loop
// hands over (counted there). Set after srv's Handler and ConnContext.
func countConns(srv *http.Server, stats *h1.ConnStats, accepts bool) {
	if stats == nil {
		return
	}
	type entryKey struct{}
	var entries sync.Map // net.Conn → *h1.ConnEntry
	connContext := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		e := new(h1.ConnEntry)
		entries.Store(c, e)
		ctx = context.WithValue(ctx, entryKey{}, e)
		if connContext != nil {
			ctx = connContext(ctx, c)
		}
		return ctx
	}
	connState := srv.ConnState
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		if v, ok := entries.Load(c); ok {
			e := v.(*h1.ConnEntry)
			switch st {
			case http.StateNew:
				if accepts {
					stats.Accepted()
				}
				stats.Open(e, h1.ConnReading)
			case http.StateActive:
				e.Set(h1.ConnWriting)
			case http.StateIdle:
				e.Set(0)
			case http.StateHijacked, http.StateClosed:
				entries.Delete(c)
				stats.Close(e)
			}
		}
		if connState != nil {
			connState(c, st)
		}
	}
	h := srv.Handler
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if e, _ := req.Context().Value(entryKey{}).(*h1.ConnEntry); e != nil {
			e.Request()
		}
		h.ServeHTTP(w, req)
	})
}

// lastResponse says Connection: close on the final response (not on a
// 1xx: HTTP/2 forbids the field, and net/http's HTTP/2 server looks for it
// on the final one only), however the handler begins it.
type lastResponse struct {
	http.ResponseWriter
	said bool
}

func (w *lastResponse) say(code int) {
	if !w.said && code >= 200 {
		w.said = true
		w.ResponseWriter.Header().Set("Connection", "close")
	}
}

func (w *lastResponse) WriteHeader(code int) {
	w.say(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *lastResponse) Write(b []byte) (int, error) {
	w.say(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Flush, which http.ResponseController takes before Unwrap: a response
// begun by a flush is the final one too.
func (w *lastResponse) Flush() {
	w.say(http.StatusOK)
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *lastResponse) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// debugMux serves the introspection endpoints. ready reports whether a
// first table has been published, draining whether a stop signal came;
// last is the latest compile result, whose warnings /debug/warnings lists
// after the ConfigMap's (settings, nil without --configmap) and the
// manifests the last load could not read (unread, nil in a cluster);
// metrics, if set, serves /metrics. The liveness check answers on
// healthPath.
func debugMux(rt *router.Router, healthPath string, ready func() bool, draining *atomic.Bool, last *atomic.Pointer[compile.Result], settings *configMapSettings, unread func() []string, metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/debug/table", rt.DebugHandler())
	mux.HandleFunc("/debug/warnings", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		for _, line := range settings.lines() {
			io.WriteString(w, strings.ReplaceAll(line, "\n", `\n`)+"\n")
		}
		if unread != nil {
			for _, line := range unread() {
				io.WriteString(w, strings.ReplaceAll(line, "\n", `\n`)+"\n")
			}
		}
		res := last.Load()
		if res == nil {
			io.WriteString(w, "no compile yet\n")
			return
		}
		for _, warning := range res.Warnings {
			io.WriteString(w, warningLine(warning)+"\n")
		}
	})
	if metrics != nil {
		mux.Handle("/metrics", metrics)
	}
	mux.HandleFunc(cmp.Or(healthPath, "/healthz"), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if draining.Load() {
			http.Error(w, "not ready: shutting down", http.StatusServiceUnavailable)
			return
		}
		if !ready() {
			http.Error(w, "not ready: no table published yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, "ready: generation %d\n", rt.Generation())
		if note := unclaimedNote(last.Load()); note != "" {
			fmt.Fprintf(w, "warning: %s\n", note)
		}
	})
	return mux
}

// warningLine is a compile warning as /debug/warnings shows it: on one
// line (newlines in its message escaped), with its severity for a
// migration from ingress-nginx in brackets, the verdict -report and the
// admission webhook give too (compile.Warning.Severity).
func warningLine(w compile.Warning) string {
	return strings.ReplaceAll(w.String(), "\n", `\n`) + " [" + string(w.Severity()) + "]"
}

// warningAttrs are the log attributes of a compile warning; its message is
// the log message.
func warningAttrs(w compile.Warning) []any {
	attrs := []any{"reason", string(w.Reason), "severity", string(w.Severity()), "object", w.Object.String()}
	if w.Field != "" {
		attrs = append(attrs, "field", w.Field)
	}
	if winner := w.WinnerText(); winner != "" {
		attrs = append(attrs, "winner", winner)
	}
	return attrs
}

// routerOptions maps the flags to the router's options, the same in a
// cluster and offline; backendTransport is nil but in tests.
func routerOptions(cfg config, log *slog.Logger, m *metrics) router.Options {
	o := configMapRouterOptions(cfg)
	access := accessObserver(cfg)
	o.Transport, o.Logger, o.Observer, o.MaxBodySize = cfg.backendTransport, log, observers(access, m.observer()), cfg.maxBodySize
	// The auth-url subrequests go to the access log alone, which logs them
	// under enable-auth-access-log; the metrics count requests.
	o.AuthObserver = access
	o.NetHTTP2Client = cfg.netHTTP2Client
	if cfg.tracing != nil {
		cfg.tracing.set(cfg.otel)
		o.Tracer = cfg.tracing
	}
	o.GatewayPorts = gatewayPorts(cfg.httpAddr, cfg.httpsAddr, cfg)
	// use-port-in-redirects names the HTTPS listener's own port, as
	// ingress-nginx names its --https-port.
	if _, p, err := net.SplitHostPort(cfg.httpsAddr); err == nil {
		o.HTTPSPort, _ = strconv.Atoi(p)
	}
	return o
}

// gatewayPorts maps the ports of the -http-addr and -https-addr listeners
// (httpAddr, httpsAddr: as given, or as bound) to the Gateway listener
// ports they serve (-gateway-http-port, -gateway-https-port; 0 is 80 and
// 443); nil when neither needs mapping.
func gatewayPorts(httpAddr, httpsAddr string, cfg config) map[int]int32 {
	var m map[int]int32
	for _, l := range []struct {
		addr string
		port int
	}{{httpAddr, cmp.Or(cfg.gatewayHTTPPort, 80)}, {httpsAddr, cmp.Or(cfg.gatewayHTTPSPort, 443)}} {
		_, p, err := net.SplitHostPort(l.addr)
		n, _ := strconv.Atoi(p)
		if err != nil || n == 0 || n == l.port {
			continue
		}
		if m == nil {
			m = make(map[int]int32)
		}
		m[n] = int32(l.port)
	}
	return m
}

// configMapRouterOptions are the router's settings a ConfigMap gives over
// the flags' (a flag given wins: its key was kept out), those
// router.Router.SetConfigMapOptions replaces.
func configMapRouterOptions(cfg config) router.Options {
	o := router.Options{
		TrustForwardedProto:     cfg.useForwardedHeaders,
		TrustForwardedFor:       cfg.useForwardedHeaders,
		ComputeFullForwardedFor: cfg.computeFullForwardedFor,
		ProxyRealIPCIDR:         cfg.proxyRealIPCIDR,
	}
	o.ApplyConfigMap(cfg.routerKeys)
	if cfg.useProxyProtocol && !o.TrustForwardedProto {
		// enable-real-ip behind PROXY protocol reads the PROXY header alone.
		o.TrustForwardedFor = false
	}
	if o.Brotli != nil {
		o.Brotli.NewEncoder = newBrotliEncoder
	}
	return o
}

// requestObserver is the router's observer for cfg: the access log and
// the metrics, each when on; nil when both are off.
func requestObserver(cfg config, m *metrics) func(router.Record) {
	return observers(accessObserver(cfg), m.observer())
}

// accessObserver is the access log for cfg; nil when it is off.
func accessObserver(cfg config) func(router.Record) {
	var access func(router.Record)
	if cfg.enableAccessLog {
		if cfg.accessLog != nil {
			cfg.accessLog.set(cfg.logKeys)
			access = cfg.accessLog.observe
		} else {
			out := cfg.accessLogOut
			if out == nil {
				out = os.Stdout
			}
			// Open for the life of the process, as the log is.
			if w, _, err := logWriter(cfg.logKeys.httpLogPath(), out); err == nil {
				out = w
			}
			access = cfg.logKeys.accessLog(out, cfg.accessLogFormat)
		}
	}
	return access
}

// servedGatewayPorts are the Gateway ports and protocols requests arrive
// on: -gateway-http-port over plain HTTP when -http-addr is set,
// -gateway-https-port over TLS when -https-addr is (SPEC §20).
func servedGatewayPorts(cfg config) []match.Listener {
	ports := []match.Listener{}
	if cfg.httpAddr != "" {
		ports = append(ports, match.Listener{Port: int32(cmp.Or(cfg.gatewayHTTPPort, 80))})
	}
	if cfg.httpsAddr != "" {
		ports = append(ports, match.Listener{Port: int32(cmp.Or(cfg.gatewayHTTPSPort, 443)), TLS: true})
	}
	return ports
}

// connections are the client connection settings: the ConfigMap's keys
// (keep-alive, keep-alive-requests, client-header-timeout,
// worker-shutdown-timeout) where it sets them, else ingress-nginx's
// defaults; the timeouts tests set win.
func (c config) connections() configmap.Connections {
	k := configmap.Connections{KeepAlive: defaultIdleTimeout, KeepAliveRequests: keepaliveRequests,
		HeaderTimeout: defaultHeaderTimeout, ShutdownTimeout: defaultShutdownTimeout}
	set := c.routerKeys.Connections
	for _, f := range []struct {
		key string
		do  func()
	}{
		{"keep-alive", func() { k.KeepAlive = set.KeepAlive }},
		{"keep-alive-requests", func() { k.KeepAliveRequests = set.KeepAliveRequests }},
		{"client-header-timeout", func() { k.HeaderTimeout = set.HeaderTimeout }},
		{"worker-shutdown-timeout", func() { k.ShutdownTimeout = set.ShutdownTimeout }},
	} {
		if slices.Contains(c.routerKeys.Keys, f.key) {
			f.do()
		}
	}
	k.KeepAlive = cmp.Or(c.idleTimeout, k.KeepAlive)
	k.HeaderTimeout = cmp.Or(c.headerTimeout, k.HeaderTimeout)
	k.ShutdownTimeout = cmp.Or(c.shutdownTimeout, k.ShutdownTimeout)
	return k
}

// stopContext bounds a stop by worker-shutdown-timeout; 0, as nginx's
// worker_shutdown_timeout 0, waits for what is in flight however long.
func stopContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), timeout)
}

// listenAddr is where a traffic listener (HTTP, HTTPS, a TCP or UDP
// service) listens: with disable-ipv6 one for every address ("" or "::")
// takes IPv4 only, as ingress-nginx's template then writes "listen port"
// without "listen [::]:port". An address the command line names is kept.
func listenAddr(network, addr string, disableIPv6 bool) (string, string) {
	host, port, err := net.SplitHostPort(addr)
	if !disableIPv6 || err != nil || host != "" && host != "::" {
		return network, addr
	}
	return network + "4", net.JoinHostPort("0.0.0.0", port)
}
