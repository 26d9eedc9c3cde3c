package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// renderChart renders deploy/chart the way `helm template` does: every
// template (and the _*.tpl helpers) in one set, with sprig's functions as
// Helm has them plus Helm's own include, tpl, required, toYaml and
// fromYaml, over .Values (values.yaml deep-merged with overrides),
// .Release, .Chart and .Capabilities. It stands in for Helm, whose module
// would more than double the controller's dependencies; TestChartHelm
// runs the real helm where it is installed.
func renderChart(t *testing.T, release, namespace string, overrides map[string]any) string {
	t.Helper()
	out, _ := renderChartNotes(t, release, namespace, overrides)
	return out
}

// renderChartNotes also renders templates/NOTES.txt, which `helm install`
// prints.
func renderChartNotes(t *testing.T, release, namespace string, overrides map[string]any) (manifests, notes string) {
	t.Helper()
	values := chartValues(t, overrides)
	out, notes, err := renderChartValues(release, namespace, values)
	require.NoError(t, err)
	return out, notes
}

func renderChartValues(release, namespace string, values map[string]any) (manifests, notes string, err error) {
	dir := filepath.Join("deploy", "chart")
	var files []string
	err = filepath.WalkDir(filepath.Join(dir, "templates"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return "", "", err
	}
	slices.Sort(files)
	set := template.New("chart").Option("missingkey=zero")
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	funcs["toYaml"] = func(v any) string {
		out, err := yaml.Marshal(v)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(out), "\n")
	}
	funcs["fromYaml"] = func(s string) map[string]any {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	funcs["include"] = func(name string, data any) (string, error) {
		var b strings.Builder
		err := set.ExecuteTemplate(&b, name, data)
		return b.String(), err
	}
	funcs["tpl"] = func(text string, data any) (string, error) {
		tt, err := set.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		err = tt.Execute(&b, data)
		return b.String(), err
	}
	funcs["required"] = func(msg string, v any) (any, error) {
		if v == nil || v == "" {
			return nil, errors.New(msg)
		}
		return v, nil
	}
	set.Funcs(funcs)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return "", "", err
		}
		rel, _ := filepath.Rel(dir, f)
		if _, err := set.New(filepath.ToSlash(rel)).Parse(string(src)); err != nil {
			return "", "", err
		}
	}
	chart := map[string]any{}
	raw, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return "", "", err
	}
	if err := yaml.Unmarshal(raw, &chart); err != nil {
		return "", "", err
	}
	data := map[string]any{
		"Values":       values,
		"Release":      map[string]any{"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true},
		"Chart":        map[string]any{"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"]},
		"Capabilities": map[string]any{"KubeVersion": map[string]any{"Version": "v1.35.0", "Major": "1", "Minor": "35"}},
	}
	var b strings.Builder
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f)
		name := filepath.ToSlash(rel)
		base := filepath.Base(f)
		if strings.HasPrefix(base, "_") || base == "NOTES.txt" {
			continue
		}
		var one strings.Builder
		if err := set.ExecuteTemplate(&one, name, data); err != nil {
			return "", "", err
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", name, strings.ReplaceAll(one.String(), "<no value>", ""))
	}
	var n strings.Builder
	if err := set.ExecuteTemplate(&n, "templates/NOTES.txt", data); err != nil {
		return "", "", err
	}
	return b.String(), n.String(), nil
}

// chartValues are the chart's values.yaml deep-merged with overrides, and
// checked against values.schema.json as Helm checks them before rendering.
func chartValues(t *testing.T, overrides map[string]any) map[string]any {
	t.Helper()
	dir := filepath.Join("deploy", "chart")
	raw, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	require.NoError(t, err)
	values := map[string]any{}
	require.NoError(t, yaml.Unmarshal(raw, &values))
	mergeValues(values, overrides)
	require.NoError(t, validateValues(t, values), "values.schema.json")
	return values
}

