package main

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"ramjet.dev/ramjet/router/configmap"
	"sigs.k8s.io/yaml"
)

// parseChartArgs parses a rendered container's arguments with the
// controller's own flag parser: every flag the chart renders (the webhook's
// and the TCP/UDP services' too) is one the controller takes.
func parseChartArgs(t *testing.T, args []string, namespace string) (config, error) {
	t.Helper()
	return parseFlags(args, new(bytes.Buffer), func(k string) string {
		return map[string]string{"POD_NAME": "edge-abc", "POD_NAMESPACE": namespace}[k]
	})
}

// decodeChart decodes every rendered document: the Kubernetes kinds
// strictly into their k8s.io/api types, the Prometheus operator's
// (ServiceMonitor, PrometheusRule) as unstructured objects.
func decodeChart(t *testing.T, rendered string) []runtime.Object {
	t.Helper()
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var objs []runtime.Object
	for i, doc := range regexp.MustCompile(`(?m)^---$`).Split(rendered, -1) {
		if len(bytes.TrimSpace(stripComments([]byte(doc)))) == 0 {
			continue
		}
		var head struct{ APIVersion string }
		require.NoError(t, yaml.Unmarshal([]byte(doc), &head), "document %d:\n%s", i, doc)
		if strings.HasPrefix(head.APIVersion, "monitoring.coreos.com/") {
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object), "document %d:\n%s", i, doc)
			objs = append(objs, u)
			continue
		}
		obj, _, err := decoder.Decode([]byte(doc), nil, nil)
		require.NoError(t, err, "document %d:\n%s", i, doc)
		objs = append(objs, obj)
	}
	return objs
}

// findNamed is the object of type T named name.
func findNamed[T interface {
	runtime.Object
	GetName() string
}](t *testing.T, objs []runtime.Object, name string) T {
	t.Helper()
	var names []string
	for _, o := range objs {
		if v, ok := o.(T); ok {
			if v.GetName() == name {
				return v
			}
			names = append(names, v.GetName())
		}
	}
	var zero T
	t.Fatalf("no %T named %q in the chart (there are %q)", zero, name, names)
	return zero
}

func countOf[T runtime.Object](objs []runtime.Object) int {
	n := 0
	for _, o := range objs {
		if _, ok := o.(T); ok {
			n++
		}
	}
	return n
}

func readValuesFile(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "chart", name))
	require.NoError(t, err)
	values := map[string]any{}
	require.NoError(t, yaml.Unmarshal(raw, &values))
	return values
}

// ingress-nginx's own default values file, given as `-f` to this chart:
// the schema takes every key, the chart renders, and the controller takes
// every argument. Nothing in it is listed as ignored, since every ignored
// key keeps ingress-nginx's default.
func TestChartIngressNginxDefaults(t *testing.T) {
	rendered, notes := renderChartNotes(t, "edge", "ingress", readValuesFile(t, "ingress-nginx-4.15.1-values.yaml"))
	objs := decodeChart(t, rendered)
	d := findNamed[*appsv1.Deployment](t, objs, "edge")
	c := d.Spec.Template.Spec.Containers[0]
	cfg, err := parseChartArgs(t, c.Args, "ingress")
	require.NoError(t, err, "%q", c.Args)
	checkPodHardening(t, d, cfg)

	// The values that carry over.
	require.Equal(t, "nginx", cfg.options.IngressClass)
	require.Equal(t, "k8s.io/ingress-nginx", cfg.options.ControllerName)
	require.Equal(t, "k8s.io/ingress-nginx", findNamed[*networkingv1.IngressClass](t, objs, "nginx").Spec.Controller)
	require.Equal(t, int32(1), *d.Spec.Replicas)
	require.Equal(t, int64(300), *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
	require.Equal(t, map[string]string{"kubernetes.io/os": "linux"}, d.Spec.Template.Spec.NodeSelector)
	require.Equal(t, "90Mi", c.Resources.Requests.Memory().String())
	require.False(t, cfg.enableMetrics)
	require.Zero(t, countOf[*policyv1.PodDisruptionBudget](objs), "one replica: no PodDisruptionBudget")
	// Its externalTrafficPolicy "" leaves the field out, Cluster, where
	// the chart's own default is Local.
	require.Empty(t, findNamed[*corev1.Service](t, objs, "edge").Spec.ExternalTrafficPolicy)
	require.Equal(t, corev1.ServiceExternalTrafficPolicyLocal, findNamed[*corev1.Service](t, decodeChart(t, renderChart(t, "edge", "ingress", nil)), "edge").Spec.ExternalTrafficPolicy)

	// The webhook, on as in ingress-nginx's chart.
	args := argValues(c.Args)
	require.Equal(t, ":8443", args["validating-webhook"])
	require.Equal(t, "/usr/local/certificates/cert", args["validating-webhook-certificate"])
	require.Equal(t, "/usr/local/certificates/key", args["validating-webhook-key"])
	vwc := findNamed[*admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "edge-admission")
	require.Equal(t, admissionregistrationv1.Fail, *vwc.Webhooks[0].FailurePolicy)
	require.Equal(t, 2, countOf[*batchv1.Job](objs))

	require.NotContains(t, notes, "ignored", "every ignored key keeps ingress-nginx's default:\n%s", notes)
}

// argValues are the rendered arguments as name -> value.
func argValues(args []string) map[string]string {
	got := map[string]string{}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		got[name] = value
	}
	return got
}

