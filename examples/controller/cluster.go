package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/router"
	"ramjet.dev/ramjet/status"
)

// clusterController keeps the served table in step with a cluster: five
// watches feed one debounced rebuild task, and the replica holding the
// leader Lease writes status and posts Events (SPEC §16, §17).
type clusterController struct {
	cfg    config
	log    *slog.Logger
	client kubernetes.Interface
	router *router.Router
	waf    *modSecurity // the router's hook

	factories []informers.SharedInformerFactory
	listers   listers

	// changes holds at most one pending notification: any number of
	// events between two reads of it cost one rebuild.
	changes chan struct{}
	// events counts the watch events that can change the table.
	events atomic.Uint64
	// unsettled counts events not yet covered by a finished rebuild.
	unsettled atomic.Int64
	// statusKicks asks the status writer for a pass; capacity 1 as well.
	statusKicks chan struct{}

	ready    atomic.Bool
	leading  atomic.Bool
	rebuilds atomic.Uint64
	// last is the last rebuild's result: its claimed Ingresses get status,
	// its warnings become Events.
	last atomic.Pointer[compile.Result]

	// Owned by the rebuild loop: what the log has already been told, and
	// the compiler that reuses the previous rebuild's work (SPEC §17).
	logged   map[compile.Warning]bool
	compiler compile.Compiler
	// unclaimed is the unclaimed Ingresses' note last logged.
	unclaimed string

	// leads hands each term's context from the elector to the status
	// writer, a worker of its own so that shutdown waits for it.
	leads chan context.Context
	// renewed is when the last renewal of the Lease that went through was
	// sent (renewalLock); nil before the first.
	renewed atomic.Pointer[time.Time]
	deduper *status.EventDeduper
	// eventsFound is false until this term has read the Events already
	// posted; owned by the status writer.
	eventsFound bool
	// written are the Ingress statuses this term wrote lately; owned by
	// the status writer.
	written map[types.NamespacedName]statusWrite
	// gwWritten are the Gateway API statuses it wrote lately (writeStatus).
	gwWritten map[string]statusWrite
	// statusNodes are the nodes whose addresses status advertises with
	// neither publish option (statusnodes.go); owned by the status writer.
	statusNodes statusNodes

	// cert is -default-ssl-certificate, read from a watch of that one
	// Secret (it may be of any type, in any namespace); nil without it.
	cert       *defaultCertificate
	certSecret corelisters.SecretLister

	// settings follows the -configmap ConfigMap (nil without): cfg is
	// what it gave at start, each rebuild reads it from a watch of that
	// one ConfigMap.
	settings  *configMapSettings
	configMap corelisters.ConfigMapLister

	metrics *metrics // nil without -enable-metrics
	// streams are the TCP and UDP service listeners, bound at the first
	// table; streamConfigMaps list the services ConfigMaps (stream.go).
	streams          *streams
	streamConfigMaps []corelisters.ConfigMapLister

	gw gatewayWatch // the Gateway API, when its CRDs are installed (gateway.go)

	admission *admission // the webhook (admission.go); nil without -validating-webhook
}

// listers read the informers' caches. With -namespace set, Services and
// EndpointSlices may come from more than one namespace (that of the default
// backend, say), so the namespaced kinds have one lister per factory.
type listers struct {
	ingresses      []networkinglisters.IngressLister
	classes        networkinglisters.IngressClassLister
	services       []corelisters.ServiceLister
	endpointSlices []discoverylisters.EndpointSliceLister
	secrets        []corelisters.SecretLister
	// configMaps are those of the Ingresses' namespaces, which
	// auth-proxy-set-headers and custom-headers name.
	configMaps []corelisters.ConfigMapLister
}

// stats are the cluster loop's counters; /metrics shows them.
type stats struct {
	Events     uint64
	Rebuilds   uint64
	Generation uint64
	Leading    bool
	Ready      bool
	// Settled is false while an event waits for its rebuild.
	Settled bool
}

func (c *clusterController) stats() stats {
	return stats{
		Events:     c.events.Load(),
		Rebuilds:   c.rebuilds.Load(),
		Generation: c.router.Generation(),
		Leading:    c.leading.Load(),
		Ready:      c.ready.Load(),
		Settled:    c.unsettled.Load() == 0,
	}
}

