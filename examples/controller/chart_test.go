package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// renderChart renders deploy/chart the way `helm template` does for the
// subset of Helm's template language the chart uses: text/template over
// .Values (values.yaml deep-merged with overrides) and .Release, with
// Helm's quote, toYaml, nindent, add and int. It stands in for Helm, whose
// module would more than double the controller's dependencies.
func renderChart(t *testing.T, release, namespace string, overrides map[string]any) string {
	t.Helper()
	dir := filepath.Join("deploy", "chart")
	raw, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	require.NoError(t, err)
	values := map[string]any{}
	require.NoError(t, yaml.Unmarshal(raw, &values))
	mergeValues(values, overrides)

	funcs := template.FuncMap{
		"quote": func(v any) string { return strconv.Quote(fmt.Sprint(v)) },
		"toYaml": func(v any) (string, error) {
			out, err := yaml.Marshal(v)
			return strings.TrimSuffix(string(out), "\n"), err
		},
		"nindent": func(n int, s string) string {
			pad := strings.Repeat(" ", n)
			return "\n" + pad + strings.ReplaceAll(s, "\n", "\n"+pad)
		},
		"add": func(a, b any) int64 { return toInt(a) + toInt(b) },
		"int": toInt,
	}
	files, err := filepath.Glob(filepath.Join(dir, "templates", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	data := map[string]any{
		"Values":  values,
		"Release": map[string]any{"Name": release, "Namespace": namespace},
	}
	var out strings.Builder
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		tmpl, err := template.New(filepath.Base(f)).Funcs(funcs).Option("missingkey=error").Parse(string(src))
		require.NoError(t, err, f)
		var b bytes.Buffer
		require.NoError(t, tmpl.Execute(&b, data), f)
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", filepath.Base(f), b.String())
	}
	return out.String()
}

func toInt(v any) int64 {
	switch v := v.(type) {
	case float64:
		return int64(v)
	case int:
		return int64(v)
	case int64:
		return v
	}
	n, _ := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	return n
}

// mergeValues deep-merges src into dst, as helm --set and -f do.
func mergeValues(dst, src map[string]any) {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if d, ok := dst[k].(map[string]any); ok {
				mergeValues(d, sub)
				continue
			}
			dst[k] = maps.Clone(sub)
			continue
		}
		dst[k] = v
	}
}

// decodeStrict decodes every document of rendered into its k8s.io/api type,
// failing on unknown or duplicate fields.
func decodeStrict(t *testing.T, rendered string) []runtime.Object {
	t.Helper()
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var objs []runtime.Object
	for i, doc := range regexp.MustCompile(`(?m)^---$`).Split(rendered, -1) {
		if len(bytes.TrimSpace(stripComments([]byte(doc)))) == 0 {
			continue
		}
		obj, _, err := decoder.Decode([]byte(doc), nil, nil)
		require.NoError(t, err, "document %d:\n%s", i, doc)
		objs = append(objs, obj)
	}
	return objs
}