// Every ingress-nginx key the chart honours, set at once
// (testdata/chart/every-key.yaml), lands where ingress-nginx's chart puts
// it.
func TestChartEveryKey(t *testing.T) {
	rendered, notes := renderChartNotes(t, "edge", "ingress", readValuesFile(t, "every-key.yaml"))
	objs := decodeChart(t, rendered)
	const ns = "edge-system" // namespaceOverride
	d := findNamed[*appsv1.Deployment](t, objs, "edge")
	require.Equal(t, ns, d.Namespace)
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]
	cfg, err := parseChartArgs(t, c.Args, ns)
	require.NoError(t, err, "%q", c.Args)
	args := argValues(c.Args)

	// Labels and annotations.
	require.Equal(t, "edge", d.Labels["team"], "commonLabels")
	require.Equal(t, "edge", d.Labels["tier"], "controller.labels")
	require.Equal(t, "yes", d.Annotations["deploy-note"])
	require.Equal(t, "1", d.Spec.Template.Labels["pod-label"])
	require.Equal(t, "false", d.Spec.Template.Annotations["sidecar.example/inject"])
	require.Equal(t, []corev1.LocalObjectReference{{Name: "regcred"}}, pod.ImagePullSecrets)

	// The workload.
	require.Nil(t, d.Spec.Replicas, "the HorizontalPodAutoscaler owns replicas")
	require.Equal(t, int32(3), *d.Spec.RevisionHistoryLimit)
	require.Equal(t, int32(120), *d.Spec.ProgressDeadlineSeconds)
	require.Equal(t, int32(5), d.Spec.MinReadySeconds)
	require.Equal(t, appsv1.RollingUpdateDeploymentStrategyType, d.Spec.Strategy.Type)
	require.Equal(t, "registry.example/ramjet:v9.9.9", c.Image)
	require.Equal(t, corev1.PullAlways, c.ImagePullPolicy)
	require.Equal(t, "ramjet", c.Name)
	require.Equal(t, int64(300), *pod.TerminationGracePeriodSeconds)
	require.Equal(t, "edge-sa", pod.ServiceAccountName)
	require.Equal(t, "system-cluster-critical", pod.PriorityClassName)
	require.Equal(t, "gvisor", *pod.RuntimeClassName)
	require.Equal(t, corev1.DNSClusterFirstWithHostNet, pod.DNSPolicy)
	require.Equal(t, "ndots", pod.DNSConfig.Options[0].Name)
	require.Equal(t, []string{"edge.local"}, pod.HostAliases[0].Hostnames)
	require.Equal(t, "edge-host", pod.Hostname)
	require.True(t, *pod.ShareProcessNamespace)
	require.True(t, pod.HostNetwork)
	require.Equal(t, []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "1024 65000"}}, pod.SecurityContext.Sysctls, "the values' own; on the host network no unprivileged-port one")
	require.Equal(t, map[string]string{"node-role": "edge", "kubernetes.io/os": "linux"}, pod.NodeSelector, "merged with the default, as Helm merges maps")
	require.Equal(t, "edge", pod.Tolerations[0].Key)
	require.NotNil(t, pod.Affinity.NodeAffinity)
	require.Nil(t, pod.Affinity.PodAntiAffinity, "the values' affinity replaces the default")
	require.Equal(t, "topology.kubernetes.io/zone", pod.TopologySpreadConstraints[0].TopologyKey)
	require.Equal(t, "512Mi", c.Resources.Limits.Memory().String())
	require.Equal(t, corev1.ResourceCPU, c.ResizePolicy[0].ResourceName)
	require.Equal(t, "/live", c.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "/live", cfg.healthPath)
	require.Contains(t, c.Env, corev1.EnvVar{Name: "RAMJET_LOG", Value: "debug"})
	require.Equal(t, "init", pod.InitContainers[0].Name)
	require.Equal(t, []string{"ramjet", "sidecar"}, []string{pod.Containers[0].Name, pod.Containers[1].Name})
	require.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "scratch", MountPath: "/scratch"})
	require.Equal(t, "scratch", pod.Volumes[1].Name)

	// Flags.
	require.Equal(t, "edge", cfg.options.IngressClass)
	require.Equal(t, "example.com/edge", cfg.options.ControllerName)
	require.True(t, cfg.options.WatchIngressWithoutClass)
	require.Equal(t, &types.NamespacedName{Namespace: "edge-system", Name: "edge-lb"}, cfg.publishService, "publishService.pathOverride")
	require.Equal(t, "edge-election", cfg.electionID)
	require.Equal(t, "apps", cfg.namespace, "scope.namespace")
	require.Equal(t, &types.NamespacedName{Namespace: "edge-config", Name: "edge-controller"}, cfg.configMap, "configMapNamespace")
	require.Equal(t, &types.NamespacedName{Namespace: "edge-system", Name: "wildcard"}, cfg.defaultCertificate, "extraArgs")
	require.True(t, cfg.useForwardedHeaders, "extraArgs with an empty value")
	require.Equal(t, 20, int(cfg.drain.Seconds()))
	require.Equal(t, ":10255", cfg.debugAddr, "metrics.port")
	require.True(t, cfg.enableMetrics)
	require.Equal(t, "edge-streams/edge-tcp", args["tcp-services-configmap"])
	require.Equal(t, "edge-streams/edge-udp", args["udp-services-configmap"])
	require.Equal(t, ":9443", args["validating-webhook"])
	require.Equal(t, "/certs/tls.crt", args["validating-webhook-certificate"])
	require.Equal(t, "/certs/tls.key", args["validating-webhook-key"])

	// Container ports: the metrics port by its name, the webhook, and
	// one per tcp:/udp: entry named as ingress-nginx names them.
	ports := map[string]corev1.ContainerPort{}
	for _, p := range c.Ports {
		ports[p.Name] = p
	}
	require.Equal(t, int32(10255), ports["prom"].ContainerPort)
	require.Equal(t, "prom", c.ReadinessProbe.HTTPGet.Port.String())
	require.Equal(t, int32(9443), ports["webhook"].ContainerPort)
	require.Equal(t, int32(9000), ports["edge-9000-tcp"].ContainerPort)
	require.Equal(t, int32(2222), ports["edge-2222-tcp"].ContainerPort)
	require.Equal(t, corev1.ProtocolUDP, ports["edge-5353-udp"].Protocol)

	// The LoadBalancer Service, every service.* key.
	svc := findNamed[*corev1.Service](t, objs, "edge")
	require.Equal(t, "nlb", svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-type"])
	require.Equal(t, "edge", svc.Annotations["release-name"], "annotations go through tpl")
	require.Equal(t, "edge", svc.Labels["svc"])
	require.Equal(t, "yes", svc.Labels["external"])
	require.Equal(t, "10.96.0.50", svc.Spec.ClusterIP)
	require.Equal(t, []string{"10.96.0.50"}, svc.Spec.ClusterIPs)
	require.Equal(t, []string{"192.0.2.10"}, svc.Spec.ExternalIPs)
	require.Equal(t, "192.0.2.11", svc.Spec.LoadBalancerIP)
	require.Equal(t, []string{"192.0.2.0/24"}, svc.Spec.LoadBalancerSourceRanges)
	require.Equal(t, "example.com/lb", *svc.Spec.LoadBalancerClass)
	require.False(t, *svc.Spec.AllocateLoadBalancerNodePorts)
	require.Equal(t, corev1.ServiceExternalTrafficPolicyCluster, svc.Spec.ExternalTrafficPolicy)
	require.Equal(t, corev1.ServiceAffinityClientIP, svc.Spec.SessionAffinity)
	require.Equal(t, int32(30999), svc.Spec.HealthCheckNodePort)
	require.Equal(t, "PreferClose", *svc.Spec.TrafficDistribution)
	require.Equal(t, corev1.IPFamilyPolicyPreferDualStack, *svc.Spec.IPFamilyPolicy)
	require.Equal(t, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}, svc.Spec.IPFamilies)
	svcPorts := map[string]corev1.ServicePort{}
	for _, p := range svc.Spec.Ports {
		svcPorts[p.Name] = p
		require.Nil(t, p.AppProtocol, "appProtocol: false")
		require.Contains(t, ports, p.TargetPort.String(), "the Service targets a container port by name")
	}
	require.Equal(t, corev1.ServicePort{Name: "http", Port: 8000, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http"), NodePort: 30080}, svcPorts["http"])
	require.Equal(t, corev1.ServicePort{Name: "https", Port: 8443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("https"), NodePort: 30443}, svcPorts["https"])
	require.Equal(t, corev1.ServicePort{Name: "edge-9000-tcp", Port: 9000, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("edge-9000-tcp"), NodePort: 30900}, svcPorts["edge-9000-tcp"])
	require.Equal(t, corev1.ServicePort{Name: "edge-5353-udp", Port: 5353, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("edge-5353-udp"), NodePort: 30953}, svcPorts["edge-5353-udp"])
	require.Len(t, svcPorts, 5)
	require.Equal(t, 8000, cfg.gatewayHTTPPort, "the Service's http port")
	require.Equal(t, 8443, cfg.gatewayHTTPSPort, "the Service's https port")

	// ConfigMaps: the main one, the header maps it names, the TCP/UDP maps.
	cm := findNamed[*corev1.ConfigMap](t, objs, "edge-controller")
	require.Equal(t, "1", cm.Annotations["config-note"])
	require.Equal(t, map[string]string{
		"proxy-body-size": "8m", "hsts": "false", "allow-snippet-annotations": "true",
		"add-headers": "edge-system/edge-custom-add-headers", "proxy-set-headers": "edge-system/edge-custom-proxy-headers",
	}, cm.Data)
	require.Equal(t, map[string]string{"X-Served-By": "edge"}, findNamed[*corev1.ConfigMap](t, objs, "edge-custom-add-headers").Data)
	require.Equal(t, map[string]string{"X-Request-Start": "t=${msec}"}, findNamed[*corev1.ConfigMap](t, objs, "edge-custom-proxy-headers").Data)
	tcp := findNamed[*corev1.ConfigMap](t, objs, "edge-tcp")
	require.Equal(t, map[string]string{"9000": "apps/db:5432", "2222": "apps/git:22:PROXY"}, tcp.Data)
	require.Equal(t, "1", tcp.Annotations["tcp-note"])
	require.Equal(t, map[string]string{"5353": "kube-system/kube-dns:53"}, findNamed[*corev1.ConfigMap](t, objs, "edge-udp").Data)

	// IngressClasses.
	class := findNamed[*networkingv1.IngressClass](t, objs, "edge")
	require.Equal(t, "true", class.Annotations["ingressclass.kubernetes.io/is-default-class"])
	require.Equal(t, "edge-team", class.Annotations["owner"])
	require.Equal(t, "EdgeParams", class.Spec.Parameters.Kind)
	alias := findNamed[*networkingv1.IngressClass](t, objs, "edge-alias")
	require.Equal(t, "example.com/edge", alias.Spec.Controller)
	require.Empty(t, alias.Annotations["ingressclass.kubernetes.io/is-default-class"], "only the main class is the default")

	// PodDisruptionBudget and HorizontalPodAutoscaler.
	pdb := findNamed[*policyv1.PodDisruptionBudget](t, objs, "edge")
	require.Nil(t, pdb.Spec.MinAvailable, "maxUnavailable named: minAvailable dropped")
	require.Equal(t, intstr.FromInt32(2), *pdb.Spec.MaxUnavailable)
	require.Equal(t, policyv1.AlwaysAllow, *pdb.Spec.UnhealthyPodEvictionPolicy)
	hpa := findNamed[*autoscalingv2.HorizontalPodAutoscaler](t, objs, "edge")
	require.Equal(t, "1", hpa.Annotations["hpa-note"])
	require.Equal(t, int32(3), *hpa.Spec.MinReplicas)
	require.Equal(t, int32(9), hpa.Spec.MaxReplicas)
	require.Equal(t, "edge", hpa.Spec.ScaleTargetRef.Name)
	require.Len(t, hpa.Spec.Metrics, 3, "memory, cpu and autoscalingTemplate")
	require.Equal(t, int32(80), *hpa.Spec.Metrics[0].Resource.Target.AverageUtilization)
	require.Equal(t, int32(70), *hpa.Spec.Metrics[1].Resource.Target.AverageUtilization)
	require.Equal(t, autoscalingv2.PodsMetricSourceType, hpa.Spec.Metrics[2].Type)
	require.Equal(t, int32(300), *hpa.Spec.Behavior.ScaleDown.StabilizationWindowSeconds)

	// The admission webhook, its Service and its certificate Jobs.
	vwc := findNamed[*admissionregistrationv1.ValidatingWebhookConfiguration](t, objs, "edge-validate")
	wh := vwc.Webhooks[0]
	require.Equal(t, admissionregistrationv1.Ignore, *wh.FailurePolicy)
	require.Equal(t, int32(5), *wh.TimeoutSeconds)
	require.Equal(t, "on", wh.NamespaceSelector.MatchLabels["admission"])
	require.Equal(t, "yes", wh.ObjectSelector.MatchLabels["checked"])
	require.Equal(t, "1", vwc.Labels["webhook-label"])
	require.Equal(t, "1", vwc.Annotations["webhook-note"])
	require.Equal(t, &admissionregistrationv1.ServiceReference{Namespace: ns, Name: "edge-admission", Path: ptr("/networking/v1/ingresses"), Port: ptr(int32(8443))}, wh.ClientConfig.Service)
	whSvc := findNamed[*corev1.Service](t, objs, "edge-admission")
	require.Equal(t, "webhook", whSvc.Spec.Ports[0].TargetPort.String())
	require.Equal(t, int32(8443), whSvc.Spec.Ports[0].Port)
	require.Equal(t, "1", whSvc.Annotations["svc-note"])
	require.Equal(t, d.Spec.Selector.MatchLabels, whSvc.Spec.Selector)
	require.Equal(t, "edge-validate", podVolume(t, pod, "webhook-cert").Secret.SecretName, "the Secret certgen writes")

	create := findNamed[*batchv1.Job](t, objs, "edge-validate-mkcert")
	patch := findNamed[*batchv1.Job](t, objs, "edge-validate-cabundle")
	require.Equal(t, "pre-install,pre-upgrade", create.Annotations["helm.sh/hook"])
	require.Equal(t, "post-install,post-upgrade", patch.Annotations["helm.sh/hook"])
	require.Equal(t, int64(60), *create.Spec.ActiveDeadlineSeconds)
	require.Equal(t, int64(90), *patch.Spec.ActiveDeadlineSeconds)
	cc := create.Spec.Template.Spec.Containers[0]
	pc := patch.Spec.Template.Spec.Containers[0]
	require.Equal(t, "mirror.example/ingress-nginx/kube-webhook-certgen:v1.6.9", cc.Image, "global.image.registry")
	require.Equal(t, []string{"create", "--host=edge-admission,edge-admission.$(POD_NAMESPACE).svc", "--namespace=$(POD_NAMESPACE)", "--secret-name=edge-validate"}, cc.Args)
	require.Equal(t, []string{"patch", "--webhook-name=edge-validate", "--namespace=$(POD_NAMESPACE)", "--patch-mutating=false", "--secret-name=edge-validate", "--patch-failure-policy=Ignore"}, pc.Args)
	require.Contains(t, cc.Env, corev1.EnvVar{Name: "CERTGEN_DEBUG", Value: "1"})
	require.Equal(t, "10m", cc.Resources.Limits.Cpu().String())
	require.Equal(t, "tmp", cc.VolumeMounts[0].Name)
	require.Equal(t, corev1.PullAlways, cc.ImagePullPolicy)
	require.True(t, *cc.SecurityContext.ReadOnlyRootFilesystem)
	jp := create.Spec.Template.Spec
	require.Equal(t, "edge-certgen", jp.ServiceAccountName)
	require.Equal(t, "low", jp.PriorityClassName)
	require.Equal(t, "runc", *jp.RuntimeClassName)
	require.Equal(t, "1", create.Spec.Template.Annotations["job-note"])
	require.Equal(t, "1", create.Spec.Template.Labels["job-label"])
	require.Equal(t, map[string]string{"pool": "system", "kubernetes.io/os": "linux"}, jp.NodeSelector)
	require.Equal(t, "system", jp.Tolerations[0].Key)
	require.Equal(t, int64(2000), *jp.SecurityContext.FSGroup)
	require.False(t, selects(d.Spec.Selector.MatchLabels, create.Spec.Template.Labels),
		"a certificate Job's pod must not carry the controller's selector labels: the Services would send traffic to it")
	certgenRole := findNamed[*rbacv1.ClusterRole](t, objs, "edge-validate")
	require.Equal(t, []string{"validatingwebhookconfigurations"}, certgenRole.Rules[0].Resources)
	require.Equal(t, "edge-certgen", findNamed[*rbacv1.RoleBinding](t, objs, "edge-validate").Subjects[0].Name)

	// Metrics: the Service, the ServiceMonitor that selects it, the rules.
	ms := findNamed[*corev1.Service](t, objs, "edge-metrics")
	require.Equal(t, int32(9100), ms.Spec.Ports[0].Port)
	require.Equal(t, "prom", ms.Spec.Ports[0].TargetPort.String())
	require.Equal(t, "1", ms.Annotations["metrics-note"])
	sm := findNamed[*unstructured.Unstructured](t, objs, "edge")
	require.Equal(t, "ServiceMonitor", sm.GetKind())
	require.Equal(t, "monitoring", sm.GetNamespace())
	require.Equal(t, "prometheus", sm.GetLabels()["release"])
	require.Equal(t, "1", sm.GetAnnotations()["sm-note"])
	smSel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	require.True(t, selects(smSel, ms.Labels), "the ServiceMonitor selects the metrics Service")
	require.False(t, selects(smSel, svc.Labels), "and not the traffic Service")
	ep, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	require.Equal(t, map[string]any{
		"port": "prom", "path": "/metrics", "interval": "15s", "scrapeTimeout": "10s", "honorLabels": true,
		"relabelings":       []any{map[string]any{"sourceLabels": []any{"__meta_kubernetes_pod_node_name"}, "targetLabel": "node"}},
		"metricRelabelings": []any{map[string]any{"action": "drop", "regex": "nginx_ingress_controller_bytes_sent.*", "sourceLabels": []any{"__name__"}}},
	}, ep[0])
	spec := sm.Object["spec"].(map[string]any)
	require.Equal(t, map[string]any{"any": true}, spec["namespaceSelector"])
	require.Equal(t, "app.kubernetes.io/name", spec["jobLabel"])
	require.Equal(t, []any{"team"}, spec["targetLabels"])
	for k, v := range map[string]float64{"labelLimit": 30, "labelNameLengthLimit": 100, "labelValueLengthLimit": 200, "sampleLimit": 50000, "targetLimit": 10} {
		require.Equal(t, v, spec[k], k)
	}
	var rule *unstructured.Unstructured
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok && u.GetKind() == "PrometheusRule" {
			rule = u
		}
	}
	require.NotNil(t, rule)
	require.Equal(t, "monitoring", rule.GetNamespace())
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	require.Equal(t, "RamjetDown", groups[0].(map[string]any)["rules"].([]any)[0].(map[string]any)["alert"])

	// The ignored keys the file sets, listed by NOTES.
	for _, key := range []string{"controller.maxmindLicenseKey", "controller.keda.enabled"} {
		require.Contains(t, notes, "  - "+key+": ", notes)
	}
	require.NotContains(t, notes, "controller.image", "the file keeps ingress-nginx's controller.image:\n%s", notes)
}

