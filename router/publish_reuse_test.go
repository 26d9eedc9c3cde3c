package router

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"ramjet.dev/ramjet/match"
)

// A table recompiled from the serving one (compile.Compiler) shares the
// backends no change reached: Publish keeps their balancers, builds new
// ones only for the rest, and sweeps the registry once the new ones are a
// sixteenth of the live ones, not on every publish.
func TestPublishKeepsUnchangedBackendsBalancers(t *testing.T) {
	const n = 64
	backends := make([]*match.Backend, n)
	for i := range backends {
		backends[i] = httpBackend("prod/web-"+strconv.Itoa(i)+":80", "10.0.0."+strconv.Itoa(i+1)+":8080")
	}
	tableOf := func(gen int, bs []*match.Backend) *match.Table {
		hosts := make([]*match.VirtualHost, len(bs))
		for i, b := range bs {
			hosts[i] = vhost("h"+strconv.Itoa(i)+".example.com", nil, route(match.Prefix, "/", b))
		}
		return table("gen "+strconv.Itoa(gen), hosts...)
	}
	r := newTestRouter(Options{})
	r.Publish(tableOf(0, backends))
	first := r.state.Load()
	require.Len(t, first.balancers, n)
	require.Equal(t, 0, r.unswept, "the first table is swept after")

	for step := 1; step <= 4; step++ {
		prev := r.state.Load()
		replaced := backends[step]
		backends[step] = httpBackend(replaced.ID, "10.0.1."+strconv.Itoa(step)+":8080")
		_, changed := r.Publish(tableOf(step, backends))
		require.True(t, changed)
		cur := r.state.Load()
		for i, b := range backends {
			if i == step {
				assert.NotSame(t, prev.balancers[replaced], cur.balancers[b], "a replaced backend gets a new balancer")
				continue
			}
			assert.Same(t, prev.balancers[b], cur.balancers[b], "backend %d is the serving table's: its balancer is kept", i)
		}
		if step*16 < n {
			assert.Equal(t, step, r.unswept, "step %d: no sweep yet", step)
		} else {
			assert.Equal(t, 0, r.unswept, "step %d: the replaced balancers are a sixteenth: swept", step)
		}
	}

	// A table of new backends throughout, as a full compile gives, is
	// swept at once.
	fresh := make([]*match.Backend, n)
	for i := range fresh {
		fresh[i] = httpBackend(backends[i].ID, backends[i].Endpoints...)
	}
	r.Publish(tableOf(99, fresh))
	assert.Equal(t, 0, r.unswept)
}
