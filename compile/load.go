package compile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The loader reads manifests as kubectl would apply them, so that a folder
// of YAML can stand in for a cluster. It is strict where a typo could
// silently change routing (unknown or duplicate fields, an Ingress of an old
// API version) and lenient about everything ramjet does not read (skipped,
// and listed so the caller can show it).

// Add appends objects to the snapshot by type. It accepts only the five
// kinds of SPEC §1, as pointers; on an unsupported or nil object it adds
// nothing and names the offender.
func (s *Snapshot) Add(objs ...runtime.Object) error {
	for i, obj := range objs {
		supported, isNil := snapshotKind(obj)
		switch {
		case !supported:
			return fmt.Errorf("snapshot: object %d is a %T: want *v1.Ingress, *v1.IngressClass, *v1.Service, *v1.EndpointSlice or *v1.Secret", i, obj)
		case isNil:
			return fmt.Errorf("snapshot: object %d is a nil %T", i, obj)
		}
	}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *networkingv1.Ingress:
			s.Ingresses = append(s.Ingresses, o)
		case *networkingv1.IngressClass:
			s.IngressClasses = append(s.IngressClasses, o)
		case *corev1.Service:
			s.Services = append(s.Services, o)
		case *discoveryv1.EndpointSlice:
			s.EndpointSlices = append(s.EndpointSlices, o)
		case *corev1.Secret:
			s.Secrets = append(s.Secrets, o)
		}
	}
	return nil
}

// snapshotKind reports whether a Snapshot holds obj's type, and whether
// obj is a nil pointer of it.
func snapshotKind(obj runtime.Object) (supported, isNil bool) {
	switch o := obj.(type) {
	case *networkingv1.Ingress:
		return true, o == nil
	case *networkingv1.IngressClass:
		return true, o == nil
	case *corev1.Service:
		return true, o == nil
	case *discoveryv1.EndpointSlice:
		return true, o == nil
	case *corev1.Secret:
		return true, o == nil
	}
	return false, false
}

// Merge appends every object of o to s. A nil o adds nothing.
func (s *Snapshot) Merge(o *Snapshot) {
	if o == nil {
		return
	}
	s.Ingresses = append(s.Ingresses, o.Ingresses...)
	s.IngressClasses = append(s.IngressClasses, o.IngressClasses...)
	s.Services = append(s.Services, o.Services...)
	s.EndpointSlices = append(s.EndpointSlices, o.EndpointSlices...)
	s.Secrets = append(s.Secrets, o.Secrets...)
}

// DocumentError is one document (or one item of a List document) that could
// not be loaded. LoadFiles and DecodeObjects return every DocumentError they
// find, joined with errors.Join.
type DocumentError struct {
	File     string // the path, or the name given to DecodeObjects
	Document int    // 1-based position in the stream
	Item     int    // index within a List document, or -1
	Line     int    // first line of the document in the stream; 0 when unknown
	Object   string // "Ingress prod/shop" when the header could be read
	Err      error
}

func (e *DocumentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s document %d", e.File, e.Document)
	if e.Item >= 0 {
		fmt.Fprintf(&b, " items[%d]", e.Item)
	}
	var ctx []string
	if e.Line > 0 {
		ctx = append(ctx, "line "+strconv.Itoa(e.Line))
	}
	if e.Object != "" {
		ctx = append(ctx, e.Object)
	}
	if len(ctx) > 0 {
		b.WriteString(" (" + strings.Join(ctx, ", ") + ")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *DocumentError) Unwrap() error { return e.Err }

// LoadFiles reads manifests from files and directories. A directory is
// walked recursively for files ending in .yaml, .yml or .json, in lexical
// order, skipping entries whose name begins with "." (editor and
// ConfigMap-mount bookkeeping); symbolic links to files are followed,
// links to directories are not. A file named explicitly is read whatever
// its extension.
//
// Objects are kept as the API server would store them: a namespaced object
// without a namespace is in "default" (as kubectl applies it), and a
// Secret's stringData is merged into its data. Two objects of the same
// kind, namespace and name are an error, wherever they are.
//
// It returns the snapshot and one line per object of a kind ramjet does not
// read. If any document is bad it returns no snapshot and an error listing
// every bad document (see DocumentError): a half-read folder must never be
// served as if it were whole.
func LoadFiles(paths ...string) (*Snapshot, []string, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("load: no files or directories given")
	}
	var files []string
	var errs []error
	listed := make(map[string]bool)
	for _, p := range paths {
		found, err := ManifestFiles(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range found {
			// A file named twice (itself and through its directory) is
			// read once rather than reported as duplicate objects.
			if key := filepath.Clean(f); !listed[key] {
				listed[key] = true
				files = append(files, f)
			}
		}
	}
	d := newDecoder()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fmt.Errorf("load: %w", err))
			continue
		}
		d.stream(f, data)
	}
	errs = append(errs, d.errs...)
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return d.snap, d.skipped, nil
}