// selects reports whether a label selector's matchLabels pick labels.
func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

func podVolume(t *testing.T, pod corev1.PodSpec, name string) corev1.Volume {
	t.Helper()
	for _, v := range pod.Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %q", name)
	return corev1.Volume{}
}

func ptr[T any](v T) *T { return &v }

// Every key of ingress-nginx's values.yaml is in values.schema.json, and
// each one the chart does not honour (a schema of {}: anything accepted)
// is in the ignored table NOTES.txt reads, itself, by an ancestor, or by
// the one sub-key that switches it on (hostPort by hostPort.enabled).
func TestChartIgnoredKeysListed(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("deploy", "chart", "values.schema.json"))
	require.NoError(t, err)
	var schema map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &schema))
	src, err := os.ReadFile(filepath.Join("deploy", "chart", "templates", "_ignored.tpl"))
	require.NoError(t, err)
	var ignored []string
	for _, m := range regexp.MustCompile(`(?m)^([a-zA-Z][\w.]*):$`).FindAllStringSubmatch(string(src), -1) {
		ignored = append(ignored, m[1])
	}
	require.NotEmpty(t, ignored)
	covered := func(path string) bool {
		for _, e := range ignored {
			if e == path || strings.HasPrefix(e, path+".") || strings.HasPrefix(path, e+".") {
				return true
			}
		}
		return false
	}

	var walk func(path string, v any, s map[string]any)
	walk = func(path string, v any, s map[string]any) {
		if len(s) == 0 {
			require.True(t, covered(path), "%s is accepted but neither honoured nor in _ignored.tpl", path)
			return
		}
		obj, ok := v.(map[string]any)
		props, _ := s["properties"].(map[string]any)
		if !ok || props == nil {
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			sub, ok := props[k].(map[string]any)
			if !ok {
				require.NotEqual(t, false, s["additionalProperties"], "%s.%s: not in the schema", path, k)
				continue
			}
			walk(strings.TrimPrefix(path+"."+k, "."), obj[k], sub)
		}
	}
	walk("", readValuesFile(t, "ingress-nginx-4.15.1-values.yaml"), schema)

	// And each table entry is a key ingress-nginx's chart has.
	values := readValuesFile(t, "ingress-nginx-4.15.1-values.yaml")
	for _, e := range ignored {
		if slices.Contains([]string{"controller.startupProbe", "fullnameOverride", "nameOverride"}, e) {
			continue // commented out in values.yaml, read by the templates
		}
		var at any = values
		for _, k := range strings.Split(e, ".") {
			m, ok := at.(map[string]any)
			require.True(t, ok, "%s: not in ingress-nginx's values.yaml", e)
			at, ok = m[k]
			require.True(t, ok, "%s: not in ingress-nginx's values.yaml", e)
		}
	}
}

