package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Three panels of ingress-nginx's Grafana dashboard
// (deploy/grafana/dashboards/nginx.json), with the dashboard's variables
// set to "All" (".*") as Grafana does.
const (
	queryRequestsByIngress = `round(sum(irate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",exported_namespace=~"$exported_namespace",ingress=~"$ingress"}[2m])) by (ingress), 0.001)`
	queryP99ByIngress      = `histogram_quantile(0.99, sum(rate(nginx_ingress_controller_request_duration_seconds_bucket{ingress!="",controller_pod=~"$controller",controller_class=~"$controller_class",controller_namespace=~"$namespace",ingress=~"$ingress",exported_namespace=~"$exported_namespace"}[2m])) by (le, ingress))`
	querySuccessRate       = `sum(rate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",namespace=~"$namespace",status!~"[4-5].*"}[2m])) / sum(rate(nginx_ingress_controller_requests{controller_pod=~"$controller",controller_class=~"$controller_class",namespace=~"$namespace"}[2m]))`
)

// matcher is one label matcher of a PromQL selector.
type matcher struct {
	label, op, value string
}

func (m matcher) matches(labels map[string]string) bool {
	v := labels[m.label]
	switch m.op {
	case "=":
		return v == m.value
	case "!=":
		return v != m.value
	}
	re := regexp.MustCompile("^(?:" + m.value + ")$")
	return re.MatchString(v) == (m.op == "=~")
}

var selectorRE = regexp.MustCompile(`([a-z_:]+)\{([^}]*)\}`)
var matcherRE = regexp.MustCompile(`([a-z_]+)(=~|!~|!=|=)"([^"]*)"`)

// selectors reads the metric selectors of a query, with its dashboard
// variables set to "All".
func selectors(query string) map[string][][]matcher {
	query = regexp.MustCompile(`\$[a-z_]+`).ReplaceAllString(query, ".*")
	out := map[string][][]matcher{}
	for _, sel := range selectorRE.FindAllStringSubmatch(query, -1) {
		var ms []matcher
		for _, m := range matcherRE.FindAllStringSubmatch(sel[2], -1) {
			ms = append(ms, matcher{m[1], m[2], m[3]})
		}
		out[sel[1]] = append(out[sel[1]], ms)
	}
	return out
}

// asScraped is s as Prometheus stores it when it scrapes a pod found by
// Kubernetes service discovery: the target's labels added, and a label
// of the exposition that collides with one (namespace) kept as
// exported_<name>. That is why the dashboard says exported_namespace.
func asScraped(s scrape, target map[string]string) scrape {
	out := make(scrape, 0, len(s))
	for _, x := range s {
		l := map[string]string{}
		for k, v := range x.labels {
			if _, clash := target[k]; clash {
				k = "exported_" + k
			}
			l[k] = v
		}
		maps.Copy(l, target)
		out = append(out, sample{x.name, l, x.value})
	}
	return out
}

// increase is PromQL's increase over two scrapes of counters, by the
// labels in by: the series selected by ms, summed per group.
func increase(before, after scrape, name string, ms []matcher, by ...string) map[string]float64 {
	sum := func(s scrape) map[string]float64 {
		out := map[string]float64{}
		for _, x := range s {
			if x.name != name || slices.ContainsFunc(ms, func(m matcher) bool { return !m.matches(x.labels) }) {
				continue
			}
			var key []string
			for _, b := range by {
				key = append(key, b+"="+x.labels[b])
			}
			out[strings.Join(key, ",")] += x.value
		}
		return out
	}
	a, b := sum(before), sum(after)
	for k, v := range a {
		b[k] -= v
	}
	return b
}

// histogramQuantile is PromQL's histogram_quantile over cumulative
// bucket counts keyed by their upper bound.
func histogramQuantile(q float64, buckets map[float64]float64) float64 {
	bounds := slices.Sorted(maps.Keys(buckets))
	total := buckets[math.Inf(1)]
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	lower, prev := 0.0, 0.0
	for _, ub := range bounds {
		if buckets[ub] >= rank {
			if math.IsInf(ub, 1) {
				return lower
			}
			return lower + (ub-lower)*(rank-prev)/(buckets[ub]-prev)
		}
		lower, prev = ub, buckets[ub]
	}
	return math.NaN()
}

