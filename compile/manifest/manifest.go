// Package manifest reads Kubernetes manifests (YAML or JSON files, or a
// folder of them) into a compile.Snapshot, as kubectl would apply them, so
// that a folder of YAML can stand in for a cluster. It is strict where a
// typo could silently change routing (unknown or duplicate fields, an
// Ingress of an old API version, a kind its API version does not have) and lenient about everything ramjet does
// not read (skipped, and listed so the caller can show it). A document the
// API server could never take (over 3 MiB; the items of a List or a typed List each) is an
// error and is not parsed, and so is an object whose annotations it refuses (a key that is
// not a qualified name, over 256 KiB in all).
//
// Every problem is an *Error naming the file, document, line, object and
// field, so callers read fields rather than parse messages.
package manifest

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"ramjet.dev/ramjet/compile"
)

// Position is where a document is in a stream of manifests.
type Position struct {
	File     string // the path, or the name given to Decode
	Document int    // 1-based position in the stream; 0 for the file as a whole
	Item     int    // index within a List document, or -1
	Line     int    // first line of the document in the stream; 0 when unknown
}

// Error is one problem with a file, or with one document (or one item of a
// List document) of it. Load and Decode return every Error they find,
// joined with errors.Join; a caller lists them by unwrapping the join.
type Error struct {
	Position
	// Kind, Namespace and Name are the object as far as its header could
	// be read: a namespaced kind ramjet reads is in "default" when it names
	// no namespace, as kubectl would apply it.
	Kind, Namespace, Name string
	// Field is the field at fault ("spec.rules[0].htp", "apiVersion"),
	// when one is.
	Field string
	// Previous is where an object defined twice was first defined.
	Previous *Position
	// Err says what is wrong.
	Err error
}