// The NOTES list names an ignored key only when the values change it.
func TestChartNotesIgnored(t *testing.T) {
	_, notes := renderChartNotes(t, "edge", "ingress", nil)
	require.NotContains(t, notes, "ignored")
	_, notes = renderChartNotes(t, "edge", "ingress", map[string]any{"controller": map[string]any{
		"enableAnnotationValidations": true, // ingress-nginx's default
		"image":                       map[string]any{"registry": "mirror.example", "image": "ingress-nginx/controller"},
		"livenessProbe":               map[string]any{"initialDelaySeconds": 30},
		// Commented out in ingress-nginx's values.yaml, read by its templates.
		"startupProbe": map[string]any{"httpGet": map[string]any{"path": "/healthz", "port": 10254}},
	}, "dhParam": "LS0t", "nameOverride": "nginx", "fullnameOverride": "ingress-nginx"})
	require.NotContains(t, notes, "enableAnnotationValidations")
	for _, key := range []string{"controller.image", "controller.livenessProbe", "controller.startupProbe", "dhParam", "fullnameOverride", "nameOverride"} {
		require.Contains(t, notes, "  - "+key+": ", notes)
	}
}

// The command NOTES.txt gives for the warnings names the workload the
// release has: kubectl port-forward deploy/NAME finds no DaemonSet.
func TestChartNotesPortForward(t *testing.T) {
	for kind, target := range map[string]string{"Deployment": "deploy/edge", "DaemonSet": "ds/edge", "Both": "deploy/edge"} {
		_, notes := renderChartNotes(t, "edge", "ingress", map[string]any{"controller": map[string]any{"kind": kind}})
		require.Contains(t, notes, "kubectl -n ingress port-forward "+target+" 10254 &", kind)
	}
}

// kind: DaemonSet renders the same pod as a DaemonSet, without a
// PodDisruptionBudget or HorizontalPodAutoscaler (as ingress-nginx's chart).
func TestChartDaemonSet(t *testing.T) {
	objs := decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{"controller": map[string]any{
		"kind": "DaemonSet", "autoscaling": map[string]any{"enabled": true}}}))
	ds := findNamed[*appsv1.DaemonSet](t, objs, "edge")
	require.Zero(t, countOf[*appsv1.Deployment](objs))
	require.Zero(t, countOf[*policyv1.PodDisruptionBudget](objs))
	require.Zero(t, countOf[*autoscalingv2.HorizontalPodAutoscaler](objs))
	cfg, err := parseChartArgs(t, ds.Spec.Template.Spec.Containers[0].Args, "ingress")
	require.NoError(t, err)
	checkPodHardening(t, &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: ds.Spec.Template}}, cfg)
}

// kind: Both renders the Deployment and the DaemonSet, as ingress-nginx's
// chart did while it had Both (up to 4.8.2): the Deployment scales as with
// kind: Deployment, by its HorizontalPodAutoscaler when autoscaling is on,
// rather than falling to one replica with the replicas field left out.
func TestChartBoth(t *testing.T) {
	objs := decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{"controller": map[string]any{
		"kind": "Both", "autoscaling": map[string]any{"enabled": true, "minReplicas": 3, "maxReplicas": 7}}}))
	findNamed[*appsv1.DaemonSet](t, objs, "edge")
	d := findNamed[*appsv1.Deployment](t, objs, "edge")
	require.Nil(t, d.Spec.Replicas, "the HorizontalPodAutoscaler sets them")
	hpa := findNamed[*autoscalingv2.HorizontalPodAutoscaler](t, objs, "edge")
	require.Equal(t, autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "edge"}, hpa.Spec.ScaleTargetRef)
	require.Equal(t, int32(3), *hpa.Spec.MinReplicas)
	require.Equal(t, int32(7), hpa.Spec.MaxReplicas)

	objs = decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{"controller": map[string]any{"kind": "Both", "replicaCount": 3}}))
	ds := findNamed[*appsv1.DaemonSet](t, objs, "edge")
	d = findNamed[*appsv1.Deployment](t, objs, "edge")
	require.Equal(t, int32(3), *d.Spec.Replicas)
	require.Zero(t, countOf[*autoscalingv2.HorizontalPodAutoscaler](objs))

	// The Deployment of more than one replica keeps its
	// PodDisruptionBudget, which selects its pods and not the DaemonSet's:
	// a budget over both would count pods no scalable workload owns, and
	// the disruption controller refuses a maxUnavailable one outright.
	pdb := findNamed[*policyv1.PodDisruptionBudget](t, objs, "edge")
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	require.NoError(t, err)
	require.True(t, sel.Matches(labels.Set(d.Spec.Template.Labels)), "the Deployment's pods")
	require.False(t, sel.Matches(labels.Set(ds.Spec.Template.Labels)), "not the DaemonSet's")
	for _, w := range []struct {
		sel  *metav1.LabelSelector
		pods map[string]string
	}{{d.Spec.Selector, d.Spec.Template.Labels}, {ds.Spec.Selector, ds.Spec.Template.Labels}} {
		s, err := metav1.LabelSelectorAsSelector(w.sel)
		require.NoError(t, err)
		require.True(t, s.Matches(labels.Set(w.pods)), "each workload still selects its own pods")
	}
	require.Equal(t, 1, pdb.Spec.MinAvailable.IntValue())

	// kind: Deployment keeps its pods' labels as they were (no rollout on
	// upgrade).
	objs = decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{"controller": map[string]any{"replicaCount": 3}}))
	require.NotContains(t, findNamed[*appsv1.Deployment](t, objs, "edge").Spec.Template.Labels, "ramjet.dev/workload")
}

