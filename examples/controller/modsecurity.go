package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	coreruleset "github.com/corazawaf/coraza-coreruleset/v4"
	"github.com/corazawaf/coraza/v3"
	"github.com/corazawaf/coraza/v3/types"
	networkingv1 "k8s.io/api/networking/v1"

	"ramjet.dev/ramjet/compile"
	"ramjet.dev/ramjet/compile/nginxconf"
	"ramjet.dev/ramjet/match"
	"ramjet.dev/ramjet/match/vars"
	"ramjet.dev/ramjet/router"
)

// ModSecurity, as ingress-nginx v1.15 serves it, with Coraza (a Go
// implementation of the ModSecurity rule language) and the OWASP Core
// Rule Set it embeds, plugged in through router.Options.Hook the way any
// embedder would: the library carries the four annotations on the routes
// (compile.Options.ExtensionKeys) and knows nothing else of them.
//
// What a location runs is ingress-nginx's template
// (buildModSecurityForLocation): the ConfigMap's enable-modsecurity turns
// the engine on everywhere with its modsecurity-snippet, else
// /etc/nginx/modsecurity/modsecurity.conf (DetectionOnly), and with
// enable-owasp-modsecurity-crs the CRS; an Ingress's enable-modsecurity
// turns it on (or, "false", off) for its paths, adding its
// modsecurity-snippet, modsecurity.conf when neither the ConfigMap nor the
// snippet configure the engine, and with enable-owasp-core-rules the CRS.
// One Coraza WAF is compiled per distinct set of rules and reused by
// every location that has it, until a rebuild no longer needs it.

// The annotations the controller serves itself.
var modSecurityKeys = []string{"enable-modsecurity", "enable-owasp-core-rules", "modsecurity-snippet", "modsecurity-transaction-id"}

// modSecuritySettings are the ConfigMap's keys (ingress-nginx has no
// flags for them): enable-modsecurity, enable-owasp-modsecurity-crs and
// modsecurity-snippet.
//
// The fields are exported for the tests' cmp of a config, nothing else.
type modSecuritySettings struct {
	Enable, OWASP bool
	Snippet       string
}

// modSecurityConfigMapKeys read the ConfigMap's ModSecurity keys into c,
// with ingress-nginx's value syntax; they follow every rebuild.
var modSecurityConfigMapKeys = map[string]func(c *config, v string) error{
	"enable-modsecurity": func(c *config, v string) (err error) {
		c.modSecurity.Enable, err = strconv.ParseBool(v)
		return err
	},
	"enable-owasp-modsecurity-crs": func(c *config, v string) (err error) {
		c.modSecurity.OWASP, err = strconv.ParseBool(v)
		return err
	},
	"modsecurity-snippet": func(c *config, v string) error {
		c.modSecurity.Snippet = v
		return nil
	},
}

// The files ingress-nginx's image holds, which snippets Include: the
// engine's defaults and the CRS, served from the embedded rule set.
const (
	modSecurityConf = "/etc/nginx/modsecurity/modsecurity.conf"
	crsConf         = "/etc/nginx/owasp-modsecurity-crs/nginx-modsecurity.conf"
	crsDir          = "etc/nginx/owasp-modsecurity-crs/"
)

