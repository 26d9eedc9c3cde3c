package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/gatewayapi"
	"ramjet.dev/ramjet/compile/manifest"
	"ramjet.dev/ramjet/router"
)

// fileState identifies one version of a manifest file. Comparing the list
// of them is how the folder is watched: polling needs no platform-specific
// notification API and sees edits, renames, additions and removals alike.
type fileState struct {
	path  string
	size  int64
	mtime int64 // UnixNano: time.Time's == also compares the location
}

// scanManifests states the files manifest.Load reads under root, so
// that editing one, or a symbolic link's target, is seen as a change.
func scanManifests(root string) ([]fileState, error) {
	paths, err := manifest.Files(root)
	if err != nil {
		return nil, err
	}
	files := make([]fileState, 0, len(paths))
	for _, path := range paths {
		info, err := os.Stat(path) // follows a symbolic link
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing; the next scan sees the new set
		}
		if err != nil {
			return nil, err
		}
		files = append(files, fileState{path: path, size: info.Size(), mtime: info.ModTime().UnixNano()})
	}
	return files, nil
}

// controller turns the manifests folder into published tables.
type controller struct {
	cfg    config
	log    *slog.Logger
	router *router.Router
	waf    *modSecurity        // the router's hook
	demo   *demoBackends       // nil without -demo-backends
	cert   *defaultCertificate // nil without -default-ssl-certificate
	// settings follows the -configmap ConfigMap in the folder (nil
	// without): cfg is what it gave at start, each load reads it again.
	settings *configMapSettings

	ready   atomic.Bool
	last    atomic.Pointer[compile.Result]
	metrics *metrics // nil without -enable-metrics
	// streams are the TCP and UDP service listeners, bound at the first load.
	streams *streams

	// Owned by the goroutine that calls poll.
	seen []fileState
	// seenLoads is whether seen is a file set that loaded: the folder
	// coming back as it was recovers only then.
	seenLoads bool
	lastErr   string
}

// load reads the manifests, compiles them and publishes the result. On
// error nothing is published: the serving table stays. It reads the folder
// itself rather than the scanned list, so what is served is never older
// than the scan that triggered it; a write racing the read changes the
// fingerprint, and the next poll loads again.
func (c *controller) load() error {
	snap, skipped, err := manifest.Load(c.cfg.manifests)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		c.log.Debug("skipped an object of a kind ramjet does not read", "object", s)
	}
	if c.demo != nil {
		if err := c.demo.ensure(snap.EndpointSlices); err != nil {
			return err
		}
	}

	start := time.Now()
	// Offline, the manifests describe backends on this machine (the demo's
	// echo servers among them); in a cluster an endpoint on loopback is
	// never a pod and is dropped (SPEC §8).
	c.cert.update(c.cert.find(snap.Secrets))
	cfg := c.cfg
	if c.settings != nil {
		data, found, err := configMapInFolder(c.cfg.manifests, c.settings.ref)
		if err != nil {
			return err
		}
		cfg = c.settings.update(data, found, snap.ConfigMaps...)
		applyLive(c.router, cfg, c.cfg)
	}
	opts := compileOptions(cfg, snap.Services)
	opts.AllowLoopbackEndpoints = true
	res := compile.Compile(*snap, opts)
	res.Warnings = append(res.Warnings, c.waf.prepare(cfg.modSecurity, res.Table)...)
	elapsed := time.Since(start)
	for _, w := range res.Warnings {
		c.log.Warn(w.Message, warningAttrs(w)...)
	}
	logUnclaimed(c.log, &res, "")

	// The router logs each table it publishes; this line adds what only
	// the loader knows.
	gen, changed := c.router.Publish(res.Table)
	if err := c.streams.update(c.router.Table()); err != nil {
		return err
	}
	c.metrics.published(&res, changed, time.Now())
	c.last.Store(&res)
	c.ready.Store(true)
	msg := "manifests compiled"
	if !changed {
		msg = "manifests compiled; table unchanged, nothing published"
	}
	c.log.Info(msg,
		"generation", gen,
		"ingresses", len(snap.Ingresses),
		"skipped", len(skipped),
		"warnings", len(res.Warnings),
		"compile", elapsed.Round(time.Microsecond))
	return nil
}

