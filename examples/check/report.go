package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/manifest"
)

// The migration report (-report): what of an ingress-nginx setup does not
// carry over unchanged. It is the compile warnings of the manifests, each
// with its severity (compile.Warning.Severity), grouped per Ingress and
// totalled per annotation or reason. What ramjet does instead is the
// warning's own message, so the report says no more and no less than the
// compiler.

// Unless given, -report claims what ingress-nginx does by default: class
// "nginx", controller "k8s.io/ingress-nginx".
const (
	nginxClass      = "nginx"
	nginxController = "k8s.io/ingress-nginx"
)

// severityRank orders findings and totals: the most serious first.
var severityRank = map[compile.Severity]int{compile.TrafficMoves: 0, compile.FeatureMissing: 1, compile.Cosmetic: 2}

type migration struct {
	// OK is false when some finding moves traffic.
	OK bool `json:"ok"`
	// Claimed counts the Ingresses the report covers; Unclaimed those of
	// another class, not covered.
	Claimed   int `json:"claimed"`
	Unclaimed int `json:"unclaimed"`
	// Clean counts claimed Ingresses without findings.
	Clean    int        `json:"clean"`
	Totals   severities `json:"totals"`
	Ingress  []ingFind  `json:"ingresses"`
	Other    []finding  `json:"other"`
	ByTopic  []topic    `json:"byTopic"`
	Errors   []string   `json:"errors,omitempty"`
	Skipped  []string   `json:"skipped,omitempty"`
	Settings [2]string  `json:"settings"` // ingress class, controller name
	// NoSecrets: the input holds no Secrets (a dump rarely does), so
	// SecretNotFound findings say nothing and are left out.
	NoSecrets bool `json:"noSecrets"`
}

type severities struct {
	TrafficMoves   int `json:"trafficMoves"`
	FeatureMissing int `json:"featureMissing"`
	Cosmetic       int `json:"cosmetic"`
}

func (s *severities) add(sev compile.Severity) {
	switch sev {
	case compile.TrafficMoves:
		s.TrafficMoves++
	case compile.FeatureMissing:
		s.FeatureMissing++
	default:
		s.Cosmetic++
	}
}

type ingFind struct {
	Ingress  string    `json:"ingress"`
	Findings []finding `json:"findings"`
}

// finding is one warning as the report shows it.
type finding struct {
	Severity compile.Severity `json:"severity"`
	Reason   compile.Reason   `json:"reason"`
	Object   string           `json:"object"`
	Field    string           `json:"field,omitempty"`
	// Annotation and Value are set when the field is an annotation.
	Annotation string `json:"annotation,omitempty"`
	Value      string `json:"value,omitempty"`
	// Instead is what ramjet does: the warning's message.
	Instead string `json:"instead"`
}

// topic totals the findings of one annotation, or of one reason when the
// finding is not about an annotation.
type topic struct {
	Topic    string           `json:"topic"`
	Severity compile.Severity `json:"severity"`
	Findings int              `json:"findings"`
	// Ingresses counts the distinct Ingresses concerned.
	Ingresses int `json:"ingresses"`
}

// runReport reads manifests and prints the migration report. It exits 0,
// 3 with strict when something would move traffic, 2 when the manifests
// cannot be loaded or the options are wrong.
func runReport(paths []string, fs *flag.FlagSet, o *translateOptions, asJSON, strict bool, stdout, stderr io.Writer) int {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["ingress-class"] {
		o.ingressClass = nginxClass
	}
	if !given["controller-name"] {
		o.controllerName = nginxController
	}
	opts, err := o.compile()
	if err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return 2
	}
	snap, skipped, err := manifest.Load(paths...)
	if err != nil {
		errs := messages(err)
		if asJSON {
			return encode(migration{Errors: errs, Ingress: []ingFind{}, Other: []finding{}, ByTopic: []topic{}}, 2, stdout, stderr)
		}
		for _, e := range errs {
			fmt.Fprintln(stderr, e)
		}
		return 2
	}
	m := buildMigration(*snap, compile.Compile(*snap, opts))
	m.Skipped = skipped
	m.Settings = [2]string{opts.IngressClass, opts.ControllerName}
	code := 0
	if strict && !m.OK {
		code = 3
	}
	if asJSON {
		return encode(m, code, stdout, stderr)
	}
	writeMigration(stdout, m)
	return code
}

