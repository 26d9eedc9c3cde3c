package compile

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/match"
)

// What a location does around its backend's answer (SPEC §11, "Also
// served"): custom-http-errors with default-backend and the global list
// (Options.CustomHTTPErrors), disable-proxy-intercept-errors, limit-rate
// and limit-rate-after, mirror-target with mirror-request-body and
// mirror-host, enable-access-log and enable-rewrite-log. Each is read as
// ingress-nginx v1.15 reads it (internal/ingress/annotations/
// customhttperrors, disableproxyintercepterrors, ratelimit, mirror, log):
// a value its validator refuses is warned about and the key's default
// applies, as there.
func init() {
	keys := map[string]annotationSpec{
		"custom-http-errors":             {apply: applyCustomHTTPErrors},
		"disable-proxy-intercept-errors": {apply: applyDisableIntercept},
		"limit-rate":                     {apply: applyLimitRate(func(r *responseValues) *int64 { return &r.limitRate })},
		"limit-rate-after":               {apply: applyLimitRate(func(r *responseValues) *int64 { return &r.limitRateAfter })},
		"mirror-target":                  {apply: applyMirrorText(func(r *responseValues) *string { return &r.mirrorTarget })},
		"mirror-host":                    {apply: applyMirrorText(func(r *responseValues) *string { return &r.mirrorHost })},
		"mirror-request-body":            {apply: applyMirrorBody},
		"enable-access-log":              {apply: responseBool(func(r *responseValues, on bool) { r.noAccessLog = !on }, "requests are logged")},
		"enable-rewrite-log":             {apply: responseBool(func(r *responseValues, on bool) { r.rewriteLog = on }, "rewrites are not logged")},
	}
	registerAnnotations(keys)
}

// responseValues are an Ingress's response annotations as read.
type responseValues struct {
	codes                     []int // custom-http-errors, sorted and unique
	codesSet                  bool
	noIntercept               bool  // the annotation disable-proxy-intercept-errors
	cfgNoIntercept            bool  // the ConfigMap key: http level, never the annotation's default
	limitRate, limitRateAfter int64 // bytes
	mirrorTarget, mirrorHost  string
	mirrorNoBody              bool
	noAccessLog, rewriteLog   bool
	// custom-headers (customheaders.go): the annotation's key and value,
	// and once resolved the steps setting the headers or why they deny
	// the location.
	headersKey, headersFrom string
	headerOps               []match.SnippetOp
	headersDenied           string
	headersDone             bool

	built *match.Response
	done  bool
}

func (v *annotationValues) responseW() *responseValues {
	if v.response == nil {
		v.response = new(responseValues)
	}
	return v.response
}

// customErrorsRE is ingress-nginx's validator of custom-http-errors, its
// spaces removed (customhttperrors/main.go).
var customErrorsRE = regexp.MustCompile(`^(?:[4,5]\d{2},?)*$`)

func applyCustomHTTPErrors(v *annotationValues, key, value string) error {
	codes, err := ParseHTTPErrors(value, true)
	if err != nil {
		return errors.New(key + " " + strconv.Quote(value) + ": " + err.Error() + "; not applied, the global custom-http-errors apply")
	}
	r := v.responseW()
	r.codes, r.codesSet = codes, true
	return nil
}

// ParseHTTPErrors reads a custom-http-errors list: comma-separated status
// codes, spaces ignored, sorted and without repeats. As an annotation
// (annotation true) ingress-nginx accepts only 400 to 599; the ConfigMap
// key takes any code above 299.
func ParseHTTPErrors(value string, annotation bool) ([]int, error) {
	if strings.TrimSpace(value) == "" {
		return nil, errors.New("no status code")
	}
	if annotation && !customErrorsRE.MatchString(strings.ReplaceAll(value, " ", "")) {
		return nil, errors.New("not a comma-separated list of status codes from 400 to 599")
	}
	var codes []int
	for c := range strings.SplitSeq(value, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		n, err := strconv.Atoi(c)
		if err != nil || n < 300 || n > 599 || annotation && n < 400 {
			return nil, errors.New(strconv.Quote(c) + " is not a status code ingress-nginx intercepts")
		}
		codes = append(codes, n)
	}
	slices.Sort(codes)
	return slices.Compact(codes), nil
}