// DecodeObjects reads one stream of manifests: YAML documents separated by
// "---", or a sequence of JSON objects. name stands for the stream in
// errors and skip lines. Documents are decoded and checked as by LoadFiles,
// which returns an error listing every bad document, and then no snapshot.
func DecodeObjects(name string, data []byte) (*Snapshot, []string, error) {
	d := newDecoder()
	d.stream(name, data)
	if len(d.errs) > 0 {
		return nil, nil, errors.Join(d.errs...)
	}
	return d.snap, d.skipped, nil
}

// ManifestFiles lists the files LoadFiles reads for root: root itself when
// it is a file, else every .yaml, .yml and .json file below it in lexical
// order, skipping names that begin with "." and following symbolic links
// to regular files. A watcher that polls a folder uses it to see exactly
// the files the loader reads.
func ManifestFiles(root string) ([]string, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if !info.IsDir() {
		return []string{root}, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isManifestName(d.Name()) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Stat(path)
			if err != nil {
				return err
			}
			if !target.Mode().IsRegular() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return files, nil
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// strictDecoder decodes the five kinds and their lists strictly: an unknown
// field or a field given twice is an error, never silently dropped.
var strictDecoder = sync.OnceValue(func() *kjson.Serializer {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, networkingv1.AddToScheme, discoveryv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err) // static registration; cannot fail for these groups
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Strict: true})
})

var (
	ingressGVK       = networkingv1.SchemeGroupVersion.WithKind("Ingress")
	ingressClassGVK  = networkingv1.SchemeGroupVersion.WithKind("IngressClass")
	serviceGVK       = corev1.SchemeGroupVersion.WithKind("Service")
	secretGVK        = corev1.SchemeGroupVersion.WithKind("Secret")
	endpointSliceGVK = discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice")
	listGVK          = corev1.SchemeGroupVersion.WithKind("List")
)

// readKinds are what a snapshot holds, and whether each is namespaced.
var readKinds = map[schema.GroupVersionKind]bool{
	ingressGVK:       true,
	ingressClassGVK:  false,
	serviceGVK:       true,
	secretGVK:        true,
	endpointSliceGVK: true,
}

// supportedVersion names the one version ramjet reads for each kind it
// reads, keyed by every group the kind has been served from: an object of
// such a kind in another version is an error, not a skip, because skipping
// it would silently drop routes.
var supportedVersion = map[schema.GroupKind]schema.GroupVersionKind{
	{Group: "networking.k8s.io", Kind: "Ingress"}:      ingressGVK,
	{Group: "extensions", Kind: "Ingress"}:             ingressGVK,
	{Group: "networking.k8s.io", Kind: "IngressClass"}: ingressClassGVK,
	{Group: "", Kind: "Service"}:                       serviceGVK,
	{Group: "", Kind: "Secret"}:                        secretGVK,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: endpointSliceGVK,
}

type location struct {
	file     string
	document int
	item     int
	line     int
}

func (l location) String() string {
	s := l.file + "#" + strconv.Itoa(l.document)
	if l.item >= 0 {
		s += " items[" + strconv.Itoa(l.item) + "]"
	}
	return s
}

type decoder struct {
	snap    *Snapshot
	skipped []string
	errs    []error
	seen    map[string]location // "Kind namespace/name" → where first defined
}

func newDecoder() *decoder {
	return &decoder{snap: &Snapshot{}, seen: make(map[string]location)}
}