// poll rescans the folder and reloads it when the file set changed. A
// failing folder logs once per distinct error, not on every tick.
func (c *controller) poll() {
	files, err := scanManifests(c.cfg.manifests)
	if err == nil && slices.Equal(files, c.seen) {
		if c.lastErr != "" && c.seenLoads {
			c.lastErr = "" // a folder that vanished came back as it was
			c.metrics.loadRecovered()
		}
		return
	}
	if err == nil {
		c.seen = files
		err = c.load()
		c.seenLoads = err == nil
	}
	if err == nil {
		c.lastErr = ""
		return
	}
	if msg := err.Error(); msg != c.lastErr {
		c.metrics.loadFailed()
		c.lastErr = msg
		c.log.Error("cannot load manifests; still serving the previous table",
			"err", err, "generation", c.router.Generation())
	}
}

// startOffline loads the manifests, publishes the first table, opens the
// listeners and begins polling. It returns once traffic is being served;
// cancelling ctx shuts everything down gracefully. A folder that cannot be
// loaded at start is an error: there is no previous table to fall back to.
func startOffline(parent context.Context, cfg config, log *slog.Logger) (_ *instance, err error) {
	// The folder may hold Gateway API objects beside Ingresses (SPEC §20).
	gatewayapi.Register()
	// A failed listener cancels ctx too, so everything stops together; the
	// workers outlive parent by the drain.
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	defer func() {
		if err != nil {
			cancel()
		}
	}()
	var settings *configMapSettings
	if cfg.configMap != nil {
		data, found, err := configMapInFolder(cfg.manifests, *cfg.configMap)
		if err != nil {
			return nil, fmt.Errorf("-manifests: %w", err)
		}
		settings, cfg = newConfigMapSettings(cfg, data, found, log)
	}
	c := &controller{cfg: cfg, log: log, cert: newDefaultCertificate(cfg.defaultCertificate, log), settings: settings}
	c.metrics = newMetrics(cfg)
	c.waf = newModSecurity(cfg, log)
	ropts := routerOptions(cfg, log, c.metrics)
	ropts.Hook, ropts.BodyHook = c.waf.hook, c.waf.bodyHook
	c.router = router.New(ropts)
	c.metrics.watchRouter(c.router)
	c.cert.serveBy(c.router)
	c.metrics.servesDefault(c.cert.served(c.router))
	c.streams = newStreams(cfg, c.router, log, c.metrics)
	defer func() {
		if err != nil {
			c.streams.mu.Lock()
			c.streams.close()
			c.streams.mu.Unlock()
		}
	}()
	if cfg.demoBackends {
		c.demo = newDemoBackends(log)
		defer func() {
			if err != nil {
				c.demo.close()
			}
		}()
	}

	files, err := scanManifests(cfg.manifests)
	if err != nil {
		return nil, fmt.Errorf("-manifests: %w", err)
	}
	c.seen, c.seenLoads = files, true
	if err := c.load(); err != nil {
		return nil, fmt.Errorf("loading %s: %w", cfg.manifests, err)
	}

	draining := new(atomic.Bool)
	debug := debugMux(c.router, cfg.healthPath, c.ready.Load, draining, &c.last, c.settings, c.metrics.handler(log))
	l, err := listen(cfg, c.router, debug, draining, log)
	if err != nil {
		return nil, err
	}
	c.metrics.watchConns(l.conns)
	c.streams.countIn(l.conns)
	l.streams, l.inst.streams = c.streams, c.streams
	poll := func(ctx context.Context) {
		t := time.NewTicker(cfg.pollInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c.poll()
			}
		}
	}
	cleanup := func() {
		if c.demo != nil {
			c.demo.close()
		}
	}
	inst := l.run(parent, ctx, cancel, cfg, log, []func(context.Context){poll}, cleanup)
	logClientAddressTrust(cfg, log)
	log.Info("serving",
		"manifests", cfg.manifests,
		"http", inst.HTTPAddr,
		"https", inst.HTTPSAddr,
		"debug", inst.DebugAddr,
		"generation", c.router.Generation())
	return inst, nil
}