// kind: Both with hostPort renders as asked (as ingress-nginx's chart did
// while it had Both), but the DaemonSet's and the Deployment's pods ask
// for the same host ports, so on each node one of them stays Pending: the
// notes say so.
func TestChartNotesBothHostPort(t *testing.T) {
	const note = "controller.kind Both with controller.hostPort"
	for _, tc := range []struct {
		kind     string
		hostPort bool
		want     bool
	}{{"Both", true, true}, {"Both", false, false}, {"DaemonSet", true, false}, {"Deployment", true, false}} {
		_, notes := renderChartNotes(t, "edge", "ingress", map[string]any{"controller": map[string]any{
			"kind": tc.kind, "hostPort": map[string]any{"enabled": tc.hostPort}}})
		if tc.want {
			require.Contains(t, notes, note, tc)
		} else {
			require.NotContains(t, notes, note, tc)
		}
	}
}

// With helm installed, `helm lint` passes on the chart alone and with
// each values file, and `helm template` renders what renderChart renders.
// Without it (the library's machines have none unless installed, e.g.
// `go install helm.sh/helm/v3/cmd/helm@v3.21.4`) the test is skipped and
// renderChart stands in.
func TestChartHelm(t *testing.T) {
	helm, err := exec.LookPath("helm")
	if errors.Is(err, exec.ErrNotFound) {
		t.Skip("helm is not installed")
	}
	require.NoError(t, err)
	chart := filepath.Join("deploy", "chart")
	for _, values := range []string{"", "ingress-nginx-4.15.1-values.yaml", "every-key.yaml"} {
		args := []string{"lint", "--strict", chart}
		var overrides map[string]any
		if values != "" {
			args = append(args, "-f", filepath.Join("testdata", "chart", values))
			overrides = readValuesFile(t, values)
		}
		out, err := exec.Command(helm, args...).CombinedOutput()
		require.NoError(t, err, "helm %s:\n%s", strings.Join(args, " "), out)

		args = []string{"template", "edge", chart, "--namespace", "ingress", "--kube-version", "1.35.0"}
		if values != "" {
			args = append(args, "-f", filepath.Join("testdata", "chart", values))
		}
		out, err = exec.Command(helm, args...).Output()
		require.NoError(t, err, "helm %s", strings.Join(args, " "))
		require.Equal(t, chartDocs(t, renderChart(t, "edge", "ingress", overrides)), chartDocs(t, string(out)), "helm template and renderChart, values %q", values)
	}
}

// chartDocs are the rendered documents as parsed YAML, keyed by kind and
// name, for comparing two renderings whatever their order and comments.
func chartDocs(t *testing.T, rendered string) map[string]any {
	t.Helper()
	docs := map[string]any{}
	for _, doc := range regexp.MustCompile(`(?m)^---$`).Split(rendered, -1) {
		var v map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(doc), &v))
		if v == nil {
			continue
		}
		meta, _ := v["metadata"].(map[string]any)
		docs[asString(v["kind"])+"/"+asString(meta["name"])] = v
	}
	return docs
}

func asString(v any) string { s, _ := v.(string); return s }

// ingress-nginx's documented affinity and topologySpreadConstraints
// examples render, and their selectors pick the controller's pods: a
// selector that picks nothing spreads nothing, and says nothing.
func TestChartIngressNginxSelectors(t *testing.T) {
	objs := decodeChart(t, renderChart(t, "edge", "ingress", readValuesFile(t, "ingress-nginx-selectors.yaml")))
	d := findNamed[*appsv1.Deployment](t, objs, "edge")
	pod := d.Spec.Template
	terms := pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	require.Len(t, terms, 1)
	require.Len(t, pod.Spec.TopologySpreadConstraints, 1)
	for _, sel := range []*metav1.LabelSelector{terms[0].LabelSelector, pod.Spec.TopologySpreadConstraints[0].LabelSelector} {
		s, err := metav1.LabelSelectorAsSelector(sel)
		require.NoError(t, err)
		require.True(t, s.Matches(labels.Set(pod.Labels)), "%s does not select the pod's labels %v", s, pod.Labels)
	}
}

// controller.reportNodeInternalIp passes --report-node-internal-ip-address
// where ingress-nginx's chart does, on a hostNetwork install, and on its
// ramjet counterpart, hostPort: status then advertises the nodes'
// InternalIPs.
func TestChartReportNodeInternalIP(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   bool
	}{
		{"hostPort", map[string]any{"hostPort": map[string]any{"enabled": true}}, true},
		{"hostNetwork", map[string]any{"hostNetwork": true}, true},
		{"neither", map[string]any{}, false}, // ingress-nginx's chart leaves it out too
	} {
		controller := map[string]any{"kind": "DaemonSet", "publishService": map[string]any{"enabled": false}, "reportNodeInternalIp": true}
		maps.Copy(controller, tc.values)
		rendered, notes := renderChartNotes(t, "edge", "ingress", map[string]any{"controller": controller})
		ds := findNamed[*appsv1.DaemonSet](t, decodeChart(t, rendered), "edge")
		cfg, err := parseChartArgs(t, ds.Spec.Template.Spec.Containers[0].Args, "ingress")
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.want, cfg.nodeInternalIP, tc.name)
		require.Nil(t, cfg.publishService, tc.name)
		require.NotContains(t, notes, "reportNodeInternalIp", tc.name)
	}
}

// controller.hostPort, ingress-nginx's bare-metal setup (often with kind:
// DaemonSet): each node's ports reach the pod's listeners, TCP and UDP
// services' ports included.
func TestChartHostPort(t *testing.T) {
	rendered, notes := renderChartNotes(t, "edge", "ingress", map[string]any{
		"controller": map[string]any{"kind": "DaemonSet", "hostPort": map[string]any{"enabled": true, "ports": map[string]any{"http": 8000}}},
		"tcp":        map[string]any{"9000": "apps/db:5432"},
		"udp":        map[string]any{"5353": "kube-system/kube-dns:53"},
	})
	ds := findNamed[*appsv1.DaemonSet](t, decodeChart(t, rendered), "edge")
	hostPorts := map[string]int32{}
	for _, p := range ds.Spec.Template.Spec.Containers[0].Ports {
		hostPorts[p.Name] = p.HostPort
	}
	require.Equal(t, map[string]int32{"http": 8000, "https": 443, "9000-tcp": 9000, "5353-udp": 5353, "metrics": 0, "webhook": 0}, hostPorts)
	require.NotContains(t, notes, "hostPort")
}

// controller.service.internal: ingress-nginx's second, internal load
// balancer, with the external Service's ports unless it names its own, and
// the one status is published from when there is no external Service.
func TestChartInternalService(t *testing.T) {
	internal := map[string]any{
		"enabled":     true,
		"annotations": map[string]any{"service.beta.kubernetes.io/aws-load-balancer-internal": "true"},
		"labels":      map[string]any{"lb": "internal"},
		"ports":       map[string]any{"https": 8443},
		"nodePorts":   map[string]any{"tcp": map[string]any{"9000": 30900}},
	}
	objs := decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{
		"controller": map[string]any{"service": map[string]any{"internal": internal}},
		"tcp":        map[string]any{"9000": "apps/db:5432"},
	}))
	d := findNamed[*appsv1.Deployment](t, objs, "edge")
	cfg, err := parseChartArgs(t, d.Spec.Template.Spec.Containers[0].Args, "ingress")
	require.NoError(t, err)
	require.Equal(t, &types.NamespacedName{Namespace: "ingress", Name: "edge"}, cfg.publishService, "the external Service, while there is one")
	ext := findNamed[*corev1.Service](t, objs, "edge")
	svc := findNamed[*corev1.Service](t, objs, "edge-internal")
	require.Equal(t, "true", svc.Annotations["service.beta.kubernetes.io/aws-load-balancer-internal"])
	require.Equal(t, "internal", svc.Labels["lb"])
	require.Equal(t, corev1.ServiceTypeLoadBalancer, svc.Spec.Type, "the external Service's type")
	require.True(t, selects(svc.Spec.Selector, d.Spec.Template.Labels))
	ports := map[string]corev1.ServicePort{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = p
	}
	require.Equal(t, corev1.ServicePort{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http"), AppProtocol: ptr("http")}, ports["http"])
	require.Equal(t, corev1.ServicePort{Name: "https", Port: 8443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("https"), AppProtocol: ptr("https")}, ports["https"])
	require.Equal(t, corev1.ServicePort{Name: "9000-tcp", Port: 9000, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("9000-tcp"), NodePort: 30900}, ports["9000-tcp"])
	require.Len(t, ports, 3)
	for _, p := range ext.Spec.Ports {
		require.Zero(t, p.NodePort, "the internal Service's nodePorts are its own")
	}

	// Without the external Service, status comes from the internal one.
	objs = decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{
		"controller": map[string]any{"service": map[string]any{"internal": internal, "external": map[string]any{"enabled": false}}},
	}))
	var names []string
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok {
			names = append(names, s.Name)
		}
	}
	require.ElementsMatch(t, []string{"edge-internal", "edge-admission"}, names)
	d = findNamed[*appsv1.Deployment](t, objs, "edge")
	cfg, err = parseChartArgs(t, d.Spec.Template.Spec.Containers[0].Args, "ingress")
	require.NoError(t, err)
	require.Equal(t, &types.NamespacedName{Namespace: "ingress", Name: "edge-internal"}, cfg.publishService)
}

