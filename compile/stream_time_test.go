package compile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/match"
)

// proxy-stream-timeout and proxy-stream-next-upstream-timeout go as they
// are to the stream proxy_timeout and proxy_next_upstream_timeout,
// milliseconds to nginx 1.22's ngx_parse_time: "1w", "1m30" and "1s500ms"
// are times; "1s1s", "1h1d", "1y" and "1m 30s" are not, and warn naming
// the key and the value.
func TestStreamTimesAsNginx(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "s"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	tcp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "tcp"}, Data: map[string]string{"9000": "n/s:80"}}
	compileWith := func(data map[string]string) (match.StreamSettings, []Warning) {
		cm := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "cfg"}, Data: data})
		res := Compile(Snapshot{Services: []*corev1.Service{svc}, ConfigMaps: []*corev1.ConfigMap{tcp}}, Options{TCPServices: "n/tcp", ConfigMap: cm})
		return res.Table.StreamSettings(), res.Warnings
	}
	for v, want := range map[string]time.Duration{"1w": 7 * 24 * time.Hour, "1m30": 90 * time.Second, "1s500ms": 1500 * time.Millisecond} {
		st, ws := compileWith(map[string]string{"proxy-stream-timeout": v, "proxy-stream-next-upstream-timeout": v})
		assert.Empty(t, ws, v)
		assert.Equal(t, want, st.Timeout, v)
		assert.Equal(t, want, st.NextUpstreamTimeout, v)
	}
	for _, v := range []string{"1s1s", "1h1d", "1y", "1m 30s"} {
		st, ws := compileWith(map[string]string{"proxy-stream-timeout": v, "proxy-stream-next-upstream-timeout": v})
		assert.Equal(t, match.DefaultStreamSettings, st, v)
		if assert.Len(t, ws, 2, v) {
			for _, w := range ws {
				assert.Equal(t, ConfigMapKeyRejected, w.Reason, v)
				assert.Contains(t, w.Message, `"`+v+`"`, v)
			}
		}
	}
}