func buildMigration(snap compile.Snapshot, res compile.Result) migration {
	m := migration{Claimed: len(res.Claimed), Unclaimed: len(snap.Ingresses) - len(res.Claimed),
		Ingress: []ingFind{}, Other: []finding{}, ByTopic: []topic{}}
	annotations := map[compile.Ref]map[string]string{}
	for _, ing := range snap.Ingresses {
		annotations[compile.Ref{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}] = ing.Annotations
	}
	per := map[compile.Ref][]finding{}
	m.NoSecrets = len(snap.Secrets) == 0
	for _, w := range res.Warnings {
		if m.NoSecrets && w.Reason == compile.SecretNotFound {
			continue
		}
		f := finding{Severity: w.Severity(), Reason: w.Reason, Object: w.Object.String(), Field: w.Field, Instead: w.Message}
		if key, ok := strings.CutPrefix(w.Field, "metadata.annotations["); ok {
			f.Annotation = strings.TrimSuffix(key, "]")
			f.Value = annotations[w.Object][f.Annotation]
		}
		m.Totals.add(f.Severity)
		if w.Object.Kind == "Ingress" {
			per[w.Object] = append(per[w.Object], f)
		} else {
			m.Other = append(m.Other, f)
		}
	}
	byFinding := func(a, b finding) int {
		return cmp.Or(cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]), cmp.Compare(a.Field, b.Field), cmp.Compare(a.Instead, b.Instead))
	}
	topics := map[string]*topic{}
	seen := map[string]map[compile.Ref]bool{}
	for _, ref := range res.Claimed {
		fs := per[ref]
		if len(fs) == 0 {
			m.Clean++
			continue
		}
		slices.SortStableFunc(fs, byFinding)
		m.Ingress = append(m.Ingress, ingFind{Ingress: ref.Namespace + "/" + ref.Name, Findings: fs})
		delete(per, ref)
	}
	// Warnings about Ingresses not claimed (ClassNotFound) stay with them.
	for ref, fs := range per {
		slices.SortStableFunc(fs, byFinding)
		m.Ingress = append(m.Ingress, ingFind{Ingress: ref.Namespace + "/" + ref.Name, Findings: fs})
	}
	slices.SortFunc(m.Ingress, func(a, b ingFind) int { return cmp.Compare(a.Ingress, b.Ingress) })
	slices.SortStableFunc(m.Other, byFinding)
	count := func(f finding, ing string) {
		name := string(f.Reason)
		if f.Annotation != "" {
			name = f.Annotation
		}
		key := string(f.Severity) + " " + name
		t := topics[key]
		if t == nil {
			t = &topic{Topic: name, Severity: f.Severity}
			topics[key] = t
			seen[key] = map[compile.Ref]bool{}
		}
		t.Findings++
		if ing != "" {
			ns, n, _ := strings.Cut(ing, "/")
			ref := compile.Ref{Kind: "Ingress", Namespace: ns, Name: n}
			if !seen[key][ref] {
				seen[key][ref] = true
				t.Ingresses++
			}
		}
	}
	for _, in := range m.Ingress {
		for _, f := range in.Findings {
			count(f, in.Ingress)
		}
	}
	for _, f := range m.Other {
		count(f, "")
	}
	for _, t := range topics {
		m.ByTopic = append(m.ByTopic, *t)
	}
	slices.SortFunc(m.ByTopic, func(a, b topic) int {
		return cmp.Or(cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]), cmp.Compare(b.Ingresses, a.Ingresses),
			cmp.Compare(b.Findings, a.Findings), cmp.Compare(a.Topic, b.Topic))
	})
	m.OK = m.Totals.TrafficMoves == 0
	return m
}

func writeMigration(w io.Writer, m migration) {
	fmt.Fprintf(w, "Migration report (ingress class %q, controller %q)\n", m.Settings[0], m.Settings[1])
	fmt.Fprintf(w, "%d Ingresses claimed, %d of another class not covered; %d carry over unchanged\n", m.Claimed, m.Unclaimed, m.Clean)
	if m.NoSecrets {
		fmt.Fprintln(w, "no Secrets in the input: missing TLS Secrets are not reported")
	}
	fmt.Fprintf(w, "findings: %d traffic-moves, %d feature-missing, %d cosmetic\n", m.Totals.TrafficMoves, m.Totals.FeatureMissing, m.Totals.Cosmetic)
	line := func(f finding) {
		what := f.Field
		if f.Annotation != "" {
			what = f.Annotation + ": " + fmt.Sprintf("%q", f.Value)
		}
		if what == "" {
			what = "(object)"
		}
		fmt.Fprintf(w, "  %-15s %s [%s]\n  %15s -> %s\n", f.Severity, what, f.Reason, "", strings.ReplaceAll(f.Instead, "\n", " "))
	}
	for _, in := range m.Ingress {
		fmt.Fprintf(w, "\nIngress %s\n", in.Ingress)
		for _, f := range in.Findings {
			line(f)
		}
	}
	if len(m.Other) > 0 {
		fmt.Fprintln(w, "\nOther objects")
		for _, f := range m.Other {
			fmt.Fprintf(w, "  %s\n", f.Object)
			line(f)
		}
	}
	fmt.Fprintln(w, "\nTotals by annotation or reason")
	for _, t := range m.ByTopic {
		fmt.Fprintf(w, "  %-15s %-55s %3d findings, %3d Ingresses\n", t.Severity, t.Topic, t.Findings, t.Ingresses)
	}
	if m.OK {
		fmt.Fprintln(w, "\nnothing moves traffic")
	} else {
		fmt.Fprintf(w, "\n%d findings move traffic: review them before switching\n", m.Totals.TrafficMoves)
	}
}
