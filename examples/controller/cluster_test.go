package main

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// debounceRun feeds debounce the signals of schedule (offsets from the
// start) and returns when each rebuild began, as offsets too, and how
// late the latest signal was sent.
func debounceRun(t *testing.T, quiet, maxWait time.Duration, schedule []time.Duration, settle time.Duration) (rebuilds []time.Duration, late time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan struct{}, 1)
	var mu sync.Mutex
	began := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		debounce(ctx, changes, quiet, maxWait, func() {
			mu.Lock()
			defer mu.Unlock()
			rebuilds = append(rebuilds, time.Since(began))
		})
	}()
	for _, at := range schedule {
		time.Sleep(time.Until(began.Add(at)))
		late = max(late, time.Since(began)-at)
		select {
		case changes <- struct{}{}:
		default:
		}
	}
	time.Sleep(settle)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return rebuilds, late
}

func every(step, until time.Duration) []time.Duration {
	var out []time.Duration
	for at := time.Duration(0); at < until; at += step {
		out = append(out, at)
	}
	return out
}

func TestDebounce(t *testing.T) {
	const (
		quiet   = 50 * time.Millisecond
		maxWait = 250 * time.Millisecond
		slack   = 40 * time.Millisecond // scheduling on a busy machine
	)
	tests := []struct {
		name     string
		schedule []time.Duration
		check    func(t *testing.T, rebuilds []time.Duration)
	}{
		{
			name:     "one change rebuilds once, after the quiet spell",
			schedule: []time.Duration{0},
			check: func(t *testing.T, rebuilds []time.Duration) {
				require.Len(t, rebuilds, 1)
				require.GreaterOrEqual(t, rebuilds[0], quiet)
			},
		},
		{
			name:     "a burst of fifty rebuilds once",
			schedule: every(200*time.Microsecond, 10*time.Millisecond),
			check: func(t *testing.T, rebuilds []time.Duration) {
				require.Len(t, rebuilds, 1)
				require.GreaterOrEqual(t, rebuilds[0], 10*time.Millisecond+quiet-time.Millisecond)
			},
		},
		{
			name:     "two bursts a quiet spell apart rebuild twice",
			schedule: []time.Duration{0, 5 * time.Millisecond, 150 * time.Millisecond, 155 * time.Millisecond},
			check: func(t *testing.T, rebuilds []time.Duration) {
				require.Len(t, rebuilds, 2)
				require.Less(t, rebuilds[0], 150*time.Millisecond)
				require.GreaterOrEqual(t, rebuilds[1], 155*time.Millisecond+quiet)
			},
		},
		{
			name:     "steady churn still rebuilds every maxWait",
			schedule: every(20*time.Millisecond, 800*time.Millisecond),
			check: func(t *testing.T, rebuilds []time.Duration) {
				// Without the bound nothing would happen until the churn
				// stops; with it, one rebuild per maxWait counted from the
				// first signal after the previous rebuild (up to one step
				// later), and none may leave the last signal, at 780ms,
				// unbuilt. Whether that takes one more rebuild depends on
				// where the last window ends, so only the order is checked.
				const step = 20 * time.Millisecond
				require.GreaterOrEqual(t, len(rebuilds), 3, "rebuilds at %v", rebuilds)
				require.LessOrEqual(t, rebuilds[0], maxWait+slack, "rebuilds at %v", rebuilds)
				for i := 1; i < len(rebuilds)-1; i++ {
					require.LessOrEqual(t, rebuilds[i]-rebuilds[i-1], maxWait+step+slack, "rebuilds at %v", rebuilds)
				}
				require.GreaterOrEqual(t, rebuilds[len(rebuilds)-1], 780*time.Millisecond, "rebuilds at %v", rebuilds)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A starved sender feeds debounce another schedule than the
			// check expects (a burst split by a quiet spell, churn with a
			// gap): such a run is repeated, the last one checked.
			for attempt := 1; ; attempt++ {
				rebuilds, late := debounceRun(t, quiet, maxWait, tt.schedule, 150*time.Millisecond)
				if late > slack/4 && attempt < 5 {
					t.Logf("attempt %d: a signal was sent %v late", attempt, late)
					continue
				}
				tt.check(t, rebuilds)
				return
			}
		})
	}
}