// validateValues checks values against the chart's values.schema.json, for
// the part of JSON Schema it uses: type, properties, additionalProperties,
// enum, minimum and minLength.
func validateValues(t *testing.T, values map[string]any) error {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("deploy", "chart", "values.schema.json"))
	require.NoError(t, err)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(raw, &schema))
	// Through JSON, as Helm sees the values: numbers are float64.
	doc, err := json.Marshal(values)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(doc, &v))
	return checkSchema(schema, v, "values")
}

func checkSchema(schema map[string]any, v any, at string) error {
	if want, ok := schema["type"]; ok {
		types, _ := want.([]any)
		if s, ok := want.(string); ok {
			types = []any{s}
		}
		if !slices.ContainsFunc(types, func(ty any) bool { return jsonType(v, ty.(string)) }) {
			return fmt.Errorf("%s: %v is not of type %v", at, v, want)
		}
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, enum)
	}
	if min, ok := schema["minimum"].(float64); ok {
		if n, ok := v.(float64); ok && n < min {
			return fmt.Errorf("%s: %v is below %v", at, v, min)
		}
	}
	if min, ok := schema["minLength"].(float64); ok {
		if s, ok := v.(string); ok && float64(len(s)) < min {
			return fmt.Errorf("%s: %q is shorter than %v", at, s, min)
		}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	props, _ := schema["properties"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if sub, ok := props[k].(map[string]any); ok {
			if err := checkSchema(sub, obj[k], at+"."+k); err != nil {
				return err
			}
			continue
		}
		switch extra := schema["additionalProperties"].(type) {
		case bool:
			if !extra {
				return fmt.Errorf("%s: unknown key %q", at, k)
			}
		case map[string]any:
			if err := checkSchema(extra, obj[k], at+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonType(v any, ty string) bool {
	switch ty {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		n, ok := v.(float64)
		return ok && n == float64(int64(n))
	}
	return false
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
		// configData is the rendered ConfigMap's data (controller.config).
		configData map[string]string
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
					// klog's verbosity, set by many ingress-nginx values files.
					"v": 2,
				},
				"config": map[string]any{"proxy-body-size": "8m", "hsts": false, "worker-processes": 4},
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
				require.Equal(t, ptr(2), cfg.verbosity)
			},
			configData: map[string]string{"proxy-body-size": "8m", "hsts": "false", "worker-processes": "4"},
		},
		{
			name:           "an extra ingress-nginx flag ramjet lacks",
			overrides:      map[string]any{"controller": map[string]any{"extraArgs": map[string]any{"profiler-port": "10245"}}},
			wantFlagErrors: "--profiler-port=10245 is an ingress-nginx flag ramjet does not implement",
		},
		{
			// Gateway listeners are on the ports the Service publishes
			// (SPEC §20): the controller must know them.
			name:        "Service ports other than 80 and 443",
			overrides:   map[string]any{"controller": map[string]any{"service": map[string]any{"ports": map[string]any{"http": 8000, "https": 8443}}}},
			class:       "ramjet",
			replicas:    2,
			serviceType: corev1.ServiceTypeLoadBalancer,
		},
		{
			// ingress-nginx's chart leaves the flag out, for its default
			// class; an empty flag is refused.
			name:        "an empty ingressClass",
			overrides:   map[string]any{"controller": map[string]any{"ingressClass": ""}},
			class:       "ramjet",
			replicas:    2,
			serviceType: corev1.ServiceTypeLoadBalancer,
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
			objs := decodeChart(t, renderChart(t, "edge", "ingress", tt.overrides))
			d := findNamed[*appsv1.Deployment](t, objs, "edge")
			c := d.Spec.Template.Spec.Containers[0]
			cfg, err := parseChartArgs(t, c.Args, d.Namespace)
			if tt.wantFlagErrors != "" {
				require.ErrorContains(t, err, tt.wantFlagErrors)
				return
			}
			require.NoError(t, err, "the rendered arguments: %q", c.Args)
			checkPodHardening(t, d, cfg)
			require.Equal(t, tt.replicas, *d.Spec.Replicas)
			require.Equal(t, "ingress", d.Namespace)
			require.Equal(t, tt.class, cfg.options.IngressClass)

			svc := findNamed[*corev1.Service](t, objs, "edge")
			require.Equal(t, tt.serviceType, svc.Spec.Type)
			require.True(t, selects(svc.Spec.Selector, d.Spec.Template.Labels), "the Service selects the pods")
			require.Equal(t, &types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}, cfg.publishService)
			gatewayPorts := map[string]int{"http": cfg.gatewayHTTPPort, "https": cfg.gatewayHTTPSPort}
			for _, p := range svc.Spec.Ports {
				require.NotEqual(t, "debug", p.TargetPort.String(), "no Service port reaches the debug listener")
				require.EqualValues(t, p.Port, gatewayPorts[p.Name], "--gateway-%s-port is the Service's %s port", p.Name, p.Name)
			}

			class := findNamed[*networkingv1.IngressClass](t, objs, cfg.options.IngressClass)
			require.Equal(t, cfg.options.ControllerName, class.Spec.Controller)
			require.Equal(t, tt.defaultClass, class.Annotations["ingressclass.kubernetes.io/is-default-class"] == "true")

			sa := findNamed[*corev1.ServiceAccount](t, objs, "edge")
			require.Equal(t, sa.Name, d.Spec.Template.Spec.ServiceAccountName)
			role := findNamed[*rbacv1.Role](t, objs, "edge-leader-election")
			require.Equal(t, cfg.electionNamespace, role.Namespace)
			binding := findNamed[*rbacv1.ClusterRoleBinding](t, objs, "edge")
			require.Equal(t, rbacv1.Subject{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}, binding.Subjects[0])

			hasPDB := false
			for _, o := range objs {
				_, ok := o.(*policyv1.PodDisruptionBudget)
				hasPDB = hasPDB || ok
			}
			require.Equal(t, tt.replicas > 1, hasPDB, "a PodDisruptionBudget only with more than one replica")
			cm := findNamed[*corev1.ConfigMap](t, objs, "edge-controller")
			require.Equal(t, &types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}, cfg.configMap, "--configmap names the rendered ConfigMap")
			require.Equal(t, len(tt.configData), len(cm.Data))
			if tt.configData != nil {
				require.Equal(t, tt.configData, cm.Data)
				warns := applyConfigMap(&cfg, cm, cfg.flagsSet)
				require.Len(t, warns, 1, "worker-processes only")
				require.Equal(t, "worker-processes", warns[0].key)
			}
			if tt.check != nil {
				tt.check(t, cfg)
			}
		})
	}
}