func (e *Error) Error() string {
	if e.Document == 0 {
		return "manifest: " + e.Err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s document %d", e.File, e.Document)
	if e.Item >= 0 {
		fmt.Fprintf(&b, " items[%d]", e.Item)
	}
	var ctx []string
	if e.Line > 0 {
		ctx = append(ctx, "line "+strconv.Itoa(e.Line))
	}
	if obj := e.Object(); obj != "" {
		ctx = append(ctx, obj)
	}
	if len(ctx) > 0 {
		b.WriteString(" (" + strings.Join(ctx, ", ") + ")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	if e.Previous != nil {
		fmt.Fprintf(&b, ": first at %s document %d", e.Previous.File, e.Previous.Document)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Object is "Kind namespace/name", or as much of it as is known.
func (e *Error) Object() string {
	if e.Name == "" {
		return e.Kind
	}
	return e.Kind + " " + objectName(e.Namespace, e.Name)
}

// ErrDefinedTwice is the Err of an object whose kind, namespace and name
// an earlier document already used; Error.Previous says which.
var ErrDefinedTwice = errors.New("defined twice")

// Load reads manifests from files and directories. A directory is walked
// as Files walks it; a file named explicitly is read whatever its
// extension.
//
// Objects are kept as the API server would store them: a namespaced object
// without a namespace is in "default" (as kubectl applies it), and a
// Secret's stringData is merged into its data. Two objects of the same
// kind, namespace and name are an error, wherever they are.
//
// It returns the snapshot and one line per object of a kind ramjet does not
// read. If any file or document is bad it returns no snapshot and every
// problem, each an *Error, joined, for a caller that takes all or
// nothing; one that serves what can be read (the controller's -manifests
// mode, examples/check) uses a Reader, which keeps it.
//
// Objects of kinds a registered Extension reads are read too, and the
// extension adds what they mean to the snapshot once every file is read.
func Load(paths ...string) (*compile.Snapshot, []string, error) {
	r := NewReader()
	if err := r.Load(paths...); err != nil {
		return nil, nil, err
	}
	snap, skipped := r.Snapshot()
	return snap, skipped, nil
}

// Decode reads one stream of manifests: YAML documents separated by "---",
// or a sequence of JSON objects. name stands for the stream in errors and
// skip lines. Documents are decoded and checked as by Load, which returns
// every problem, and then no snapshot.
func Decode(name string, data []byte) (*compile.Snapshot, []string, error) {
	r := NewReader()
	if err := r.Decode(name, data); err != nil {
		return nil, nil, err
	}
	snap, skipped := r.Snapshot()
	return snap, skipped, nil
}

// A Reader reads manifests from several streams, files and folders into
// one snapshot, as if they were one folder: an object defined in two of
// them is an error, and an Extension sees the objects of all of them
// together (a Gateway in one file, its HTTPRoutes in another). Load and
// Decode are a Reader used once. A Reader is not safe for concurrent use.
type Reader struct {
	d    *decoder
	snap *compile.Snapshot // set by Snapshot
}

// NewReader returns a Reader with the extensions registered now.
func NewReader() *Reader { return &Reader{d: newDecoder()} }

// Load reads files and directories as the function Load does. It returns
// the problems of these paths, each an *Error, joined; what they held that
// could be read is kept either way, so a caller that wants all or nothing
// stops at the first error.
func (r *Reader) Load(paths ...string) error {
	if len(paths) == 0 {
		return &Error{Position: Position{Item: -1}, Err: errors.New("no files or directories given")}
	}
	var files []string
	var errs []error
	listed := make(map[string]bool)
	for _, p := range paths {
		found, problems, err := Walk(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, problems...)
		for _, f := range found {
			// A file named twice (itself and through its directory) is
			// read once rather than reported as duplicate objects.
			if key := filepath.Clean(f); !listed[key] {
				listed[key] = true
				files = append(files, f)
			}
		}
	}
	first := len(r.d.errs)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, fileError(f, err))
			continue
		}
		r.d.stream(f, data)
	}
	return errors.Join(append(errs, r.d.errs[first:]...)...)
}

// Decode reads one stream as the function Decode does, and returns its
// problems as Load does.
func (r *Reader) Decode(name string, data []byte) error {
	first := len(r.d.errs)
	r.d.stream(name, data)
	return errors.Join(r.d.errs[first:]...)
}

// Snapshot ends the reading: each Extension adds what its objects mean,
// and the snapshot of everything read comes back with one line per object
// of a kind nobody reads. Later calls return the same; reading more after
// the first is a mistake the Reader does not catch.
func (r *Reader) Snapshot() (*compile.Snapshot, []string) {
	if r.snap == nil {
		r.snap = r.d.snap
		for i, e := range r.d.exts {
			e.Finish(r.d.extObjs[i], r.snap)
		}
	}
	return r.snap, r.d.skipped
}

// Files lists the files Load reads for root: root itself when it is a
// file, else every .yaml, .yml and .json file below it (extensions in any
// case) in lexical order, skipping names that begin with "." (editor and
// ConfigMap-mount bookkeeping) and following symbolic links to regular
// files but not to directories below root (root itself may be one); a
// link whose target is missing is listed, for reading it to fail. It is
// all or nothing: what Walk cannot read below root is its error.
func Files(root string) ([]string, error) {
	files, problems, err := Walk(root)
	if err == nil {
		err = errors.Join(problems...)
	}
	if err != nil {
		return nil, err
	}
	return files, nil
}

// Walk lists the files below root as Files does, and apart, each an
// *Error naming its path, what it cannot read there: a folder that cannot
// be listed, and a manifest name that is not a regular file (a named pipe
// would block the reader). err is root's own: then nothing is listed. A
// watcher that polls a folder uses it to see exactly the files Load reads.
func Walk(root string) (files []string, problems []error, err error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, fileError(root, err)
	}
	if !info.IsDir() {
		return []string{root}, nil, nil
	}
	walk := root
	if l, err := os.Lstat(root); err == nil && l.Mode()&fs.ModeSymlink != 0 {
		// WalkDir does not follow a link it is given; a trailing separator
		// makes the link's folder the root, its files keeping root's name.
		walk = root + string(filepath.Separator)
	}
	err = filepath.WalkDir(walk, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == walk {
				return err
			}
			// One folder's loss is its own, as one file's is.
			problems = append(problems, fileError(path, fmt.Errorf("%w; no manifest below this folder is read", err)))
			return nil
		}
		if path != walk && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !isManifestName(d.Name()) {
			return nil
		}
		mode := d.Type()
		if mode&fs.ModeSymlink != 0 {
			// A link whose target cannot be reached is listed: reading it
			// is that file's error, not the whole folder's.
			target, err := os.Stat(path)
			if err == nil && target.IsDir() {
				return nil
			}
			mode = 0
			if err == nil {
				mode = target.Mode().Type()
			}
		}
		if !mode.IsRegular() {
			problems = append(problems, fileError(path, fmt.Errorf("%s: %s, not a regular file: not read", path, fileKind(mode))))
			return nil
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		return nil, nil, fileError(root, err)
	}
	return files, problems, nil
}

