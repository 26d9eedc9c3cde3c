package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/status"
)

// fieldManager names the controller in the managedFields of what it writes.
const fieldManager = "ramjet"

// eventComponent is the source of the Events the leader posts.
const eventComponent = "ramjet"

// Bounds of the wait before a failed status pass is tried again without
// any new event.
const (
	minStatusRetry = time.Second
	maxStatusRetry = 30 * time.Second
)

// statusRewriteAfter is how long after writing an Ingress's status the
// writer leaves it alone when it differs again, changed by someone else:
// two writers that disagree (two installations claiming the same Ingress)
// would otherwise trade writes as fast as the API server takes them.
const statusRewriteAfter = 30 * time.Second

// statusWrite is an Ingress status this term wrote.
type statusWrite struct {
	addresses string    // addressList of the status written (statusFingerprint for the Gateway API)
	at        time.Time // when
	over      string    // the resourceVersion it was written over
	uid       types.UID // of the object written: one created again under its name is new
	warned    bool      // the change by someone else has been logged
}

// runStatus writes status and posts Events for each term this replica
// leads; between terms it only waits.
func (c *clusterController) runStatus(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case term := <-c.leads:
			c.lead(term)
		}
	}
}

// lead keeps status and Events current until the term ends: a pass after
// every rebuild and status change, a retry with backoff after a failed one,
// and a pass when a standing problem is due to be posted again.
func (c *clusterController) lead(term context.Context) {
	c.leading.Store(true)
	defer c.leading.Store(false)
	// A new leader reports the problems that are already there unless
	// the Events of an earlier leader do: the first pass reads them.
	c.deduper.Reset()
	c.eventsFound = false
	clear(c.written)
	clear(c.gwWritten)

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	backoff := time.Duration(0)
	for {
		// client-go ends the term only once its renewals have failed for
		// the renew deadline, and with ReleaseOnCancel a renew deadline
		// later still: past the lease duration, when another replica may
		// lead. The writes stop a renew deadline after the last renewal
		// went out instead, before anyone else can hold the Lease, and
		// resume if a renewal gets through again.
		var renewed time.Time // monotonic: a wall clock step moves nothing
		if r := c.renewed.Load(); r != nil {
			renewed = *r
		}
		pass, cancel := context.WithDeadline(term, renewed.Add(c.cfg.renewDeadline))
		lapsed := pass.Err() != nil
		switch {
		case lapsed:
		case c.syncStatus(pass):
			backoff = 0
		default:
			backoff = min(max(2*backoff, minStatusRetry), maxStatusRetry)
		}
		cancel()
		wait := time.Duration(-1)
		if backoff > 0 {
			wait = backoff
		}
		if lapsed && (wait < 0 || c.cfg.retryPeriod < wait) {
			wait = c.cfg.retryPeriod
		}
		if due := c.nodesDue(); due >= 0 && !lapsed && (wait < 0 || due < wait) {
			wait = due
		}
		// A repost due while lapsed waits for the pass after a renewal.
		if at, ok := c.deduper.NextRepost(); ok && !lapsed && (wait < 0 || time.Until(at) < wait) {
			wait = max(time.Until(at), 0)
		}
		if wait >= 0 {
			timer.Reset(wait)
		} else {
			timer.Stop()
		}
		select {
		case <-term.Done():
			c.log.Info("no longer leading", "lease", c.cfg.electionNamespace+"/"+c.cfg.electionID)
			return
		case <-c.statusKicks:
		case <-timer.C:
		}
	}
}