// modSecurityDefaults is ingress-nginx's modsecurity.conf (ModSecurity's
// modsecurity.conf-recommended) as far as it decides answers: detection
// only, request bodies inspected up to 13 MB (128 KB without files), a
// body that does not parse refused once the engine is on. The audit log
// lines are left out: matched rules go to the controller's log.
const modSecurityDefaults = `SecRuleEngine DetectionOnly
SecRequestBodyAccess On
SecRule REQUEST_HEADERS:Content-Type "^(?:application(?:/soap\+|/)|text/)xml" "id:'200000',phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"
SecRule REQUEST_HEADERS:Content-Type "^application/json" "id:'200001',phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"
SecRequestBodyLimit 13107200
SecRequestBodyNoFilesLimit 131072
SecRequestBodyLimitAction Reject
SecRequestBodyJsonDepthLimit 512
SecArgumentsLimit 1000
SecRule &ARGS "@ge 1000" "id:'200007',phase:2,t:none,log,deny,status:400,msg:'Failed to fully parse request body due to large argument count',severity:2"
SecRule REQBODY_ERROR "!@eq 0" "id:'200002',phase:2,t:none,log,deny,status:400,msg:'Failed to parse request body.',logdata:'%{reqbody_error_msg}',severity:2"
SecRule MULTIPART_STRICT_ERROR "!@eq 0" "id:'200003',phase:2,t:none,log,deny,status:400,msg:'Multipart request body failed strict validation'"
SecResponseBodyAccess On
SecResponseBodyMimeType text/plain text/html text/xml
SecResponseBodyLimit 524288
SecResponseBodyLimitAction ProcessPartial
`

// nginxRules is the embedded rule set under the paths of ingress-nginx's
// image, and nothing else: a snippet reads no file of the controller's
// (Include, @pmFromFile and the like resolve here), and writes none (see
// inertDirectives).
type nginxRules struct{ crs string }

func newNginxRules() nginxRules {
	confs, _ := fs.Glob(coreruleset.FS, "@owasp_crs/*.conf")
	var b strings.Builder
	b.WriteString("Include /" + crsDir + "crs-setup.conf\n")
	b.WriteString("Include /" + crsDir + "rules/REQUEST-900-EXCLUSION-RULES-BEFORE-CRS.conf\n")
	for _, c := range confs {
		b.WriteString("Include /" + crsDir + "rules/" + path.Base(c) + "\n")
	}
	b.WriteString("Include /" + crsDir + "rules/RESPONSE-999-EXCLUSION-RULES-AFTER-CRS.conf\n")
	return nginxRules{crs: b.String()}
}

// resolve maps a path of the image to the embedded rule set: generated
// text, or a name in coreruleset.FS.
func (r nginxRules) resolve(name string) (text string, crsName string, err error) {
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	switch name {
	case modSecurityConf[1:]:
		return modSecurityDefaults, "", nil
	case crsConf[1:]:
		return r.crs, "", nil
	case crsDir + "rules/REQUEST-900-EXCLUSION-RULES-BEFORE-CRS.conf", crsDir + "rules/RESPONSE-999-EXCLUSION-RULES-AFTER-CRS.conf":
		return "", "", nil // the image's are the empty examples
	case crsDir + "crs-setup.conf":
		return "", "@crs-setup.conf.example", nil
	case crsDir + "rules":
		return "", "@owasp_crs", nil
	}
	if rest, ok := strings.CutPrefix(name, crsDir+"rules/"); ok {
		return "", "@owasp_crs/" + rest, nil
	}
	if strings.HasPrefix(name, "@") { // coraza-coreruleset's own names
		return "", name, nil
	}
	return "", "", &fs.PathError{Op: "open", Path: "/" + name, Err: errors.New("not a file of ingress-nginx's image the controller serves (the CRS under " + "/" + crsDir + " and " + modSecurityConf + ")")}
}

func (r nginxRules) ReadFile(name string) ([]byte, error) {
	text, crsName, err := r.resolve(name)
	if err != nil || crsName == "" {
		return []byte(text), err
	}
	return fs.ReadFile(coreruleset.FS, crsName)
}

func (r nginxRules) Open(name string) (fs.File, error) {
	_, crsName, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	if crsName == "" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("read it with ReadFile")}
	}
	return coreruleset.FS.Open(crsName)
}

func (r nginxRules) ReadDir(name string) ([]fs.DirEntry, error) {
	_, crsName, err := r.resolve(name)
	if err != nil {
		return nil, err
	}
	return fs.ReadDir(coreruleset.FS, crsName)
}

