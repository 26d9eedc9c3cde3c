package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"ramjet.dev/ramjet/classify"
	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
)

// What -translate, -explain and -report read, and which class they claim,
// decided in one place so the three views of one input agree.

// Unless -ingress-class and -controller-name are given, the views claim
// what ingress-nginx does by default, the migration's class: class
// "nginx", controller "k8s.io/ingress-nginx". An input written for ramjet
// (an IngressClass of ramjet's controller, or an Ingress naming class
// "ramjet", as the demo manifests do) claims ramjet's defaults.
const (
	nginxClass      = "nginx"
	nginxController = "k8s.io/ingress-nginx"
)

// classDefaults fills in the class options the flags left unset, from what
// snap holds.
func classDefaults(fs *flag.FlagSet, o *translateOptions, snap *compile.Snapshot) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if given["ingress-class"] || given["controller-name"] {
		return
	}
	if ramjetsOwn(snap) {
		o.ingressClass, o.controllerName = compile.DefaultIngressClass, compile.DefaultControllerName
		return
	}
	o.ingressClass, o.controllerName = nginxClass, nginxController
}

// ramjetsOwn reports whether snap is written for ramjet: it holds an
// IngressClass of ramjet's controller, or an Ingress names ramjet's class.
func ramjetsOwn(snap *compile.Snapshot) bool {
	for _, ic := range snap.IngressClasses {
		if ic.Spec.Controller == compile.DefaultControllerName {
			return true
		}
	}
	for _, ing := range snap.Ingresses {
		if ing.Annotations[classify.AnnotationIngressClass] == compile.DefaultIngressClass ||
			(ing.Spec.IngressClassName != nil && *ing.Spec.IngressClassName == compile.DefaultIngressClass) {
			return true
		}
	}
	return false
}

// claimOptions are the compile options for snap: the flags, the class
// defaults, and an IngressClass for each class the input lacks; the notes
// say which were adopted. The options were validated before.
func claimOptions(fs *flag.FlagSet, o *translateOptions, snap *compile.Snapshot) (compile.Options, []string) {
	classDefaults(fs, o, snap)
	opts, _ := o.compile()
	notes := adoptAbsentClasses(snap, opts.ControllerName)
	cm, note := findConfigMap(o.configMap, snap)
	if note != "" {
		notes = append(notes, note)
	} else if cm == nil {
		notes = append(notes, noConfigMapNote)
	}
	for _, sc := range []struct {
		ref         *string
		name, guide string
	}{{&opts.TCPServices, chartTCPServices, guideTCPServices}, {&opts.UDPServices, chartUDPServices, guideUDPServices}} {
		if *sc.ref != "" {
			continue
		}
		for _, name := range []string{sc.name, sc.guide} {
			var found []string
			for _, c := range snap.ConfigMaps {
				if c.Name == name {
					found = append(found, c.Namespace+"/"+c.Name)
				}
			}
			if len(found) == 1 {
				*sc.ref = found[0]
				notes = append(notes, "ConfigMap "+found[0]+" read as ingress-nginx's "+strings.TrimPrefix(sc.name, "ingress-nginx-")+" services ConfigMap")
				break
			}
		}
	}
	// No TCP or UDP service takes a port of the controller's own, as
	// deployed by either chart.
	opts.ReservedPorts = chartOwnPorts
	if cm != nil {
		var keep []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "ssl-redirect" {
				keep = append(keep, f.Name) // the flag wins, as the controller's
			}
		})
		opts.ConfigMap = compile.ParseConfigMap(cm, keep...)
		opts.ConfigMap.ReadHeaders(snap.ConfigMaps)
	}
	return opts, notes
}

// chartTCPServices and chartUDPServices are the names the ingress-nginx
// Helm chart gives the TCP and UDP services ConfigMaps (tcp and udp
// values) for a release named ingress-nginx.
const (
	chartTCPServices = "ingress-nginx-tcp"
	chartUDPServices = "ingress-nginx-udp"
)

// guideTCPServices and guideUDPServices are the names ingress-nginx's
// "Exposing TCP and UDP services" guide gives them, read when the chart's
// are absent.
const (
	guideTCPServices = "tcp-services"
	guideUDPServices = "udp-services"
)

