// Package routertest checks routing decisions end to end with case files
// (SPEC §18): each case names some Kubernetes objects and options, compiles
// them, publishes the table to a real router.Router and drives requests
// through its http.Handler. A recording transport stands in for the
// backends, so a case checks the whole path a request takes: which backend
// and endpoint were chosen, what the backend received, and what the client
// got back.
//
// A case file is YAML: one case, or a list of cases.
//
//	name: shop routes by path
//	scenario: free text       # also notes, source
//	options:                  # defaultBackend, ingressClass, controllerName,
//	  sslRedirect: false      # watchIngressWithoutClass, sslRedirect
//	objects:                  # ordinary manifests, as a YAML list
//	- apiVersion: networking.k8s.io/v1
//	  kind: Ingress
//	  ...
//	requests:
//	- host: shop.example.com  # "" for a request without Host
//	  path: /api?x=1          # the raw request-target
//	  method: GET             # default GET
//	  scheme: https           # http (default) or https: TLS with SNI = host
//	  headers: {X-A: b}
//	  repeat: 10              # default 1
//	  expect:
//	    status: 200
//	    service: prod/api:80  # null: no backend chosen; absent: not checked
//	    forwardedPath: /api?x=1
//	    forwardedHost: shop.example.com
//	    responseHeaders: {Location: ...}   # "" means absent
//	    certificateHost: shop.example.com
//	    distinctEndpoints: 3  # over the repeats
//
// Unknown keys are errors. Every check is made on every repeat, except
// distinctEndpoints (over all repeats) and certificateHost (once).
//
// A request is built exactly as net/http's server would hand it to a
// handler (request line and headers parsed by http.ReadRequest), so odd
// request-targets reach the router unchanged; a request-target the server
// itself would refuse answers 400 without reaching the router. A request
// with no host is sent as HTTP/1.0, the only way a client can omit Host.
//
// # Golden files
//
// RunFiles compares each case file's compiled tables with its golden file.
// To rewrite the goldens instead, run
//
//	go test ./... -run TestCases -update
//
// In a test binary this package registers the boolean flag -update itself,
// unless a flag of that name is already registered (then that flag is read,
// when it is a boolean). A package that registers "update" after this one
// is initialised panics as a flag redefinition, so a test importing
// routertest must not declare its own. Where -update cannot be passed (go
// test over packages that do not import routertest, or another package
// owns the flag), set the environment variable instead:
//
//	RAMJET_UPDATE_GOLDEN=1 go test ./...
package routertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
)

// Case is one routing scenario.
type Case struct {
	// File is the case file the case came from.
	File string
	Name string
	// Scenario, Notes and Source are free text for the reader.
	Scenario, Notes, Source string
	Options                 compile.Options
	Objects                 compile.Snapshot
	// Skipped lists objects of kinds ramjet does not read.
	Skipped  []string
	Requests []Request
}

// Request is one request of a case, with what it must produce.
type Request struct {
	Host   string `json:"host"`
	Path   string `json:"path"`
	Method string `json:"method"`
	// Headers are sent as written. Host is not a header here: use Host.
	Headers map[string]string `json:"headers,omitempty"`
	// Scheme is "http" or "https".
	Scheme string `json:"scheme"`
	// Repeat sends the request this many times (at least 1).
	Repeat int    `json:"repeat"`
	Expect Expect `json:"expect"`
}

// String describes the request on one line, quoting what could hide bytes.
func (r Request) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s host=%q", r.Method, quoteIfOdd(r.Path), r.Host)
	if r.Scheme == "https" {
		b.WriteString(" scheme=https")
	}
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		fmt.Fprintf(&b, " %s=%q", k, r.Headers[k])
	}
	if r.Repeat > 1 {
		fmt.Fprintf(&b, " repeat=%d", r.Repeat)
	}
	return b.String()
}