// inertDirectives write files or set up logs ingress-nginx points at its
// own disk (SecAuditLog /var/log/audit/…): the controller drops them, so
// that an Ingress cannot make it write anywhere; matched rules are logged
// to its own log instead.
var inertDirectives = []string{
	"secauditengine", "secauditlog", "secauditlog2", "secauditlogdirmode", "secauditlogfilemode",
	"secauditlogformat", "secauditlogparts", "secauditlogrelevantstatus", "secauditlogstoragedir",
	"secauditlogtype", "secdebuglog", "secdebugloglevel", "secdatadir", "sectmpdir", "secuploaddir",
	"secuploadkeepfiles", "secuploadfilemode", "secunicodemapfile", "secstatusengine",
}

// snippetRules turns a modsecurity-snippet as ingress-nginx writes it,
// inside the single quotes of "modsecurity_rules '…';", into the rules
// ModSecurity reads: nginx's unescaping of a quoted string (\" \' \\ and
// \t \r \n), and an unescaped quote is an error, as nginx refuses that
// configuration. Then the inert directives go.
func snippetRules(snippet string) (string, error) {
	for i := 0; i < len(snippet); i++ {
		switch {
		case snippet[i] == '\\':
			i++ // an escaped byte, quote or not
		case snippet[i] == '\'':
			return "", errors.New("an unescaped ' ends nginx's quoted modsecurity_rules: ingress-nginx's configuration would not load (write \\')")
		}
	}
	rules := nginxconf.Unescape(snippet)
	// Directives may continue over lines ending in a backslash.
	var out strings.Builder
	var logical strings.Builder
	flush := func() {
		line := logical.String()
		logical.Reset()
		f := strings.Fields(line)
		if len(f) > 0 && slices.Contains(inertDirectives, strings.ToLower(f[0])) {
			return
		}
		out.WriteString(line)
	}
	for line := range strings.Lines(rules) {
		logical.WriteString(line)
		if !strings.HasSuffix(strings.TrimRight(line, "\r\n"), "\\") {
			flush()
		}
	}
	flush()
	return out.String(), nil
}

// wafKey is what decides a location's rules, besides the ConfigMap's
// settings (which every key of a wafState shares).
type wafKey struct {
	owasp   bool
	snippet string
}

// wafEngine is one compiled WAF, or why it could not be built: its
// locations then answer 503, never unprotected.
type wafEngine struct {
	waf coraza.WAF
	err error
}

// wafState is one generation of engines, for the ConfigMap's settings.
type wafState struct {
	global  modSecuritySettings
	engines map[wafKey]*wafEngine
}

// modSecurity is the controller's WAF: router.Options.Hook and BodyHook
// are its hook and bodyHook, and prepare readies the engines of each table before it is published.
type modSecurity struct {
	log   *slog.Logger
	rules nginxRules
	// maxBody is the router's body limit (Options.MaxBodySize), which a
	// location's proxy-body-size replaces: the part of a body inspected
	// never exceeds what the router lets through.
	maxBody int64
	// bodyTimeout is the longest wait between two reads of a body the WAF
	// inspects, the router's client body timeout.
	bodyTimeout time.Duration

	mu    sync.Mutex // serializes prepare and the builds
	state atomic.Pointer[wafState]
	// pending holds each request's transaction (*pendingTx) from hook to
	// bodyHook, keyed by its *http.Request; the request's end drops it.
	// npending counts its entries, so that bodyHook leaves the map alone
	// while no request has one (every request where the WAF is off).
	pending  sync.Map
	npending atomic.Int64
}

func newModSecurity(cfg config, log *slog.Logger) *modSecurity {
	maxBody := cfg.maxBodySize
	switch {
	case maxBody == 0:
		maxBody = router.DefaultMaxBodySize
	case maxBody < 0:
		maxBody = 0 // no limit
	}
	return &modSecurity{log: log, rules: newNginxRules(), maxBody: maxBody, bodyTimeout: router.DefaultClientBodyTimeout}
}