// controller.networkPolicy: in a namespace that denies traffic by default,
// the policy admits every port the pod serves.
func TestChartNetworkPolicy(t *testing.T) {
	objs := decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{
		"controller": map[string]any{"networkPolicy": map[string]any{"enabled": true}},
		"tcp":        map[string]any{"9000": "apps/db:5432"},
		"udp":        map[string]any{"5353": "kube-system/kube-dns:53"},
	}))
	d := findNamed[*appsv1.Deployment](t, objs, "edge")
	np := findNamed[*networkingv1.NetworkPolicy](t, objs, "edge")
	require.Equal(t, "ingress", np.Namespace)
	require.True(t, selects(np.Spec.PodSelector.MatchLabels, d.Spec.Template.Labels))
	require.Len(t, np.Spec.Ingress, 1)
	allowed := map[string]bool{}
	for _, p := range np.Spec.Ingress[0].Ports {
		allowed[string(*p.Protocol)+"/"+p.Port.String()] = true
	}
	for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
		require.True(t, allowed[string(p.Protocol)+"/"+p.Name] || allowed[fmt.Sprint(p.Protocol, "/", p.ContainerPort)],
			"container port %s (%d/%s) is not admitted: %v", p.Name, p.ContainerPort, p.Protocol, allowed)
	}
	require.Equal(t, []networkingv1.NetworkPolicyEgressRule{{}}, np.Spec.Egress, "the controller reaches backends, the API server and collectors")
}

// A port below 1024 (the controller's 80, SSH's 22, DNS's 53) can be
// bound: the controller runs as non-root without capabilities, so the pod
// lowers net.ipv4.ip_unprivileged_port_start to the lowest, a sysctl Pod
// Security "restricted" allows; a values file's own setting is kept.
func TestChartPrivilegedStreamPorts(t *testing.T) {
	sysctls := func(overrides map[string]any) []corev1.Sysctl {
		t.Helper()
		d := findNamed[*appsv1.Deployment](t, decodeChart(t, renderChart(t, "edge", "ingress", overrides)), "edge")
		cfg, err := parseChartArgs(t, d.Spec.Template.Spec.Containers[0].Args, "ingress")
		require.NoError(t, err)
		checkPodHardening(t, d, cfg)
		return d.Spec.Template.Spec.SecurityContext.Sysctls
	}
	low := map[string]any{"tcp": map[string]any{"2222": "apps/git:22", "22": "apps/git:22"}, "udp": map[string]any{"53": "kube-system/kube-dns:53"}}
	require.Equal(t, []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "22"}}, sysctls(low))
	require.Equal(t, []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "80"}}, sysctls(map[string]any{"tcp": map[string]any{"9000": "apps/db:5432"}}))
	low["controller"] = map[string]any{"sysctls": map[string]any{"net.ipv4.ip_unprivileged_port_start": "0"}}
	require.Equal(t, []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}}, sysctls(low))
}

// controller.podAnnotations with the Prometheus annotations ingress-nginx's
// monitoring guide has users set (its chart adds none of its own) render
// once each, beside those the chart adds with metrics on: a key twice in
// one mapping is a YAML error that fails the install. The values file's
// win.
func TestChartPodAnnotationsWithMetrics(t *testing.T) {
	rendered := renderChart(t, "edge", "ingress", map[string]any{"controller": map[string]any{
		"metrics":        map[string]any{"enabled": true},
		"podAnnotations": map[string]any{"prometheus.io/scrape": "true", "prometheus.io/port": "9913", "team": "edge"},
	}})
	dep := findNamed[*appsv1.Deployment](t, decodeChart(t, rendered), "edge")
	require.Equal(t, map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9913", "team": "edge"}, dep.Spec.Template.Annotations)
}

// A tcp:/udp: port that works with ingress-nginx's chart works with this
// one: the controller listens on controller.containerPort (80 and 443, as
// ingress-nginx's nginx does in the pod), so 8080 or 8444 reach the TCP
// or UDP service, not an HTTP listener; a port the controller keeps for
// itself fails the render, naming the key.
func TestChartStreamPortsOfIngressNginx(t *testing.T) {
	objs := decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{
		"tcp": map[string]any{"8080": "apps/db:5432", "8444": "apps/mq:5671"},
		"udp": map[string]any{"8080": "apps/stats:8125"},
	}))
	d := findNamed[*appsv1.Deployment](t, objs, "edge")
	c := d.Spec.Template.Spec.Containers[0]
	cfg, err := parseChartArgs(t, c.Args, "ingress")
	require.NoError(t, err)
	checkPodHardening(t, d, cfg)
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	require.Equal(t, map[string]int32{"http": 80, "https": 443, "metrics": 10254, "webhook": 8443, "8080-tcp": 8080, "8444-tcp": 8444, "8080-udp": 8080}, ports)
	reserved := compileOptions(cfg, nil).ReservedPorts
	require.ElementsMatch(t, []int{80, 443, 10254, 8443, 442, 8181, 10245, 10246, 10247}, reserved)
	require.Equal(t, []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "80"}}, d.Spec.Template.Spec.SecurityContext.Sysctls)

	// ingress-nginx's containerPort key moves them, as in its chart.
	d = findNamed[*appsv1.Deployment](t, decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{
		"controller": map[string]any{"containerPort": map[string]any{"http": 8000, "https": 8001}},
	})), "edge")
	cfg, err = parseChartArgs(t, d.Spec.Template.Spec.Containers[0].Args, "ingress")
	require.NoError(t, err)
	require.Equal(t, ":8000", cfg.httpAddr)
	require.Equal(t, ":8001", cfg.httpsAddr)
	require.Empty(t, d.Spec.Template.Spec.SecurityContext.Sysctls)

	for _, v := range []map[string]any{
		{"tcp": map[string]any{"443": "apps/db:5432"}},
		{"udp": map[string]any{"10254": "apps/stats:8125"}},
		{"tcp": map[string]any{"8443": "apps/db:5432"}},
	} {
		_, _, err := renderChartValues("edge", "ingress", chartValues(t, v))
		require.ErrorContains(t, err, "is the controller's own", "%v", v)
	}
}

// commonLabels go on every object, and controller.labels on every
// controller object, as ingress-nginx's chart puts ingress-nginx.labels
// (which holds commonLabels) and controller.labels on its ClusterRole,
// ClusterRoleBinding, Role and RoleBinding too: a policy or a selector
// that relies on them misses no object. The certificate Jobs' objects
// take commonLabels and admissionWebhooks.patch.labels instead, as there,
// and the ValidatingWebhookConfiguration admissionWebhooks.labels.
func TestChartLabelsOnEveryObject(t *testing.T) {
	values := readValuesFile(t, "every-key.yaml")
	mergeValues(values, map[string]any{"controller": map[string]any{"networkPolicy": map[string]any{"enabled": true}}})
	objs := decodeChart(t, renderChart(t, "edge", "ingress", values))
	for _, o := range objs {
		m, err := meta.Accessor(o)
		require.NoError(t, err)
		kind := fmt.Sprintf("%T %s", o, m.GetName())
		got := m.GetLabels()
		require.Equal(t, "edge", got["team"], "%s: commonLabels", kind)
		require.Equal(t, "edge", got["app.kubernetes.io/instance"], "%s", kind)
		if _, ok := o.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok {
			require.Equal(t, "1", got["webhook-label"], "%s: admissionWebhooks.labels", kind)
			continue
		}
		if got["app.kubernetes.io/component"] == "admission-webhook" {
			require.Equal(t, "1", got["job-label"], "%s: admissionWebhooks.patch.labels", kind)
			continue
		}
		require.Equal(t, "edge", got["tier"], "%s: controller.labels", kind)
	}
}