// fileKind names a file type that is not a regular file or a folder.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// fileError is a problem with a file as a whole; err (an *fs.PathError)
// already names the path.
func fileError(file string, err error) *Error {
	return &Error{Position: Position{File: file, Item: -1}, Err: err}
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
	scheme := readScheme()
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Strict: true})
})

// readScheme holds every kind of the group versions the loader reads.
var readScheme = sync.OnceValue(func() *runtime.Scheme {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, networkingv1.AddToScheme, discoveryv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			panic(err) // static registration; cannot fail for these groups
		}
	}
	return scheme
})

var (
	ingressGVK       = networkingv1.SchemeGroupVersion.WithKind("Ingress")
	ingressClassGVK  = networkingv1.SchemeGroupVersion.WithKind("IngressClass")
	serviceGVK       = corev1.SchemeGroupVersion.WithKind("Service")
	secretGVK        = corev1.SchemeGroupVersion.WithKind("Secret")
	configMapGVK     = corev1.SchemeGroupVersion.WithKind("ConfigMap")
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
	configMapGVK:     true,
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
	{Group: "", Kind: "ConfigMap"}:                     configMapGVK,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}: endpointSliceGVK,
}

// skipLabel is how a skip line names a document: "file#2 items[1]".
func skipLabel(p Position) string {
	s := p.File + "#" + strconv.Itoa(p.Document)
	if p.Item >= 0 {
		s += " items[" + strconv.Itoa(p.Item) + "]"
	}
	return s
}

// object names a document's object in errors, as far as it is known.
type object struct{ kind, namespace, name string }

type decoder struct {
	snap    *compile.Snapshot
	skipped []string
	errs    []error
	seen    map[object]Position // where each object was first defined
	exts    []*registered       // the extensions registered when reading began
	extObjs [][]runtime.Object  // per extension, its objects in reading order
}

func newDecoder() *decoder {
	exts := extensions()
	return &decoder{snap: &compile.Snapshot{}, seen: make(map[object]Position),
		exts: exts, extObjs: make([][]runtime.Object, len(exts))}
}

// extension returns the index of the extension that reads gvk, or -1.
func (d *decoder) extension(gvk schema.GroupVersionKind) int {
	for i, e := range d.exts {
		if _, ok := e.kinds[gvk]; ok {
			return i
		}
	}
	return -1
}

// reads reports whether gvk is read, by the loader or an extension, and
// whether it is namespaced.
func (d *decoder) reads(gvk schema.GroupVersionKind) (namespaced, read bool) {
	if namespaced, read = readKinds[gvk]; read {
		return namespaced, true
	}
	if i := d.extension(gvk); i >= 0 {
		return d.exts[i].kinds[gvk], true
	}
	return false, false
}

// versions names the versions of gk that are read, when any is: a
// document of gk in another version is an error rather than a skip.
func (d *decoder) versions(gk schema.GroupKind) string {
	if want, ours := supportedVersion[gk]; ours {
		return want.GroupVersion().String()
	}
	var vs []string
	for _, e := range d.exts {
		for gvk := range e.kinds {
			if gvk.GroupKind() == gk {
				vs = append(vs, gvk.GroupVersion().String())
			}
		}
	}
	slices.Sort(vs)
	return strings.Join(vs, " or ")
}