// Expect lists the checks of a request; a zero or nil field is not checked.
type Expect struct {
	Status int `json:"status,omitempty"`
	// Service is the backend ID the router chose.
	Service OptionalService `json:"service,omitzero"`
	// ForwardedPath is the request-target the backend received, with query.
	ForwardedPath *string `json:"forwardedPath,omitempty"`
	// ForwardedHost is the Host header the backend received.
	ForwardedHost *string `json:"forwardedHost,omitempty"`
	// ResponseHeaders must each equal the response's first value; "" means
	// the header must be absent.
	ResponseHeaders map[string]string `json:"responseHeaders,omitempty"`
	// CertificateHost is a name the certificate served for the request's
	// SNI must verify for.
	CertificateHost *string `json:"certificateHost,omitempty"`
	// DistinctEndpoints is the number of different endpoints the repeats
	// reached.
	DistinctEndpoints *int `json:"distinctEndpoints,omitempty"`
}

func (e Expect) empty() bool { return reflect.ValueOf(e).IsZero() }

// OptionalService is an expected backend ID that distinguishes "not
// checked" (absent in the file) from "no backend" (null in the file).
type OptionalService struct {
	Checked bool
	// ID is "namespace/name:port"; "" with Checked means no backend.
	ID string

	blank bool // written as "" rather than null: rejected by LoadCases
}

// UnmarshalJSON reads null as "no backend" and a string as an ID; LoadCases
// checks the ID's form.
func (s *OptionalService) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*s = OptionalService{Checked: true}
		return nil
	}
	var id string
	if err := json.Unmarshal(data, &id); err != nil {
		return errors.New("want namespace/name:port or null")
	}
	*s = OptionalService{Checked: true, ID: id, blank: id == ""}
	return nil
}

// MarshalJSON writes null for "no backend"; an unchecked value is omitted
// by the omitzero tag.
func (s OptionalService) MarshalJSON() ([]byte, error) {
	if s.ID == "" {
		return []byte("null"), nil
	}
	return json.Marshal(s.ID)
}

func (s OptionalService) String() string {
	if s.ID == "" {
		return "none"
	}
	return s.ID
}

// The file format. Pointers tell absent from zero.
type fileCase struct {
	Name     *string         `json:"name"`
	Scenario string          `json:"scenario"`
	Notes    string          `json:"notes"`
	Source   string          `json:"source"`
	Options  fileOptions     `json:"options"`
	Objects  json.RawMessage `json:"objects"`
	Requests []fileRequest   `json:"requests"`
}

type fileOptions struct {
	DefaultBackend           *string `json:"defaultBackend"`
	IngressClass             *string `json:"ingressClass"`
	ControllerName           *string `json:"controllerName"`
	WatchIngressWithoutClass *bool   `json:"watchIngressWithoutClass"`
	SSLRedirect              *bool   `json:"sslRedirect"`
}

