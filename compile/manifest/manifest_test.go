package manifest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ramjet.dev/ramjet/compile"
)

// loadedObjects lists "Kind namespace/name" for every object of a snapshot, in
// snapshot order.
func loadedObjects(s *compile.Snapshot) []string {
	var out []string
	for _, ref := range s.Refs() {
		out = append(out, ref.String())
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

func TestLoadManifestFolder(t *testing.T) {
	snap, skipped, err := Load("testdata/load/good")
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
		"ConfigMap default/settings", // the ingress-nginx ConfigMap and those it names (SPEC §1)
	}
	if d := cmp.Diff(want, loadedObjects(snap)); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
	wantSkipped := []string{
		"testdata/load/good/apps/web.yml#1: apps/v1 Deployment default/web skipped",
		"testdata/load/good/apps/web.yml#2: v1 Endpoints web skipped (ramjet reads discovery.k8s.io/v1 EndpointSlice)",
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
	if got := snap.IngressClasses[0].Spec.Controller; got != compile.DefaultControllerName {
		t.Errorf("controller = %q", got)
	}
	if got := snap.Services[1].TypeMeta; got != (metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}) {
		t.Errorf("type meta = %+v", got)
	}
	if got := snap.Secrets[0].TypeMeta; got != (metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}) {
		t.Errorf("typed list item type meta = %+v", got)
	}
}

func TestLoadWalkOrder(t *testing.T) {
	// Lexical walk order, hidden entries and other extensions skipped,
	// extensions matched case-insensitively.
	want := []string{"Service default/a-z", "Service default/a-json", "Service default/b", "Service default/c"}
	for range 3 {
		snap, skipped, err := Load("testdata/load/tree")
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
	snap, _, err := Load("testdata/load/tree/notes.txt", "testdata/load/tree/b.yaml")
	require.NoError(t, err)
	if d := cmp.Diff([]string{"Service default/not-loaded", "Service default/b"}, loadedObjects(snap)); d != "" {
		t.Errorf("explicit files (-want +got):\n%s", d)
	}

	// A file reached twice is read once.
	snap, _, err = Load("testdata/load/tree/./b.yaml", "testdata/load/tree")
	require.NoError(t, err)
	if d := cmp.Diff([]string{"Service default/b", "Service default/a-z", "Service default/a-json", "Service default/c"}, loadedObjects(snap)); d != "" {
		t.Errorf("overlapping paths (-want +got):\n%s", d)
	}
}

func TestLoadSymlinks(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "..data")
	require.NoError(t, os.Mkdir(data, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "svc.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: linked}\n"), 0o644))
	// The layout of a mounted ConfigMap: visible names are links into a
	// hidden directory.
	require.NoError(t, os.Symlink(filepath.Join("..data", "svc.yaml"), filepath.Join(dir, "svc.yaml")))
	require.NoError(t, os.Symlink("..data", filepath.Join(dir, "linked-dir.yaml")))

	snap, _, err := Load(dir)
	require.NoError(t, err)
	if d := cmp.Diff([]string{"Service default/linked"}, loadedObjects(snap)); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
}

// TestLoadSymlinkedRoot: a root given as a link to a folder (a mounted
// volume's path, a case file's include) loads the folder's files under
// the name given, where a walk of the link itself would find none.
func TestLoadSymlinkedRoot(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	require.NoError(t, os.Mkdir(data, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(data, "svc.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: linked}\n"), 0o644))
	link := filepath.Join(dir, "manifests")
	require.NoError(t, os.Symlink("data", link))

	files, err := Files(link)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(link, "svc.yaml")}, files)
	snap, _, err := Load(link)
	require.NoError(t, err)
	if d := cmp.Diff([]string{"Service default/linked"}, loadedObjects(snap)); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
}

func TestLoadReportsEveryBadDocument(t *testing.T) {
	snap, skipped, err := Load("testdata/load/bad", "testdata/load/good")
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
	// The same problems as fields, for callers that word their own.
	at := func(file string, doc, line int) Position {
		return Position{File: "testdata/load/" + file, Document: doc, Item: -1, Line: line}
	}
	first := at("bad/unknown-field.yaml", 1, 1)
	wantFields := []Error{
		{Position: at("bad/duplicate-field.yaml", 1, 1), Kind: "Ingress", Namespace: "prod", Name: "shop"},
		{Position: at("bad/unknown-field.yaml", 2, 10), Kind: "Ingress", Namespace: "prod", Name: "shop", Field: "spec.rules[0].htp"},
		{Position: at("bad/values.yaml", 1, 1)},
		{Position: at("bad/wrong-version.yaml", 1, 1), Kind: "Ingress", Namespace: "prod", Name: "legacy", Field: "apiVersion"},
		{Position: at("good/shop.yaml", 4, 27), Kind: "Service", Namespace: "prod", Name: "shop", Previous: &first},
	}
	if d := cmp.Diff(wantFields, errorFields(t, err)); d != "" {
		t.Errorf("error fields (-want +got):\n%s", d)
	}
	require.ErrorIs(t, err, ErrDefinedTwice)
}