// collectors are the cluster loop's metrics, read at scrape time.
func (c *clusterController) collectors() []prometheus.Collector {
	b2f := func(b *atomic.Bool) func() float64 {
		return func() float64 {
			if b.Load() {
				return 1
			}
			return 0
		}
	}
	// As ingress-nginx's, with the controller_* labels of its other series.
	leaderLabels := metricsIdentityOf(c.cfg).labels()
	leaderLabels["name"] = c.cfg.electionID
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: nginxNamespace, Name: "leader_election_status",
			Help:        "Gauge reporting status of the leader election, 0 indicates follower, 1 indicates leader. 'name' is the string used to identify the lease",
			ConstLabels: leaderLabels,
		}, b2f(&c.leading)),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ramjet_watch_events_total", Help: "Watch events that can change the table"},
			func() float64 { return float64(c.events.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ramjet_ready", Help: "1 once the caches synced and the first table was published"}, b2f(&c.ready)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ramjet_unsettled_events", Help: "Watch events not yet covered by a finished compile"},
			func() float64 { return float64(c.unsettled.Load()) }),
	}
}

// startCluster connects to the API server restConfig names, opens the
// listeners and starts the watches, the rebuild loop and the leader
// election. It returns once the listeners are open: traffic gets 503 and
// /readyz fails until the caches have synced and the first table is
// published. Cancelling ctx shuts everything down gracefully and releases
// the Lease if held.
func startCluster(parent context.Context, cfg config, log *slog.Logger, restConfig *rest.Config) (_ *instance, err error) {
	cfg.setClusterDefaults()
	// The workers outlive parent by the drain: tables keep coming.
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	defer func() {
		if err != nil {
			cancel()
		}
	}()

	rc := rest.CopyConfig(restConfig)
	rc.UserAgent = "ramjet-controller/" + cfg.identity
	// Watches and status writes of a few hundred Ingresses would crawl at
	// client-go's default of 5 requests per second.
	if rc.QPS == 0 {
		rc.QPS, rc.Burst = 50, 100
	}
	// Built-in types only: protobuf decodes watch events faster than JSON.
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.Dial = dialUntilAccepted(rc.Dial)
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}

	var settings *configMapSettings
	if ref := cfg.configMap; ref != nil {
		// The router and listeners are made with what it says at start.
		// The read waits while the API server refuses connections
		// (dialUntilAccepted): the stop signal ends it, as nothing else
		// would yet.
		var data map[string]string
		cm, err := client.CoreV1().ConfigMaps(ref.Namespace).Get(parent, ref.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			data = cm.Data
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("-configmap %s: %w", ref, err)
		}
		settings, cfg = newConfigMapSettings(cfg, data, err == nil, log)
	}
	c := &clusterController{
		settings:    settings,
		cfg:         cfg,
		log:         log,
		client:      client,
		changes:     make(chan struct{}, 1),
		statusKicks: make(chan struct{}, 1),
		leads:       make(chan context.Context),
		logged:      make(map[compile.Warning]bool),
		deduper:     status.NewEventDeduper(status.DefaultRepostAfter),
		cert:        newDefaultCertificate(cfg.defaultCertificate, log),
	}
	if err := c.initGateway(rc); err != nil {
		return nil, err
	}
	c.metrics = newMetrics(cfg, c.collectors()...)
	c.waf = newModSecurity(cfg, log)
	ropts := routerOptions(cfg, log, c.metrics)
	ropts.Hook, ropts.BodyHook = c.waf.hook, c.waf.bodyHook
	c.router = router.New(ropts)
	c.metrics.watchRouter(c.router)
	c.cert.serveBy(c.router)
	c.metrics.servesDefault(c.cert.served(c.router))
	c.streams = newStreams(cfg, c.router, log, c.metrics)
	// An invalid election setting is a start error, not a later surprise.
	if _, err := c.newElector(); err != nil {
		return nil, fmt.Errorf("leader election: %w", err)
	}
	if err := c.watch(); err != nil {
		return nil, err
	}
	workers := []func(context.Context){c.runRebuilds, c.runElection, c.runStatus, c.runGateway,
		func(ctx context.Context) { c.gw.grpc.runLate(ctx, c) }, func(ctx context.Context) { c.gw.tls.runLate(ctx, c) }}
	if cfg.webhookAddr != "" {
		c.admission = newAdmission(cfg, log)
		c.admission.metrics = c.metrics
		workers = append(workers, c.admission.run)
	}

	draining := new(atomic.Bool)
	debug := debugMux(c.router, cfg.healthPath, c.ready.Load, draining, &c.last, c.settings, nil, c.metrics.handler(log))
	l, err := listen(cfg, c.router, debug, draining, log)
	if err != nil {
		return nil, err
	}
	c.metrics.watchConns(l.conns)
	c.streams.countIn(l.conns)
	if c.admission != nil {
		if err := l.listenWebhook(cfg, c.admission, log); err != nil {
			l.close()
			return nil, err
		}
	}
	l.inst.cluster = c
	l.streams, l.inst.streams = c.streams, c.streams
	inst := l.run(parent, ctx, cancel, cfg, log, workers, nil)
	namespace := cfg.namespace
	if namespace == "" {
		namespace = "(all)"
	}
	log.Info("serving",
		"apiserver", rc.Host,
		"namespace", namespace,
		"identity", cfg.identity,
		"http", inst.HTTPAddr,
		"https", inst.HTTPSAddr,
		"debug", inst.DebugAddr,
		"webhook", inst.WebhookAddr)
	logClientAddressTrust(cfg, log)
	switch {
	case c.nodeMode():
		log.Info("no -publish-service or -publish-address: Ingress status advertises the addresses of the nodes running this controller's ready pods", "internalIP", cfg.nodeInternalIP)
	case !cfg.noStatusUpdate && cfg.publishService == nil && len(cfg.publishAddresses) == 0:
		log.Info("no -publish-service, -publish-address or $POD_NAME: Ingress status is not written")
	}
	return inst, nil
}

