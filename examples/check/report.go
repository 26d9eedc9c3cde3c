package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"ramjet.dev/ramjet/compile"
)

// The migration report (-report): what of an ingress-nginx setup does not
// carry over unchanged. It is the compile warnings of the manifests, each
// with its severity (compile.Warning.Severity), grouped per Ingress and
// totalled per annotation or reason. What ramjet does instead is the
// warning's own message, so the report says no more and no less than the
// compiler.

// severityRank orders findings and totals: the most serious first.
var severityRank = map[compile.Severity]int{compile.TrafficMoves: 0, compile.FeatureMissing: 1, compile.Cosmetic: 2}

type migration struct {
	// OK is false when some finding moves traffic.
	OK bool `json:"ok"`
	// Claimed counts the Ingresses the report covers; Unclaimed those of
	// another class, not covered.
	Claimed   int `json:"claimed"`
	Unclaimed int `json:"unclaimed"`
	// Clean counts claimed Ingresses without findings; CosmeticOnly those
	// whose findings are all cosmetic.
	Clean        int        `json:"clean"`
	CosmeticOnly int        `json:"cosmeticOnly"`
	Totals       severities `json:"totals"`
	Ingress      []ingFind  `json:"ingresses"`
	Other        []finding  `json:"other"`
	ByTopic      []topic    `json:"byTopic"`
	Errors       []string   `json:"errors,omitempty"`
	Skipped      []string   `json:"skipped,omitempty"`
	Settings     [2]string  `json:"settings"` // ingress class, controller name
	// NoSecrets: the input holds no Secrets (a dump without them), so
	// SecretNotFound findings say nothing and are left out; NoServices the
	// same for Services and ServiceNotFound. Missing counts what was left
	// out, once for the whole input.
	NoSecrets  bool      `json:"noSecrets"`
	NoServices bool      `json:"noServices"`
	Missing    []missing `json:"missing,omitempty"`
	// NoConfigMap: the input holds no ingress-nginx ConfigMap (none named
	// as the chart names it, and no -configmap), so every key is taken at
	// ingress-nginx's default, which decides findings such as the snippets'.
	NoConfigMap bool `json:"noConfigMap"`
	// Notes say how the input was read: classes taken as the migration's.
	Notes []string `json:"notes,omitempty"`
	// UnclaimedNote says how many Ingresses read are not claimed, what
	// they name and which flag claims them ("" when all are).
	UnclaimedNote string `json:"unclaimedNote,omitempty"`
	// Unreadable are the documents that could not be read, one line each
	// (a v1beta1 Ingress, a bad object); the rest is reported without them.
	Unreadable []string `json:"unreadable,omitempty"`
	// Snippets say, per claimed Ingress with a snippet annotation, how
	// ramjet reads each of its directives.
	Snippets []snippetUse `json:"snippets,omitempty"`
	// SnippetsOn: the options apply snippets (allow-snippet-annotations
	// and annotations-risk-level Critical).
	SnippetsOn bool `json:"snippetsOn"`
	// GatewayAPI lists the annotations -translate -to gateway leaves out.
	GatewayAPI []gatewayGap `json:"gatewayApi"`
	// AdmissionRefused are the claimed Ingresses the validating webhook
	// (ingress-nginx's and the controller's) refuses when applied again.
	AdmissionRefused []admissionRefusal `json:"admissionRefused,omitempty"`
	claimed          []compile.Ref
}

// snippetUse is one snippet annotation's directives as ramjet reads them.
type snippetUse struct {
	Ingress    string                     `json:"ingress"`
	Annotation string                     `json:"annotation"`
	Directives []compile.SnippetDirective `json:"directives"`
}