// location reads a location's settings from its route's extensions:
// whether the WAF runs there, the rules and the transaction ID template.
// Values that do not parse count as unset, as ingress-nginx reads them.
func (st *wafState) location(ext *match.Extensions) (on bool, key wafKey, txID string) {
	enable, enableSet := false, false
	if v, ok := ext.Get("enable-modsecurity"); ok {
		b, err := strconv.ParseBool(v)
		enable, enableSet = b && err == nil, err == nil
	}
	if !st.global.Enable && !enable || enableSet && !enable {
		return false, wafKey{}, ""
	}
	if v, ok := ext.Get("enable-owasp-core-rules"); ok {
		key.owasp, _ = strconv.ParseBool(v)
	}
	key.snippet, _ = ext.Get("modsecurity-snippet")
	if v, ok := ext.Get("modsecurity-transaction-id"); ok && validTransactionID(v) {
		txID = v
	}
	return true, key, txID
}

// validTransactionID is ingress-nginx's validator of
// modsecurity-transaction-id (parser.NGINXVariable, spaces aside): a
// value it refuses is not applied, and the transaction gets the default
// ID.
func validTransactionID(v string) bool {
	return transactionIDChars.MatchString(strings.ReplaceAll(v, " ", ""))
}

var transactionIDChars = regexp.MustCompile(`^[A-Za-z0-9_${}-]*$`)

// directives are the rules of a location with key under the ConfigMap's
// settings g, in ingress-nginx's order: the http block's, then the
// location's.
func (g modSecuritySettings) directives(key wafKey) (string, error) {
	var b strings.Builder
	// ModSecurity detects only until told otherwise; Coraza would block.
	b.WriteString("SecRuleEngine DetectionOnly\n")
	add := func(s string) error {
		rules, err := snippetRules(s)
		b.WriteString(rules)
		b.WriteString("\n")
		return err
	}
	if g.Enable {
		if g.Snippet != "" {
			if err := add(g.Snippet); err != nil {
				return "", fmt.Errorf("ConfigMap modsecurity-snippet: %w", err)
			}
		} else {
			b.WriteString("Include " + modSecurityConf + "\n")
		}
		if g.OWASP {
			b.WriteString("Include " + crsConf + "\n")
		}
	}
	if key.snippet != "" {
		if err := add(key.snippet); err != nil {
			return "", err
		}
	}
	if !g.Enable && key.snippet == "" {
		b.WriteString("Include " + modSecurityConf + "\n")
	}
	if !g.OWASP && key.owasp {
		b.WriteString("Include " + crsConf + "\n")
	}
	return b.String(), nil
}

// build compiles the WAF of key under g.
func (ms *modSecurity) build(g modSecuritySettings, key wafKey) *wafEngine {
	rules, err := g.directives(key)
	if err != nil {
		return &wafEngine{err: err}
	}
	waf, err := coraza.NewWAF(coraza.NewWAFConfig().
		WithRootFS(ms.rules).
		WithErrorCallback(ms.logMatch).
		WithDirectives(rules))
	if err != nil {
		return &wafEngine{err: err}
	}
	return &wafEngine{waf: waf}
}

// logMatch logs a rule that matched and logs (ModSecurity's error log).
func (ms *modSecurity) logMatch(mr types.MatchedRule) {
	r := mr.Rule()
	ms.log.Warn("modsecurity rule matched", "rule", r.ID(), "msg", mr.Message(), "data", mr.Data(),
		"severity", r.Severity().String(), "transaction", mr.TransactionID(), "uri", mr.URI(), "client", mr.ClientIPAddress())
}