// The chart renders what deploy/deployment.yaml and rbac.yaml have: the
// replicas spread over nodes, and (when asked) the namespace with its Pod
// Security labels.
func TestChartMatchesManifests(t *testing.T) {
	deploy := readManifests(t, "deployment.yaml")
	rbac := readManifests(t, "rbac.yaml")
	want := findObject[*appsv1.Deployment](t, deploy)
	wantNS := findObject[*corev1.Namespace](t, rbac)

	objs := decodeChart(t, renderChart(t, "edge", "ingress", nil))
	d := findNamed[*appsv1.Deployment](t, objs, "edge")
	for _, dep := range []*appsv1.Deployment{want, d} {
		a := dep.Spec.Template.Spec.Affinity
		require.NotNil(t, a, "%s: affinity", dep.Name)
		require.NotNil(t, a.PodAntiAffinity, "%s: podAntiAffinity", dep.Name)
		terms := a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		require.Len(t, terms, 1, dep.Name)
		require.Equal(t, "kubernetes.io/hostname", terms[0].PodAffinityTerm.TopologyKey)
		// The selector picks this Deployment's own pods.
		for k, v := range terms[0].PodAffinityTerm.LabelSelector.MatchLabels {
			require.Equal(t, v, dep.Spec.Template.Labels[k], "%s: anti-affinity label %s", dep.Name, k)
		}
		require.Equal(t, dep.Spec.Selector.MatchLabels, terms[0].PodAffinityTerm.LabelSelector.MatchLabels, dep.Name)
	}
	for _, o := range objs {
		_, isNS := o.(*corev1.Namespace)
		require.False(t, isNS, "no Namespace unless namespace.create")
	}

	// A values file's own affinity replaces the default.
	own := map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "edge", "operator": "Exists"}}}}}}}
	objs = decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{"controller": map[string]any{"affinity": own}}))
	a := findNamed[*appsv1.Deployment](t, objs, "edge").Spec.Template.Spec.Affinity
	require.Nil(t, a.PodAntiAffinity)
	require.NotNil(t, a.NodeAffinity)

	objs = decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{"namespace": map[string]any{"create": true}}))
	ns := findObject[*corev1.Namespace](t, objs)
	require.Equal(t, "ingress", ns.Name)
	require.Equal(t, wantNS.Labels, ns.Labels)
}