func (d *decoder) fail(pos Position, obj object, field string, err error) {
	d.errs = append(d.errs, &Error{
		Position: pos, Kind: obj.kind, Namespace: obj.namespace, Name: obj.name, Field: field, Err: err,
	})
}

// stream splits data into documents and decodes each. A template that
// begins with an action ({{- if ... }}, as most of a Helm chart's do) is
// no JSON stream: its YAML documents each say they are a template's.
func (d *decoder) stream(name string, data []byte) {
	if utilyaml.IsJSONBuffer(data) && !beginsWithAction(data) {
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
		pos := Position{File: name, Document: n, Item: -1, Line: 1 + bytes.Count(data[:start], []byte("\n"))}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return
			}
			// The rest of the stream cannot be split reliably.
			d.fail(pos, object{}, "", fmt.Errorf("invalid JSON: %w; %s", err, restUnread))
			return
		}
		end = int(dec.InputOffset())
		d.document(pos, raw, nil)
	}
}

// restUnread ends the error that stops reading a stream: a caller that
// serves what it read must not take the stream's later documents for
// absent ones without being told.
const restUnread = "the rest of the stream is not read"

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (d *decoder) yamlStream(name string, data []byte) {
	n := 0
	for doc := range yamlDocuments(data) {
		n++
		pos := Position{File: name, Document: n, Item: -1, Line: doc.line}
		if doc.badSeparator != "" {
			// kubectl stops the whole stream here; the documents around
			// this one are still each its author's intent.
			d.fail(pos, object{}, "", fmt.Errorf("invalid document separator %q: only a comment may follow \"---\"; this document is not read", doc.badSeparator))
			continue
		}
		if len(doc.data) > maxDocumentBytes && !yamlListKind.Match(doc.data) {
			// Not parsed: tens of megabytes of YAML take minutes and
			// gigabytes to convert.
			d.fail(pos, object{}, "", tooLarge(len(doc.data)))
			continue
		}
		if beginsWithAction(doc.data) {
			// ToJSON would pass it on as JSON, and YAML would read a
			// mapping: neither error would say what it is.
			d.fail(pos, object{}, "", errors.New("the document begins with {{ }}, "+unrendered))
			continue
		}
		jsonData, err := utilyaml.ToJSON(doc.data)
		if err != nil {
			msg := YAMLMessage(err, pos.Line)
			if bytes.Contains(doc.data, []byte("{{")) {
				msg += "; the document holds {{ }}, " + unrendered
			}
			d.fail(pos, object{}, "", errors.New(msg))
			continue
		}
		d.document(pos, jsonData, doc.data)
	}
}

// maxDocumentBytes is the largest request body the API server takes: a
// larger object could never be applied. A List is sent item by item, so
// the limit is each item's.
const maxDocumentBytes = 3 << 20

// yamlListKind finds a top-level "kind: List" (or a typed list) in a YAML
// document without parsing it.
var yamlListKind = regexp.MustCompile(`(?m)^kind:[ \t]*["']?\w*List["']?[ \t]*(#.*)?\r?$`)

func tooLarge(n int) error {
	return fmt.Errorf("the document is %.1f MiB, more than the %d MiB the API server takes in one request: not read", float64(n)/(1<<20), maxDocumentBytes>>20)
}

// yamlDocument is one document of a YAML stream.
type yamlDocument struct {
	data []byte
	line int // 1-based line of its first line in the stream
	// badSeparator is the line that began the document when it is "---"
	// followed by more than a comment.
	badSeparator string
}