// prepare builds the engines the table's locations need under g, reusing
// those already built, before the table is published; it returns a
// warning for each Ingress whose rules Coraza refuses (its paths answer
// 503). Engines no longer needed are dropped with the previous state.
func (ms *modSecurity) prepare(g modSecuritySettings, table *match.Table) []compile.Warning {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	old := ms.state.Load()
	st := &wafState{global: g, engines: map[wafKey]*wafEngine{}}
	var warns []compile.Warning
	var globalErr error
	warned, badTxID := map[match.Source]bool{}, map[match.Source]bool{}
	need := func(ext *match.Extensions, src match.Source) {
		on, key, _ := st.location(ext)
		if !on {
			return
		}
		e := st.engines[key]
		if e == nil {
			if old != nil && old.global == g {
				e = old.engines[key]
			}
			if e == nil {
				e = ms.build(g, key)
			}
			st.engines[key] = e
		}
		ing := match.Source{Namespace: src.Namespace, Name: src.Name}
		if e.err != nil && !warned[ing] {
			warned[ing] = true
			warns = append(warns, modSecurityWarning(ing, key, e.err, globalErr))
		}
		if v, ok := ext.Get("modsecurity-transaction-id"); ok && !validTransactionID(v) && !badTxID[ing] {
			badTxID[ing] = true
			warns = append(warns, compile.Warning{Reason: compile.AnnotationRejected,
				Object:  compile.Ref{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name},
				Field:   "metadata.annotations[" + compile.NginxPrefix + "modsecurity-transaction-id]",
				Message: fmt.Sprintf("modsecurity-transaction-id %q has a character ingress-nginx does not accept there (letters, digits, -, _, $, { and }); not applied, the transaction takes the request ID", v)})
		}
	}
	if g.Enable {
		// The ConfigMap's rules alone: when they fail, every location
		// fails with them, and the warnings say so.
		if old != nil && old.global == g && old.engines[wafKey{}] != nil {
			st.engines[wafKey{}] = old.engines[wafKey{}]
		} else {
			st.engines[wafKey{}] = ms.build(g, wafKey{})
		}
		globalErr = st.engines[wafKey{}].err
	}
	if table != nil {
		for vh := range table.VirtualHosts() {
			for _, r := range vh.Routes {
				need(r.Extensions, r.Source)
			}
			if vh.Fallback != nil {
				need(vh.FallbackLocation.Extensions, vh.FallbackSource)
			}
		}
	}
	ms.state.Store(st)
	return warns
}

// checker is the admission webhook's view of the WAF under g: the warning
// prepare would give ing, nil when its locations need no WAF or their
// rules build. Engines of the serving state are reused; others are built
// and dropped, outside mu, so that a review never holds up a table.
func (ms *modSecurity) checker(g modSecuritySettings) func(*networkingv1.Ingress) *compile.Warning {
	return func(ing *networkingv1.Ingress) *compile.Warning {
		ext := map[string]string{}
		for _, k := range modSecurityKeys {
			if v, ok := ing.Annotations[compile.NativePrefix+k]; ok {
				ext[k] = v // ramjet.dev/ wins, as compile.Options.ExtensionKeys says
			} else if v, ok := ing.Annotations[compile.NginxPrefix+k]; ok {
				ext[k] = v
			}
		}
		st := &wafState{global: g}
		on, key, _ := st.location(match.NewExtensions(ext))
		if !on {
			return nil
		}
		var e, global *wafEngine
		if cur := ms.state.Load(); cur != nil && cur.global == g {
			e, global = cur.engines[key], cur.engines[wafKey{}]
		}
		if e == nil {
			e = ms.build(g, key)
		}
		if e.err == nil {
			return nil
		}
		var globalErr error
		if g.Enable {
			if global == nil {
				global = ms.build(g, wafKey{})
			}
			globalErr = global.err
		}
		w := modSecurityWarning(match.Source{Namespace: ing.Namespace, Name: ing.Name}, key, e.err, globalErr)
		return &w
	}
}