// deploy/deployment.yaml listens where the chart's defaults do: on
// ingress-nginx's ports 80 and 443 (so a tcp: or udp: entry on 8080
// works as with ingress-nginx), bound without capabilities through the
// same sysctl, with the same probes, grace and Service targets.
func TestManifestsMatchChartListeners(t *testing.T) {
	deploy := readManifests(t, "deployment.yaml")
	want := findObject[*appsv1.Deployment](t, deploy)
	wantSvc := findObject[*corev1.Service](t, deploy)
	objs := decodeChart(t, renderChart(t, "edge", "ingress", nil))
	got := findNamed[*appsv1.Deployment](t, objs, "edge")
	gotSvc := findNamed[*corev1.Service](t, objs, "edge")

	parse := func(d *appsv1.Deployment) config {
		cfg, err := parseChartArgs(t, d.Spec.Template.Spec.Containers[0].Args, d.Namespace)
		require.NoError(t, err, d.Name)
		return cfg
	}
	wantCfg, gotCfg := parse(want), parse(got)
	for _, f := range []struct {
		name      string
		want, got any
	}{
		{"-http-addr", wantCfg.httpAddr, gotCfg.httpAddr},
		{"-https-addr", wantCfg.httpsAddr, gotCfg.httpsAddr},
		{"-debug-addr", wantCfg.debugAddr, gotCfg.debugAddr},
		{"-gateway-http-port", wantCfg.gatewayHTTPPort, gotCfg.gatewayHTTPPort},
		{"-gateway-https-port", wantCfg.gatewayHTTPSPort, gotCfg.gatewayHTTPSPort},
		{"-shutdown-grace-period", wantCfg.drain, gotCfg.drain},
		{"terminationGracePeriodSeconds", *want.Spec.Template.Spec.TerminationGracePeriodSeconds, *got.Spec.Template.Spec.TerminationGracePeriodSeconds},
		{"sysctls", want.Spec.Template.Spec.SecurityContext.Sysctls, got.Spec.Template.Spec.SecurityContext.Sysctls},
	} {
		require.Equal(t, f.got, f.want, "deployment.yaml's %s is the chart's", f.name)
	}
	require.Equal(t, ":80", wantCfg.httpAddr)
	require.Equal(t, ":443", wantCfg.httpsAddr)

	wc, gc := want.Spec.Template.Spec.Containers[0], got.Spec.Template.Spec.Containers[0]
	ports := func(c corev1.Container) map[string]int32 {
		m := map[string]int32{}
		for _, p := range c.Ports {
			m[p.Name] = p.ContainerPort
		}
		return m
	}
	chartPorts := ports(gc)
	delete(chartPorts, "webhook") // the chart's admission webhook, which the manifests leave out
	require.Equal(t, chartPorts, ports(wc), "container ports")
	require.Equal(t, gc.SecurityContext.Capabilities, wc.SecurityContext.Capabilities)
	require.Equal(t, gc.ReadinessProbe.HTTPGet, wc.ReadinessProbe.HTTPGet)
	require.Equal(t, gc.LivenessProbe.HTTPGet, wc.LivenessProbe.HTTPGet)

	svcPorts := func(svc *corev1.Service) map[string][2]string {
		m := map[string][2]string{}
		for _, p := range svc.Spec.Ports {
			m[p.Name] = [2]string{fmt.Sprint(p.Port), p.TargetPort.String()}
		}
		return m
	}
	require.Equal(t, svcPorts(gotSvc), svcPorts(wantSvc), "Service ports and targetPorts")
}