// watch sets up the informers and routes their events.
func (c *clusterController) watch() error {
	// Every namespace whose Services matter: the watched one, plus those of
	// the default backend and the publish Service when a namespace is set.
	namespaces := []string{c.cfg.namespace}
	if c.cfg.namespace != "" {
		if db := c.cfg.options.DefaultBackend; db != nil && !slices.Contains(namespaces, db.Namespace) {
			namespaces = append(namespaces, db.Namespace)
		}
		if db := c.cfg.defaultBackendService; db != nil && !slices.Contains(namespaces, db.Namespace) {
			namespaces = append(namespaces, db.Namespace)
		}
		if ps := c.cfg.publishService; ps != nil && !slices.Contains(namespaces, ps.Namespace) {
			namespaces = append(namespaces, ps.Namespace)
		}
	}
	changed := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.changed() },
		UpdateFunc: func(old, cur any) {
			if !redelivered(old, cur) {
				c.changed()
			}
		},
		DeleteFunc: func(any) { c.changed() },
	}
	ingressChanged := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.changed() },
		UpdateFunc: func(old, cur any) {
			if statusOnly(old, cur) {
				// Routing never reads status (SPEC §16), but the writer
				// should notice when someone else changed it.
				c.kickStatus()
				return
			}
			c.changed()
		},
		DeleteFunc: func(any) { c.changed() },
	}
	add := func(inf cache.SharedIndexInformer, h cache.ResourceEventHandler) error {
		if err := inf.SetTransform(c.transform()); err != nil {
			return err
		}
		_, err := inf.AddEventHandler(h)
		return err
	}

	for i, ns := range namespaces {
		opts := []informers.SharedInformerOption{informers.WithNamespace(ns)}
		f := informers.NewSharedInformerFactoryWithOptions(c.client, c.cfg.resync, opts...)
		c.factories = append(c.factories, f)
		svc := f.Core().V1().Services()
		eps := f.Discovery().V1().EndpointSlices()
		if err := add(svc.Informer(), changed); err != nil {
			return err
		}
		if err := add(eps.Informer(), changed); err != nil {
			return err
		}
		c.listers.services = append(c.listers.services, svc.Lister())
		c.listers.endpointSlices = append(c.listers.endpointSlices, eps.Lister())
		if i > 0 {
			continue // Ingresses and their Secrets only where they are watched
		}
		ing := f.Networking().V1().Ingresses()
		classes := f.Networking().V1().IngressClasses() // cluster-scoped: not limited by the namespace
		if err := add(ing.Informer(), ingressChanged); err != nil {
			return err
		}
		if err := add(classes.Informer(), changed); err != nil {
			return err
		}
		c.listers.ingresses = append(c.listers.ingresses, ing.Lister())
		c.listers.classes = classes.Lister()

		// The ConfigMaps auth-proxy-set-headers and custom-headers name,
		// in the Ingress's namespace: every one, as ingress-nginx's store
		// watches them, but Helm 2's release records (OWNER=TILLER),
		// which it leaves out for their size.
		cf := informers.NewSharedInformerFactoryWithOptions(c.client, c.cfg.resync,
			informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "OWNER!=TILLER" }))
		c.factories = append(c.factories, cf)
		cms := cf.Core().V1().ConfigMaps()
		if err := add(cms.Informer(), changed); err != nil {
			return err
		}
		c.listers.configMaps = append(c.listers.configMaps, cms.Lister())

		// Secrets of every type, as ingress-nginx's store: its parsers read
		// an auth-secret or auth-tls-secret whatever its type (a
		// kubernetes.io/basic-auth one with an auth key protects the
		// paths). Helm's release records, which ingress-nginx leaves out
		// for their size, and ServiceAccount tokens, which no annotation
		// has a use for, stay out of memory.
		sf := informers.NewSharedInformerFactoryWithOptions(c.client, c.cfg.resync,
			informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.AndSelectors(
					fields.OneTermNotEqualSelector("type", "helm.sh/release.v1"),
					fields.OneTermNotEqualSelector("type", string(corev1.SecretTypeServiceAccountToken))).String()
			}))
		c.factories = append(c.factories, sf)
		sec := sf.Core().V1().Secrets()
		if err := add(sec.Informer(), changed); err != nil {
			return err
		}
		c.listers.secrets = append(c.listers.secrets, sec.Lister())
	}
	if c.cert != nil {
		ref := c.cert.ref
		f := informers.NewSharedInformerFactoryWithOptions(c.client, c.cfg.resync,
			informers.WithNamespace(ref.Namespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ref.Name).String()
			}))
		c.factories = append(c.factories, f)
		sec := f.Core().V1().Secrets()
		if err := add(sec.Informer(), changed); err != nil {
			return err
		}
		c.certSecret = sec.Lister()
	}
	for _, ref := range []string{c.cfg.options.TCPServices, c.cfg.options.UDPServices} {
		if ref == "" {
			continue
		}
		// The services ConfigMap alone, by name, as the default
		// certificate's Secret.
		ns, name, _ := strings.Cut(ref, "/")
		f := informers.NewSharedInformerFactoryWithOptions(c.client, c.cfg.resync,
			informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
			}))
		c.factories = append(c.factories, f)
		cms := f.Core().V1().ConfigMaps()
		if err := add(cms.Informer(), changed); err != nil {
			return err
		}
		c.streamConfigMaps = append(c.streamConfigMaps, cms.Lister())
	}
	if c.settings != nil {
		ref := c.settings.ref
		// Every ConfigMap of its namespace: add-headers and
		// proxy-set-headers name others there, and a change of one
		// recompiles like any object.
		f := informers.NewSharedInformerFactoryWithOptions(c.client, c.cfg.resync,
			informers.WithNamespace(ref.Namespace))
		c.factories = append(c.factories, f)
		cms := f.Core().V1().ConfigMaps()
		if err := add(cms.Informer(), changed); err != nil {
			return err
		}
		c.configMap = cms.Lister()
	}
	return nil
}