// modSecurityWarning says that an Ingress's rules did not build; global
// is the error of the ConfigMap's rules alone, nil when they build.
func modSecurityWarning(ing match.Source, key wafKey, err, global error) compile.Warning {
	what := "ModSecurity rules refused by Coraza"
	if global != nil {
		what = "the ConfigMap's ModSecurity rules (enable-modsecurity, modsecurity-snippet) refused by Coraza"
	}
	w := compile.Warning{Reason: compile.AnnotationRejected,
		Message: fmt.Sprintf("%s: %v; the Ingress's paths answer 503 until they build (a WAF that cannot be built never serves unprotected)", what, err)}
	if ing.Name != "" {
		w.Object = compile.Ref{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
	}
	switch {
	case global != nil:
	case key.snippet != "":
		w.Field = "metadata.annotations[" + compile.NginxPrefix + "modsecurity-snippet]"
	case key.owasp:
		w.Field = "metadata.annotations[" + compile.NginxPrefix + "enable-owasp-core-rules]"
	}
	return w
}

// engine returns the engine for key: the prepared one, else (a request
// on a table older than the last prepare) one built now and kept.
func (ms *modSecurity) engine(st *wafState, key wafKey) *wafEngine {
	if e := st.engines[key]; e != nil {
		return e
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	cur := ms.state.Load()
	if e := cur.engines[key]; e != nil && cur.global == st.global {
		return e
	}
	e := ms.build(st.global, key)
	if cur.global == st.global {
		next := &wafState{global: cur.global, engines: make(map[wafKey]*wafEngine, len(cur.engines)+1)}
		for k, v := range cur.engines {
			next.engines[k] = v
		}
		next.engines[key] = e
		ms.state.Store(next)
	}
	return e
}

// hook runs the location's WAF over the request head
// (router.Options.Hook): phase 1, where ModSecurity-nginx runs it, in
// nginx's rewrite phase. The transaction then waits for bodyHook, which
// runs phase 2 past the router's 503 for a backend without endpoints, as
// ModSecurity-nginx reads the body in nginx's preaccess phase, after
// ingress-nginx's balancer answered that 503 in the rewrite phase. With
// SecRuleEngine On an interruption answers with the rule's status;
// detection only, matched rules are logged and the request goes on. A
// location whose rules did not build answers 503.
func (ms *modSecurity) hook(w http.ResponseWriter, req *http.Request, m router.Match) bool {
	st := ms.state.Load()
	if st == nil {
		return false
	}
	ext := m.Extensions()
	if ext == nil && !st.global.Enable {
		return false
	}
	on, key, txTemplate := st.location(ext)
	if !on {
		return false
	}
	e := ms.engine(st, key)
	if e.err != nil {
		http.Error(w, "503 Service Unavailable: the location's ModSecurity rules do not build\n", http.StatusServiceUnavailable)
		return true
	}
	tx := e.waf.NewTransactionWithID(transactionID(txTemplate, req))
	if tx.IsRuleEngineOff() {
		tx.ProcessLogging()
		_ = tx.Close()
		return false
	}
	// The body read into the transaction is handed on to the backend, so
	// the transaction closes only when the request is done. A client that
	// leaves ends the request's context while a hook may still be
	// inspecting, or the backend still reading the body from the
	// transaction's buffer: the guard makes the close wait for both. The
	// pending transaction is stored first, so that a context already
	// done drops it too.
	p := &pendingTx{tx: tx}
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	ms.npending.Add(1)
	ms.pending.Store(req, p)
	context.AfterFunc(req.Context(), func() {
		ms.dropPending(req, p)
		p.g.mu.Lock()
		defer p.g.mu.Unlock()
		p.g.closed = true
		tx.ProcessLogging()
		_ = tx.Close()
	})
	it := ms.inspectHead(tx, req)
	if it == nil {
		return false
	}
	ms.dropPending(req, p)
	return ms.refuse(w, it, m, tx)
}

// dropPending takes req's transaction p out of pending, if it is there.
func (ms *modSecurity) dropPending(req *http.Request, p *pendingTx) {
	if ms.pending.CompareAndDelete(req, p) {
		ms.npending.Add(-1)
	}
}

// bodyHook runs phase 2 of the transaction hook left for req
// (router.Options.BodyHook): it reads the body (up to the location's
// body limit and the engine's) and hands it back whole for the backend.
func (ms *modSecurity) bodyHook(w http.ResponseWriter, req *http.Request, m router.Match) bool {
	if ms.npending.Load() == 0 {
		return false
	}
	v, ok := ms.pending.LoadAndDelete(req)
	if !ok {
		return false
	}
	ms.npending.Add(-1)
	p := v.(*pendingTx)
	p.g.mu.Lock()
	defer p.g.mu.Unlock()
	if p.g.closed {
		return false // the request is over
	}
	it := ms.inspectBody(p.tx, &p.g, w, req, m)
	if it == nil {
		return false
	}
	return ms.refuse(w, it, m, p.tx)
}

// pendingTx is a transaction between its request phases.
type pendingTx struct {
	tx types.Transaction
	g  txGuard
}

// refuse answers an interruption as nginx answers the status
// ModSecurity-nginx returns.
func (ms *modSecurity) refuse(w http.ResponseWriter, it *types.Interruption, m router.Match, tx types.Transaction) bool {
	status := it.Status
	if status == 0 {
		status = http.StatusForbidden
	}
	ms.log.Warn("modsecurity refused the request", "rule", it.RuleID, "status", status, "action", it.Action,
		"route", m.Source().String(), "transaction", tx.ID())
	if it.Action == "redirect" && it.Data != "" {
		if it.Status == 0 {
			status = http.StatusFound
		}
		w.Header().Set("Location", it.Data)
	}
	if it.Action == "drop" {
		w.Header().Set("Connection", "close")
	}
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n</body>\r\n</html>\r\n",
		status, http.StatusText(status), status, http.StatusText(status))
	return true
}

// txGuard orders a transaction's close after the hooks' work and between
// reads of the body from the transaction's buffer.
type txGuard struct {
	mu     sync.Mutex
	closed bool
}

// guardedReader reads the inspected body from the transaction's buffer
// while the transaction is open.
type guardedReader struct {
	g *txGuard
	r io.Reader
}

func (b *guardedReader) Read(p []byte) (int, error) {
	b.g.mu.Lock()
	defer b.g.mu.Unlock()
	if b.g.closed {
		return 0, context.Canceled // the request is over
	}
	return b.r.Read(p)
}

// inspectHead runs phase 1 and returns the interruption, if any.
func (ms *modSecurity) inspectHead(tx types.Transaction, req *http.Request) *types.Interruption {
	client, cport := splitAddr(req.RemoteAddr)
	server, sport := "", 0
	if a, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		server, sport = splitAddr(a.String())
	}
	// nginx's connector passes the socket's port, also behind PROXY protocol.
	sport = cmp.Or(router.ServerPort(req), sport)
	tx.ProcessConnection(client, cport, server, sport)
	tx.ProcessURI(req.RequestURI, req.Method, req.Proto)
	for k, vs := range req.Header {
		for _, v := range vs {
			tx.AddRequestHeader(k, v)
		}
	}
	if req.Host != "" {
		tx.AddRequestHeader("Host", req.Host)
		tx.SetServerName(req.Host)
	}
	return tx.ProcessRequestHeaders()
}

