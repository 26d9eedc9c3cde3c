package compile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// loadedObjects lists "Kind namespace/name" for every object of a snapshot, in
// snapshot order.
func loadedObjects(s *Snapshot) []string {
	var out []string
	for _, o := range s.Ingresses {
		out = append(out, "Ingress "+o.Namespace+"/"+o.Name)
	}
	for _, o := range s.IngressClasses {
		out = append(out, "IngressClass "+o.Name)
	}
	for _, o := range s.Services {
		out = append(out, "Service "+o.Namespace+"/"+o.Name)
	}
	for _, o := range s.EndpointSlices {
		out = append(out, "EndpointSlice "+o.Namespace+"/"+o.Name)
	}
	for _, o := range s.Secrets {
		out = append(out, "Secret "+o.Namespace+"/"+o.Name)
	}
	return out
}

// loadErrors splits a joined error into its messages.
func loadErrors(err error) []string {
	if err == nil {
		return nil
	}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		var out []string
		for _, e := range joined.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}

func TestLoadFilesManifestFolder(t *testing.T) {
	snap, skipped, err := LoadFiles("testdata/load/good")
	require.NoError(t, err)

	want := []string{
		"Ingress default/web",
		"Ingress prod/shop",
		"IngressClass ramjet",
		"Service default/web",
		"Service prod/shop",
		"EndpointSlice prod/shop-abc12",
		"Secret default/web-tls",
		"Secret prod/shop-tls",
	}
	if d := cmp.Diff(want, loadedObjects(snap)); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
	wantSkipped := []string{
		"testdata/load/good/apps/web.yml#1: apps/v1 Deployment default/web skipped",
		"testdata/load/good/apps/web.yml#2: v1 Endpoints web skipped (ramjet reads discovery.k8s.io/v1 EndpointSlice)",
		"testdata/load/good/list.json#1 items[1]: v1 ConfigMap default/settings skipped",
	}
	if d := cmp.Diff(wantSkipped, skipped); d != "" {
		t.Errorf("skipped (-want +got):\n%s", d)
	}

	// Fields survive decoding, and the API server's write-time behaviour
	// that compile relies on is reproduced.
	shop := snap.Ingresses[1]
	require.Len(t, shop.Spec.Rules, 1)
	require.NotNil(t, shop.Spec.Rules[0].HTTP)
	require.Len(t, shop.Spec.Rules[0].HTTP.Paths, 1)
	path := shop.Spec.Rules[0].HTTP.Paths[0]
	if path.PathType == nil || *path.PathType != networkingv1.PathTypePrefix {
		t.Errorf("pathType = %v, want Prefix", path.PathType)
	}
	if got := path.Backend.Service.Port.Number; got != 80 {
		t.Errorf("backend port = %d, want 80", got)
	}
	if d := cmp.Diff([]networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}, SecretName: "shop-tls"}}, shop.Spec.TLS); d != "" {
		t.Errorf("tls (-want +got):\n%s", d)
	}
	if got := snap.Ingresses[0].Spec.DefaultBackend.Service.Port.Name; got != "http" {
		t.Errorf("default backend port name = %q, want http", got)
	}
	slice := snap.EndpointSlices[0]
	require.Len(t, slice.Endpoints, 2)
	if c := slice.Endpoints[1].Conditions.Ready; c == nil || *c {
		t.Errorf("second endpoint ready = %v, want false", c)
	}
	if slice.AddressType != discoveryv1.AddressTypeIPv4 {
		t.Errorf("addressType = %q", slice.AddressType)
	}
	secret := snap.Secrets[1]
	if d := cmp.Diff(map[string][]byte{"tls.crt": []byte("CERT"), "tls.key": []byte("KEY")}, secret.Data); d != "" {
		t.Errorf("secret data (stringData merged) (-want +got):\n%s", d)
	}
	if secret.StringData != nil {
		t.Errorf("stringData = %v, want merged into data", secret.StringData)
	}
	if got := snap.IngressClasses[0].Spec.Controller; got != DefaultControllerName {
		t.Errorf("controller = %q", got)
	}
	if got := snap.Services[1].TypeMeta; got != (metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}) {
		t.Errorf("type meta = %+v", got)
	}
	if got := snap.Secrets[0].TypeMeta; got != (metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}) {
		t.Errorf("typed list item type meta = %+v", got)
	}
}