// redialInterval is how often a refused connection to the API server is
// tried again.
const redialInterval = 100 * time.Millisecond

// dialUntilAccepted wraps dial (nil: a plain dialer) so that a refused
// connection is tried again every redialInterval until the request's
// context ends. A restarting API server refuses connections; client-go's
// watches answer a refusal with exponential backoff (up to 30 s, and its
// jitter can double that), so after an outage of half a minute they would
// come back up to a minute late, and so would every change made meanwhile.
// Waiting in the dial instead, they resume as soon as the port is open.
// Requests with a deadline (the Lease renewal) still fail at it.
func dialUntilAccepted(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var refused error
		for {
			conn, err := dial(ctx, network, addr)
			if err != nil && refused != nil && ended(ctx) {
				// The context ended during a retry: the refusal says
				// why, the dial's own deadline error does not.
				return nil, refused
			}
			if err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
				return conn, err
			}
			refused = err
			t := time.NewTimer(redialInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, err
			case <-t.C:
			}
		}
	}
}

// ended reports whether ctx is done or at its deadline: a dial bounded by
// the deadline can fail at it before ctx reports itself done.
func ended(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(dl)
}

// transform is what the informers do with each object before caching it:
// trimObject, unless the configuration keeps whole objects (less their
// managedFields, which nothing reads).
func (c *clusterController) transform() cache.TransformFunc {
	if c.cfg.untrimmedCache {
		return dropManagedFields
	}
	return trimObject
}