// An autoscaling target of "" is left out of the HorizontalPodAutoscaler,
// as ingress-nginx's chart leaves it (its controller-hpa.yaml renders each
// target `with` the value), and as its maintainers advise for scaling on
// CPU alone (kubernetes/ingress-nginx#10371): a values file that says so
// installs.
func TestChartAutoscalingTargetOff(t *testing.T) {
	for name, target := range map[string]string{"memory": "targetMemoryUtilizationPercentage", "cpu": "targetCPUUtilizationPercentage"} {
		objs := decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{"controller": map[string]any{
			"autoscaling": map[string]any{"enabled": true, target: ""},
		}}))
		hpa := findNamed[*autoscalingv2.HorizontalPodAutoscaler](t, objs, "edge")
		require.Len(t, hpa.Spec.Metrics, 1, target)
		require.NotEqual(t, name, string(hpa.Spec.Metrics[0].Resource.Name), target)
	}
}

// ingress-nginx's chart has its users move a listener with a flag beside
// the port value (values.yaml: "if this port is changed, change
// healthz-port: in extraArgs: accordingly"; http-port and https-port with
// containerPort): ramjet's chart moves the listener with the value alone,
// so such a flag that agrees is left out rather than passed to a
// controller that refuses it, and one that disagrees fails the render
// naming the value to change.
func TestChartExtraArgsListenPorts(t *testing.T) {
	agree := map[string]any{"controller": map[string]any{
		"containerPort": map[string]any{"http": 8080, "https": 9443},
		"metrics":       map[string]any{"port": 9913},
		"extraArgs":     map[string]any{"http-port": 8080, "https-port": "9443", "healthz-port": 9913, "use-forwarded-headers": ""},
	}}
	d := findNamed[*appsv1.Deployment](t, decodeChart(t, renderChart(t, "edge", "ingress", agree)), "edge")
	c := d.Spec.Template.Spec.Containers[0]
	cfg, err := parseChartArgs(t, c.Args, "ingress")
	require.NoError(t, err, "%q", c.Args)
	require.Equal(t, ":8080", cfg.httpAddr)
	require.Equal(t, ":9443", cfg.httpsAddr)
	require.Equal(t, ":9913", cfg.debugAddr)
	require.True(t, cfg.useForwardedHeaders, "the other extraArgs stay")

	for flag, want := range map[string]string{
		"http-port":    "controller.extraArgs.http-port: 8081: the controller listens on controller.containerPort.http (80); set that to 8081 and remove the flag",
		"https-port":   "controller.extraArgs.https-port: 8081: the controller listens on controller.containerPort.https (443); set that to 8081 and remove the flag",
		"healthz-port": "controller.extraArgs.healthz-port: 8081: the controller serves /healthz and /metrics on controller.metrics.port (10254); set that to 8081 and remove the flag",
	} {
		_, _, err := renderChartValues("edge", "ingress", chartValues(t, map[string]any{"controller": map[string]any{"extraArgs": map[string]any{flag: 8081}}}))
		require.ErrorContains(t, err, want, flag)
	}
}

// The kubelet kills the controller terminationGracePeriodSeconds after
// the preStop hook starts its drain, so the period must cover the drain
// (--shutdown-grace-period, which ingress-nginx's users set in extraArgs)
// and the ConfigMap's worker-shutdown-timeout for requests in flight. A
// period of 0 is worked out from both, as the controller reads them; one
// the values set too short for them renders as given, as in ingress-nginx's
// chart, and the notes name it.
func TestChartTerminationGraceCoversShutdownTimeout(t *testing.T) {
	for _, tc := range []struct {
		timeout   any // worker-shutdown-timeout; nil: unset
		drainArg  any // extraArgs.shutdown-grace-period; nil: unset
		grace     int
		want      int64
		shortWarn string
	}{
		{timeout: nil, grace: 300, want: 300},
		{timeout: nil, grace: 0, want: 270},
		{timeout: "285s", grace: 300, want: 300},
		{timeout: "600s", grace: 300, want: 300, shortWarn: "controller.terminationGracePeriodSeconds (300) is shorter than the drain (15 s) plus worker-shutdown-timeout (600 s)"},
		{timeout: "286", grace: 300, want: 300, shortWarn: "at least 301"},
		{timeout: "600s", grace: 0, want: 630},
		{timeout: 600, grace: 0, want: 630},
		{timeout: "10m", grace: 3600, want: 3600},
		{timeout: "1500ms", grace: 0, want: 32},
		{timeout: "1m30", grace: 0, want: 120}, // a last bare number is seconds to nginx
		{timeout: "1h", drainArg: 60, grace: 0, want: 3675},
		{timeout: nil, drainArg: "90", grace: 300, want: 300, shortWarn: "the drain (90 s) plus worker-shutdown-timeout (240 s)"},
		// Refused by the controller, which keeps 240 s ("1m 30s" is two
		// words to nginx).
		{timeout: "forever", grace: 0, want: 270},
		{timeout: "1m 30s", grace: 0, want: 270},
		{timeout: "1y", grace: 0, want: 270}, // nginx counts it in ms: no y or M
		// No timeout to the controller, as to nginx: a worked-out period
		// cannot wait for ever, and keeps ingress-nginx's 240 s.
		{timeout: "0", grace: 0, want: 270},
	} {
		name := fmt.Sprintf("%v/%v/%d", tc.timeout, tc.drainArg, tc.grace)
		controller := map[string]any{"terminationGracePeriodSeconds": tc.grace}
		if tc.timeout != nil {
			controller["config"] = map[string]any{"worker-shutdown-timeout": tc.timeout}
		}
		if tc.drainArg != nil {
			controller["extraArgs"] = map[string]any{"shutdown-grace-period": tc.drainArg}
		}
		rendered, notes := renderChartNotes(t, "edge", "ingress", map[string]any{"controller": controller})
		objs := decodeChart(t, rendered)
		pod := findNamed[*appsv1.Deployment](t, objs, "edge").Spec.Template.Spec
		require.Equal(t, tc.want, *pod.TerminationGracePeriodSeconds, name)

		cfg, err := parseChartArgs(t, pod.Containers[0].Args, "ingress")
		require.NoError(t, err, name)
		cm := findNamed[*corev1.ConfigMap](t, objs, "edge-controller")
		settings, _ := configmap.Parse(cm.Namespace, cm.Name, cm.Data)
		cfg.routerKeys = settings
		need := cfg.drain + cfg.connections().ShutdownTimeout
		grace := time.Duration(tc.want) * time.Second
		if tc.shortWarn == "" {
			require.GreaterOrEqual(t, grace, need, name)
			require.NotContains(t, notes, "terminationGracePeriodSeconds", name)
			continue
		}
		require.Less(t, grace, need, name)
		require.Contains(t, notes, tc.shortWarn, name)
		require.Contains(t, notes, fmt.Sprintf("at least %d", int64((need+time.Second-1)/time.Second)), name)
	}
}