// inspectBody reads the body into the transaction and runs phase 2; it
// returns the interruption, if any.
func (ms *modSecurity) inspectBody(tx types.Transaction, g *txGuard, w http.ResponseWriter, req *http.Request, m router.Match) *types.Interruption {
	limit, stream := ms.bodyLimit(m)
	if tx.IsRequestBodyAccessible() && req.Body != nil && req.Body != http.NoBody && !stream && !isGRPC(req) {
		var r io.Reader = &deadlineReader{r: req.Body, rc: http.NewResponseController(w), timeout: ms.bodyTimeout}
		lr := &io.LimitedReader{R: r, N: limit + 1}
		if limit > 0 {
			// One byte more than the limit: the router's body step
			// then refuses the body with 413 as it would without a WAF.
			r = lr
		}
		it, _, err := tx.ReadRequestBodyFrom(r)
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		if it != nil {
			return it
		}
		if rest, rerr := tx.RequestBodyReader(); rerr == nil {
			req.Body = &inspectedBody{Reader: io.MultiReader(&guardedReader{g: g, r: rest}, req.Body), Closer: req.Body}
		}
		if err != nil || limit > 0 && lr.N == 0 {
			// The router's body step answers a body that failed (400,
			// 408) or is over the limit (413) when it reads on; the
			// part read is handed on. nginx answers so while reading
			// the body for ModSecurity, before phase 2.
			return nil
		}
	}
	it, _ := tx.ProcessRequestBody()
	return it
}