func dropManagedFields(obj any) (any, error) {
	if a, err := meta.Accessor(obj); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// redelivered reports an update that hands over the object it replaces,
// unchanged (the same resourceVersion): a resync does that with every
// cached object, and so does the relist after a watch expired (410 Gone,
// say after an etcd compaction). The informers relist one by one, so
// counting these as changes would cost a rebuild per informer of a table
// that cannot differ.
func redelivered(old, cur any) bool {
	o, err1 := meta.Accessor(old)
	n, err2 := meta.Accessor(cur)
	return err1 == nil && err2 == nil && o.GetResourceVersion() != "" && o.GetResourceVersion() == n.GetResourceVersion()
}

// statusOnly reports an Ingress update that changes nothing routing reads:
// the same object (UID) with its spec unchanged (same metadata.generation)
// and the same annotations. Status writes, ours included, are such
// updates, as is a resync that re-delivers an unchanged object. An Ingress
// deleted and created again while the watch was down comes back from the
// relist as an update, maybe at the same generation: a new UID, creation
// time (which decides conflicts) and spec.
func statusOnly(old, cur any) bool {
	o, ok1 := old.(*networkingv1.Ingress)
	n, ok2 := cur.(*networkingv1.Ingress)
	if !ok1 || !ok2 || o.Generation == 0 {
		return false
	}
	return o.UID == n.UID && o.Generation == n.Generation && maps.Equal(o.Annotations, n.Annotations)
}

// changed records that the snapshot moved; the rebuild loop picks it up.
func (c *clusterController) changed() {
	c.events.Add(1)
	c.unsettled.Add(1)
	select {
	case c.changes <- struct{}{}:
	default: // one is pending already
	}
}

func (c *clusterController) kickStatus() {
	select {
	case c.statusKicks <- struct{}{}:
	default:
	}
}

// runRebuilds starts the informers, publishes the first table once every
// cache has synced, and then rebuilds after each quiet spell.
func (c *clusterController) runRebuilds(ctx context.Context) {
	c.discoverGateway(ctx)
	for _, f := range c.factories {
		f.Start(ctx.Done())
	}
	c.startGateway(ctx)
	defer func() {
		for _, f := range c.factories {
			f.Shutdown()
		}
		c.stopGateway()
	}()
	began := time.Now()
	for _, f := range c.factories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				c.log.Info("stopped before the caches synced", "kind", typ.String())
				return
			}
		}
	}
	if !c.waitGateway(ctx) {
		c.log.Info("stopped before the Gateway API caches synced")
		return
	}
	c.log.Info("caches synced", "took", time.Since(began).Round(time.Millisecond))
	// The first table goes out at once: the events of the initial listing
	// are all in it.
	select {
	case <-c.changes:
	default:
	}
	c.rebuild()
	debounce(ctx, c.changes, c.cfg.debounce, c.cfg.maxWait, c.rebuild)
}