func TestLoadFilesWalkOrder(t *testing.T) {
	// Lexical walk order, hidden entries and other extensions skipped,
	// extensions matched case-insensitively.
	want := []string{"Service default/a-z", "Service default/a-json", "Service default/b", "Service default/c"}
	for range 3 {
		snap, skipped, err := LoadFiles("testdata/load/tree")
		require.NoError(t, err)
		if d := cmp.Diff(want, loadedObjects(snap)); d != "" {
			t.Fatalf("objects (-want +got):\n%s", d)
		}
		if len(skipped) != 0 {
			t.Errorf("skipped = %q", skipped)
		}
	}

	// Paths are read in the order given; a file named explicitly is read
	// whatever its extension.
	snap, _, err := LoadFiles("testdata/load/tree/notes.txt", "testdata/load/tree/b.yaml")
	require.NoError(t, err)
	if d := cmp.Diff([]string{"Service default/not-loaded", "Service default/b"}, loadedObjects(snap)); d != "" {
		t.Errorf("explicit files (-want +got):\n%s", d)
	}

	// A file reached twice is read once.
	snap, _, err = LoadFiles("testdata/load/tree/./b.yaml", "testdata/load/tree")
	require.NoError(t, err)
	if d := cmp.Diff([]string{"Service default/b", "Service default/a-z", "Service default/a-json", "Service default/c"}, loadedObjects(snap)); d != "" {
		t.Errorf("overlapping paths (-want +got):\n%s", d)
	}
}

func TestLoadFilesSymlinks(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "..data")
	require.NoError(t, os.Mkdir(data, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "svc.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: linked}\n"), 0o644))
	// The layout of a mounted ConfigMap: visible names are links into a
	// hidden directory.
	require.NoError(t, os.Symlink(filepath.Join("..data", "svc.yaml"), filepath.Join(dir, "svc.yaml")))
	require.NoError(t, os.Symlink("..data", filepath.Join(dir, "linked-dir.yaml")))

	snap, _, err := LoadFiles(dir)
	require.NoError(t, err)
	if d := cmp.Diff([]string{"Service default/linked"}, loadedObjects(snap)); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
}

func TestLoadFilesReportsEveryBadDocument(t *testing.T) {
	snap, skipped, err := LoadFiles("testdata/load/bad", "testdata/load/good")
	require.Error(t, err)
	if snap != nil || skipped != nil {
		t.Errorf("got a snapshot (%v) or skip list (%q) alongside an error", snap, skipped)
	}
	want := []string{
		`testdata/load/bad/duplicate-field.yaml document 1 (line 1, Ingress prod/shop): strict decoding error: line 9: key "host" already set in map`,
		`testdata/load/bad/unknown-field.yaml document 2 (line 10, Ingress prod/shop): strict decoding error: unknown field "spec.rules[0].htp"`,
		`testdata/load/bad/values.yaml document 1 (line 1): missing apiVersion and kind: not a Kubernetes object`,
		`testdata/load/bad/wrong-version.yaml document 1 (line 1, Ingress prod/legacy): networking.k8s.io/v1beta1 Ingress is not supported: ramjet reads networking.k8s.io/v1 Ingress`,
		// A good file can still clash with a bad one.
		`testdata/load/good/shop.yaml document 4 (line 27, Service prod/shop): defined twice: first at testdata/load/bad/unknown-field.yaml document 1`,
	}
	if d := cmp.Diff(want, loadErrors(err)); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
	var de *DocumentError
	require.ErrorAs(t, err, &de)
	if de.File != "testdata/load/bad/duplicate-field.yaml" || de.Document != 1 || de.Object != "Ingress prod/shop" {
		t.Errorf("first DocumentError = %+v", de)
	}
}

func TestLoadFilesMissingPath(t *testing.T) {
	_, _, err := LoadFiles("testdata/load/nonexistent")
	require.ErrorContains(t, err, "testdata/load/nonexistent")
	require.ErrorIs(t, err, os.ErrNotExist)

	_, _, err = LoadFiles()
	require.Error(t, err)
}