// isGRPC tells a gRPC request as the router does (SPEC §13): only those
// stream past the body inspection, since a stream may never end; any
// other body, application/grpc-web included, reaches an HTTP backend and
// is inspected.
func isGRPC(req *http.Request) bool {
	const p = "application/grpc"
	v := req.Header["Content-Type"]
	if len(v) == 0 || len(v[0]) < len(p) || !strings.EqualFold(v[0][:len(p)], p) {
		return false
	}
	return len(v[0]) == len(p) || v[0][len(p)] == '+' || v[0][len(p)] == ';'
}

// bodyLimit is the location's body limit (0: none) and whether its body
// streams to the backend (proxy-request-buffering: "off"), in which case
// it is not read ahead (nor a gRPC stream, which may never end).
func (ms *modSecurity) bodyLimit(m router.Match) (int64, bool) {
	var p *match.Policy
	switch {
	case m.Route != nil:
		p = m.Route.Policy
	case m.VirtualHost != nil:
		p = m.VirtualHost.FallbackLocation.Policy
	}
	limit := ms.maxBody
	if p != nil {
		switch {
		case p.MaxBodySize < 0:
			limit = 0
		case p.MaxBodySize > 0:
			limit = p.MaxBodySize
		}
		return max(limit, 0), p.StreamRequestBody
	}
	return max(limit, 0), false
}

// transactionID is modsecurity-transaction-id with its nginx variables
// ($request_id, $host, $remote_addr, $http_<name>) filled in; without
// one, the request ID. A request without an X-Request-ID is given one
// here, which the router then forwards and logs, so that the WAF's log
// lines and the access log name the same ID.
func transactionID(template string, req *http.Request) string {
	id := req.Header.Get("X-Request-Id")
	if id == "" {
		id = newTransactionID()
		req.Header.Set("X-Request-Id", id)
	}
	if template == "" {
		return id
	}
	t, _ := transactionIDPlace.Parse(template)
	var b strings.Builder
	t.Expand(&b, func(r vars.Ref) string {
		switch r.Var {
		case vars.RequestID:
			return id
		case vars.Host:
			return strings.ToLower(req.Host)
		case vars.RemoteAddr:
			a, _ := splitAddr(req.RemoteAddr)
			return a
		case vars.HTTP:
			return req.Header.Get(strings.ReplaceAll(r.Name, "_", "-"))
		}
		return "$" + r.Name // kept as written
	})
	return b.String()
}

// transactionIDPlace is where modsecurity-transaction-id reads its
// variables; one it cannot fill is kept as written.
var transactionIDPlace = vars.Place{Name: "modsecurity-transaction-id", Lenient: true,
	Vars: vars.Of(vars.RequestID, vars.Host, vars.RemoteAddr, vars.HTTP)}

// newTransactionID is a request ID in the router's form (32 hex digits).
func newTransactionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

func splitAddr(addr string) (string, int) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 0
	}
	n, _ := strconv.Atoi(port)
	return host, n
}

// deadlineReader times out a body that stalls between reads, as the
// router's body step does (nginx's client_body_timeout).
type deadlineReader struct {
	r       io.Reader
	rc      *http.ResponseController
	timeout time.Duration
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if d.timeout > 0 {
		_ = d.rc.SetReadDeadline(time.Now().Add(d.timeout))
	}
	return d.r.Read(p)
}

// inspectedBody is the request body after the WAF read part of it: that
// part, then the rest, as the client sent it.
type inspectedBody struct {
	io.Reader
	io.Closer
}