func TestChart(t *testing.T) {
	tests := []struct {
		name      string
		overrides map[string]any
		// Expectations.
		class          string
		defaultClass   bool
		replicas       int32
		serviceType    corev1.ServiceType
		check          func(t *testing.T, cfg config)
		wantFlagErrors string
	}{
		{
			name:        "defaults",
			class:       "ramjet",
			replicas:    2,
			serviceType: corev1.ServiceTypeLoadBalancer,
			check: func(t *testing.T, cfg config) {
				require.False(t, cfg.options.WatchIngressWithoutClass)
				require.False(t, cfg.useForwardedHeaders)
			},
		},
		{
			name: "ingress-nginx's most used values",
			overrides: map[string]any{"controller": map[string]any{
				"ingressClass":         "nginx",
				"ingressClassResource": map[string]any{"name": "nginx", "default": true},
				"replicaCount":         3,
				"service":              map[string]any{"type": "NodePort"},
				"metrics":              map[string]any{"enabled": false},
				"extraArgs": map[string]any{
					"use-forwarded-headers":     "",
					"default-ssl-certificate":   "ingress/wildcard",
					"update-status-on-shutdown": false,
				},
			}},
			class:        "nginx",
			defaultClass: true,
			replicas:     3,
			serviceType:  corev1.ServiceTypeNodePort,
			check: func(t *testing.T, cfg config) {
				// The class's is-default-class annotation claims Ingresses
				// without a class (SPEC §2); no flag needed.
				require.False(t, cfg.options.WatchIngressWithoutClass)
				require.True(t, cfg.useForwardedHeaders)
				require.Equal(t, &types.NamespacedName{Namespace: "ingress", Name: "wildcard"}, cfg.defaultCertificate)
				require.False(t, cfg.enableMetrics)
				require.Equal(t, []string{"update-status-on-shutdown"}, cfg.noop)
			},
		},
		{
			name:           "an extra ingress-nginx flag ramjet lacks",
			overrides:      map[string]any{"controller": map[string]any{"extraArgs": map[string]any{"configmap": "ingress/nginx"}}},
			wantFlagErrors: "--configmap=ingress/nginx is an ingress-nginx flag ramjet does not implement",
		},
		{
			name:        "one replica, ClusterIP",
			overrides:   map[string]any{"controller": map[string]any{"replicaCount": 1, "service": map[string]any{"type": "ClusterIP"}}},
			class:       "ramjet",
			replicas:    1,
			serviceType: corev1.ServiceTypeClusterIP,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := decodeStrict(t, renderChart(t, "edge", "ingress", tt.overrides))
			d := findObject[*appsv1.Deployment](t, objs)
			c := d.Spec.Template.Spec.Containers[0]
			cfg, err := parseFlags(c.Args, io.Discard, func(k string) string {
				return map[string]string{"POD_NAME": "edge-abc", "POD_NAMESPACE": d.Namespace}[k]
			})
			if tt.wantFlagErrors != "" {
				require.ErrorContains(t, err, tt.wantFlagErrors)
				return
			}
			require.NoError(t, err, "the rendered arguments: %q", c.Args)
			checkPodHardening(t, d, cfg)
			require.Equal(t, tt.replicas, *d.Spec.Replicas)
			require.Equal(t, "ingress", d.Namespace)
			require.Equal(t, tt.class, cfg.options.IngressClass)

			svc := findObject[*corev1.Service](t, objs)
			require.Equal(t, tt.serviceType, svc.Spec.Type)
			require.Equal(t, d.Spec.Template.Labels, svc.Spec.Selector)
			require.Equal(t, &types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}, cfg.publishService)
			for _, p := range svc.Spec.Ports {
				require.NotEqual(t, "debug", p.TargetPort.String(), "no Service port reaches the debug listener")
			}

			class := findObject[*networkingv1.IngressClass](t, objs)
			require.Equal(t, cfg.options.ControllerName, class.Spec.Controller)
			require.Equal(t, tt.defaultClass, class.Annotations["ingressclass.kubernetes.io/is-default-class"] == "true")

			sa := findObject[*corev1.ServiceAccount](t, objs)
			require.Equal(t, sa.Name, d.Spec.Template.Spec.ServiceAccountName)
			role := findObject[*rbacv1.Role](t, objs)
			require.Equal(t, cfg.electionNamespace, role.Namespace)
			binding := findObject[*rbacv1.ClusterRoleBinding](t, objs)
			require.Equal(t, rbacv1.Subject{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}, binding.Subjects[0])

			hasPDB := false
			for _, o := range objs {
				_, ok := o.(*policyv1.PodDisruptionBudget)
				hasPDB = hasPDB || ok
			}
			require.Equal(t, tt.replicas > 1, hasPDB, "a PodDisruptionBudget only with more than one replica")
			if tt.check != nil {
				tt.check(t, cfg)
			}
		})
	}
}