// snippetUses reads the snippet annotations of the claimed Ingresses.
func snippetUses(snap compile.Snapshot, claimed []compile.Ref) []snippetUse {
	var out []snippetUse
	for _, ing := range snap.Ingresses {
		ref := compile.Ref{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
		if !slices.Contains(claimed, ref) {
			continue
		}
		for _, name := range []string{"configuration-snippet", "server-snippet"} {
			key := compile.NginxPrefix + name
			if _, ok := ing.Annotations[compile.NativePrefix+name]; ok {
				key = compile.NativePrefix + name // it shadows the nginx one
			}
			v, ok := ing.Annotations[key]
			if !ok || strings.TrimSpace(v) == "" {
				continue
			}
			out = append(out, snippetUse{Ingress: ing.Namespace + "/" + ing.Name, Annotation: key,
				Directives: compile.ReadSnippet(v, name == "server-snippet")})
		}
	}
	slices.SortFunc(out, func(a, b snippetUse) int {
		return cmp.Or(cmp.Compare(a.Ingress, b.Ingress), cmp.Compare(a.Annotation, b.Annotation))
	})
	return out
}

// writeSnippets lists each snippet's directives: translated, and not with
// why.
func writeSnippets(w io.Writer, m migration) {
	if len(m.Snippets) == 0 {
		return
	}
	state := "applied"
	if !m.SnippetsOn {
		state = "off with these options (-allow-snippet-annotations, -annotations-risk-level Critical), as under ingress-nginx with the same settings"
	}
	fmt.Fprintf(w, "\nSnippets (%s)\n", state)
	for _, u := range m.Snippets {
		var done []string
		for _, d := range u.Directives {
			if d.Translated {
				done = append(done, fmt.Sprintf("%s (line %d)", d.Name, d.Line))
			}
		}
		fmt.Fprintf(w, "  Ingress %s %s\n", u.Ingress, u.Annotation)
		if len(done) > 0 {
			fmt.Fprintf(w, "    translated: %s\n", strings.Join(done, ", "))
		}
		for _, d := range u.Directives {
			if !d.Translated {
				fmt.Fprintf(w, "    not:        %s (line %d) [%s] %s\n", d.Name, d.Line, d.Reason, d.Note)
			}
		}
	}
}

// missing sums the findings left out because the input lacks a kind.
type missing struct {
	Kind      string         `json:"kind"`
	Reason    compile.Reason `json:"reason"`
	Findings  int            `json:"findings"`
	Ingresses int            `json:"ingresses"`
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
	// Annotation and Value are set when the field is an annotation; Unset
	// when the Ingress does not set it (a conflict over a default).
	Annotation string `json:"annotation,omitempty"`
	Value      string `json:"value,omitempty"`
	Unset      bool   `json:"unset,omitempty"`
	// Winner is the declaration that won, for conflicts
	// (compile.Warning.WinnerText).
	Winner string `json:"winner,omitempty"`
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
// 3 with strict when something would move traffic or a document could not
// be read, 2 when nothing can be loaded (no file, or no document read) or
// the options are wrong.
func runReport(paths []string, fs *flag.FlagSet, o *translateOptions, asJSON, strict bool, stdout, stderr io.Writer) int {
	if _, err := o.compile(); err != nil {
		fmt.Fprintln(stderr, "check:", err)
		return 2
	}
	snap, skipped, unreadable, err := loadLenient(paths)
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
	if nothingRead(snap) {
		// Every document unreadable, or no manifests at all: a report of
		// nothing would read as a clean migration.
		errs := append([]string{nothingReadMessage(paths)}, unreadable...)
		if asJSON {
			return encode(migration{Errors: errs, Unreadable: unreadable, Skipped: skipped, Ingress: []ingFind{}, Other: []finding{}, ByTopic: []topic{}}, 2, stdout, stderr)
		}
		for _, e := range errs {
			fmt.Fprintln(stderr, e)
		}
		for _, s := range skipped {
			fmt.Fprintln(stderr, s)
		}
		return 2
	}
	opts, notes := claimOptions(fs, o, snap)
	// The report says it on its own line (noConfigMap in JSON).
	notes = slices.DeleteFunc(notes, func(n string) bool { return n == noConfigMapNote })
	snippetsOn := opts.WithConfigMap().SnippetsEnabled()
	res := compile.Compile(*snap, opts)
	m := buildMigration(*snap, res, snippetsOn)
	m.Notes, m.Unreadable = notes, unreadable
	m.UnclaimedNote = res.Unclaimed.Describe(checkSpelling)
	m.OK = m.OK && len(unreadable) == 0
	m.Skipped = skipped
	m.Settings = [2]string{opts.IngressClass, opts.ControllerName}
	m.Snippets, m.SnippetsOn = snippetUses(*snap, m.claimed), snippetsOn
	m.GatewayAPI = gatewayGaps(*snap, opts)
	var cmData map[string]string
	cm, cmNote := findConfigMap(o.configMap, snap)
	if cm != nil {
		cmData = cm.Data
	}
	m.NoConfigMap = cm == nil && cmNote == "" // a note says why otherwise
	m.AdmissionRefused = admissionRefusals(*snap, opts, cmData)
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

// nothingRead reports whether the input held no object the report reads.
func nothingRead(s *compile.Snapshot) bool {
	return len(s.Ingresses)+len(s.IngressClasses)+len(s.Services)+len(s.EndpointSlices)+len(s.Secrets)+
		len(s.ConfigMaps)+len(s.HTTPRoutes)+len(s.Warnings)+len(s.ListenerCertificates) == 0
}

// nothingReadMessage is every mode's error for input nothingRead: an
// empty table or report would read as a clean translation.
func nothingReadMessage(paths []string) string {
	return fmt.Sprintf("check: nothing could be read from %s: no Ingress, IngressClass, Service, EndpointSlice, Secret, ConfigMap or Gateway API object", strings.Join(paths, ", "))
}

func buildMigration(snap compile.Snapshot, res compile.Result, snippetsOn bool) migration {
	m := migration{Claimed: len(res.Claimed), Unclaimed: len(snap.Ingresses) - len(res.Claimed), claimed: res.Claimed,
		Ingress: []ingFind{}, Other: []finding{}, ByTopic: []topic{}}
	annotations := map[compile.Ref]map[string]string{}
	for _, ing := range snap.Ingresses {
		annotations[compile.Ref{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}] = ing.Annotations
	}
	per := map[compile.Ref][]finding{}
	m.NoSecrets = len(snap.Secrets) == 0
	m.NoServices = len(snap.Services) == 0
	// A finding that only says the input lacks a kind is counted once for
	// the input, not against each Ingress.
	absent := map[compile.Reason]*missing{}
	absentIngs := map[compile.Reason]map[compile.Ref]bool{}
	for _, w := range res.Warnings {
		if kind := missingKind(m, w.Reason); kind != "" {
			if absent[w.Reason] == nil {
				absent[w.Reason] = &missing{Kind: kind, Reason: w.Reason}
				absentIngs[w.Reason] = map[compile.Ref]bool{}
			}
			absent[w.Reason].Findings++
			absentIngs[w.Reason][w.Object] = true
			continue
		}
		f := finding{Severity: w.SeverityFor(annotations[w.Object]), Reason: w.Reason, Object: w.Object.String(),
			Field: w.Field, Instead: w.Message, Winner: w.WinnerText()}
		if key, ok := strings.CutPrefix(w.Field, "metadata.annotations["); ok {
			f.Annotation = strings.TrimSuffix(key, "]")
			f.Value, ok = annotations[w.Object][f.Annotation]
			f.Unset = !ok
			f = servedByController(f, annotations[w.Object], snippetsOn)
		}
		m.Totals.add(f.Severity)
		if w.Object.Kind == "Ingress" {
			per[w.Object] = append(per[w.Object], f)
		} else {
			m.Other = append(m.Other, f)
		}
	}
	for _, r := range []compile.Reason{compile.ServiceNotFound, compile.SecretNotFound} {
		if a := absent[r]; a != nil {
			a.Ingresses = len(absentIngs[r])
			m.Missing = append(m.Missing, *a)
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
		if fs[0].Severity == compile.Cosmetic {
			m.CosmeticOnly++
		}
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
		} else if key, ok := strings.CutPrefix(f.Field, "data["); ok {
			name = "ConfigMap " + strings.TrimSuffix(key, "]")
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

// missingKind is the kind the input lacks when that is all a warning of
// reason says, or "".
func missingKind(m migration, r compile.Reason) string {
	switch {
	case m.NoServices && r == compile.ServiceNotFound:
		return "Services"
	case m.NoSecrets && r == compile.SecretNotFound:
		return "Secrets"
	}
	return ""
}

func writeMigration(w io.Writer, m migration) {
	fmt.Fprintf(w, "Migration report (ingress class %q, controller %q)\n", m.Settings[0], m.Settings[1])
	fmt.Fprintf(w, "%s claimed, %d of another class not covered; %d %s over unchanged", plural(m.Claimed, "Ingress"), m.Unclaimed, m.Clean, verb(m.Clean, "carry", "carries"))
	if m.CosmeticOnly > 0 {
		fmt.Fprintf(w, ", %d more with cosmetic findings only", m.CosmeticOnly)
	}
	fmt.Fprintln(w)
	for _, n := range m.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	if m.UnclaimedNote != "" {
		fmt.Fprintln(w, "warning: "+m.UnclaimedNote)
	}
	if len(m.Unreadable) > 0 {
		fmt.Fprintf(w, "not read, so not covered: %s (listed below)\n", plural(len(m.Unreadable), "document"))
	}
	if len(m.Skipped) > 0 {
		fmt.Fprintf(w, "skipped, so not covered: %s of kinds ramjet does not read (listed below)\n", plural(len(m.Skipped), "object"))
	}
	if m.NoConfigMap {
		fmt.Fprintln(w, noConfigMapNote)
	}
	if m.NoSecrets {
		fmt.Fprintln(w, "no Secrets in the input: missing TLS and auth Secrets are not reported")
	}
	if m.NoServices {
		fmt.Fprintln(w, "no Services in the input: missing Services are not reported")
	}
	for _, a := range m.Missing {
		fmt.Fprintf(w, "  left out: %s (%s on %s) that only %s the input has no %s\n",
			plural(a.Findings, "finding"), a.Reason, plural(a.Ingresses, "Ingress"), verb(a.Findings, "say", "says"), a.Kind)
	}
	fmt.Fprintf(w, "findings: %d traffic-moves, %d feature-missing, %d cosmetic\n", m.Totals.TrafficMoves, m.Totals.FeatureMissing, m.Totals.Cosmetic)
	line := func(f finding) {
		what := f.Field
		switch {
		case f.Unset:
			what = f.Annotation + " (not set)"
		case f.Annotation != "":
			what = f.Annotation + ": " + fmt.Sprintf("%q", f.Value)
		}
		if what == "" {
			what = "(object)"
		}
		fmt.Fprintf(w, "  %-15s %s [%s]\n  %15s -> %s\n", f.Severity, what, f.Reason, "", strings.ReplaceAll(f.Instead, "\n", " "))
		if f.Winner != "" {
			fmt.Fprintf(w, "  %15s    winner: %s\n", "", f.Winner)
		}
	}
	for _, in := range m.Ingress {
		fmt.Fprintf(w, "\nIngress %s\n", in.Ingress)
		for _, f := range in.Findings {
			line(f)
		}
	}
	if len(m.Other) > 0 {
		fmt.Fprintln(w, "\nOther objects")
		// One heading per object: m.Other is ordered by severity first,
		// so an object's findings are gathered under its first place.
		var objects []string
		byObject := map[string][]finding{}
		for _, f := range m.Other {
			if _, seen := byObject[f.Object]; !seen {
				objects = append(objects, f.Object)
			}
			byObject[f.Object] = append(byObject[f.Object], f)
		}
		for _, o := range objects {
			fmt.Fprintf(w, "  %s\n", o)
			for _, f := range byObject[o] {
				line(f)
			}
		}
	}
	if len(m.Unreadable) > 0 {
		fmt.Fprintln(w, "\nNot read")
		for _, u := range m.Unreadable {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
	if len(m.Skipped) > 0 {
		fmt.Fprintln(w, "\nSkipped: kinds ramjet does not read")
		for _, s := range m.Skipped {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	writeSnippets(w, m)
	writeGatewayGaps(w, m.GatewayAPI)
	writeAdmissionRefusals(w, m.AdmissionRefused)
	fmt.Fprintln(w, "\nTotals by annotation or reason")
	for _, t := range m.ByTopic {
		fmt.Fprintf(w, "  %-15s %-55s %3d %-9s %3d %s\n", t.Severity, t.Topic, t.Findings, noun(t.Findings, "finding")+",", t.Ingresses, noun(t.Ingresses, "Ingress"))
	}
	switch {
	case m.Totals.TrafficMoves > 0:
		if m.Totals.TrafficMoves == 1 {
			fmt.Fprintln(w, "\n1 finding moves traffic: review it before switching")
		} else {
			fmt.Fprintf(w, "\n%d findings move traffic: review them before switching\n", m.Totals.TrafficMoves)
		}
	case len(m.Unreadable) > 0:
		fmt.Fprintln(w, "\nnothing read moves traffic, but not everything was read")
	default:
		fmt.Fprintln(w, "\nnothing moves traffic")
	}
}