// TestGrafanaQueries checks that three panels of ingress-nginx's dashboard
// find their series in /metrics after traffic, with the values the
// traffic implies. It runs offline: no API server is needed.
func TestGrafanaQueries(t *testing.T) {
	dir := t.TempDir()
	// The application answers 404 under /missing.
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(app.Close)
	u, err := url.Parse(app.URL)
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "app.yaml"), appManifests(u.Port()))
	ctx, cancel := context.WithCancel(context.Background())
	inst, err := start(ctx, config{
		manifests: dir, httpAddr: "127.0.0.1:0", debugAddr: "127.0.0.1:0", pollInterval: time.Hour,
		enableMetrics: true, metricsPerHost: true,
		podName: "ramjet-7d9f-abcde", podNamespace: "ingress",
	}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() {
		cancel()
		require.NoError(t, inst.Wait())
	})
	client := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	var raw string
	scrapeNow := func() scrape {
		_, body := get(t, client, "http://"+inst.DebugAddr+"/metrics", "")
		raw = body
		// As Prometheus stores it after scraping the pod.
		return asScraped(parseScrape(t, body), map[string]string{
			"namespace": "ingress", "pod": "ramjet-7d9f-abcde", "instance": "10.0.0.5:10254", "job": "ramjet",
		})
	}

	before := scrapeNow()
	const ok, notFound, strangers = 16, 4, 3
	for range ok {
		status, _ := get(t, client, "http://"+inst.HTTPAddr+"/x", "app.test")
		require.Equal(t, http.StatusOK, status)
	}
	for range notFound {
		status, _ := get(t, client, "http://"+inst.HTTPAddr+"/missing", "app.test")
		require.Equal(t, http.StatusNotFound, status)
	}
	for i := range strangers {
		// No rule names these hosts: not counted, as ingress-nginx.
		status, _ := get(t, client, "http://"+inst.HTTPAddr+"/", fmt.Sprintf("stranger-%d.test", i))
		require.Equal(t, http.StatusNotFound, status)
	}
	after := scrapeNow()

	t.Run("requests per second by ingress", func(t *testing.T) {
		sel := selectors(queryRequestsByIngress)["nginx_ingress_controller_requests"]
		require.Len(t, sel, 1)
		got := increase(before, after, "nginx_ingress_controller_requests", sel[0], "ingress")
		require.Equal(t, map[string]float64{"ingress=app": ok + notFound}, got)
	})
	t.Run("p99 latency by ingress", func(t *testing.T) {
		sel := selectors(queryP99ByIngress)["nginx_ingress_controller_request_duration_seconds_bucket"]
		require.Len(t, sel, 1)
		got := increase(before, after, "nginx_ingress_controller_request_duration_seconds_bucket", sel[0], "ingress", "le")
		buckets := map[float64]float64{}
		for key, v := range got {
			require.True(t, strings.HasPrefix(key, "ingress=app,le="), key)
			le, err := strconv.ParseFloat(strings.TrimPrefix(key, "ingress=app,le="), 64)
			require.NoError(t, err)
			buckets[le] = v
		}
		require.Len(t, buckets, len(timeBuckets)+1, "ingress-nginx's buckets and +Inf")
		require.Equal(t, float64(ok+notFound), buckets[math.Inf(1)])
		p99 := histogramQuantile(0.99, buckets)
		require.False(t, math.IsNaN(p99))
		require.Greater(t, p99, 0.0)
		require.LessOrEqual(t, p99, 1.0, "loopback requests take well under a second")
	})
	t.Run("success rate", func(t *testing.T) {
		sels := selectors(querySuccessRate)["nginx_ingress_controller_requests"]
		require.Len(t, sels, 2)
		success := increase(before, after, "nginx_ingress_controller_requests", sels[0])[""]
		all := increase(before, after, "nginx_ingress_controller_requests", sels[1])[""]
		require.Equal(t, float64(ok+notFound), all)
		require.Equal(t, 0.8, success/all)
	})

	// The series the panels read, as /metrics shows them, for the README.
	var lines []string
	for line := range strings.Lines(raw) {
		if strings.HasPrefix(line, "nginx_ingress_controller_requests{") ||
			strings.HasPrefix(line, "nginx_ingress_controller_request_duration_seconds_bucket{") && strings.Contains(line, `le="0.005"`) {
			lines = append(lines, strings.TrimSpace(line))
		}
	}
	t.Logf("sample series:\n%s", strings.Join(lines, "\n"))
}
