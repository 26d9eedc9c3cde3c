package compile

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/match"
)

// The entry format as getStreamServices splits it: the third part decodes,
// the fourth encodes only among exactly four, PROXY in any case, TCP only.
func TestParseL4Entry(t *testing.T) {
	for _, c := range []struct {
		v              string
		proto          match.L4Protocol
		decode, encode bool
		ignored        int
		err            string
	}{
		{v: "ns/svc:80"},
		{v: "ns/svc:http"},
		{v: "ns/svc:80:PROXY", decode: true},
		{v: "ns/svc:80:proxy:Proxy", decode: true, encode: true},
		{v: "ns/svc:80::PROXY", encode: true},
		{v: "ns/svc:80:PROXY:PROXY:x", decode: true, ignored: 2},
		{v: "ns/svc:80:v2", ignored: 1},
		{v: "ns/svc:53:PROXY", proto: match.UDP, ignored: 1},
		{v: "ns/svc:53", proto: match.UDP},
		{v: "ns/svc", err: "want namespace/service:port"},
		{v: "svc:80", err: "want namespace/service:port"},
		{v: "a/b/c:80", err: "want namespace/service:port"},
		{v: "ns/svc:0", err: "out of range"},
		{v: "ns/svc:70000", err: "out of range"},
		{v: "ns/svc:", err: "service port"},
		{v: "ns/svc:80 ", err: "service port"},
		{v: "NS/svc:80", err: "namespace"},
		{v: "ns/1svc:80", err: "service name"},
	} {
		e, err := parseL4Entry(c.v, c.proto)
		if c.err != "" {
			require.Error(t, err, c.v)
			assert.Contains(t, err.Error(), c.err, c.v)
			continue
		}
		require.NoError(t, err, c.v)
		assert.Equal(t, c.decode, e.decode, c.v)
		assert.Equal(t, c.encode, e.encode, c.v)
		assert.Len(t, e.ignored, c.ignored, c.v)
	}
}

func FuzzL4Entry(f *testing.F) {
	for _, s := range []string{"ns/svc:80", "ns/svc:http:PROXY:PROXY", "a/b:1::PROXY", "::", "/:", "ns/svc:80:PROXY:PROXY:PROXY", "x/y:\x00"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, v string, udp bool) {
		proto := match.TCP
		if udp {
			proto = match.UDP
		}
		e, err := parseL4Entry(v, proto)
		if err != nil {
			return
		}
		if !strings.HasPrefix(v, e.namespace+"/"+e.name+":"+e.port) {
			t.Fatalf("%q parsed as %s/%s:%s", v, e.namespace, e.name, e.port)
		}
		if udp && (e.decode || e.encode) {
			t.Fatalf("%q: PROXY on UDP", v)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "tcp"}, Data: map[string]string{"80": v}}
		res := Compile(Snapshot{ConfigMaps: []*corev1.ConfigMap{cm}}, Options{TCPServices: "n/tcp", UDPServices: "n/tcp"})
		if res.Table.L4Service(match.TCP, 80) == nil {
			t.Fatalf("%q: valid entry not served", v)
		}
	})
}

// The proxy-stream-* keys with ingress-nginx's defaults and nginx's time
// syntax; a bad value keeps the default.
func TestStreamSettingsKeys(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "s"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	tcp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "tcp"}, Data: map[string]string{"9000": "n/s:80"}}
	compileWith := func(data map[string]string) (match.StreamSettings, []Warning) {
		cm := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "cfg"}, Data: data})
		res := Compile(Snapshot{Services: []*corev1.Service{svc}, ConfigMaps: []*corev1.ConfigMap{tcp}}, Options{TCPServices: "n/tcp", ConfigMap: cm})
		return res.Table.StreamSettings(), res.Warnings
	}
	st, ws := compileWith(nil)
	assert.Equal(t, match.DefaultStreamSettings, st)
	assert.Empty(t, ws)

	st, ws = compileWith(map[string]string{
		"proxy-stream-timeout": "90", "proxy-stream-next-upstream": "false", "proxy-stream-next-upstream-timeout": "0",
		"proxy-stream-next-upstream-tries": "5", "proxy-stream-responses": "0",
	})
	assert.Empty(t, ws)
	assert.Equal(t, match.StreamSettings{Timeout: 90 * time.Second, ConnectTimeout: time.Minute, NextUpstream: false, NextUpstreamTries: 5, Responses: 0}, st)

	st, ws = compileWith(map[string]string{"proxy-stream-timeout": "0", "proxy-stream-next-upstream-tries": "-1", "proxy-stream-next-upstream-timeout": "1m30s"})
	assert.Equal(t, match.DefaultStreamSettings.Timeout, st.Timeout)
	assert.Equal(t, 3, st.NextUpstreamTries)
	assert.Equal(t, 90*time.Second, st.NextUpstreamTimeout)
	require.Len(t, ws, 2)
	for _, w := range ws {
		assert.Equal(t, ConfigMapKeyRejected, w.Reason)
	}
}