// ConfigMapHTTPErrors reads the ConfigMap's custom-http-errors as
// ingress-nginx's ReadConfig does: each comma-separated entry that is a
// status code from 300 to 599 is kept, sorted and unique; the others are
// left out and returned, so one wrong entry does not lose the list.
func ConfigMapHTTPErrors(value string) (codes []int, dropped []string) {
	for c := range strings.SplitSeq(value, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		if n, err := strconv.Atoi(c); err == nil && n >= 300 && n <= 599 {
			codes = append(codes, n)
		} else {
			dropped = append(dropped, c)
		}
	}
	slices.Sort(codes)
	return slices.Compact(codes), dropped
}

// responseBool reads a boolean response annotation as ingress-nginx's
// GetBoolAnnotation does; a value that is no boolean keeps the default,
// which def describes.
func responseBool(set func(r *responseValues, on bool), def string) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		on, err := strconv.ParseBool(value)
		if err != nil {
			return errors.New(key + " " + strconv.Quote(value) + " is not a boolean (true or false); " + def + ", the default")
		}
		set(v.responseW(), on)
		return nil
	}
}

// applyDisableIntercept reads disable-proxy-intercept-errors, the
// ConfigMap's apart from the annotation's.
func applyDisableIntercept(v *annotationValues, key, value string) error {
	cfg := strings.HasPrefix(key, configMapKeyName)
	return responseBool(func(r *responseValues, on bool) {
		if cfg {
			r.cfgNoIntercept = on
		} else {
			r.noIntercept = on
		}
	}, "errors are intercepted")(v, key, value)
}

// applyLimitRate reads limit-rate or limit-rate-after: a whole number of
// kibibytes (nginx's "k", which ingress-nginx appends), taken by
// strconv.Atoi as written; zero or less sets no limit.
func applyLimitRate(field func(r *responseValues) *int64) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		n, err := strconv.Atoi(value)
		if err != nil {
			return errors.New(key + " " + strconv.Quote(value) + " is not a whole number of kilobytes; not applied")
		}
		const maxKiB = 1 << 40 // far past any link; keeps n << 10 in range
		*field(v.responseW()) = int64(min(max(n, 0), maxKiB)) << 10
		return nil
	}
}

// applyMirrorText reads mirror-target or mirror-host, which ingress-nginx
// validates as a server name (parser.ValidateServerName).
func applyMirrorText(field func(r *responseValues) *string) func(v *annotationValues, key, value string) error {
	return func(v *annotationValues, key, value string) error {
		s := strings.TrimSpace(value)
		if s == "" || !nginxServerName.MatchString(s) {
			return errors.New(key + " " + strconv.Quote(value) + " has a character ingress-nginx does not accept there; not applied")
		}
		*field(v.responseW()) = s
		return nil
	}
}

func applyMirrorBody(v *annotationValues, key, value string) error {
	switch strings.ReplaceAll(value, " ", "") {
	case "off":
		v.responseW().mirrorNoBody = true
	case "on":
		v.responseW().mirrorNoBody = false
	default:
		return errors.New(key + " " + strconv.Quote(value) + " is neither on nor off; the body is mirrored, the default")
	}
	return nil
}

// applyResponses gives every route and fallback the Response of the
// Ingress that declares it; a location of no Ingress, or of one without
// response annotations, gets the global custom-http-errors, as nginx's
// error_page directives at the http level reach every location that has
// none of its own.
func (b *builder) applyResponses() {
	if !b.anyResponse() {
		return // most tables: no walk, and no index of Ingresses by name
	}
	for _, v := range b.vhostOrder {
		for _, r := range v.vh.Routes {
			ing := b.ingressOf(r.Source)
			r.Response = b.standIn(ing, b.responseOf(ing), r.Backend, r.Source.Field)
			r.Rewrite = b.expandRouteVhost(ing, r.Rewrite, r.Source.Field)
		}
		if v.vh.Fallback != nil || v.settingsFrom != nil {
			v.vh.FallbackLocation.Response = b.responseOf(v.settingsFrom)
			if src := v.vh.FallbackSource; v.settingsFrom != nil && b.ingressOf(src) == v.settingsFrom {
				v.vh.FallbackLocation.Response = b.standIn(v.settingsFrom, v.vh.FallbackLocation.Response, v.vh.Fallback, src.Field)
			}
		}
		if ing := v.settingsFrom; ing != nil {
			v.vh.FallbackLocation.Rewrite = b.expandRouteVhost(ing, v.vh.FallbackLocation.Rewrite, defaultBackendField)
		}
	}
}