func TestStatusOnly(t *testing.T) {
	base := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{
		Name: "a", Namespace: "n", Generation: 3, ResourceVersion: "10",
		Annotations: map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"},
	}}
	withStatus := base.DeepCopy()
	withStatus.ResourceVersion = "11"
	withStatus.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.1"}}
	specEdit := base.DeepCopy()
	specEdit.Generation = 4
	annotationEdit := base.DeepCopy()
	annotationEdit.Annotations = map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/x"}
	labelEdit := base.DeepCopy()
	labelEdit.Labels = map[string]string{"team": "shop"}
	noGeneration := base.DeepCopy()
	noGeneration.Generation = 0
	// Deleted and created again while the watch was down: the relist hands
	// it over as an update, at the same generation, with a new spec.
	recreated := base.DeepCopy()
	recreated.UID, recreated.ResourceVersion = "new", "30"
	recreated.CreationTimestamp = metav1.Unix(1000, 0)
	recreated.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "other"}}

	tests := []struct {
		name     string
		old, cur any
		want     bool
	}{
		{name: "status written", old: base, cur: withStatus, want: true},
		{name: "resync of the same object", old: base, cur: base, want: true},
		{name: "labels only", old: base, cur: labelEdit, want: true},
		{name: "spec edited", old: base, cur: specEdit, want: false},
		{name: "annotation edited", old: base, cur: annotationEdit, want: false},
		{name: "no generation to compare", old: noGeneration, cur: noGeneration, want: false},
		{name: "created again under its name", old: base, cur: recreated, want: false},
		{name: "not an Ingress", old: "x", cur: "y", want: false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, statusOnly(tt.old, tt.cur), tt.name)
	}
}

func TestKubeConfig(t *testing.T) {
	write := func(server string) string {
		path := filepath.Join(t.TempDir(), "config")
		require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: `+server+`}
users:
- name: u
  user: {token: secret}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`), 0o600))
		return path
	}
	// Outside a pod, whatever the test runner's environment.
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")

	explicit := write("https://explicit.example:6443")
	fromEnv := write("https://env.example:6443")
	t.Setenv("KUBECONFIG", fromEnv)

	cfg, err := kubeConfig(explicit)
	require.NoError(t, err)
	require.Equal(t, "https://explicit.example:6443", cfg.Host, "-kubeconfig wins over $KUBECONFIG")
	require.Equal(t, "secret", cfg.BearerToken)

	cfg, err = kubeConfig("")
	require.NoError(t, err)
	require.Equal(t, "https://env.example:6443", cfg.Host, "$KUBECONFIG when not in a pod")

	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
	t.Setenv("HOME", t.TempDir())
	_, err = kubeConfig("")
	require.ErrorContains(t, err, "no usable kubeconfig")

	_, err = kubeConfig(filepath.Join(t.TempDir(), "missing"))
	require.ErrorContains(t, err, "-kubeconfig")
}

// TestStopWhileReadingTheConfigMapAtStart: with -configmap, start reads the
// ConfigMap first; an API server that refuses connections keeps that read
// waiting (dialUntilAccepted), and the stop signal must still end it.
func TestStopWhileReadingTheConfigMapAtStart(t *testing.T) {
	cfg := config{httpAddr: "127.0.0.1:0", electionID: "x", electionNamespace: "default", identity: "x",
		configMap: &types.NamespacedName{Namespace: "ingress", Name: "ramjet"}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // refused from now on
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		inst, err := startCluster(ctx, cfg, slog.New(slog.DiscardHandler), &rest.Config{Host: "http://" + addr})
		if err == nil {
			err = inst.Wait()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("start did not end after the stop signal while the API server refused connections")
	}
}