func TestDecodeObjects(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		objects []string
		skipped []string
		errs    []string
	}{
		{
			name: "empty stream",
			data: "",
		},
		{
			name: "only comments and separators",
			data: "# nothing here\n---\n---\n# still nothing\n",
		},
		{
			name: "JSON stream of several objects",
			data: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a","namespace":"x"}}
			{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"x"}}
			null
			{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`,
			objects: []string{"Service x/a", "Secret x/s"},
			skipped: []string{"in#4: apps/v1 Deployment d skipped"},
		},
		{
			name: "JSON unknown and duplicate fields",
			data: "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"a\"},\"spec\":{\"portz\":[]}}\n\n" +
				`{"apiVersion":"v1","kind":"Service","metadata":{"name":"b","name":"c"}}`,
			errs: []string{
				`in document 1 (line 1, Service default/a): strict decoding error: unknown field "spec.portz"`,
				`in document 2 (line 3, Service default/c): strict decoding error: duplicate field "metadata.name"`,
			},
		},
		{
			name: "invalid JSON stops the stream",
			data: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}} {"apiVersion": }`,
			errs: []string{`in document 2 (line 1): invalid JSON: invalid character '}' looking for beginning of value`},
		},
		{
			name: "YAML syntax error names the line in the stream",
			data: "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n   namespace: x\n",
			errs: []string{`in document 2 (line 5): yaml: line 9: mapping values are not allowed in this context`},
		},
		{
			name: "one error per bad document, good ones still checked",
			data: "kind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: ok}\n---\n- a\n- b\n---\njust a string\n---\napiVersion: a/b/c\nkind: Thing\n---\napiVersion: 1\nkind: Service\n",
			errs: []string{
				`in document 1 (line 1): Service: missing apiVersion`,
				`in document 2 (line 4): v1: missing kind`,
				`in document 4 (line 11): not a Kubernetes object: want a mapping with apiVersion and kind, got a array`,
				`in document 5 (line 14): not a Kubernetes object: want a mapping with apiVersion and kind, got a string`,
				`in document 6 (line 16): apiVersion "a/b/c": want group/version or version`,
				`in document 7 (line 19): apiVersion: want a string, got 1`,
			},
		},
		{
			name: "old API versions of the kinds ramjet reads",
			data: "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a, namespace: x}\n---\napiVersion: discovery.k8s.io/v1beta1\nkind: EndpointSlice\nmetadata: {name: e}\n---\napiVersion: networking.k8s.io/v1beta1\nkind: IngressList\nitems: []\n---\napiVersion: networking.k8s.io/v1alpha1\nkind: IngressClass\nmetadata: {name: c}\n",
			errs: []string{
				`in document 1 (line 1, Ingress x/a): extensions/v1beta1 Ingress is not supported: ramjet reads networking.k8s.io/v1 Ingress`,
				`in document 2 (line 5, EndpointSlice e): discovery.k8s.io/v1beta1 EndpointSlice is not supported: ramjet reads discovery.k8s.io/v1 EndpointSlice`,
				`in document 3 (line 9, IngressList): networking.k8s.io/v1beta1 IngressList is not supported: ramjet reads networking.k8s.io/v1 IngressList`,
				`in document 4 (line 13, IngressClass c): networking.k8s.io/v1alpha1 IngressClass is not supported: ramjet reads networking.k8s.io/v1 IngressClass`,
			},
		},
		{
			name: "same-named kinds of other groups are skipped",
			data: "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: hello, namespace: x}\n",
			skipped: []string{
				"in#1: serving.knative.dev/v1 Service x/hello skipped",
			},
		},
		{
			name: "name required, duplicates rejected",
			data: "apiVersion: v1\nkind: Service\nmetadata: {namespace: x}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: default}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: a}\n",
			errs: []string{
				`in document 1 (line 1, Service): metadata.name is required`,
				`in document 3 (line 9, Service default/a): defined twice: first at in document 2`,
			},
		},
		{
			name: "List items are checked one by one",
			data: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Service\n  metadata: {name: b}\n  spec: {bogus: 1}\n- apiVersion: networking.k8s.io/v1beta1\n  kind: Ingress\n  metadata: {name: c}\n",
			errs: []string{
				`in document 1 items[1] (line 1, Service default/b): strict decoding error: unknown field "spec.bogus"`,
				`in document 1 items[2] (line 1, Ingress c): networking.k8s.io/v1beta1 Ingress is not supported: ramjet reads networking.k8s.io/v1 Ingress`,
			},
		},
		{
			name: "List wrapper is strict too",
			data: "apiVersion: v1\nkind: List\nitemz: []\n",
			errs: []string{`in document 1 (line 1, List): strict decoding error: unknown field "itemz"`},
		},
		{
			name:    "typed list",
			data:    `{"apiVersion":"networking.k8s.io/v1","kind":"IngressList","items":[{"metadata":{"name":"a","namespace":"x"}},{"metadata":{"name":"b"}}]}`,
			objects: []string{"Ingress x/a", "Ingress default/b"},
		},
		{
			name:    "cluster-scoped IngressClass keeps no namespace",
			data:    "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: c, namespace: x}\nspec: {controller: example.com/other}\n",
			objects: []string{"IngressClass c"},
		},
		{
			name: "invalid document separator",
			data: "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n--- foo\n",
			errs: []string{`in document 1 (line 1): invalid Yaml document separator: foo`},
		},
		{
			name:    "CRLF line endings",
			data:    "apiVersion: v1\r\nkind: Service\r\nmetadata: {name: a}\r\n---\r\napiVersion: v1\r\nkind: Service\r\nmetadata: {name: b}\r\n",
			objects: []string{"Service default/a", "Service default/b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, skipped, err := DecodeObjects("in", []byte(tt.data))
			if d := cmp.Diff(tt.errs, loadErrors(err)); d != "" {
				t.Fatalf("errors (-want +got):\n%s", d)
			}
			if err != nil {
				require.Nil(t, snap)
				return
			}
			require.NotNil(t, snap)
			if d := cmp.Diff(tt.objects, loadedObjects(snap)); d != "" {
				t.Errorf("objects (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.skipped, skipped); d != "" {
				t.Errorf("skipped (-want +got):\n%s", d)
			}
		})
	}
}