// ingress-nginx's chart renders the metrics Service whenever metrics are
// on (its metrics.service.enabled defaults to true); ramjet's only when
// asked, as the port serves /debug/* too. A values file that shapes that
// Service (ingress-nginx's monitoring guide annotates it for Prometheus)
// without asking for it is told so in the notes rather than losing it
// silently.
func TestChartNotesMetricsServiceOff(t *testing.T) {
	const note = "controller.metrics.service: no metrics Service is rendered"
	_, notes := renderChartNotes(t, "edge", "ingress", nil)
	require.NotContains(t, notes, note)
	for name, service := range map[string]map[string]any{
		"annotations":  {"annotations": map[string]any{"prometheus.io/scrape": "true"}},
		"type":         {"type": "NodePort", "nodePort": 30254},
		"servicePort":  {"servicePort": 9913},
		"sourceRanges": {"loadBalancerSourceRanges": []any{"10.0.0.0/8"}},
	} {
		values := map[string]any{"controller": map[string]any{"metrics": map[string]any{"enabled": true, "service": service}}}
		rendered, notes := renderChartNotes(t, "edge", "ingress", values)
		require.Zero(t, countOf[*corev1.Service](decodeChart(t, rendered))-2, name) // the controller's and the webhook's
		require.Contains(t, notes, note+"; set controller.metrics.service.enabled", name)

		service["enabled"] = true
		rendered, notes = renderChartNotes(t, "edge", "ingress", values)
		findNamed[*corev1.Service](t, decodeChart(t, rendered), "edge-metrics")
		require.NotContains(t, notes, note, name)
		delete(service, "enabled")
	}
	// A ServiceMonitor renders the Service; metrics off render neither.
	_, notes = renderChartNotes(t, "edge", "ingress", map[string]any{"controller": map[string]any{"metrics": map[string]any{
		"serviceMonitor": map[string]any{"enabled": true}, "service": map[string]any{"annotations": map[string]any{"a": "b"}}}}})
	require.NotContains(t, notes, note)
	_, notes = renderChartNotes(t, "edge", "ingress", map[string]any{"controller": map[string]any{"metrics": map[string]any{
		"enabled": false, "service": map[string]any{"annotations": map[string]any{"a": "b"}}}}})
	require.NotContains(t, notes, note)
}

// An extraArgs value of false is passed as --key=false, as ingress-nginx's
// chart passes it (its comment says such keys become --key, but false
// quotes to more than two characters), so it turns a flag off rather than
// on.
func TestChartExtraArgsFalse(t *testing.T) {
	d := findNamed[*appsv1.Deployment](t, decodeChart(t, renderChart(t, "edge", "ingress", map[string]any{"controller": map[string]any{
		"extraArgs": map[string]any{"enable-ssl-passthrough": false, "use-forwarded-headers": ""}}})), "edge")
	args := d.Spec.Template.Spec.Containers[0].Args
	require.Contains(t, args, "--enable-ssl-passthrough=false")
	require.Contains(t, args, "--use-forwarded-headers")
	cfg, err := parseChartArgs(t, args, "ingress")
	require.NoError(t, err)
	require.False(t, cfg.options.EnableSSLPassthrough)
	require.True(t, cfg.useForwardedHeaders)
}

// controller.hostNetwork: true puts the pod on the node's network, as
// ingress-nginx's chart does. There the sysctl that lets the unprivileged
// controller bind 80 and 443 is not allowed (the kubelet refuses a net.*
// sysctl on the host network), so the controller binds them as ingress-nginx's
// nginx does, with NET_BIND_SERVICE, as the only capability of a root
// process; with ports of 1024 and above it stays unprivileged. dnsPolicy
// stays the values' (ingress-nginx's too); the notes say what
// ClusterFirst means there.
func TestChartHostNetwork(t *testing.T) {
	pod := func(controller map[string]any) (corev1.PodTemplateSpec, string) {
		out, notes := renderChartNotes(t, "edge", "ingress", map[string]any{"controller": controller})
		return findNamed[*appsv1.Deployment](t, decodeChart(t, out), "edge").Spec.Template, notes
	}
	const dnsNote = "controller.hostNetwork with controller.dnsPolicy ClusterFirst"
	p, notes := pod(map[string]any{"hostNetwork": true})
	require.True(t, p.Spec.HostNetwork)
	require.Equal(t, corev1.DNSClusterFirst, p.Spec.DNSPolicy)
	require.Contains(t, notes, dnsNote)
	require.NotContains(t, notes, "ignored")
	for _, s := range p.Spec.SecurityContext.Sysctls {
		require.NotContains(t, s.Name, "net.", "no net.* sysctl on the host network")
	}
	sc := p.Spec.Containers[0].SecurityContext
	require.Equal(t, []corev1.Capability{"NET_BIND_SERVICE"}, sc.Capabilities.Add)
	require.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	require.False(t, *sc.AllowPrivilegeEscalation)
	require.True(t, *sc.ReadOnlyRootFilesystem)
	require.Zero(t, *p.Spec.SecurityContext.RunAsUser, "a capability is effective for root only: the image sets no file capability")
	require.False(t, *p.Spec.SecurityContext.RunAsNonRoot)
	for _, port := range p.Spec.Containers[0].Ports {
		require.Zero(t, port.HostPort, "the API server sets it to the container port")
	}
	baseline := api.LevelVersion{Level: api.LevelBaseline, Version: api.LatestVersion()}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	res := policy.AggregateCheckResults(evaluator.EvaluatePod(baseline, &p.ObjectMeta, &p.Spec))
	require.Equal(t, []string{"host namespaces"}, res.ForbiddenReasons, "only the host network keeps it from baseline")

	p, notes = pod(map[string]any{"hostNetwork": true, "dnsPolicy": "ClusterFirstWithHostNet", "containerPort": map[string]any{"http": 8080, "https": 8443}})
	require.Equal(t, corev1.DNSClusterFirstWithHostNet, p.Spec.DNSPolicy)
	require.NotContains(t, notes, dnsNote)
	require.Empty(t, p.Spec.Containers[0].SecurityContext.Capabilities.Add, "high ports need no capability")
	require.True(t, *p.Spec.SecurityContext.RunAsNonRoot)
	require.NotZero(t, *p.Spec.SecurityContext.RunAsUser)

	// A values file's pod securityContext (an fsGroup, as bare-metal
	// installs set) leaves the container's: it still runs as root, not as
	// the image's user, who could not use the capability.
	p, _ = pod(map[string]any{"hostNetwork": true, "podSecurityContext": map[string]any{"fsGroup": 2000}})
	require.Equal(t, int64(2000), *p.Spec.SecurityContext.FSGroup)
	sc = p.Spec.Containers[0].SecurityContext
	require.NotNil(t, sc.RunAsUser)
	require.Zero(t, *sc.RunAsUser)
	require.Equal(t, []corev1.Capability{"NET_BIND_SERVICE"}, sc.Capabilities.Add)

	p, _ = pod(nil)
	require.False(t, p.Spec.HostNetwork)
}

// A values file written against an older ingress-nginx chart names the
// controller's pods app.kubernetes.io/name: ingress-nginx outright, not
// through include "ingress-nginx.name": under ramjet's chart such an
// affinity or spread selects none of the controller's pods (theirs is
// ramjet), so it keeps no replica apart and says nothing. The notes
// name each such selector; the include form, and selectors of other
// pods, are not named.
func TestChartNotesForeignSelectors(t *testing.T) {
	const note = "selects app.kubernetes.io/name ingress-nginx"
	literal := map[string]any{
		"affinity": map[string]any{
			"podAntiAffinity": map[string]any{
				"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
					"topologyKey": "kubernetes.io/hostname",
					"labelSelector": map[string]any{"matchExpressions": []any{
						map[string]any{"key": "app.kubernetes.io/name", "operator": "In", "values": []any{"ingress-nginx"}},
						map[string]any{"key": "app.kubernetes.io/component", "operator": "In", "values": []any{"controller"}},
					}},
				}},
				"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
					"weight": 100,
					"podAffinityTerm": map[string]any{
						"topologyKey":   "topology.kubernetes.io/zone",
						"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "ingress-nginx"}},
					},
				}},
			},
			"podAffinity": map[string]any{
				"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
					"weight": 10,
					"podAffinityTerm": map[string]any{
						"topologyKey":   "kubernetes.io/hostname",
						"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "cache"}},
					},
				}},
			},
		},
		"topologySpreadConstraints": []any{map[string]any{
			"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
			"labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"}},
		}},
	}
	_, notes := renderChartNotes(t, "edge", "ingress", map[string]any{"controller": literal})
	for _, where := range []string{
		"controller.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]",
		"controller.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]",
		"controller.topologySpreadConstraints[0]",
	} {
		require.Contains(t, notes, where+" "+note, notes)
	}
	require.Equal(t, 3, strings.Count(notes, note), "not the podAffinity to other pods:\n%s", notes)

	_, notes = renderChartNotes(t, "edge", "ingress", readValuesFile(t, "ingress-nginx-selectors.yaml"))
	require.NotContains(t, notes, note)
}
