package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
// that editing one, or a symbolic link's target, is seen as a change; a
// path it cannot read is stated too (size -1), so that it becoming
// readable is one.
func scanManifests(root string) ([]fileState, error) {
	paths, problems, err := manifest.Walk(root)
	if err != nil {
		return nil, err
	}
	files := make([]fileState, 0, len(paths)+len(problems))
	for _, p := range problems {
		var me *manifest.Error
		if errors.As(p, &me) {
			files = append(files, fileState{path: me.File, size: -1})
		}
	}
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

	// unread are the lines for /debug/warnings of what the last load
	// could not read.
	unread atomic.Pointer[[]string]

	// Owned by the goroutine that calls poll.
	seen []fileState
	// pending is a file set seen once and not read yet: it is read when
	// the next poll finds it unchanged, so a file being written is read
	// whole.
	pending []fileState
	// seenLoads is whether seen is a file set that loaded whole: the
	// folder coming back as it was recovers only then.
	seenLoads bool
	lastErr   string
	// good is each file's last version that read whole (readFolder).
	good map[string][]byte
}

// walkManifests lists the manifests readFolder reads; tests replace it.
var walkManifests = manifest.Walk

// readFolder reads the manifests under root as far as they can be read:
// a file or document that cannot be (YAML syntax, a kind that does not
// exist, a field of the wrong type, a file that cannot be opened) is one
// of unread, and takes nothing else with it, as one broken object in a
// cluster degrades only itself. err is set only when the folder cannot be
// listed at all: then there is nothing to serve.
//
// good holds, per file, its last version that read without error (nil: no
// memory). A file that no longer reads whole, or whose folder can no
// longer be listed, is read in that version instead, as a cluster keeps
// the object that kubectl apply could not replace: kept lists those files. A file that never read whole is read
// as far as it can be. good is brought up to date.
func readFolder(root string, good map[string][]byte) (snap *compile.Snapshot, skipped []string, unread []error, kept []string, err error) {
	files, problems, err := walkManifests(root)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	unread = problems
	data := make(map[string][]byte, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			unread = append(unread, &manifest.Error{Position: manifest.Position{File: f, Item: -1}, Err: err})
			continue
		}
		data[f] = b
	}
	// A file under a folder that can no longer be listed, or that is no
	// longer a regular file, is not gone: it is read in its last good
	// version, as one that turns bad is.
	var hidden []string
	for f := range good {
		if _, listed := data[f]; listed || slices.Contains(files, f) {
			continue
		}
		if slices.ContainsFunc(problems, func(p error) bool {
			var me *manifest.Error
			return errors.As(p, &me) && (me.File == f || strings.HasPrefix(f, me.File+string(filepath.Separator)))
		}) {
			hidden = append(hidden, f)
		}
	}
	slices.Sort(hidden)
	files = append(files, hidden...)
	read := func(instead map[string][]byte) (*manifest.Reader, []error) {
		r := manifest.NewReader()
		var errs []error
		for _, f := range files {
			b, ok := instead[f]
			if !ok {
				b, ok = data[f]
			}
			if ok {
				errs = append(errs, leafErrors(r.Decode(f, b))...)
			}
		}
		return r, errs
	}
	r, errs := read(nil)
	unread = append(unread, errs...)
	bad := make(map[string]bool)
	for _, u := range unread {
		var me *manifest.Error
		if errors.As(u, &me) {
			bad[me.File] = true
		}
	}
	for _, f := range hidden {
		bad[f] = true
	}
	instead := make(map[string][]byte)
	for f := range bad {
		// A file as it last read whole can still clash with another.
		if b, ok := good[f]; ok && !bytes.Equal(b, data[f]) {
			instead[f] = b
		}
	}
	if len(instead) > 0 {
		// The kept versions may clash with what other files now hold.
		r, errs = read(instead)
		for _, e := range errs {
			if !slices.ContainsFunc(unread, func(u error) bool { return u.Error() == e.Error() }) {
				unread = append(unread, e)
			}
		}
		kept = slices.Sorted(maps.Keys(instead))
	}
	if good != nil {
		for f := range good {
			if _, listed := data[f]; !listed && !bad[f] {
				delete(good, f)
			}
		}
		for f, b := range data {
			if !bad[f] {
				good[f] = b
			}
		}
	}
	snap, skipped = r.Snapshot()
	return snap, skipped, unread, kept, nil
}

// leafErrors unwraps a join of errors into its parts; none for nil.
func leafErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// unreadAttrs are the log attributes of a manifest that was not read.
func unreadAttrs(err error) []any {
	var me *manifest.Error
	if !errors.As(err, &me) {
		return []any{"err", err}
	}
	attrs := []any{"file", me.File}
	if me.Document > 0 {
		attrs = append(attrs, "document", me.Document)
	}
	if me.Item >= 0 {
		attrs = append(attrs, "item", me.Item)
	}
	if me.Line > 0 {
		attrs = append(attrs, "line", me.Line)
	}
	if obj := me.Object(); obj != "" {
		attrs = append(attrs, "object", obj)
	}
	if me.Field != "" {
		attrs = append(attrs, "field", me.Field)
	}
	return append(attrs, "err", err.Error())
}