// chartOwnPorts are the ports the controller listens on itself as the
// ingress-nginx chart deploys it (HTTP, HTTPS, and metrics and health, as
// ramjet's chart on its defaults) and nginx's internal ports at their
// flags' defaults (pkg/flags/flags.go: 442 --ssl-passthrough-proxy-port,
// 8181 --default-server-port, 10245 --profiler-port, 10246 --status-port,
// 10247 --stream-port): ingress-nginx's getStreamServices refuses a TCP or
// UDP service on any of them ("reserved for the Ingress controller"),
// passthrough or profiling on or not, so such an entry never served, as
// the ramjet controller refuses its own (compile.Options.ReservedPorts).
var chartOwnPorts = []int{80, 442, 443, 8181, 10245, 10246, 10247, 10254}

// chartConfigMap is the name the ingress-nginx Helm chart gives its
// ConfigMap (controller.config).
const chartConfigMap = "ingress-nginx-controller"

// noConfigMapNote says that the input holds no ingress-nginx ConfigMap,
// whose keys change answers (ssl-redirect, allow-snippet-annotations):
// every view says so rather than read as if the keys had been checked.
const noConfigMapNote = "no ingress-nginx ConfigMap in the input (one named " + chartConfigMap + ", or the one -configmap names): its keys are taken at ingress-nginx's defaults"

// findConfigMap is the ingress-nginx ConfigMap among snap's: the one ref
// names ("namespace/name"), else the only one named chartConfigMap; nil
// when there is none. The note says which was read, or that ref is absent.
func findConfigMap(ref string, snap *compile.Snapshot) (*corev1.ConfigMap, string) {
	var found []*corev1.ConfigMap
	for _, cm := range snap.ConfigMaps {
		if ref == cm.Namespace+"/"+cm.Name || ref == "" && cm.Name == chartConfigMap {
			found = append(found, cm)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], fmt.Sprintf("ConfigMap %s/%s read as the ingress-nginx ConfigMap", found[0].Namespace, found[0].Name)
	case ref != "":
		return nil, fmt.Sprintf("-configmap %s is not in the input: ingress-nginx's defaults apply", ref)
	case len(found) > 1:
		return nil, fmt.Sprintf("%d ConfigMaps named %s: name one with -configmap", len(found), chartConfigMap)
	}
	return nil, ""
}

// adoptAbsentClasses makes each class that an Ingress names in
// spec.ingressClassName but the input does not hold (a dump of Ingresses
// without IngressClasses) an IngressClass of controller: the Ingresses are
// reported as the migration's, not as another controller's. It returns one
// note per class adopted.
func adoptAbsentClasses(snap *compile.Snapshot, controller string) []string {
	held := map[string]bool{}
	for _, ic := range snap.IngressClasses {
		held[ic.Name] = true
	}
	count := map[string]int{}
	var names []string
	for _, ing := range snap.Ingresses {
		name := ing.Spec.IngressClassName
		if name == nil || *name == "" || held[*name] {
			continue
		}
		if count[*name] == 0 {
			names = append(names, *name)
		}
		count[*name]++
	}
	slices.Sort(names)
	var notes []string
	for _, name := range names {
		snap.IngressClasses = append(snap.IngressClasses, &networkingv1.IngressClass{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       networkingv1.IngressClassSpec{Controller: controller},
		})
		notes = append(notes, fmt.Sprintf("IngressClass %q is not in the input: its %s taken as controller %q's", name, plural(count[name], "Ingress"), controller))
	}
	return notes
}

// loadLenient reads manifests as manifest.Load does, except that a
// document (or List item) that cannot be read is left out and returned as
// one line in unreadable rather than failing the whole input: one v1beta1
// Ingress in a dump of hundreds should not hide the others. err is set
// only when nothing can be read (no such file, no arguments).
func loadLenient(paths []string) (snap *compile.Snapshot, skipped, unreadable []string, err error) {
	snap, skipped, err = manifest.Load(paths...)
	if err == nil {
		return snap, skipped, nil, nil
	}
	// bad[file][document] lists the List items at fault; -1 is the whole
	// document, and document 0 the whole file.
	bad := map[string]map[int][]int{}
	for _, e := range leaves(err) {
		var me *manifest.Error
		if !errors.As(e, &me) || me.File == "" {
			return nil, nil, nil, err
		}
		f := filepath.Clean(me.File)
		if bad[f] == nil {
			bad[f] = map[int][]int{}
		}
		bad[f][me.Document] = append(bad[f][me.Document], me.Item)
		unreadable = append(unreadable, me.Error())
	}
	var files []string
	for _, p := range paths {
		found, ferr := manifest.Files(p)
		if ferr != nil {
			return nil, nil, nil, err
		}
		for _, f := range found {
			if !slices.Contains(files, filepath.Clean(f)) {
				files = append(files, filepath.Clean(f))
			}
		}
	}
	// One Reader, so that objects an extension reads (Gateway API) are
	// translated together across files, as manifest.Load does.
	r := manifest.NewReader()
	for _, f := range files {
		docs := bad[f]
		if _, whole := docs[0]; whole {
			continue
		}
		data, rerr := os.ReadFile(f)
		if rerr != nil {
			return nil, nil, nil, err
		}
		kept, kerr := keepReadable(data, docs)
		if kerr != nil {
			return nil, nil, nil, err
		}
		if derr := r.Decode(f, kept); derr != nil {
			return nil, nil, nil, errors.Join(err, derr)
		}
	}
	snap, skipped = r.Snapshot()
	return snap, skipped, unreadable, nil
}