func (d *decoder) fail(loc location, object string, err error) {
	d.errs = append(d.errs, &DocumentError{
		File: loc.file, Document: loc.document, Item: loc.item, Line: loc.line, Object: object, Err: err,
	})
}

// stream splits data into documents and decodes each.
func (d *decoder) stream(name string, data []byte) {
	if utilyaml.IsJSONBuffer(data) {
		d.jsonStream(name, data)
		return
	}
	d.yamlStream(name, data)
}

func (d *decoder) jsonStream(name string, data []byte) {
	dec := json.NewDecoder(bytes.NewReader(data))
	end := 0
	for n := 1; ; n++ {
		start := end
		for start < len(data) && isJSONSpace(data[start]) {
			start++
		}
		loc := location{file: name, document: n, item: -1, line: 1 + bytes.Count(data[:start], []byte("\n"))}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return
			}
			// The rest of the stream cannot be split reliably.
			d.fail(loc, "", fmt.Errorf("invalid JSON: %w", err))
			return
		}
		end = int(dec.InputOffset())
		d.document(loc, raw, nil)
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (d *decoder) yamlStream(name string, data []byte) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	lines := bytes.SplitAfter(data, []byte("\n"))
	cursor := 0 // index into lines of the first line not yet consumed
	for n := 1; ; n++ {
		for cursor < len(lines) && isYAMLSeparator(lines[cursor]) {
			cursor++
		}
		loc := location{file: name, document: n, item: -1, line: cursor + 1}
		doc, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			d.fail(loc, "", err)
			return
		}
		cursor += bytes.Count(doc, []byte("\n"))
		jsonData, err := utilyaml.ToJSON(doc)
		if err != nil {
			d.fail(loc, "", errors.New(yamlMessage(err, loc.line)))
			continue
		}
		d.document(loc, jsonData, doc)
	}
}

// isYAMLSeparator mirrors the document separator rule of utilyaml.YAMLReader.
func isYAMLSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// yamlMessage flattens a YAML parser error onto one line and rewrites its
// document-relative line numbers into line numbers of the whole stream.
func yamlMessage(err error, first int) string {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.Replace(msg, "yaml: unmarshal errors:\n", "", 1)
	parts := strings.Split(msg, "\n")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	msg = strings.Join(parts, "; ")
	return yamlLine.ReplaceAllStringFunc(msg, func(s string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(s, "line "))
		if err != nil || first < 1 {
			return s
		}
		return "line " + strconv.Itoa(first+n-1)
	})
}

// header is read leniently first, so that every later error can name the
// object even when its body does not decode.
type header struct {
	gvk       schema.GroupVersionKind
	name      string
	namespace string
}

func readHeader(data []byte) (header, bool, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return header{}, false, fmt.Errorf("not a Kubernetes object: want a mapping with apiVersion and kind, got a %s", typeErr.Value)
		}
		return header{}, false, err
	}
	if top == nil { // "null": an empty document
		return header{}, true, nil
	}
	var apiVersion, kind string
	for _, f := range []struct {
		key string
		dst *string
	}{{"apiVersion", &apiVersion}, {"kind", &kind}} {
		if raw, ok := top[f.key]; ok {
			if err := json.Unmarshal(raw, f.dst); err != nil {
				return header{}, false, fmt.Errorf("%s: want a string, got %s", f.key, raw)
			}
		}
	}
	switch {
	case apiVersion == "" && kind == "":
		return header{}, false, errors.New("missing apiVersion and kind: not a Kubernetes object")
	case apiVersion == "":
		return header{}, false, fmt.Errorf("%s: missing apiVersion", kind)
	case kind == "":
		return header{}, false, fmt.Errorf("%s: missing kind", apiVersion)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return header{}, false, fmt.Errorf("apiVersion %q: want group/version or version", apiVersion)
	}
	h := header{gvk: gv.WithKind(kind)}
	var md struct {
		Name      any `json:"name"`
		Namespace any `json:"namespace"`
	}
	if raw, ok := top["metadata"]; ok && json.Unmarshal(raw, &md) == nil {
		h.name, _ = md.Name.(string)
		h.namespace, _ = md.Namespace.(string)
	}
	return h, false, nil
}