// debounce calls rebuild quiet after the last signal on changes, but no
// later than maxWait after the first signal still waiting, so that steady
// churn cannot starve the table (SPEC §17). It returns when ctx is done.
func debounce(ctx context.Context, changes <-chan struct{}, quiet, maxWait time.Duration, rebuild func()) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	timer.Stop()
	var first time.Time
	pending := false
	for {
		var fire <-chan time.Time
		if pending {
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
			now := time.Now()
			if !pending {
				pending, first = true, now
			}
			wait := min(quiet, first.Add(maxWait).Sub(now))
			timer.Reset(max(wait, 0))
		case <-fire:
			pending = false
			rebuild()
		}
	}
}

// rebuild compiles everything the caches hold at this instant and publishes
// it; an unchanged digest publishes nothing and keeps the generation.
func (c *clusterController) rebuild() {
	covered := c.unsettled.Load()
	defer c.unsettled.Add(-covered)

	snap := c.snapshot()
	c.translateGateway(&snap)
	if c.cert != nil {
		sec, _ := c.certSecret.Secrets(c.cert.ref.Namespace).Get(c.cert.ref.Name) // nil when absent
		c.cert.update(sec)
	}
	cfg := c.cfg
	var cmData map[string]string
	if c.settings != nil {
		cm, _ := c.configMap.ConfigMaps(c.settings.ref.Namespace).Get(c.settings.ref.Name) // nil when absent
		var data map[string]string
		if cm != nil {
			data = cm.Data
		}
		cmData = data
		others, _ := c.configMap.ConfigMaps(c.settings.ref.Namespace).List(labels.Everything())
		// add-headers and proxy-set-headers may name one in another
		// watched namespace, as ingress-nginx's store finds it.
		others = append(others, snap.ConfigMaps...)
		cfg = c.settings.update(data, cm != nil, others...)
		applyLive(c.router, cfg, c.cfg)
	}
	began := time.Now()
	opts := compileOptions(cfg, snap.Services)
	c.compiler.Options = opts
	res := c.compiler.Compile(snap)
	res.Warnings = append(res.Warnings, c.waf.prepare(cfg.modSecurity, res.Table)...)
	took := time.Since(began)
	gen, changed := c.router.Publish(res.Table)
	if err := c.streams.update(c.router.Table()); err != nil {
		c.log.Error("cannot listen on some TCP and UDP service ports; they are not served until a restart, the others are", "err", err)
	}
	n := c.rebuilds.Add(1)
	c.metrics.published(&res, changed, time.Now())
	if changed {
		logCertExpiry(c.log, res.Table, time.Now())
	}
	c.last.Store(&res)
	c.ready.Store(true)
	c.admission.offer(&reviewSource{snap: snap, opts: opts, settings: compile.ReadAdmissionSettings(cmData), gateway: c.gatewayRoutes(snap),
		waf: c.waf.checker(cfg.modSecurity)})
	c.logWarnings(res.Warnings)
	c.unclaimed = logUnclaimed(c.log, &res, c.unclaimed)

	attrs := []any{"rebuild", n, "generation", gen, "ingresses", len(snap.Ingresses),
		"claimed", len(res.Claimed), "warnings", len(res.Warnings), "compile", took.Round(time.Microsecond)}
	if changed {
		c.log.Info("rebuilt", attrs...)
	} else {
		c.log.Debug("rebuilt; table unchanged, nothing published", attrs...)
	}
	c.kickStatus()
}

// logWarnings logs each warning when it first appears, at warn level, and
// notes when it is gone; logging all of them on every rebuild would bury
// the news under repeats.
func (c *clusterController) logWarnings(warnings []compile.Warning) {
	now := make(map[compile.Warning]bool, len(warnings))
	for _, w := range warnings {
		now[w] = true
		if !c.logged[w] {
			c.log.Warn(w.Message, warningAttrs(w)...)
		}
	}
	for w := range c.logged {
		if !now[w] {
			c.log.Info("warning resolved", "reason", string(w.Reason), "object", w.Object.String(), "field", w.Field)
		}
	}
	c.logged = now
}