// An entry on a port the embedder listens on is refused; the options
// name the ConfigMaps strictly.
func TestL4ReservedPortsAndOptions(t *testing.T) {
	tcp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "tcp"}, Data: map[string]string{"80": "n/s:80", "81": "n/s:80"}}
	res := Compile(Snapshot{ConfigMaps: []*corev1.ConfigMap{tcp}}, Options{TCPServices: "n/tcp", ReservedPorts: []int{80, 443}})
	assert.Nil(t, res.Table.L4Service(match.TCP, 80))
	assert.NotNil(t, res.Table.L4Service(match.TCP, 81))
	assert.Contains(t, res.String(), `L4ServiceRejected ConfigMap n/tcp data[80]: port 80 is the controller's own`)

	assert.Error(t, Options{TCPServices: "tcp"}.Validate())
	assert.Error(t, Options{UDPServices: "n/Bad"}.Validate())
	assert.NoError(t, Options{TCPServices: "n/tcp", UDPServices: "n/udp"}.Validate())
}

// Entries whose Services join into one ingress-nginx upstream name get
// IDs of their own (each its own round-robin position); the name stays
// ingress-nginx's where no other entry shares it, and one Service's port
// named by two entries is one backend.
func TestL4BackendIDsDistinct(t *testing.T) {
	var svcs []*corev1.Service
	for _, ref := range [][2]string{{"a-b", "c"}, {"a", "b-c"}, {"x", "y"}} {
		svcs = append(svcs, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ref[0], Name: ref[1]}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}})
	}
	tcp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "tcp"}, Data: map[string]string{
		"9000": "a-b/c:80", "9001": "a/b-c:80", "9002": "x/y:80", "9003": "x/y:80",
	}}
	res := Compile(Snapshot{Services: svcs, ConfigMaps: []*corev1.ConfigMap{tcp}}, Options{TCPServices: "n/tcp", UDPServices: "n/tcp"})
	id := func(proto match.L4Protocol, port int32) string { return res.Table.L4Service(proto, port).Backend.ID }
	assert.NotEqual(t, id(match.TCP, 9000), id(match.TCP, 9001))
	assert.Equal(t, "tcp-x-y-80", id(match.TCP, 9002))
	assert.Equal(t, id(match.TCP, 9002), id(match.TCP, 9003))
	assert.Equal(t, "udp-x-y-80", id(match.UDP, 9002))
	for _, p := range []int32{9000, 9001} {
		assert.NotEqual(t, id(match.TCP, p), id(match.UDP, p))
	}
	again := Compile(Snapshot{Services: svcs, ConfigMaps: []*corev1.ConfigMap{tcp}}, Options{TCPServices: "n/tcp", UDPServices: "n/tcp"})
	assert.Equal(t, id(match.TCP, 9000), again.Table.L4Service(match.TCP, 9000).Backend.ID)
}