// objectLabel is "Kind namespace/name", or less where parts are unknown.
func objectLabel(kind, namespace, name string) string {
	if name == "" {
		return kind
	}
	return kind + " " + objectName(namespace, name)
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// document decodes one JSON document. yamlSource is the document as
// written when it was YAML, for duplicate-key detection with line numbers.
func (d *decoder) document(loc location, data, yamlSource []byte) {
	h, empty, err := readHeader(data)
	if err != nil {
		d.fail(loc, "", err)
		return
	}
	if empty {
		return
	}
	gvk := h.gvk
	namespaced, read := readKinds[gvk]
	itemKind, typedList := strings.CutSuffix(gvk.Kind, "List")
	if typedList {
		_, typedList = readKinds[gvk.GroupVersion().WithKind(itemKind)]
	}
	isList := gvk == listGVK || typedList
	if !read && !isList {
		gk := gvk.GroupKind()
		if itemKind != "" {
			gk.Kind = itemKind
		}
		if want, ours := supportedVersion[gk]; ours {
			d.fail(loc, objectLabel(gvk.Kind, h.namespace, h.name),
				fmt.Errorf("%s %s is not supported: ramjet reads %s %s", gvk.GroupVersion(), gvk.Kind, want.GroupVersion(), gvk.Kind))
			return
		}
		line := fmt.Sprintf("%s: %s %s %s skipped", loc, gvk.GroupVersion(), gvk.Kind, objectName(h.namespace, h.name))
		if gvk == corev1.SchemeGroupVersion.WithKind("Endpoints") {
			line += " (ramjet reads discovery.k8s.io/v1 EndpointSlice)"
		}
		d.skipped = append(d.skipped, line)
		return
	}
	object := objectLabel(gvk.Kind, h.namespace, h.name)
	if read && namespaced && h.namespace == "" {
		object = objectLabel(gvk.Kind, metav1.NamespaceDefault, h.name)
	}
	if isList {
		object = gvk.Kind
	}
	if yamlSource != nil {
		// YAML→JSON conversion keeps the last of duplicate keys; only the
		// strict YAML parser sees them.
		var tree any
		if err := utilyaml.UnmarshalStrict(yamlSource, &tree); err != nil {
			d.fail(loc, object, errors.New("strict decoding error: "+yamlMessage(err, loc.line)))
			return
		}
	}
	obj, _, err := strictDecoder().Decode(data, nil, nil)
	if err != nil {
		d.fail(loc, object, err)
		return
	}
	if !isList {
		d.add(loc, obj)
		return
	}
	if list, ok := obj.(*corev1.List); ok {
		for i, item := range list.Items {
			iloc := loc
			iloc.item = i
			raw := item.Raw
			if raw == nil {
				raw = []byte("null")
			}
			d.document(iloc, raw, nil)
		}
		return
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		d.fail(loc, object, err)
		return
	}
	itemGVK := gvk.GroupVersion().WithKind(itemKind)
	for i, item := range items {
		iloc := loc
		iloc.item = i
		item.GetObjectKind().SetGroupVersionKind(itemGVK)
		d.add(iloc, item)
	}
}

// add normalizes a decoded object the way the API server would have stored
// it, rejects duplicates, and appends it.
func (d *decoder) add(loc location, obj runtime.Object) {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		d.fail(loc, "", err)
		return
	}
	gvk := obj.GetObjectKind().GroupVersionKind()
	namespaced := readKinds[gvk]
	if namespaced && accessor.GetNamespace() == "" {
		// kubectl applies a manifest without a namespace to "default".
		accessor.SetNamespace(metav1.NamespaceDefault)
	}
	if !namespaced {
		accessor.SetNamespace("")
	}
	object := gvk.Kind + " " + objectName(accessor.GetNamespace(), accessor.GetName())
	if accessor.GetName() == "" {
		d.fail(loc, gvk.Kind, errors.New("metadata.name is required"))
		return
	}
	if first, dup := d.seen[object]; dup {
		d.fail(loc, object, fmt.Errorf("defined twice: first at %s document %d", first.file, first.document))
		return
	}
	d.seen[object] = loc
	if s, ok := obj.(*corev1.Secret); ok && len(s.StringData) > 0 {
		// The API server merges stringData into data on write; compile reads data.
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
	}
	if err := d.snap.Add(obj); err != nil {
		d.fail(loc, object, err)
	}
}