// anyResponse reports whether some location has a Response or an
// upstream-vhost with build-time variables.
func (b *builder) anyResponse() bool {
	if len(b.globalCodes()) > 0 {
		return true
	}
	for _, ing := range b.ingresses {
		if ing.ann.response != nil || ing.redirectAnns().defaultService != "" {
			return true
		}
		if h := ing.ann.rewriteR().vhost; strings.IndexByte(h, '$') >= 0 && sampleVhost(h) != h {
			return true
		}
	}
	return false
}

// responseOf builds ing's Response once; nil ing is a location no
// Ingress declared.
func (b *builder) responseOf(ing *ingress) *match.Response {
	var rv *responseValues
	if ing != nil {
		rv = ing.ann.response
	}
	if rv == nil {
		return b.globalResponse()
	}
	if rv.done {
		return rv.built
	}
	rv.done = true
	spec := match.Response{
		LimitRate: rv.limitRate, LimitRateAfter: rv.limitRateAfter,
		NoAccessLog: rv.noAccessLog, RewriteLog: rv.rewriteLog,
	}
	// nginx's proxy_intercept_errors: "on" in the location with codes of
	// its own unless the annotation says otherwise, else the http level's.
	// Without it the error_page lines still take nginx's own answers.
	switch {
	case rv.codesSet:
		spec.ErrorCodes = rv.codes
		spec.ErrorBackend, spec.OwnErrorBackend = b.errorBackend(ing)
		spec.OwnOnly = rv.noIntercept && !b.globalIntercepts()
	case len(b.globalCodes()) > 0:
		spec.ErrorCodes = b.globalCodes()
		spec.ErrorBackend = b.globalErrorBackend()
		spec.OwnOnly = !b.globalIntercepts()
	}
	spec.Mirror = b.mirrorOf(ing, rv)
	_, spec.HeadersDenied = b.customHeaders(ing)
	if spec.ErrorCodes == nil && spec.LimitRate == 0 && spec.Mirror == nil && !spec.NoAccessLog && !spec.RewriteLog && spec.HeadersDenied == "" {
		return nil
	}
	out, err := match.NewResponse(spec)
	if err != nil {
		// Every value was checked as it was read: a refusal is a bug here.
		panic("compile: response of Ingress " + ing.name() + ": " + err.Error())
	}
	rv.built = out
	return out
}

// standIn gives a route whose Ingress's default-backend Service answers
// in place of its own (applyDefaultBackendAnnotation) a Response of its
// own that says so; rp is the Ingress's. ingress-nginx then sends the
// default Service X-Code: 503 and the Service the path names.
func (b *builder) standIn(ing *ingress, rp *match.Response, be *match.Backend, field string) *match.Response {
	if ing == nil || be == nil {
		return rp
	}
	def := ing.redirectAnns().defaultService
	svc, port := declaredService(ing.obj, field)
	if def == "" || be.Namespace != ing.obj.Namespace || be.Name != def || svc == def || svc == "" {
		return rp
	}
	spec := match.Response{}
	if rp != nil {
		spec = *rp
	}
	spec.StandIn = &match.StandIn{Service: svc, Port: port}
	out, err := match.NewResponse(spec)
	if err != nil {
		panic("compile: response of Ingress " + ing.name() + ": " + err.Error()) // rp was made by NewResponse
	}
	return out
}

// globalCodes is Options.CustomHTTPErrors sorted and unique, without
// what Options.Validate refuses.
func (b *builder) globalCodes() []int {
	codes := slices.DeleteFunc(slices.Clone(b.opts.CustomHTTPErrors), func(c int) bool { return c < 300 || c > 599 })
	slices.Sort(codes)
	return slices.Compact(codes)
}