// snapshot lists every cached object. The objects are shared with the
// caches: Compile only reads them.
func (c *clusterController) snapshot() compile.Snapshot {
	s := compile.Snapshot{Ingresses: c.ingresses()}
	everything := labels.Everything()
	s.IngressClasses, _ = c.listers.classes.List(everything) // a cache lister never fails
	for _, l := range c.listers.services {
		items, _ := l.List(everything)
		s.Services = append(s.Services, items...)
	}
	for _, l := range c.listers.endpointSlices {
		items, _ := l.List(everything)
		s.EndpointSlices = append(s.EndpointSlices, items...)
	}
	for _, l := range c.listers.secrets {
		items, _ := l.List(everything)
		s.Secrets = append(s.Secrets, items...)
	}
	for _, l := range c.listers.configMaps {
		items, _ := l.List(everything)
		s.ConfigMaps = append(s.ConfigMaps, items...)
	}
	if c.cfg.namespace == "" {
		// The services ConfigMaps are among those already listed.
		return s
	}
	for _, l := range c.streamConfigMaps {
		items, _ := l.List(everything)
		for _, cm := range items {
			if cm.Namespace != c.cfg.namespace {
				s.ConfigMaps = append(s.ConfigMaps, cm)
			}
		}
	}
	return s
}

// ingresses lists every cached Ingress.
func (c *clusterController) ingresses() []*networkingv1.Ingress {
	var out []*networkingv1.Ingress
	for _, l := range c.listers.ingresses {
		items, _ := l.List(labels.Everything())
		out = append(out, items...)
	}
	return out
}

// runElection stands for the leader Lease until ctx is done, again after
// each loss. Every replica serves traffic whether it leads or not.
func (c *clusterController) runElection(ctx context.Context) {
	for ctx.Err() == nil {
		le, err := c.newElector()
		if err != nil { // validated at start
			c.log.Error("leader election", "err", err)
			return
		}
		le.Run(ctx)
		if ctx.Err() == nil {
			c.log.Warn("lost the leader Lease; standing again")
		}
	}
}

// newLock is the Lease the replicas elect a leader with.
func (c *clusterController) newLock() resourcelock.Interface {
	return &renewalLock{Interface: &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.cfg.electionNamespace, Name: c.cfg.electionID},
		Client:     c.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.cfg.identity},
	}, renewed: &c.renewed}
}

// renewalLock records in renewed when each write of this replica's hold
// on the Lease that went through was sent: the others count the lease
// duration from no earlier than that.
type renewalLock struct {
	resourcelock.Interface
	renewed *atomic.Pointer[time.Time]
}

func (l *renewalLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	sent := time.Now()
	err := l.Interface.Create(ctx, r)
	l.record(sent, r, err)
	return err
}

func (l *renewalLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	sent := time.Now()
	err := l.Interface.Update(ctx, r)
	l.record(sent, r, err)
	return err
}

func (l *renewalLock) record(sent time.Time, r resourcelock.LeaderElectionRecord, err error) {
	if err == nil && r.HolderIdentity == l.Identity() {
		l.renewed.Store(&sent)
	}
}

// newElector builds a leader elector on the Lease electionNamespace/electionID.
func (c *clusterController) newElector() (*leaderelection.LeaderElector, error) {
	return leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:          c.newLock(),
		LeaseDuration: c.cfg.leaseDuration,
		RenewDeadline: c.cfg.renewDeadline,
		RetryPeriod:   c.cfg.retryPeriod,
		// A replica that shuts down hands over at once instead of leaving
		// the others to wait out the lease.
		ReleaseOnCancel: true,
		Name:            c.cfg.electionID,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(term context.Context) {
				c.log.Info("leading: this replica writes status and Events", "lease", c.cfg.electionNamespace+"/"+c.cfg.electionID)
				select {
				case c.leads <- term:
				case <-term.Done():
				}
			},
			OnStoppedLeading: func() {
				c.log.Debug("not leading", "lease", c.cfg.electionNamespace+"/"+c.cfg.electionID)
			},
			OnNewLeader: func(identity string) {
				c.log.Info("leader observed", "leader", identity)
			},
		},
	})
}