// errorFields lists the *Errors of a joined error without their Err.
func errorFields(t *testing.T, err error) []Error {
	t.Helper()
	var out []Error
	for _, e := range splitJoined(err) {
		var me *Error
		require.ErrorAs(t, e, &me)
		c := *me
		c.Err = nil
		out = append(out, c)
	}
	return out
}

func TestErrorFields(t *testing.T) {
	doc := func(n, line int) Position { return Position{File: "in", Document: n, Item: -1, Line: line} }
	tests := []struct {
		name string
		data string
		want []Error
		msgs []string
	}{
		{
			name: "header fields",
			data: "kind: Service\n---\napiVersion: v1\n---\napiVersion: 1\nkind: Service\n---\napiVersion: a/b/c\nkind: Thing\n",
			want: []Error{
				{Position: doc(1, 1), Field: "apiVersion"},
				{Position: doc(2, 3), Field: "kind"},
				{Position: doc(3, 5), Field: "apiVersion"},
				{Position: doc(4, 8), Field: "apiVersion"},
			},
		},
		{
			name: "one error per unknown field",
			data: "apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: x, bogus: 1}\nspec: {portz: []}\n",
			want: []Error{
				{Position: doc(1, 1), Kind: "Service", Namespace: "x", Name: "a", Field: "metadata.bogus"},
				{Position: doc(1, 1), Kind: "Service", Namespace: "x", Name: "a", Field: "spec.portz"},
			},
			msgs: []string{
				`in document 1 (line 1, Service x/a): strict decoding error: unknown field "metadata.bogus"`,
				`in document 1 (line 1, Service x/a): strict decoding error: unknown field "spec.portz"`,
			},
		},
		{
			name: "a Helm template not rendered",
			data: "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n  labels:\n    {{- toYaml .Values.labels | nindent 4 }}\n",
			want: []Error{{Position: doc(1, 1)}},
			msgs: []string{
				`in document 1 (line 1): yaml: line 5: did not find expected node content; the document holds {{ }}, a template's: render it first (helm template)`,
			},
		},
		{
			// Most of a chart's templates begin with {{- if ... }}:
			// a template, not a JSON stream.
			name: "a Helm template that begins with an action",
			data: "{{- if .Values.enabled }}\napiVersion: v1\nkind: Service\nmetadata:\n  name: a\n{{- end }}\n",
			want: []Error{{Position: doc(1, 1)}},
			msgs: []string{
				`in document 1 (line 1): the document begins with {{ }}, a template's: render it first (helm template)`,
			},
		},
		{
			name: "a Helm template whose actions are quoted",
			data: "apiVersion: v1\nkind: Service\nmetadata:\n  name: \"{{ .Release.Name }}\"\n  namespace: prod\n",
			want: []Error{{Position: doc(1, 1), Kind: "Service", Namespace: "prod", Name: "{{ .Release.Name }}", Field: "metadata.name"}},
			msgs: []string{
				`in document 1 (line 1, Service prod/{{ .Release.Name }}): metadata.name "{{ .Release.Name }}" holds {{ }}, a template's: render it first (helm template)`,
			},
		},
		{
			name: "a Secret value that is not base64",
			data: "apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: x}\ntype: kubernetes.io/tls\ndata: {tls.crt: aGk=, tls.key: '!!!'}\n",
			want: []Error{
				{Position: doc(1, 1), Kind: "Secret", Namespace: "x", Name: "s", Field: "data[tls.key]"},
			},
			msgs: []string{
				`in document 1 (line 1, Secret x/s): data[tls.key]: illegal base64 data at input byte 0 (stringData takes a value as it is)`,
			},
		},
		{
			name: "missing name, and a duplicate in a List",
			data: "apiVersion: v1\nkind: Secret\nmetadata: {namespace: x}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n",
			want: []Error{
				{Position: doc(1, 1), Kind: "Secret", Field: "metadata.name"},
				{
					Position: Position{File: "in", Document: 2, Item: 1, Line: 5}, Kind: "Secret", Namespace: "default", Name: "s",
					Previous: &Position{File: "in", Document: 2, Item: 0, Line: 5},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Decode("in", []byte(tt.data))
			require.Error(t, err)
			if d := cmp.Diff(tt.want, errorFields(t, err)); d != "" {
				t.Errorf("error fields (-want +got):\n%s", d)
			}
			if tt.msgs != nil {
				if d := cmp.Diff(tt.msgs, loadErrors(err)); d != "" {
					t.Errorf("messages (-want +got):\n%s", d)
				}
			}
		})
	}
}

func TestLoadMissingPath(t *testing.T) {
	_, _, err := Load("testdata/load/nonexistent")
	require.ErrorContains(t, err, "testdata/load/nonexistent")
	require.ErrorIs(t, err, os.ErrNotExist)
	if d := cmp.Diff([]Error{{Position: Position{File: "testdata/load/nonexistent", Item: -1}}}, errorFields(t, err)); d != "" {
		t.Errorf("error fields (-want +got):\n%s", d)
	}

	_, _, err = Load()
	require.EqualError(t, err, "manifest: no files or directories given")
}

func TestDecode(t *testing.T) {
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
			name: "invalid JSON stops the stream, and says so",
			data: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}} {"apiVersion": }` + "\n" + `{"apiVersion":"v1","kind":"Service","metadata":{"name":"b"}}`,
			errs: []string{`in document 2 (line 1): invalid JSON: invalid character '}' looking for beginning of value; the rest of the stream is not read`},
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
				`in document 4 (line 11): not a Kubernetes object: want a mapping with apiVersion and kind, got a list`,
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
			// kubectl refuses them ("no matches for kind"): a typo must
			// not drop an Ingress as a skipped kind would.
			name: "a kind its group does not have",
			data: "apiVersion: networking.k8s.io/v1\nkind: Ingres\nmetadata: {name: a, namespace: x}\n---\napiVersion: v1\nkind: service\nmetadata: {name: b}\n---\napiVersion: v1\nkind: Deployment\nmetadata: {name: d}\n",
			errs: []string{
				`in document 1 (line 1, Ingres x/a): kind Ingres: networking.k8s.io/v1 has no such kind`,
				`in document 2 (line 5, service b): kind service: v1 has no such kind`,
				`in document 3 (line 9, Deployment d): kind Deployment: v1 has no such kind`,
			},
		},
		{
			name:    "kinds of a read group that ramjet does not read are skipped",
			data:    "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: np}\n---\napiVersion: v1\nkind: NamespaceList\nitems: []\n",
			skipped: []string{"in#1: networking.k8s.io/v1 NetworkPolicy np skipped", "in#2: v1 NamespaceList  skipped"},
		},
		{
			name: "a field of the wrong type is named",
			data: "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec:\n  ports:\n  - port: \"80\"\n---\napiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nspec:\n  rules:\n  - http:\n      paths:\n      - backend: {service: {name: s, port: {number: x}}}\n",
			errs: []string{
				`in document 1 (line 1, Service default/a): spec.ports.port: want int32, got a string`,
				`in document 2 (line 8, Ingress default/i): spec.rules.http.paths.backend.service.port.number: want int32, got a string`,
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
			data: "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n--- foo\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
			errs: []string{`in document 2 (line 4): invalid document separator "--- foo": only a comment may follow "---"; this document is not read`},
		},
		{
			name:    "CRLF line endings",
			data:    "apiVersion: v1\r\nkind: Service\r\nmetadata: {name: a}\r\n---\r\napiVersion: v1\r\nkind: Service\r\nmetadata: {name: b}\r\n",
			objects: []string{"Service default/a", "Service default/b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, skipped, err := Decode("in", []byte(tt.data))
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
		snap, skipped, err := Decode("in", data)
		snap2, skipped2, err2 := Decode("in", data)
		if fmt.Sprint(err) != fmt.Sprint(err2) || !cmp.Equal(skipped, skipped2) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if snap != nil || skipped != nil {
				t.Fatal("snapshot returned with an error")
			}
			for _, e := range splitJoined(err) {
				var de *Error
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

// TestReaderKeepsFilesBesideABrokenLink: a link whose target is gone (a
// file removed under a link farm) is that file's error; the other files of
// the folder are still listed and read, as by a Reader that serves what
// it can.
func TestReaderKeepsFilesBesideABrokenLink(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.yaml"), []byte("apiVersion: v1\nkind: Service\nmetadata: {name: kept}\n"), 0o644))
	gone := filepath.Join(dir, "a.yaml")
	require.NoError(t, os.Symlink("missing.yaml", gone))

	files, err := Files(dir)
	require.NoError(t, err)
	require.Equal(t, []string{gone, filepath.Join(dir, "b.yaml")}, files)
	r := NewReader()
	err = r.Load(dir)
	require.ErrorIs(t, err, os.ErrNotExist)
	if d := cmp.Diff([]Error{{Position: Position{File: gone, Item: -1}}}, errorFields(t, err)); d != "" {
		t.Errorf("error fields (-want +got):\n%s", d)
	}
	snap, _ := r.Snapshot()
	if d := cmp.Diff([]string{"Service default/kept"}, loadedObjects(snap)); d != "" {
		t.Errorf("objects (-want +got):\n%s", d)
	}
}