// syncStatus brings every claimed Ingress's status to the desired
// addresses and posts the Events for new problems. It reports whether every
// write went through.
func (c *clusterController) syncStatus(term context.Context) bool {
	if !c.ready.Load() {
		return true // the first rebuild asks again
	}
	res := c.last.Load()
	if res == nil {
		return true
	}
	// Claiming was decided once, by the compile that built the serving
	// table; status follows that decision.
	claimed := make([]*networkingv1.Ingress, 0, len(res.Claimed))
	for _, ref := range res.Claimed {
		if ing := c.lookupIngress(ref.Namespace, ref.Name); ing != nil {
			claimed = append(claimed, ing)
		}
	}

	ok := true
	src := status.Source{Addresses: c.cfg.publishAddresses, NodeInternalIP: c.cfg.nodeInternalIP}
	if ps := c.cfg.publishService; ps != nil {
		src.Service = c.lookupService(ps.Namespace, ps.Name)
	}
	if c.nodeMode() {
		var err error
		if src.Nodes, err = c.runningNodes(term); err != nil {
			if term.Err() != nil {
				return false
			}
			c.log.Warn("cannot read the nodes whose addresses Ingress status advertises; will retry (the controller needs get and list on pods in its namespace and get on nodes)", "err", err)
			ok = false
		}
	}
	desired := status.Desired(src)
	now := time.Now()
	maps.DeleteFunc(c.written, func(_ types.NamespacedName, w statusWrite) bool { return now.Sub(w.at) >= statusRewriteAfter })
	for _, u := range status.Updates(claimed, desired, !c.cfg.noStatusUpdate) {
		key := types.NamespacedName{Namespace: u.Namespace, Name: u.Name}
		cached := c.lookupIngress(u.Namespace, u.Name)
		if w, found := c.written[key]; found && w.addresses == addressList(u.Status) && (cached == nil || cached.UID == w.uid) {
			// Written lately and changed since, unless the cache has
			// not caught up with the write yet: again once it is due.
			if !w.warned && cached != nil && cached.ResourceVersion != w.over {
				c.log.Warn("someone else changed the Ingress status this replica wrote; it is written again no sooner than "+statusRewriteAfter.String()+" after",
					"ingress", key.String(), "written", w.addresses, "now", addressList(cached.Status))
				w.warned = true
				c.written[key] = w
			}
			ok = false
			continue
		}
		if err := c.applyStatus(term, desired, u); err != nil {
			if term.Err() != nil {
				return false
			}
			c.log.Warn("cannot write Ingress status; will retry", "ingress", u.Namespace+"/"+u.Name, "err", err)
			ok = false
		}
	}
	ok = c.syncGatewayStatus(term, desired) && ok
	if term.Err() != nil {
		return false
	}

	if !c.eventsFound {
		if err := c.findPostedEvents(term, res.Warnings); err != nil {
			if term.Err() != nil {
				return false
			}
			c.log.Warn("cannot list the Events already posted; will retry", "err", err)
			return false
		}
		c.eventsFound = true
	}
	for _, ev := range c.deduper.Filter(res.Warnings, time.Now()) {
		if err := c.postEvent(term, ev); err != nil {
			if term.Err() != nil {
				return false
			}
			c.log.Warn("cannot post Event; will retry", "ingress", ev.Namespace+"/"+ev.Name, "reason", ev.Reason, "err", err)
			c.deduper.Forget(ev)
			ok = false
		}
	}
	return ok
}

// findPostedEvents tells the freshly reset deduper which of the current
// problems an earlier leader already posted, and when: Events from this
// controller that are still in the API. Posting them again would show each
// problem twice in kubectl describe after every failover.
func (c *clusterController) findPostedEvents(ctx context.Context, warnings []compile.Warning) error {
	type key struct{ namespace, name, reason, message string }
	found := map[key]time.Time{}
	opts := metav1.ListOptions{
		FieldSelector: fields.Set{"involvedObject.kind": "Ingress", "source": eventComponent, "type": corev1.EventTypeWarning}.String(),
		Limit:         500,
	}
	for {
		list, err := c.client.CoreV1().Events(c.cfg.namespace).List(ctx, opts)
		if err != nil {
			return err
		}
		for _, e := range list.Items {
			k := key{e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Reason, e.Message}
			if at := e.LastTimestamp.Time; at.After(found[k]) {
				found[k] = at
			}
		}
		if opts.Continue = list.Continue; opts.Continue == "" {
			break
		}
	}
	// Every current problem is new to the reset deduper: each one found
	// is recorded as posted when its Event was, the others are left to
	// the next Filter.
	for _, ev := range c.deduper.Filter(warnings, time.Now()) {
		if at, ok := found[key{ev.Namespace, ev.Name, ev.Reason, ev.Message}]; ok {
			c.deduper.Posted(ev, at)
		} else {
			c.deduper.Forget(ev)
		}
	}
	return nil
}

