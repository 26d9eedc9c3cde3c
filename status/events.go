package status

import (
	"cmp"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"ramjet.dev/ramjet/compile"
)

// DefaultRepostAfter is how long an unchanged problem goes before it is
// posted again. The API server deletes an Event an hour after its last
// update by default (kube-apiserver --event-ttl=1h), so a problem that is
// never fixed would vanish from `kubectl describe ingress` unless re-posted;
// doing it before the hour is up keeps it visible without a gap.
const DefaultRepostAfter = 50 * time.Minute

// MaxMessageBytes bounds Event.Message: the events API documents 1 kB as
// the longest note it accepts.
const MaxMessageBytes = 1024

// Event is a Warning Event to post on an object (SPEC §14). It is a plain
// value; the controller posts it with its event recorder as type Warning.
type Event struct {
	// Kind, Namespace and Name name the object to post on; Kind is always
	// "Ingress".
	Kind      string
	Namespace string
	Name      string
	// Reason is the warning's reason code, e.g. "ServiceNotFound".
	Reason string
	// Message is "field: message", plus " (winner: ...)" for conflicts, cut
	// to MaxMessageBytes.
	Message string
	// Warning is the problem the Event reports, for Forget.
	Warning compile.Warning
}

// EventDeduper turns the warnings of successive rebuilds into the Events
// worth posting, so that a problem is reported when it appears and not
// again on every rebuild while it persists.
//
// It remembers only the warnings of the last Filter call, so its memory is
// bounded by the current problems: a problem that goes away is forgotten,
// and posted again if it comes back. Only the leader should post Events
// (two replicas would post every problem twice); call Reset when leadership
// is gained, so that the new leader reports what is already wrong, and
// Posted or Forget for each problem it finds already posted or not.
//
// The zero value is ready to use and never re-posts. An EventDeduper is safe
// for concurrent use.
type EventDeduper struct {
	mu          sync.Mutex
	repostAfter time.Duration
	posted      map[compile.Warning]time.Time // active warning → when last posted
}

// NewEventDeduper returns an EventDeduper that posts an unchanged problem
// again once repostAfter has passed since it was last posted; zero or less
// never re-posts. The controller uses DefaultRepostAfter.
func NewEventDeduper(repostAfter time.Duration) *EventDeduper {
	return &EventDeduper{repostAfter: max(repostAfter, 0)}
}

// Filter takes the complete warnings of one rebuild, at time now, and
// returns the Events to post: those for warnings that the previous call did
// not have, and those due for re-posting. Two warnings are the same problem
// when every field matches, so a changed message or winner is a new problem.
//
// Only warnings about an Ingress become Events. The rest concern the
// controller's own options (a --default-backend Service that is missing or
// has no endpoints): their reader is the operator, who sees them in the
// log, and the Service they name may not exist to post on.
//
// Events come sorted by namespace, name, field, reason, message and winner.
// A controller that wants a problem re-posted without a rebuild calls Filter
// again with the last table's warnings at NextRepost.
func (d *EventDeduper) Filter(warnings []compile.Warning, now time.Time) []Event {
	type item struct {
		w               compile.Warning
		namespace, name string
	}
	items := make([]item, 0, len(warnings))
	for _, w := range warnings {
		if o := w.Object; o.Kind == "Ingress" && o.Namespace != "" && o.Name != "" {
			items = append(items, item{w, w.Object.Namespace, w.Object.Name})
		}
	}
	slices.SortFunc(items, func(a, b item) int {
		return cmp.Or(
			cmp.Compare(a.namespace, b.namespace),
			cmp.Compare(a.name, b.name),
			cmp.Compare(a.w.Field, b.w.Field),
			cmp.Compare(a.w.Reason, b.w.Reason),
			cmp.Compare(a.w.Message, b.w.Message),
			cmp.Compare(a.w.WinnerText(), b.w.WinnerText()),
		)
	})
	// The sort key spells out the whole warning, so repeats are adjacent.
	items = slices.CompactFunc(items, func(a, b item) bool { return a.w == b.w })

	d.mu.Lock()
	defer d.mu.Unlock()
	next := make(map[compile.Warning]time.Time, len(items))
	var events []Event
	for _, it := range items {
		last, seen := d.posted[it.w]
		if !seen || (d.repostAfter > 0 && !now.Before(last.Add(d.repostAfter))) {
			events = append(events, Event{
				Kind:      "Ingress",
				Namespace: it.namespace,
				Name:      it.name,
				Reason:    string(it.w.Reason),
				Message:   eventMessage(it.w),
				Warning:   it.w,
			})
			last = now
		}
		next[it.w] = last
	}
	d.posted = next
	return events
}

// NextRepost returns when the earliest remembered problem is due to be
// posted again, and false when none will be (nothing remembered, or
// re-posting off).
func (d *EventDeduper) NextRepost() (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var next time.Time
	if d.repostAfter <= 0 {
		return next, false
	}
	for _, last := range d.posted {
		if due := last.Add(d.repostAfter); next.IsZero() || due.Before(next) {
			next = due
		}
	}
	return next, !next.IsZero()
}

// Forget marks ev as not posted, so that the next Filter that still has its
// problem returns it again: a post that failed must not wait for a re-post.
func (d *EventDeduper) Forget(ev Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.posted, ev.Warning)
}

// Posted records that ev's problem was last posted at the time at, by this
// process or another: a new leader that finds the previous leader's Event
// in the API calls it after Reset and Filter, so that the problem is not
// posted twice and is re-posted when that Event is due, not an hour after
// the takeover. Only a problem the last Filter returned or kept is
// recorded; memory stays bounded by the current problems.
func (d *EventDeduper) Posted(ev Event, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.posted[ev.Warning]; ok {
		d.posted[ev.Warning] = at
	}
}

// Reset forgets every problem, so the next Filter reports all it is given.
func (d *EventDeduper) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.posted = nil
}

// eventMessage puts the field path in front of the message: an Event shows
// only its object, and an Ingress can have many paths.
func eventMessage(w compile.Warning) string {
	s := w.Message
	if w.Field != "" {
		s = w.Field + ": " + s
	}
	if winner := w.WinnerText(); winner != "" {
		s += " (winner: " + winner + ")"
	}
	return truncate(s, MaxMessageBytes)
}

// truncate cuts s to at most n bytes on a rune boundary, ending in "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
