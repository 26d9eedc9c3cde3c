package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// readManifests decodes every object of a YAML file in deploy/.
func readManifests(t *testing.T, name string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("deploy", name))
	require.NoError(t, err)
	var objs []runtime.Object
	for i, doc := range regexp.MustCompile(`(?m)^---$`).Split(string(data), -1) {
		if len(bytes.TrimSpace(stripComments([]byte(doc)))) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		require.NoError(t, err, "%s document %d", name, i)
		objs = append(objs, obj)
	}
	return objs
}

func stripComments(doc []byte) []byte {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAll(doc, nil)
}

func findObject[T runtime.Object](t *testing.T, objs []runtime.Object) T {
	t.Helper()
	for _, o := range objs {
		if v, ok := o.(T); ok {
			return v
		}
	}
	var zero T
	t.Fatalf("no %T in the manifests", zero)
	return zero
}

// TestDeployManifests checks that the shipped Deployment is one the
// controller accepts, and that its pieces point at each other.
func TestDeployManifests(t *testing.T) {
	rbac := readManifests(t, "rbac.yaml")
	deploy := readManifests(t, "deployment.yaml")

	d := findObject[*appsv1.Deployment](t, deploy)
	require.EqualValues(t, 2, *d.Spec.Replicas)
	c := d.Spec.Template.Spec.Containers[0]
	cfg, err := parseFlags(c.Args, &bytes.Buffer{}, func(k string) string {
		return map[string]string{"POD_NAME": "ramjet-abc", "POD_NAMESPACE": d.Namespace}[k]
	})
	require.NoError(t, err, "the Deployment's arguments")
	require.Equal(t, "ramjet-abc", cfg.identity)
	require.Equal(t, d.Namespace, cfg.electionNamespace)
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name)
	}
	require.Subset(t, env, []string{"POD_NAME", "POD_NAMESPACE"})

	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	portOf := func(addr string) string {
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		return port
	}
	require.Equal(t, portOf(cfg.httpAddr), fmt.Sprint(ports["http"]))
	require.Equal(t, portOf(cfg.httpsAddr), fmt.Sprint(ports["https"]))
	require.Equal(t, portOf(cfg.debugAddr), fmt.Sprint(ports["metrics"]))
	require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	require.Equal(t, "metrics", c.ReadinessProbe.HTTPGet.Port.String())
	require.Equal(t, cfg.healthPath, c.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "metrics", c.LivenessProbe.HTTPGet.Port.String())

	svc := findObject[*corev1.Service](t, deploy)
	require.Equal(t, &types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}, cfg.publishService)
	for _, p := range svc.Spec.Ports {
		require.Contains(t, ports, p.TargetPort.String(), "Service port %s", p.Name)
		// The debug listener shows the whole table: never beyond the pod.
		require.NotContains(t, []string{"metrics", fmt.Sprint(ports["metrics"])}, p.TargetPort.String(), "Service port %s", p.Name)
		require.NotEqual(t, ports["metrics"], p.Port, "Service port %s", p.Name)
	}
	require.Equal(t, d.Spec.Template.Labels, svc.Spec.Selector)

	class := findObject[*networkingv1.IngressClass](t, deploy)
	require.Equal(t, cfg.options.ControllerName, class.Spec.Controller)
	require.Equal(t, cfg.options.IngressClass, class.Name)

	checkPodHardening(t, d, cfg)

	sa := findObject[*corev1.ServiceAccount](t, rbac)
	require.Equal(t, sa.Name, d.Spec.Template.Spec.ServiceAccountName)
	require.Equal(t, sa.Namespace, d.Namespace)
	role := findObject[*rbacv1.Role](t, rbac)
	require.Equal(t, cfg.electionNamespace, role.Namespace, "the Lease permission is where the Lease is")
}

// applyRBAC creates the objects of deploy/rbac.yaml.
func applyRBAC(t *testing.T, client kubernetes.Interface) []runtime.Object {
	t.Helper()
	ctx := context.Background()
	objs := readManifests(t, "rbac.yaml")
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Namespace:
			_, err = client.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ServiceAccount:
			_, err = client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = client.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("rbac.yaml: unexpected %T", o)
		}
		require.NoError(t, err, "creating %T", o)
	}
	return objs
}

// checkPodHardening checks that the Deployment's pod passes Pod Security
// "restricted", as the admission plugin judges it, and that its preStop
// and grace period fit the drain.
func checkPodHardening(t *testing.T, d *appsv1.Deployment, cfg config) {
	t.Helper()
	pod := d.Spec.Template
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	restricted := api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}
	result := policy.AggregateCheckResults(evaluator.EvaluatePod(restricted, &pod.ObjectMeta, &pod.Spec))
	require.True(t, result.Allowed, "Pod Security restricted: %v", result.ForbiddenReasons)

	// The fields one by one, so that a looser policy version cannot hide
	// a regression.
	require.Len(t, pod.Spec.Containers, 1)
	c := pod.Spec.Containers[0]
	sc := c.SecurityContext
	require.NotNil(t, sc)
	require.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.Spec.SecurityContext.SeccompProfile.Type)
	require.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type)
	require.True(t, *sc.RunAsNonRoot)
	require.True(t, *sc.ReadOnlyRootFilesystem)
	require.False(t, *sc.AllowPrivilegeEscalation)
	require.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	require.Empty(t, sc.Capabilities.Add)
	require.NotZero(t, *pod.Spec.SecurityContext.RunAsUser, "not root")

	// The preStop hook starts the drain and lasts as long as it; the
	// kubelet's grace must cover the drain and the in-flight timeout.
	require.NotNil(t, c.Lifecycle)
	require.NotNil(t, c.Lifecycle.PreStop)
	require.Equal(t, []string{"/controller", "-wait-shutdown"}, c.Lifecycle.PreStop.Exec.Command)
	require.Positive(t, cfg.drain, "a drain period is set")
	grace := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	require.GreaterOrEqual(t, grace, cfg.drain+defaultShutdownTimeout+time.Second,
		"terminationGracePeriodSeconds covers --shutdown-grace-period and the in-flight timeout")

	dockerfile, err := os.ReadFile(filepath.Join("deploy", "Dockerfile"))
	require.NoError(t, err)
	require.Contains(t, string(dockerfile), `ENTRYPOINT ["/controller"]`, "the preStop command is the image's binary")
	require.Contains(t, string(dockerfile), "USER 65532:65532")
}