type fileRequest struct {
	Host    *string           `json:"host"`
	Path    *string           `json:"path"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Scheme  string            `json:"scheme"`
	Repeat  *int              `json:"repeat"`
	Expect  *Expect           `json:"expect"`
}

// maxRepeat bounds one request's repeats so a typo cannot hang a test run.
const maxRepeat = 100000

// LoadCases reads case files. Each path is a file, a glob, or a directory
// (walked recursively for *.yaml and *.yml, skipping hidden entries). It
// returns the cases in file order, or an error naming every bad file, case
// and key.
func LoadCases(paths ...string) ([]Case, error) {
	files, err := caseFiles(paths)
	if err != nil {
		return nil, err
	}
	var cases []Case
	var errs []error
	for _, f := range files {
		cs, err := loadFile(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cases = append(cases, cs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cases, nil
}

// caseFiles expands paths into case files: a directory is walked as
// manifest.Files walks one, keeping *.yaml and *.yml files.
func caseFiles(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, errors.New("routertest: no case files given")
	}
	var files []string
	var errs []error
	for _, p := range paths {
		info, err := os.Stat(p)
		switch {
		case err != nil && strings.ContainsAny(p, "*?["):
			matches, gerr := filepath.Glob(p)
			if gerr != nil {
				errs = append(errs, fmt.Errorf("routertest: pattern %q: %w", p, gerr))
			} else if len(matches) == 0 {
				errs = append(errs, fmt.Errorf("routertest: no case files match %q", p))
			}
			files = append(files, matches...)
		case err != nil:
			errs = append(errs, fmt.Errorf("routertest: %w", err))
		case !info.IsDir():
			files = append(files, p)
		default:
			found, err := manifest.Files(p)
			found = slices.DeleteFunc(found, func(f string) bool {
				return !strings.HasSuffix(f, ".yaml") && !strings.HasSuffix(f, ".yml")
			})
			if err == nil && len(found) == 0 {
				err = fmt.Errorf("routertest: no *.yaml case files under %s", p)
			}
			if err != nil {
				errs = append(errs, err)
			}
			files = append(files, found...)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return files, nil
}

// loadFile parses one case file.
func loadFile(file string) ([]Case, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("routertest: %w", err)
	}
	return parseCases(file, data)
}

func parseCases(file string, data []byte) ([]Case, error) {
	// The strict parse finds duplicate keys, which YAML→JSON conversion
	// would silently resolve; the tree it yields drives the key check.
	var tree any
	if err := utilyaml.UnmarshalStrict(data, &tree); err != nil {
		return nil, fmt.Errorf("%s: %s", file, manifest.YAMLMessage(err, 1))
	}
	js, err := utilyaml.ToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", file, manifest.YAMLMessage(err, 1))
	}
	var trees []any
	var raws []json.RawMessage
	switch t := tree.(type) {
	case []any:
		trees = t
		if err := json.Unmarshal(js, &raws); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	case map[string]any:
		trees = []any{t}
		raws = []json.RawMessage{js}
	case nil:
		return nil, fmt.Errorf("%s: no cases", file)
	default:
		return nil, fmt.Errorf("%s: want a case or a list of cases, got %s", file, describe(tree))
	}
	if len(trees) == 0 {
		return nil, fmt.Errorf("%s: no cases", file)
	}
	var cases []Case
	var errs []error
	seen := make(map[string]int)
	for i := range trees {
		label := fmt.Sprintf("case #%d", i+1)
		if m, ok := trees[i].(map[string]any); ok {
			if n, ok := m["name"].(string); ok && n != "" {
				label = fmt.Sprintf("case %q", n)
				if first, dup := seen[n]; dup {
					errs = append(errs, fmt.Errorf("%s: %s: name already used by case #%d", file, label, first+1))
				} else {
					seen[n] = i
				}
			}
		}
		c, problems := parseCase(file, trees[i], raws[i])
		for _, p := range problems {
			errs = append(errs, fmt.Errorf("%s: %s: %w", file, label, p))
		}
		if len(problems) == 0 {
			cases = append(cases, c)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cases, nil
}

// parseCase returns the case, or every problem found in it.
func parseCase(file string, tree any, raw json.RawMessage) (Case, []error) {
	if problems := checkKeys(tree, reflect.TypeFor[fileCase](), ""); len(problems) > 0 {
		return Case{}, problems
	}
	var fc fileCase // checkKeys found no unknown keys
	if err := json.Unmarshal(raw, &fc); err != nil {
		return Case{}, []error{err}
	}
	if fc.Name == nil || strings.TrimSpace(*fc.Name) == "" {
		return Case{}, []error{errors.New("name: required")}
	}
	c := Case{
		File:     file,
		Name:     *fc.Name,
		Scenario: fc.Scenario,
		Notes:    fc.Notes,
		Source:   fc.Source,
	}
	var errs []error
	var err error
	if c.Options, err = fc.Options.compile(); err != nil {
		errs = append(errs, err)
	}
	snap, skipped, err := decodeObjects(file, fc.Objects)
	if err != nil {
		errs = append(errs, unjoin(err)...)
	} else {
		c.Objects, c.Skipped = *snap, skipped
	}
	if len(fc.Requests) == 0 {
		errs = append(errs, errors.New("requests: at least one request is required"))
	}
	for i, fr := range fc.Requests {
		r, err := fr.request()
		if err != nil {
			errs = append(errs, fmt.Errorf("requests[%d].%w", i, err))
			continue
		}
		c.Requests = append(c.Requests, r)
	}
	if len(errs) > 0 {
		return Case{}, errs
	}
	return c, nil
}

func (o fileOptions) compile() (compile.Options, error) {
	var co compile.Options
	if o.DefaultBackend != nil {
		ref, err := compile.ParseServiceRef(*o.DefaultBackend)
		if err != nil {
			return co, fmt.Errorf("options.defaultBackend: %w", err)
		}
		co.DefaultBackend = &ref
	}
	if o.IngressClass != nil {
		if *o.IngressClass == "" {
			return co, errors.New("options.ingressClass: empty (omit it for the default)")
		}
		co.IngressClass = *o.IngressClass
	}
	if o.ControllerName != nil {
		if *o.ControllerName == "" {
			return co, errors.New("options.controllerName: empty (omit it for the default)")
		}
		co.ControllerName = *o.ControllerName
	}
	if o.WatchIngressWithoutClass != nil {
		co.WatchIngressWithoutClass = *o.WatchIngressWithoutClass
	}
	if o.SSLRedirect != nil {
		co.DisableSSLRedirect = !*o.SSLRedirect
	}
	if err := co.Validate(); err != nil {
		return co, fmt.Errorf("options: %w", err)
	}
	return co, nil
}

// decodeObjects decodes the objects list with the manifest loader, so a
// case reads objects exactly as a folder of manifests would.
func decodeObjects(file string, raw json.RawMessage) (*compile.Snapshot, []string, error) {
	var items []json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, nil, errors.New("objects: want a list of manifests")
		}
	}
	var stream []byte
	for _, it := range items {
		stream = append(stream, it...)
		stream = append(stream, '\n')
	}
	snap, skipped, err := manifest.Decode(file, stream)
	if err == nil {
		return snap, skipped, nil
	}
	// Restate each problem in the case's own terms: objects[i].
	var errs []error
	for _, e := range unjoin(err) {
		var me *manifest.Error
		if !errors.As(e, &me) {
			errs = append(errs, e)
			continue
		}
		where := objectsIndex(me.Position)
		if obj := me.Object(); obj != "" {
			where += " (" + obj + ")"
		}
		msg := me.Err.Error()
		if me.Previous != nil {
			msg += ": first at " + objectsIndex(*me.Previous)
		}
		errs = append(errs, fmt.Errorf("%s: %s", where, msg))
	}
	return nil, nil, errors.Join(errs...)
}

// objectsIndex names a document of the objects list: objects[i], and the
// item of a List document.
func objectsIndex(p manifest.Position) string {
	s := fmt.Sprintf("objects[%d]", p.Document-1)
	if p.Item >= 0 {
		s += fmt.Sprintf(".items[%d]", p.Item)
	}
	return s
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (fr fileRequest) request() (Request, error) {
	r := Request{Method: fr.Method, Headers: fr.Headers, Scheme: fr.Scheme, Repeat: 1}
	if fr.Host == nil {
		return r, errors.New(`host: required ("" for a request without Host)`)
	}
	r.Host = *fr.Host
	if strings.ContainsFunc(r.Host, badHostRune) {
		return r, fmt.Errorf("host: %q holds whitespace or control characters", r.Host)
	}
	if fr.Path == nil || *fr.Path == "" {
		return r, errors.New("path: required (the raw request-target, e.g. /)")
	}
	r.Path = *fr.Path
	if strings.ContainsAny(r.Path, "\r\n") {
		return r, fmt.Errorf("path: %q holds a line break", r.Path)
	}
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	if !isToken(r.Method) {
		return r, fmt.Errorf("method: %q is not an HTTP method token", r.Method)
	}
	switch r.Scheme {
	case "":
		r.Scheme = "http"
	case "http", "https":
	default:
		return r, fmt.Errorf("scheme: %q: want http or https", r.Scheme)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		v := r.Headers[k]
		switch {
		case !isToken(k):
			return r, fmt.Errorf("headers: %q is not a header name", k)
		case http.CanonicalHeaderKey(k) == "Host":
			return r, errors.New("headers: Host is set with host, not as a header")
		case strings.ContainsAny(v, "\r\n\x00"):
			return r, fmt.Errorf("headers.%s: value holds a line break or NUL", k)
		}
	}
	if fr.Repeat != nil {
		r.Repeat = *fr.Repeat
		if r.Repeat < 1 || r.Repeat > maxRepeat {
			return r, fmt.Errorf("repeat: %d: want 1 to %d", r.Repeat, maxRepeat)
		}
	}
	if fr.Expect == nil || fr.Expect.empty() {
		return r, errors.New("expect: at least one check is required")
	}
	r.Expect = *fr.Expect
	e := &r.Expect
	if e.Status != 0 && (e.Status < 100 || e.Status > 599) {
		return r, fmt.Errorf("expect.status: %d is not an HTTP status", e.Status)
	}
	if e.Service.Checked && e.Service.ID != "" {
		if _, err := compile.ParseServiceRef(e.Service.ID); err != nil {
			return r, fmt.Errorf("expect.service: %w", err)
		}
	} else if e.Service.blank {
		return r, errors.New(`expect.service: "" is not a backend: write null for none`)
	}
	if e.DistinctEndpoints != nil && (*e.DistinctEndpoints < 0 || *e.DistinctEndpoints > r.Repeat) {
		return r, fmt.Errorf("expect.distinctEndpoints: %d: want 0 to repeat (%d)", *e.DistinctEndpoints, r.Repeat)
	}
	for k := range e.ResponseHeaders {
		if !isToken(k) {
			return r, fmt.Errorf("expect.responseHeaders: %q is not a header name", k)
		}
	}
	return r, nil
}

func badHostRune(r rune) bool { return r <= ' ' || r == 0x7f }

// isToken reports an RFC 9110 token (method and header names).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// checkKeys walks a parsed YAML tree along the Go type it will be decoded
// into and lists every unknown key and wrongly typed value by path, so the
// error says where instead of only what.
func checkKeys(v any, t reflect.Type, path string) []error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil {
		return nil // null: absent, or "none" for OptionalService
	}
	want := func(what string) []error {
		msg := fmt.Sprintf("want %s, got %s", what, describe(v))
		if path != "" {
			msg = path + ": " + msg
		}
		return []error{errors.New(msg)}
	}
	var out []error
	switch {
	case t == reflect.TypeFor[json.RawMessage]():
		return nil // objects: checked by the manifest loader
	case t == reflect.TypeFor[OptionalService]():
		if _, ok := v.(string); !ok {
			return want("namespace/name:port or null")
		}
		return nil
	case t.Kind() == reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return want("a mapping")
		}
		fields := make(map[string]reflect.Type)
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			fields[name] = f.Type
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if ft, ok := fields[k]; ok {
				out = append(out, checkKeys(m[k], ft, join(path, k))...)
			} else {
				out = append(out, fmt.Errorf("unknown key %q", join(path, k)))
			}
		}
	case t.Kind() == reflect.Slice:
		s, ok := v.([]any)
		if !ok {
			return want("a list")
		}
		for i, e := range s {
			out = append(out, checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
		}
	case t.Kind() == reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return want("a mapping")
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, checkKeys(m[k], t.Elem(), join(path, k))...)
		}
	case t.Kind() == reflect.String:
		if _, ok := v.(string); !ok {
			return want("a string")
		}
	case t.Kind() == reflect.Bool:
		if _, ok := v.(bool); !ok {
			return want("true or false")
		}
	case t.Kind() == reflect.Int:
		if _, ok := v.(int64); !ok {
			return want("a whole number")
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", v)
	case bool:
		return fmt.Sprintf("boolean %v", v)
	case int64, float64:
		return fmt.Sprintf("number %v", v)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// quoteIfOdd quotes s when it holds bytes that would not show plainly.
func quoteIfOdd(s string) string {
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || c == '"' {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}