// load reads the manifests, compiles what could be read and publishes
// the result; each file or document it could not read is an error in the
// log and on /debug/warnings, and whole reports whether there was none.
// On error (the folder cannot be listed) nothing is published: the
// serving table stays. It reads the folder itself rather than the scanned
// list, so what is served is never older than the scan that triggered it;
// a write racing the read changes the fingerprint, and the next polls
// load again.
func (c *controller) load() (whole bool, err error) {
	snap, skipped, unread, kept, err := readFolder(c.cfg.manifests, c.good)
	if err != nil {
		return false, err
	}
	lines := make([]string, 0, len(unread)+len(kept))
	for _, u := range unread {
		c.log.Error("manifest not read; the rest of the folder is served", unreadAttrs(u)...)
		lines = append(lines, "manifest not read: "+u.Error()+" ["+string(compile.TrafficMoves)+"]")
	}
	for _, f := range kept {
		c.log.Error("manifest file not read whole; its last version that was is served", "file", f)
		lines = append(lines, "file kept: the last version of "+f+" that read without error is served until it reads again ["+string(compile.TrafficMoves)+"]")
	}
	c.unread.Store(&lines)
	for _, s := range skipped {
		c.log.Debug("skipped an object of a kind ramjet does not read", "object", s)
	}
	if c.demo != nil {
		if err := c.demo.ensure(snap.EndpointSlices); err != nil {
			return false, err
		}
	}

	start := time.Now()
	// Offline, the manifests describe backends on this machine (the demo's
	// echo servers among them); in a cluster an endpoint on loopback is
	// never a pod and is dropped (SPEC §8).
	c.cert.update(c.cert.find(snap.Secrets))
	cfg := c.cfg
	if c.settings != nil {
		data, found := configMapIn(snap.ConfigMaps, c.settings.ref)
		unreadCM := slices.ContainsFunc(unread, func(err error) bool {
			var me *manifest.Error
			return errors.As(err, &me) && me.Kind == "ConfigMap" && me.Namespace == c.settings.ref.Namespace && me.Name == c.settings.ref.Name
		})
		cfg = c.settings.updateUnread(data, found, unreadCM, snap.ConfigMaps...)
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
		return false, err
	}
	c.metrics.published(&res, changed, time.Now())
	if changed {
		logCertExpiry(c.log, res.Table, time.Now())
	}
	if len(unread) > 0 {
		c.metrics.readInPart()
	}
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
		"unread", len(unread),
		"warnings", len(res.Warnings),
		"compile", elapsed.Round(time.Microsecond))
	return len(unread) == 0, nil
}

// unreadLines are the /debug/warnings lines of the last load.
func (c *controller) unreadLines() []string {
	if l := c.unread.Load(); l != nil {
		return *l
	}
	return nil
}

// poll rescans the folder and reloads it when the file set changed and
// the previous poll found it so too: an editor or a copy writing a file
// in place is not read half-way (a whole file replaced by a rename is
// read one poll later). A failing folder logs once per distinct error,
// not on every tick.
func (c *controller) poll() {
	files, err := scanManifests(c.cfg.manifests)
	if err == nil && slices.Equal(files, c.seen) {
		c.pending = nil
		if c.lastErr != "" && c.seenLoads {
			c.lastErr = "" // a folder that vanished came back as it was
			c.metrics.loadRecovered()
		}
		return
	}
	if err == nil && !slices.Equal(files, c.pending) {
		c.pending = files
		return
	}
	if err == nil {
		c.seen, c.pending = files, nil
		c.seenLoads, err = c.load()
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
// listed at start is an error: there is nothing to serve. What it holds
// that cannot be read is logged, and the rest served, as on every reload.
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
	c := &controller{cfg: cfg, log: log, cert: newDefaultCertificate(cfg.defaultCertificate, log), settings: settings,
		good: make(map[string][]byte)}
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
	c.seen = files
	if c.seenLoads, err = c.load(); err != nil {
		return nil, fmt.Errorf("loading %s: %w", cfg.manifests, err)
	}

	draining := new(atomic.Bool)
	debug := debugMux(c.router, cfg.healthPath, c.ready.Load, draining, &c.last, c.settings, c.unreadLines, c.metrics.handler(log))
	l, err := listen(cfg, c.router, debug, draining, log)
	if err != nil {
		return nil, err
	}
	c.metrics.watchConns(l.conns)
	c.streams.countIn(l.conns)
	l.streams, l.inst.streams = c.streams, c.streams
	l.inst.offline = c
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