// A key is read as getStreamServices' strconv.Atoi reads it: a sign and
// leading zeros are accepted, the port still has to be in range, and two
// spellings of one port are one port.
func TestL4PortKeyAsAtoi(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "s"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	tcp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "tcp"}, Data: map[string]string{
		"+9000": "n/s:80", "9000": "n/s:80", "0000000009001": "n/s:80",
		"-9002": "n/s:80", "+0": "n/s:80", "9_003": "n/s:80", "9004 ": "n/s:80", "99999999999999999999": "n/s:80",
	}}
	res := Compile(Snapshot{Services: []*corev1.Service{svc}, ConfigMaps: []*corev1.ConfigMap{tcp}}, Options{TCPServices: "n/tcp"})
	for _, p := range []int32{9000, 9001} {
		s := res.Table.L4Service(match.TCP, p)
		require.NotNil(t, s, p)
		assert.Equal(t, p, s.Port)
	}
	assert.Equal(t, "data[+9000]", res.Table.L4Service(match.TCP, 9000).Source.Field)
	out := res.String()
	assert.Contains(t, out, `L4ServiceRejected ConfigMap n/tcp data[9000]: port 9000 is already served by another entry`)
	assert.Contains(t, out, `L4ServiceRejected ConfigMap n/tcp data[-9002]: port -9002 out of range 1-65535`)
	assert.Contains(t, out, `L4ServiceRejected ConfigMap n/tcp data[+0]: port 0 out of range 1-65535`)
	for _, k := range []string{"9_003", "9004 ", "99999999999999999999"} {
		assert.Contains(t, out, `L4ServiceRejected ConfigMap n/tcp data[`+k+`]: key "`+k+`" is not a port number`)
	}
	assert.Len(t, res.Warnings, 6)
}

// proxy-stream-responses is read as ingress-nginx's configmap.go reads
// it, with strconv.Atoi (decimal only: "010" is ten, "0x10" is no
// number and keeps the default 1), not through mapstructure's base-0
// ParseInt that proxy-stream-next-upstream-tries goes through.
func TestStreamResponsesDecimal(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "s"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}}}}
	udp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "udp"}, Data: map[string]string{"5353": "n/s:53"}}
	for _, c := range []struct {
		v, tries string
		want     int
		wantTry  int
		rejected bool
	}{
		{v: "010", tries: "010", want: 10, wantTry: 8},
		{v: "+2", tries: "+2", want: 2, wantTry: 2},
		{v: "0x10", tries: "0x10", want: 1, wantTry: 16, rejected: true},
		{v: "1_0", tries: "1_0", want: 1, wantTry: 10, rejected: true},
	} {
		cm := ParseConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "cfg"}, Data: map[string]string{
			"proxy-stream-responses": c.v, "proxy-stream-next-upstream-tries": c.tries,
		}})
		res := Compile(Snapshot{Services: []*corev1.Service{svc}, ConfigMaps: []*corev1.ConfigMap{udp}}, Options{UDPServices: "n/udp", ConfigMap: cm})
		st := res.Table.StreamSettings()
		assert.Equal(t, c.want, st.Responses, c.v)
		assert.Equal(t, c.wantTry, st.NextUpstreamTries, c.tries)
		if c.rejected {
			require.Len(t, res.Warnings, 1, c.v)
			assert.Equal(t, ConfigMapKeyRejected, res.Warnings[0].Reason, c.v)
			assert.Contains(t, res.String(), "data[proxy-stream-responses]", c.v)
		} else {
			assert.Empty(t, res.Warnings, c.v)
		}
	}
}

// An entry's Service port is a number when getStreamServices'
// strconv.Atoi reads one: a sign and leading zeros are accepted and the
// port is matched by number, the upstream name keeping it as written.
func TestL4ServicePortAsAtoi(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "s"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "db", Port: 80}}}}
	tcp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "tcp"}, Data: map[string]string{
		"9000": "n/s:+80", "9001": "n/s:0080", "9002": "n/s:-80", "9003": "n/s:+0",
	}}
	res := Compile(Snapshot{Services: []*corev1.Service{svc}, ConfigMaps: []*corev1.ConfigMap{tcp}}, Options{TCPServices: "n/tcp"})
	for port, id := range map[int32]string{9000: "tcp-n-s-+80", 9001: "tcp-n-s-0080"} {
		s := res.Table.L4Service(match.TCP, port)
		require.NotNil(t, s, port)
		assert.Equal(t, match.Serving, s.Backend.State, port)
		assert.Equal(t, int32(80), s.Backend.Port, port)
		assert.Equal(t, id, s.Backend.ID, port)
	}
	out := res.String()
	assert.Contains(t, out, `L4ServiceRejected ConfigMap n/tcp data[9002]: "n/s:-80": service port -80 out of range 1-65535`)
	assert.Contains(t, out, `L4ServiceRejected ConfigMap n/tcp data[9003]: "n/s:+0": service port 0 out of range 1-65535`)
	assert.Len(t, res.Warnings, 2)
}