// leaves unwraps a join of errors into its parts.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// keepReadable returns the stream's documents as a stream without
// those bad names: a document whose list holds -1 is left out, otherwise
// the listed items of its List. Documents are counted as manifest counts
// them, so the positions of its errors apply.
func keepReadable(data []byte, bad map[int][]int) ([]byte, error) {
	var docs [][]byte
	// manifest reads a template that begins with {{ as YAML.
	if utilyaml.IsJSONBuffer(data) && !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{{")) {
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err == io.EOF {
				break
			} else if err != nil {
				docs = append(docs, nil) // the rest cannot be split: manifest reported it
				break
			}
			docs = append(docs, raw)
		}
	} else {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				docs = append(docs, nil)
				break
			}
			js, err := utilyaml.ToJSON(doc)
			if err != nil {
				js = nil // manifest reported it
			}
			docs = append(docs, js)
		}
	}
	// A document or item left out becomes null, which manifest reads as
	// empty but counts, so that the others keep their positions. The
	// documents are JSON in a YAML stream: a JSON stream must begin with
	// an object.
	var out bytes.Buffer
	for i, doc := range docs {
		out.WriteString("---\n")
		items := bad[i+1]
		if doc == nil || slices.Contains(items, -1) {
			out.WriteString("null\n")
			continue
		}
		if len(items) > 0 {
			var list map[string]any
			if err := json.Unmarshal(doc, &list); err != nil {
				out.WriteString("null\n")
				continue
			}
			all, _ := list["items"].([]any)
			for _, j := range items {
				if j >= 0 && j < len(all) {
					all[j] = nil
				}
			}
			list["items"] = all
			var err error
			if doc, err = json.Marshal(list); err != nil {
				return nil, err
			}
		}
		out.Write(doc)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// plural is "n thing" or "n things" ("n Ingresses").
func plural(n int, thing string) string {
	return strconv.Itoa(n) + " " + noun(n, thing)
}

// noun is thing in the number n asks for.
func noun(n int, thing string) string {
	switch {
	case n == 1:
		return thing
	case strings.HasSuffix(thing, "s"):
		return thing + "es"
	}
	return thing + "s"
}

// verb is plural or singular, the form of a verb n subjects take.
func verb(n int, plural, singular string) string {
	if n == 1 {
		return singular
	}
	return plural
}

// checkSpelling spells a claiming setting as this command's flag, for
// compile.Unclaimed.Describe.
func checkSpelling(option, value string) string {
	if option == compile.OptionWatchIngressWithoutClass {
		return "-" + option
	}
	return "-" + option + "=" + value
}

// loadFailure is why loadLenient's result cannot be worked on: its error,
// or nothing read (then the unreadable documents after the message);
// nil when what was read can be.
func loadFailure(paths []string, snap *compile.Snapshot, unreadable []string, err error) []string {
	switch {
	case err != nil:
		return messages(err)
	case nothingRead(snap):
		return append([]string{nothingReadMessage(paths)}, unreadable...)
	}
	return nil
}

// failLoad writes errs, as one JSON document {"errors": [...]} with
// asJSON, and returns the exit code 2.
func failLoad(errs []string, asJSON bool, stdout, stderr io.Writer) int {
	if asJSON {
		return encode(struct {
			Errors []string `json:"errors"`
		}{errs}, 2, stdout, stderr)
	}
	for _, e := range errs {
		fmt.Fprintln(stderr, e)
	}
	return 2
}