// values.schema.json refuses what Helm would otherwise render silently
// wrong: a misspelt key, a value of the wrong type or outside its set.
func TestChartValuesSchema(t *testing.T) {
	chartValues(t, nil)
	for _, bad := range []map[string]any{
		{"controller": map[string]any{"replicaCont": 3}},
		{"controller": map[string]any{"replicaCount": "3"}},
		{"controller": map[string]any{"replicaCount": 0}},
		{"controller": map[string]any{"service": map[string]any{"type": "Ingress"}}},
		{"controller": map[string]any{"ingressClassResource": map[string]any{"default": "yes"}}},
		{"namespace": map[string]any{"podSecurity": "strict"}},
	} {
		raw, err := os.ReadFile(filepath.Join("deploy", "chart", "values.yaml"))
		require.NoError(t, err)
		values := map[string]any{}
		require.NoError(t, yaml.Unmarshal(raw, &values))
		mergeValues(values, bad)
		require.Error(t, validateValues(t, values), "%v", bad)
	}
}

// The README's helm install beside an ingress-nginx install: its
// IngressClass must not be ingress-nginx's, which Helm would refuse to
// adopt and which both controllers would then claim.
func TestChartReadmeInstall(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, rest, found := strings.Cut(string(readme), "helm install ")
	require.True(t, found, "the README shows a helm install")
	// The command and its continuation lines.
	cmd := ""
	for line := range strings.Lines(rest) {
		cmd += line
		if !strings.HasSuffix(strings.TrimRight(line, "\n"), "\\") {
			break
		}
	}
	overrides := map[string]any{}
	for _, m := range regexp.MustCompile(`--set ([\w.]+)=(\S+)`).FindAllStringSubmatch(cmd, -1) {
		keys := strings.Split(m[1], ".")
		at := overrides
		for _, k := range keys[:len(keys)-1] {
			if at[k] == nil {
				at[k] = map[string]any{}
			}
			at = at[k].(map[string]any)
		}
		at[keys[len(keys)-1]] = m[2]
	}
	objs := decodeChart(t, renderChart(t, "edge", "ingress", overrides))
	require.Positive(t, countOf[*networkingv1.IngressClass](objs))
	for _, o := range objs {
		if class, ok := o.(*networkingv1.IngressClass); ok {
			require.NotEqual(t, "nginx", class.Name, "ingress-nginx's IngressClass: %s", cmd)
			require.NotEqual(t, "k8s.io/ingress-nginx", class.Spec.Controller, cmd)
		}
	}
}

// The chart's ClusterRole grants what deploy/rbac.yaml grants, the Gateway
// API's watches and status writes among them (SPEC §20).
func TestChartRBACMatchesManifests(t *testing.T) {
	want := findObject[*rbacv1.ClusterRole](t, readManifests(t, "rbac.yaml"))
	got := findNamed[*rbacv1.ClusterRole](t, decodeChart(t, renderChart(t, "edge", "ingress", nil)), "edge")
	require.Equal(t, want.Rules, got.Rules)
	allowed := func(group, resource, verb string) bool {
		for _, r := range got.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	for _, res := range []string{"gatewayclasses", "gateways", "httproutes", "referencegrants"} {
		require.True(t, allowed("gateway.networking.k8s.io", res, "watch"), "watch %s", res)
	}
	for _, res := range []string{"gatewayclasses/status", "gateways/status", "httproutes/status"} {
		require.True(t, allowed("gateway.networking.k8s.io", res, "update"), "update %s", res)
	}
	require.True(t, allowed("", "namespaces", "watch"), "watch namespaces")
}