// globalIntercepts reports nginx's http-level proxy_intercept_errors:
// "on" with the global custom-http-errors unless the ConfigMap's
// disable-proxy-intercept-errors is "true".
func (b *builder) globalIntercepts() bool {
	if d := b.defaults; d != nil && d.ann.response != nil && d.ann.response.cfgNoIntercept {
		return false
	}
	return len(b.globalCodes()) > 0
}

// globalResponse is the Response of a location without response
// annotations: the global custom-http-errors, or nil. Without the http
// level's interception they take the router's own answers only.
func (b *builder) globalResponse() *match.Response {
	if len(b.globalCodes()) == 0 {
		return nil
	}
	if b.globalResp == nil {
		r, err := match.NewResponse(match.Response{ErrorCodes: b.globalCodes(), ErrorBackend: b.globalErrorBackend(), OwnOnly: !b.globalIntercepts()})
		if err != nil {
			panic("compile: global custom-http-errors: " + err.Error()) // Options.Validate checked them
		}
		b.globalResp = r
	}
	return b.globalResp
}

// errorBackend answers an Ingress's custom-http-errors: its
// default-backend Service's first port, as ingress-nginx's
// custom-default-backend upstream, else the global default backend.
// ingress-nginx makes that upstream only when the Service has endpoints;
// without, the error pages go to the global one. own reports the
// Ingress's.
func (b *builder) errorBackend(ing *ingress) (be *match.Backend, own bool) {
	if name := ing.redirectAnns().defaultService; name != "" {
		if svc := b.serviceEntry(ing.obj.Namespace, name).svc; svc != nil && len(svc.Spec.Ports) > 0 {
			if bi := b.resolve(ing.obj.Namespace, name, strconv.Itoa(int(svc.Spec.Ports[0].Port))).backend; bi.b.Servable() {
				bi.used = true
				return bi.b, true
			}
		}
		// applyDefaultBackendAnnotation warned of a missing Service.
	}
	return b.globalErrorBackend(), false
}

// globalErrorBackend is the global default backend, listed in the table
// whatever its state (nil without one): the router answers 404 for it
// when it cannot serve, as nginx's upstream-default-backend without
// endpoints falls back to the built-in server that answers 404.
func (b *builder) globalErrorBackend() *match.Backend {
	if !b.resolveGlobal() {
		return nil
	}
	b.global.backend.used = true
	return b.global.backend.b
}

// mirrorOf builds the Ingress's mirror; nil without mirror-target or when
// it cannot be served, which is warned about.
func (b *builder) mirrorOf(ing *ingress, rv *responseValues) *match.Mirror {
	if rv.mirrorTarget == "" {
		return nil
	}
	m := match.Mirror{Target: rv.mirrorTarget, Host: rv.mirrorHost, NoBody: rv.mirrorNoBody, Source: "/_mirror-" + string(ing.obj.UID)}
	if m.Host == "" {
		// ingress-nginx: the host name of the target up to its first "$".
		lit, _, _ := strings.Cut(m.Target, "$")
		if _, after, ok := strings.Cut(lit, "://"); ok {
			if i := strings.IndexAny(after, "/?"); i >= 0 {
				after = after[:i]
			}
			m.Host = after
			if h, _, err := splitHostPortLoose(after); err == nil {
				m.Host = h
			}
		}
	}
	out, err := match.NewMirror(m)
	if err != nil {
		key := NginxPrefix + "mirror-target"
		if _, ok := ing.obj.Annotations[NativePrefix+"mirror-target"]; ok {
			key = NativePrefix + "mirror-target"
		}
		b.warn(AnnotationRejected, ing.ref(), annotationField(key), err.Error()+"; no request is mirrored")
		return nil
	}
	return out
}

// splitHostPortLoose splits "host:port", "[v6]:port" or "host".
func splitHostPortLoose(s string) (host, port string, err error) {
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, ']')
		if i < 0 {
			return "", "", errors.New("unclosed [")
		}
		return s[1:i], strings.TrimPrefix(s[i+1:], ":"), nil
	}
	h, p, _ := strings.Cut(s, ":")
	return h, p, nil
}