func TestSnapshotAdd(t *testing.T) {
	var s Snapshot
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "i", Namespace: "n"}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "n"}}
	require.NoError(t, s.Add(ing, svc,
		&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}},
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "n"}},
	))
	want := []string{"Ingress n/i", "IngressClass c", "Service n/s", "EndpointSlice n/e", "Secret n/t"}
	if d := cmp.Diff(want, loadedObjects(&s)); d != "" {
		t.Fatalf("objects (-want +got):\n%s", d)
	}
	require.Same(t, ing, s.Ingresses[0])

	bad := []struct {
		name string
		objs []runtime.Object
		msg  string
	}{
		{"unsupported type", []runtime.Object{svc, &corev1.ConfigMap{}}, "snapshot: object 1 is a *v1.ConfigMap"},
		{"nil pointer", []runtime.Object{(*corev1.Service)(nil)}, "snapshot: object 0 is a nil *v1.Service"},
		{"nil interface", []runtime.Object{nil}, "snapshot: object 0 is a <nil>"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Add(tt.objs...)
			require.ErrorContains(t, err, tt.msg)
			// Nothing is added when any object is rejected.
			if d := cmp.Diff(want, loadedObjects(&s)); d != "" {
				t.Errorf("objects after rejected Add (-want +got):\n%s", d)
			}
		})
	}
}

func TestSnapshotMerge(t *testing.T) {
	a, _, err := DecodeObjects("a", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: a}\n"))
	require.NoError(t, err)
	b, _, err := DecodeObjects("b", []byte("apiVersion: v1\nkind: Service\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n"))
	require.NoError(t, err)
	a.Merge(b)
	a.Merge(nil)
	if d := cmp.Diff([]string{"Service default/a", "Service default/b", "Secret default/b"}, loadedObjects(a)); d != "" {
		t.Errorf("merged (-want +got):\n%s", d)
	}
}

func FuzzDecodeObjects(f *testing.F) {
	for _, p := range []string{
		"testdata/load/good/shop.yaml", "testdata/load/good/list.json", "testdata/load/good/apps/web.yml",
		"testdata/load/bad/unknown-field.yaml", "testdata/load/bad/duplicate-field.yaml",
	} {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: a}}\n"))
	f.Add([]byte(`{"apiVersion":"networking.k8s.io/v1","kind":"IngressList","items":[{"metadata":{"name":"a"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, skipped, err := DecodeObjects("in", data)
		snap2, skipped2, err2 := DecodeObjects("in", data)
		if fmt.Sprint(err) != fmt.Sprint(err2) || !cmp.Equal(skipped, skipped2) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if snap != nil || skipped != nil {
				t.Fatal("snapshot returned with an error")
			}
			for _, e := range splitJoined(err) {
				var de *DocumentError
				if !errors.As(e, &de) || de.Document < 1 || de.Line < 1 {
					t.Fatalf("error without a document location: %v", e)
				}
			}
			return
		}
		if !cmp.Equal(loadedObjects(snap), loadedObjects(snap2)) {
			t.Fatal("objects not deterministic")
		}
		for _, o := range snap.Ingresses {
			if o.Name == "" || o.Namespace == "" {
				t.Fatalf("Ingress without name or namespace: %q/%q", o.Namespace, o.Name)
			}
		}
		for _, o := range snap.Services {
			if o.Name == "" || o.Namespace == "" {
				t.Fatalf("Service without name or namespace: %q/%q", o.Namespace, o.Name)
			}
		}
	})
}

func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