// yamlDocuments splits a YAML stream as utilyaml.YAMLReader does (a
// document is the lines between separator lines, comments included), but
// a separator line with text after "---" begins a document of its own
// rather than ending the stream.
func yamlDocuments(data []byte) iter.Seq[yamlDocument] {
	return func(yield func(yamlDocument) bool) {
		cur := yamlDocument{}
		for i, line := range bytes.SplitAfter(data, []byte("\n")) {
			rest, sep := bytes.CutPrefix(line, []byte("---"))
			if !sep {
				if len(line) > 0 && cur.data == nil && cur.badSeparator == "" {
					cur.line = i + 1
				}
				if len(line) > 0 {
					cur.data = append(cur.data, line...)
				}
				continue
			}
			if (cur.data != nil || cur.badSeparator != "") && !yield(cur) {
				return
			}
			cur = yamlDocument{}
			if rest = bytes.TrimSpace(rest); len(rest) > 0 && rest[0] != '#' {
				cur = yamlDocument{line: i + 1, badSeparator: string(bytes.TrimRight(line, " \t\r\n"))}
			}
		}
		if cur.data != nil || cur.badSeparator != "" {
			yield(cur)
		}
	}
}

// beginsWithAction reports whether data begins, after white space, with
// a template action.
func beginsWithAction(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{{"))
}

// unrendered ends the message for a document that is still a Helm (or
// other Go) template: kubectl would refuse it too, less helpfully.
const unrendered = "a template's: render it first (helm template)"

var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// YAMLMessage is a YAML parser error on one line, its document-relative
// line numbers rewritten to count from first, the line the document starts
// at (1 for a whole file). The loader words every YAML error with it, and
// so should a tool that reads YAML files of its own beside manifests.
func YAMLMessage(err error, first int) string {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	msg = strings.Replace(msg, "yaml: unmarshal errors:\n", "", 1)
	parts := strings.Split(msg, "\n")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	msg = strings.Join(parts, "; ")
	if first <= 1 {
		return msg
	}
	return yamlLine.ReplaceAllStringFunc(msg, func(s string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(s, "line "))
		if err != nil {
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

// readHeader reads apiVersion, kind and metadata; on error it also names
// the field at fault, if one is.
func readHeader(data []byte) (h header, empty bool, field string, err error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			got := map[string]string{"array": "a list", "number": "a number", "bool": "a boolean"}[typeErr.Value]
			return header{}, false, "", fmt.Errorf("not a Kubernetes object: want a mapping with apiVersion and kind, got %s", cmp.Or(got, "a "+typeErr.Value))
		}
		return header{}, false, "", err
	}
	if top == nil { // "null": an empty document
		return header{}, true, "", nil
	}
	var apiVersion, kind string
	for _, f := range []struct {
		key string
		dst *string
	}{{"apiVersion", &apiVersion}, {"kind", &kind}} {
		if raw, ok := top[f.key]; ok {
			if err := json.Unmarshal(raw, f.dst); err != nil {
				return header{}, false, f.key, fmt.Errorf("%s: want a string, got %s", f.key, raw)
			}
		}
	}
	switch {
	case apiVersion == "" && kind == "":
		return header{}, false, "", errors.New("missing apiVersion and kind: not a Kubernetes object")
	case apiVersion == "":
		return header{}, false, "apiVersion", fmt.Errorf("%s: missing apiVersion", kind)
	case kind == "":
		return header{}, false, "kind", fmt.Errorf("%s: missing kind", apiVersion)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return header{}, false, "apiVersion", fmt.Errorf("apiVersion %q: want group/version or version", apiVersion)
	}
	h = header{gvk: gv.WithKind(kind)}
	var md struct {
		Name      any `json:"name"`
		Namespace any `json:"namespace"`
	}
	if raw, ok := top["metadata"]; ok && json.Unmarshal(raw, &md) == nil {
		h.name, _ = md.Name.(string)
		h.namespace, _ = md.Namespace.(string)
	}
	return h, false, "", nil
}

func objectName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// document decodes one JSON document. yamlSource is the document as
// written when it was YAML, for duplicate-key detection with line numbers.
func (d *decoder) document(pos Position, data, yamlSource []byte) {
	h, empty, field, err := readHeader(data)
	if err != nil {
		d.fail(pos, object{}, field, err)
		return
	}
	if empty {
		return
	}
	gvk := h.gvk
	namespaced, read := d.reads(gvk)
	itemKind, typedList := strings.CutSuffix(gvk.Kind, "List")
	if typedList {
		_, typedList = d.reads(gvk.GroupVersion().WithKind(itemKind))
	}
	isList := gvk == listGVK || typedList
	obj := object{gvk.Kind, h.namespace, h.name}
	if !isList && len(data) > maxDocumentBytes {
		if namespaced && obj.namespace == "" {
			obj.namespace = metav1.NamespaceDefault
		}
		d.fail(pos, obj, "", tooLarge(len(data)))
		return
	}
	if !read && !isList {
		gk := gvk.GroupKind()
		if itemKind != "" {
			gk.Kind = itemKind
		}
		if want := d.versions(gk); want != "" {
			d.fail(pos, obj, "apiVersion",
				fmt.Errorf("%s %s is not supported: ramjet reads %s %s", gvk.GroupVersion(), gvk.Kind, want, gvk.Kind))
			return
		}
		if gv := gvk.GroupVersion(); readScheme().IsVersionRegistered(gv) && !readScheme().Recognizes(gvk) {
			// The API server refuses it ("no matches for kind"); a typo
			// skipped as another kind would silently drop the object.
			d.fail(pos, obj, "kind", fmt.Errorf("kind %s: %s has no such kind", gvk.Kind, gv))
			return
		}
		line := fmt.Sprintf("%s: %s %s %s skipped", skipLabel(pos), gvk.GroupVersion(), gvk.Kind, objectName(h.namespace, h.name))
		if gvk == corev1.SchemeGroupVersion.WithKind("Endpoints") {
			line += " (ramjet reads discovery.k8s.io/v1 EndpointSlice)"
		}
		d.skipped = append(d.skipped, line)
		return
	}
	for _, f := range []struct{ field, value string }{{"metadata.name", h.name}, {"metadata.namespace", h.namespace}} {
		if strings.Contains(f.value, "{{") {
			d.fail(pos, obj, f.field, fmt.Errorf("%s %q holds {{ }}, %s", f.field, f.value, unrendered))
			return
		}
	}
	if read && namespaced && h.namespace == "" {
		obj.namespace = metav1.NamespaceDefault
	}
	if isList {
		obj = object{kind: gvk.Kind}
	}
	if yamlSource != nil {
		// YAML→JSON conversion keeps the last of duplicate keys; only the
		// strict YAML parser sees them.
		var tree any
		if err := utilyaml.UnmarshalStrict(yamlSource, &tree); err != nil {
			d.fail(pos, obj, "", errors.New("strict decoding error: "+YAMLMessage(err, pos.Line)))
			return
		}
	}
	dec := strictDecoder()
	ext := d.extension(gvk)
	if typedList {
		ext = d.extension(gvk.GroupVersion().WithKind(itemKind))
	}
	if ext >= 0 {
		dec = d.exts[ext].decoder()
	}
	decoded, _, err := dec.Decode(data, nil, nil)
	if err != nil {
		if field, berr := badBase64(data, err); field != "" {
			d.fail(pos, obj, field, berr)
			return
		}
		d.failDecode(pos, obj, data, err)
		return
	}
	if !isList {
		d.add(pos, decoded)
		return
	}
	if list, ok := decoded.(*corev1.List); ok {
		for i, item := range list.Items {
			ipos := pos
			ipos.Item = i
			raw := item.Raw
			if raw == nil {
				raw = []byte("null")
			}
			d.document(ipos, raw, nil)
		}
		return
	}
	items, err := meta.ExtractList(decoded)
	if err != nil {
		d.fail(pos, obj, "", err)
		return
	}
	itemGVK := gvk.GroupVersion().WithKind(itemKind)
	// Each item is sent alone, and held to the request limit, as a v1
	// List's are; only a list over the limit can hold an item over it.
	var raw struct {
		Items []json.RawMessage `json:"items"`
	}
	if len(data) > maxDocumentBytes {
		_ = json.Unmarshal(data, &raw)
	}
	itemNamespaced, _ := d.reads(itemGVK)
	for i, item := range items {
		ipos := pos
		ipos.Item = i
		if i < len(raw.Items) && len(raw.Items[i]) > maxDocumentBytes {
			iobj := object{kind: itemKind}
			if m, err := meta.Accessor(item); err == nil {
				iobj.namespace, iobj.name = m.GetNamespace(), m.GetName()
			}
			if itemNamespaced && iobj.namespace == "" {
				iobj.namespace = metav1.NamespaceDefault
			}
			d.fail(ipos, iobj, "", tooLarge(len(raw.Items[i])))
			continue
		}
		item.GetObjectKind().SetGroupVersionKind(itemGVK)
		d.add(ipos, item)
	}
}

// badBase64 names the data value at fault when err is a base64 error,
// which the JSON decoder returns without saying where: "data[key]" and
// the error, or "" when err is no such error or no value is found.
func badBase64(data []byte, err error) (string, error) {
	var corrupt base64.CorruptInputError
	if !errors.As(err, &corrupt) {
		return "", nil
	}
	var obj struct {
		Data       map[string]any `json:"data"`
		BinaryData map[string]any `json:"binaryData"`
	}
	if json.Unmarshal(data, &obj) != nil {
		return "", nil
	}
	// A Secret's data, a ConfigMap's binaryData; each has a plain twin.
	for _, m := range []struct {
		field, plain string
		values       map[string]any
	}{{"data", "stringData", obj.Data}, {"binaryData", "data", obj.BinaryData}} {
		for _, k := range slices.Sorted(maps.Keys(m.values)) {
			v, ok := m.values[k].(string)
			if !ok {
				continue
			}
			if _, berr := base64.StdEncoding.DecodeString(v); berr != nil {
				return fmt.Sprintf("%s[%s]", m.field, k), fmt.Errorf("%s[%s]: %w (%s takes a value as it is)", m.field, k, berr, m.plain)
			}
		}
	}
	return "", nil
}

// failDecode reports a decoding error; a strict one becomes one Error per
// field at fault.
func (d *decoder) failDecode(pos Position, obj object, data []byte, err error) {
	strict, ok := runtime.AsStrictDecodingError(err)
	if !ok {
		if field, msg := wrongType(err); field != "" {
			if keys := nonStrings(data, field); len(keys) > 0 {
				for _, k := range keys {
					d.fail(pos, obj, k.field, errors.New(k.msg))
				}
				return
			}
			d.fail(pos, obj, field, errors.New(msg))
			return
		}
		d.fail(pos, obj, "", err)
		return
	}
	for _, e := range strict.Errors() {
		field := ""
		if f, ok := e.(interface{ FieldPath() string }); ok {
			field = f.FieldPath()
		}
		d.fail(pos, obj, field, runtime.NewStrictDecodingError([]error{e}))
	}
}

// stringMaps are the string maps a manifest's author writes by hand, where
// an unquoted true or 300 is YAML's boolean or number.
var stringMaps = []string{"metadata.annotations", "metadata.labels", "data", "stringData"}

// nonStrings names each value of the string map at field in the JSON
// document data that is not a string, in key order; none when field is no
// such map.
func nonStrings(data []byte, field string) []struct{ field, msg string } {
	if !slices.Contains(stringMaps, field) {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	path := strings.Split(field, ".")
	for _, p := range path[:len(path)-1] {
		if json.Unmarshal(m[p], &m) != nil {
			return nil
		}
	}
	var values map[string]json.RawMessage
	if json.Unmarshal(m[path[len(path)-1]], &values) != nil {
		return nil
	}
	var out []struct{ field, msg string }
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := bytes.TrimSpace(values[k])
		var got string
		switch {
		case len(v) == 0 || v[0] == '"' || string(v) == "null":
			continue
		case v[0] == '{':
			got = "a mapping"
		case v[0] == '[':
			got = "a list"
		case string(v) == "true" || string(v) == "false":
			got = fmt.Sprintf("the boolean %s: quote it (%q)", v, v)
		default:
			got = fmt.Sprintf("the number %s: quote it (%q)", v, v)
		}
		f := field + "[" + k + "]"
		out = append(out, struct{ field, msg string }{f, f + ": want a string, got " + got})
	}
	return out
}

// goTypeError is the decoder's message for a value of the wrong JSON type:
// "json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32".
// The decoder's error type is internal to it, so the message is what there is.
var goTypeError = regexp.MustCompile(`^json: cannot unmarshal (\w+) into Go struct field \w+\.(\S+) of type (\S+)$`)

// wrongType words a wrong-type error as the field and what it holds
// ("spec.ports.port: want int32, got a string"); "" when err is not one.
func wrongType(err error) (field, msg string) {
	m := goTypeError.FindStringSubmatch(err.Error())
	if m == nil {
		return "", ""
	}
	// Embedded Go structs (IngressRuleValue) appear in the path but not in
	// the manifest; JSON field names begin with a lower-case letter.
	var parts []string
	for p := range strings.SplitSeq(m[2], ".") {
		if p != "" && !(p[0] >= 'A' && p[0] <= 'Z') {
			parts = append(parts, p)
		}
	}
	field = strings.Join(parts, ".")
	got := map[string]string{"string": "a string", "number": "a number", "bool": "a boolean", "array": "a list", "object": "a mapping"}[m[1]]
	return field, fmt.Sprintf("%s: want %s, got %s", field, m[3], cmp.Or(got, m[1]))
}

// add normalizes a decoded object the way the API server would have stored
// it, rejects duplicates, and appends it.
func (d *decoder) add(pos Position, decoded runtime.Object) {
	accessor, err := meta.Accessor(decoded)
	if err != nil {
		d.fail(pos, object{}, "", err)
		return
	}
	gvk := decoded.GetObjectKind().GroupVersionKind()
	namespaced, _ := d.reads(gvk)
	if namespaced && accessor.GetNamespace() == "" {
		// kubectl applies a manifest without a namespace to "default".
		accessor.SetNamespace(metav1.NamespaceDefault)
	}
	if !namespaced {
		accessor.SetNamespace("")
	}
	obj := object{gvk.Kind, accessor.GetNamespace(), accessor.GetName()}
	if obj.name == "" {
		d.fail(pos, object{kind: gvk.Kind}, "metadata.name", errors.New("metadata.name is required"))
		return
	}
	if err := refusedAnnotations(accessor.GetAnnotations()); err != nil {
		d.fail(pos, obj, "metadata.annotations", err)
		return
	}
	if first, dup := d.seen[obj]; dup {
		d.errs = append(d.errs, &Error{
			Position: pos, Kind: obj.kind, Namespace: obj.namespace, Name: obj.name,
			Previous: &first, Err: ErrDefinedTwice,
		})
		return
	}
	d.seen[obj] = pos
	if s, ok := decoded.(*corev1.Secret); ok && len(s.StringData) > 0 {
		// The API server merges stringData into data on write; compile reads data.
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
		s.StringData = nil
	}
	if i := d.extension(gvk); i >= 0 {
		d.extObjs[i] = append(d.extObjs[i], decoded)
		return
	}
	if err := d.snap.Add(decoded); err != nil {
		d.fail(pos, obj, "", err)
	}
}

// maxAnnotationBytes is the most the API server takes in an object's
// annotations, keys and values together.
const maxAnnotationBytes = 256 << 10

// refusedAnnotations is the API server's refusal of annotations it would
// not store (a key that is not a qualified name, any case; over
// maxAnnotationBytes in all), in its words and in key order, or nil.
func refusedAnnotations(annotations map[string]string) error {
	path := field.NewPath("metadata", "annotations")
	var errs field.ErrorList
	size := 0
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		size += len(k) + len(annotations[k])
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path, k, msg))
		}
	}
	if size > maxAnnotationBytes {
		errs = append(errs, field.TooLong(path, "", maxAnnotationBytes))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: not read, as the API server refuses it", errs.ToAggregate())
}