// applyStatus writes one status update. The cached copy may lag a write by
// someone else: on a conflict the Ingress is read again, and written once
// more only if the latest compile still claims it and it still differs. A
// failure is left to the retry.
func (c *clusterController) applyStatus(ctx context.Context, desired []networkingv1.IngressLoadBalancerIngress, u status.Update) error {
	cached := c.lookupIngress(u.Namespace, u.Name)
	if cached == nil {
		return nil // deleted since
	}
	api := c.client.NetworkingV1().Ingresses(u.Namespace)
	over, uid := cached.ResourceVersion, cached.UID
	obj := cached.DeepCopy()
	obj.Status = u.Status
	_, err := api.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: fieldManager})
	if apierrors.IsConflict(err) {
		fresh, getErr := api.Get(ctx, u.Name, metav1.GetOptions{})
		if getErr != nil {
			err = getErr
		} else if latest := c.last.Load(); !slices.Contains(latest.Claimed, compile.Ref{Kind: "Ingress", Namespace: fresh.Namespace, Name: fresh.Name}) {
			return nil // no longer claimed by the newest table
		} else if again := status.Updates([]*networkingv1.Ingress{fresh}, desired, true); len(again) == 0 {
			return nil // already right
		} else {
			over, uid = fresh.ResourceVersion, fresh.UID
			fresh.Status = again[0].Status
			_, err = api.UpdateStatus(ctx, fresh, metav1.UpdateOptions{FieldManager: fieldManager})
		}
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	c.log.Info("Ingress status written", "ingress", u.Namespace+"/"+u.Name, "addresses", addressList(u.Status))
	if c.written == nil {
		c.written = make(map[types.NamespacedName]statusWrite)
	}
	c.written[types.NamespacedName{Namespace: u.Namespace, Name: u.Name}] = statusWrite{addresses: addressList(u.Status), at: time.Now(), over: over, uid: uid}
	return nil
}

func addressList(s networkingv1.IngressStatus) string {
	var parts []string
	for _, e := range s.LoadBalancer.Ingress {
		parts = append(parts, strings.Trim(e.IP+" "+e.Hostname, " "))
	}
	return strings.Join(parts, ",")
}

// postEvent creates a Warning Event on the Ingress the warning is about.
func (c *clusterController) postEvent(ctx context.Context, ev status.Event) error {
	ing := c.lookupIngress(ev.Namespace, ev.Name)
	if ing == nil {
		return nil // deleted since the rebuild
	}
	now := metav1.Now()
	e := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: ev.Name + ".", Namespace: ev.Namespace},
		InvolvedObject: corev1.ObjectReference{
			APIVersion:      networkingv1.SchemeGroupVersion.String(),
			Kind:            ev.Kind,
			Namespace:       ev.Namespace,
			Name:            ev.Name,
			UID:             ing.UID,
			ResourceVersion: ing.ResourceVersion,
		},
		Reason:              ev.Reason,
		Message:             ev.Message,
		Type:                corev1.EventTypeWarning,
		Source:              corev1.EventSource{Component: eventComponent, Host: c.cfg.identity},
		FirstTimestamp:      now,
		LastTimestamp:       now,
		Count:               1,
		ReportingController: eventComponent,
		ReportingInstance:   c.cfg.identity,
	}
	if _, err := c.client.CoreV1().Events(ev.Namespace).Create(ctx, e, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("creating Event %s on Ingress %s/%s: %w", ev.Reason, ev.Namespace, ev.Name, err)
	}
	c.log.Debug("Event posted", "ingress", ev.Namespace+"/"+ev.Name, "reason", ev.Reason)
	return nil
}

func (c *clusterController) lookupIngress(namespace, name string) *networkingv1.Ingress {
	for _, l := range c.listers.ingresses {
		if ing, err := l.Ingresses(namespace).Get(name); err == nil {
			return ing
		}
	}
	return nil
}

func (c *clusterController) lookupService(namespace, name string) *corev1.Service {
	for _, l := range c.listers.services {
		if svc, err := l.Services(namespace).Get(name); err == nil {
			return svc
		}
	}
	return nil
}
