package compile

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"ramjet.dev/ramjet/router/configmap"
)

// What ingress-nginx v1.15's validating webhook refuses (SPEC §21), read
// from its CheckIngress (internal/ingress/controller) and the annotation
// parsers it runs: ramjet's admission refuses exactly there, and nowhere
// else, so a pipeline that relied on `kubectl apply` failing keeps
// failing on the same objects and passing on the others.
//
// In order, the first that applies decides:
//   - the deep inspector (--deep-inspect, on by default): a host, path or
//     TLS Secret name holding an nginx directive or a sensitive file path;
//   - strict-validate-path-type (on by default): an Exact or Prefix path
//     with characters outside letters, digits, ".", "_", "-" and "/";
//   - annotation-value-word-blocklist: a word it lists in an
//     nginx.ingress.kubernetes.io/ value;
//   - allow-snippet-annotations off (the default): any annotation whose
//     key ends in "-snippet";
//   - the annotation parsers: an nginx.ingress.kubernetes.io/ annotation
//     (or a key without a prefix spelling its name) riskier than
//     annotations-risk-level (snippets are Critical, the default level
//     High), or a value its validator refuses where the
//     parser passes the refusal on (others fall back to a default);
//   - a host and path (the path string, whatever its type) already served
//     by another Ingress, unless exactly one of the two is a canary.

// AdmissionSettings are the ingress-nginx settings its webhook reads that
// compile.Options does not hold. The zero value is ingress-nginx's default.
type AdmissionSettings struct {
	// LaxPathType is strict-validate-path-type "false".
	LaxPathType bool
	// WordBlocklist is annotation-value-word-blocklist, split at commas.
	WordBlocklist []string
	// storeWords are the same words untrimmed, as ingress-nginx's store
	// looks for them (checkBadAnnotationValue); nil: WordBlocklist's.
	storeWords []string
	// NoDeepInspect is --deep-inspect=false.
	NoDeepInspect bool
}

// ReadAdmissionSettings reads the ConfigMap keys of AdmissionSettings from
// an ingress-nginx ConfigMap's data (nil: the defaults).
func ReadAdmissionSettings(data map[string]string) AdmissionSettings {
	var s AdmissionSettings
	if v, ok := data["strict-validate-path-type"]; ok {
		strict, err := strconv.ParseBool(v)
		s.LaxPathType = err == nil && !strict || v == ""
	}
	if v := strings.TrimSpace(data["annotation-value-word-blocklist"]); v != "" {
		for w := range strings.SplitSeq(v, ",") {
			s.WordBlocklist = append(s.WordBlocklist, strings.TrimSpace(w))
			s.storeWords = append(s.storeWords, w)
		}
	}
	return s
}

// The ConfigMap keys the webhook reads are the ConfigMap's too, so they are
// not reported as missing: strict-validate-path-type changes no answer,
// as in ingress-nginx; the word blocklist's other half, ingress-nginx's
// sync leaving out an Ingress that already holds a word, is not served.
func init() {
	ConfigMapKeys["strict-validate-path-type"] = ConfigMapKey{Option: func(_ *Options, v string) error {
		_, err := configmap.ParseBool(v)
		return err
	}}
	configMapByValue["annotation-value-word-blocklist"] = func(v string) (Reason, Severity, string) {
		if v == "" {
			return ConfigMapKeyIgnored, Cosmetic, "empty; ignored"
		}
		return ConfigMapKeyUnsupported, TrafficMoves, "the validating webhook refuses an Ingress with one of these words in an " + NginxPrefix +
			" value, as ingress-nginx's does; an Ingress that already holds one is still served, where ingress-nginx's sync leaves it out"
	}
}

// nginxRisk is an annotation's risk level in ingress-nginx.
type nginxRisk int

const (
	riskLow nginxRisk = iota
	riskMedium
	riskHigh
	riskCritical
)

var riskNames = [...]string{"Low", "Medium", "High", "Critical"}

// riskLevel reads annotations-risk-level ("" is its default, High).
func riskLevel(s string) nginxRisk {
	switch strings.ToLower(s) {
	case "critical":
		return riskCritical
	case "medium":
		return riskMedium
	case "low":
		return riskLow
	}
	return riskHigh
}

// nginxCheck is how ingress-nginx judges one annotation: its risk, and,
// for the keys whose parser passes a validation failure on (so that the
// webhook refuses the Ingress), the validator and when the parser reads
// the key at all (nil: always).
type nginxCheck struct {
	risk  nginxRisk
	valid func(string) bool
	read  func(anns map[string]string, st nginxStore) bool
	alias string // the key's other name, read when the key is empty
}

// nginxStore is what of ingress-nginx's store a parser looks up before it
// reads further keys: the Secrets of the Ingress's namespace.
type nginxStore struct {
	ns string // the Ingress's
	// crossNS is allow-cross-namespace-resources: a Secret of another
	// namespace passes the parsers' namespace checks.
	crossNS bool
	// secret finds a Secret, nil when it is not there; a nil secret takes
	// every Secret as there and usable.
	secret func(ns, name string) *corev1.Secret
}

// ingress-nginx's character sets (internal/ingress/annotations/parser).
const (
	alnumChars = `\-\._~a-zA-Z0-9/:`
	regexChars = `\^\$\[\]\(\)\{\}\*\+\?\|&=\\`
)

var (
	reValidRegex    = regexp.MustCompile(`^[/` + alnumChars + regexChars + `]*$`)
	reBasicChars    = regexp.MustCompile(`^[/` + alnumChars + `]*$`)
	reCharsSpace    = regexp.MustCompile(`^[/` + alnumChars + ` ]*$`)
	reURL           = regexp.MustCompile(`^[` + alnumChars + `,:\?&=]*$`)
	reURLVariables  = regexp.MustCompile(`^[` + alnumChars + `, ,:\?&=$]*$`)
	rePathCapture   = regexp.MustCompile(`^/?[` + alnumChars + `/\$]*$`)
	reSize          = regexp.MustCompile(`^(?i)\d+[bkmg]?$`)
	reHTTPErrors    = regexp.MustCompile(`^(?:[4,5]\d{2},?)*$`)
	reConnection    = regexp.MustCompile(`^(close|keep-alive)$`)
	reFastCGIIndex  = regexp.MustCompile(`^[A-Za-z0-9.\-_]+$`)
	reOperationName = regexp.MustCompile(`^[A-Za-z0-9_\-]*$`)
	reSSLCipher     = regexp.MustCompile(`^(?:(?:[A-Za-z0-9!:+\-_])*(?:@STRENGTH)*(?:@SECLEVEL=[0-5])*(?:@STRENGTH)*)*$`)
	reHashBy        = regexp.MustCompile(`^[A-Za-z0-9\-_${}]*$`)
	reAuthType      = regexp.MustCompile(`basic|digest`)
	reAuthFileType  = regexp.MustCompile(`auth-file|auth-map`)
	reErrorPage     = regexp.MustCompile(`^(@[A-Za-z0-9_-]+|((https?://)?[A-Za-z0-9\-.]+(:\d+)?)?(/[A-Za-z0-9\-_.]+)*/?)$`)
	reLineBreak     = regexp.MustCompile(`\r|\n`)
)

// matches is ingress-nginx's regular-expression validator: spaces removed
// first when trim is set, and never a line break.
func matches(re *regexp.Regexp, trim bool) func(string) bool {
	return func(s string) bool {
		if trim {
			s = strings.ReplaceAll(s, " ", "")
		}
		return re.MatchString(s) && !reLineBreak.MatchString(s)
	}
}

func isBool(s string) bool { _, err := strconv.ParseBool(s); return err == nil }
func isInt(s string) bool  { _, err := strconv.Atoi(s); return err == nil }

func isServerName(s string) bool { return reValidRegex.MatchString(strings.TrimSpace(s)) }

func isServerNames(s string) bool {
	for name := range strings.SplitSeq(s, ",") {
		if !isServerName(name) {
			return false
		}
	}
	return true
}

// isCIDRs is ingress-nginx's ValidateCIDRs (internal/net ParseIPNets): a
// comma-separated list of entries net.ParseCIDR or net.ParseIP reads,
// which take a prefix length with leading zeros and no IPv6 zone, where
// netip's parsers do the opposite.
func isCIDRs(s string) bool {
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if _, _, err := net.ParseCIDR(part); err != nil && net.ParseIP(part) == nil {
			return false
		}
	}
	return true
}

func isCommonName(s string) bool {
	rest, ok := strings.CutPrefix(s, "CN=")
	if !ok {
		return false
	}
	_, err := regexp.Compile(rest)
	return err == nil
}

func isServiceName(s string) bool { return len(validation.IsDNS1035Label(s)) == 0 }

func isOneOf(options ...string) func(string) bool {
	return func(s string) bool { return slices.Contains(options, strings.TrimSpace(s)) }
}

// nginxValue is the value of an nginx annotation as its parser sees it.
func nginxValue(anns map[string]string, key string) string { return anns[NginxPrefix+key] }

// Gates: the parser reads the key only after another one passed.
func authTypeRead(anns map[string]string, _ nginxStore) bool {
	v := nginxValue(anns, "auth-type")
	return v != "" && matches(reAuthType, true)(v)
}

// authRealmRead: the auth parser reads auth-realm only once auth-secret
// ("name" or "namespace/name") names a Secret of the Ingress's namespace,
// or of any with allow-cross-namespace-resources, that the store holds;
// otherwise it denies the location (auth/main.go).
func authRealmRead(anns map[string]string, st nginxStore) bool {
	if !authTypeRead(anns, st) {
		return false
	}
	v := strings.TrimSpace(nginxValue(anns, "auth-secret"))
	if v == "" || !matches(reBasicChars, true)(v) {
		return false
	}
	ns, name, found := strings.Cut(v, "/")
	if !found {
		ns, name = st.ns, v
	}
	if ns == "" {
		ns = st.ns
	}
	if ns != st.ns && !st.crossNS || name == "" || strings.Contains(name, "/") {
		return false
	}
	return st.secret == nil || st.secret(ns, name) != nil
}

// authTLSRead: the auth-tls parser reads its other keys only once
// auth-tls-secret is exactly "namespace/name", of the Ingress's namespace
// (of any with allow-cross-namespace-resources),
// and the store holds that Secret with a CA or key pair (authtls/main.go,
// the store's GetAuthCertificate).
func authTLSRead(anns map[string]string, st nginxStore) bool {
	v := strings.TrimSpace(nginxValue(anns, "auth-tls-secret"))
	if v == "" || !matches(reBasicChars, true)(v) {
		return false
	}
	ns, name, found := strings.Cut(v, "/")
	if !found || strings.Contains(name, "/") || ns != st.ns && !st.crossNS {
		return false
	}
	if st.secret == nil {
		return true
	}
	_, _, _, why := readAuthSecret(st.secret(ns, name), v)
	return why == ""
}

func opentelemetryRead(anns map[string]string, _ nginxStore) bool {
	v := nginxValue(anns, "enable-opentelemetry")
	return v != "" && isBool(v)
}

func temporalSet(anns map[string]string, _ nginxStore) bool {
	return nginxValue(anns, "temporal-redirect") != ""
}

func temporalUnset(anns map[string]string, st nginxStore) bool { return !temporalSet(anns, st) }

// nginxChecks holds every annotation ingress-nginx v1.15 registers, by
// key without prefix. A key without a validator never refuses an Ingress
// (its parser falls back to a default or denies the location).
var nginxChecks = map[string]nginxCheck{
	"server-alias":                             {risk: riskHigh, valid: isServerNames},
	"auth-type":                                {risk: riskLow, valid: matches(reAuthType, true)},
	"auth-secret-type":                         {risk: riskLow, valid: matches(reAuthFileType, true), read: authTypeRead},
	"auth-secret":                              {risk: riskMedium},
	"auth-realm":                               {risk: riskMedium, valid: matches(reCharsSpace, false), read: authRealmRead},
	"auth-url":                                 {risk: riskHigh, valid: matches(reURLVariables, true)},
	"auth-method":                              {risk: riskLow},
	"auth-signin":                              {risk: riskHigh},
	"auth-signin-redirect-param":               {risk: riskMedium},
	"auth-snippet":                             {risk: riskCritical},
	"auth-cache-key":                           {risk: riskMedium},
	"auth-keepalive":                           {risk: riskLow},
	"auth-keepalive-share-vars":                {risk: riskLow},
	"auth-keepalive-requests":                  {risk: riskLow},
	"auth-keepalive-timeout":                   {risk: riskLow},
	"auth-cache-duration":                      {risk: riskMedium},
	"auth-response-headers":                    {risk: riskMedium},
	"auth-proxy-set-headers":                   {risk: riskMedium},
	"auth-request-redirect":                    {risk: riskMedium},
	"auth-always-set-cookie":                   {risk: riskLow},
	"enable-global-auth":                       {risk: riskLow},
	"auth-tls-secret":                          {risk: riskMedium, valid: matches(reBasicChars, true)},
	"auth-tls-verify-client":                   {risk: riskMedium},
	"auth-tls-verify-depth":                    {risk: riskLow},
	"auth-tls-error-page":                      {risk: riskHigh, valid: matches(reErrorPage, true), read: authTLSRead},
	"auth-tls-pass-certificate-to-upstream":    {risk: riskLow, valid: isBool, read: authTLSRead},
	"auth-tls-match-cn":                        {risk: riskHigh, valid: isCommonName, read: authTLSRead},
	"backend-protocol":                         {risk: riskLow},
	"canary":                                   {risk: riskLow},
	"canary-weight":                            {risk: riskLow},
	"canary-weight-total":                      {risk: riskLow},
	"canary-by-header":                         {risk: riskMedium},
	"canary-by-header-value":                   {risk: riskMedium},
	"canary-by-header-pattern":                 {risk: riskMedium},
	"canary-by-cookie":                         {risk: riskMedium},
	"client-body-buffer-size":                  {risk: riskLow, valid: matches(reSize, true)},
	"connection-proxy-header":                  {risk: riskLow, valid: matches(reConnection, true)},
	"enable-cors":                              {risk: riskLow},
	"cors-allow-origin":                        {risk: riskMedium},
	"cors-allow-headers":                       {risk: riskMedium},
	"cors-allow-methods":                       {risk: riskMedium},
	"cors-allow-credentials":                   {risk: riskLow},
	"cors-expose-headers":                      {risk: riskMedium},
	"cors-max-age":                             {risk: riskLow},
	"custom-headers":                           {risk: riskMedium},
	"custom-http-errors":                       {risk: riskLow, valid: matches(reHTTPErrors, true)},
	"default-backend":                          {risk: riskLow, valid: isServiceName},
	"disable-proxy-intercept-errors":           {risk: riskLow},
	"fastcgi-index":                            {risk: riskMedium, valid: matches(reFastCGIIndex, true)},
	"fastcgi-params-configmap":                 {risk: riskMedium, valid: matches(reBasicChars, true)},
	"http2-push-preload":                       {risk: riskLow, valid: isBool},
	"allowlist-source-range":                   {risk: riskMedium, alias: "whitelist-source-range"},
	"denylist-source-range":                    {risk: riskMedium},
	"load-balance":                             {risk: riskLow, valid: isOneOf("round_robin", "chash", "chashsubset", "sticky_balanced", "sticky_persistent", "ewma")},
	"enable-access-log":                        {risk: riskLow},
	"enable-rewrite-log":                       {risk: riskLow},
	"mirror-request-body":                      {risk: riskLow},
	"mirror-target":                            {risk: riskHigh},
	"mirror-host":                              {risk: riskHigh},
	"enable-modsecurity":                       {risk: riskLow},
	"enable-owasp-core-rules":                  {risk: riskLow},
	"modsecurity-transaction-id":               {risk: riskHigh},
	"modsecurity-snippet":                      {risk: riskCritical},
	"enable-opentelemetry":                     {risk: riskLow},
	"opentelemetry-trust-incoming-span":        {risk: riskLow},
	"opentelemetry-operation-name":             {risk: riskMedium, valid: matches(reOperationName, true), read: opentelemetryRead},
	"use-port-in-redirects":                    {risk: riskLow},
	"proxy-connect-timeout":                    {risk: riskLow},
	"proxy-send-timeout":                       {risk: riskLow},
	"proxy-read-timeout":                       {risk: riskLow},
	"proxy-buffers-number":                     {risk: riskLow},
	"proxy-buffer-size":                        {risk: riskLow},
	"proxy-busy-buffers-size":                  {risk: riskLow},
	"proxy-cookie-path":                        {risk: riskMedium},
	"proxy-cookie-domain":                      {risk: riskMedium},
	"proxy-body-size":                          {risk: riskMedium},
	"proxy-next-upstream":                      {risk: riskMedium},
	"proxy-next-upstream-timeout":              {risk: riskLow},
	"proxy-next-upstream-tries":                {risk: riskLow},
	"proxy-request-buffering":                  {risk: riskLow},
	"proxy-redirect-from":                      {risk: riskMedium},
	"proxy-redirect-to":                        {risk: riskMedium},
	"proxy-buffering":                          {risk: riskLow},
	"proxy-http-version":                       {risk: riskLow},
	"proxy-max-temp-file-size":                 {risk: riskLow},
	"proxy-ssl-secret":                         {risk: riskMedium, valid: matches(reBasicChars, true)},
	"proxy-ssl-ciphers":                        {risk: riskMedium},
	"proxy-ssl-protocols":                      {risk: riskLow},
	"proxy-ssl-name":                           {risk: riskHigh},
	"proxy-ssl-verify":                         {risk: riskLow},
	"proxy-ssl-verify-depth":                   {risk: riskLow},
	"proxy-ssl-server-name":                    {risk: riskLow},
	"limit-rate":                               {risk: riskLow},
	"limit-rate-after":                         {risk: riskLow},
	"limit-rpm":                                {risk: riskLow, valid: isInt},
	"limit-rps":                                {risk: riskLow, valid: isInt},
	"limit-connections":                        {risk: riskLow, valid: isInt},
	"limit-burst-multiplier":                   {risk: riskLow},
	"limit-allowlist":                          {risk: riskLow, valid: isCIDRs, alias: "limit-whitelist"},
	"from-to-www-redirect":                     {risk: riskLow, valid: isBool},
	"relative-redirects":                       {risk: riskLow, valid: isBool},
	"temporal-redirect":                        {risk: riskMedium, valid: matches(reURL, false)},
	"temporal-redirect-code":                   {risk: riskLow, valid: isInt, read: temporalSet},
	"permanent-redirect":                       {risk: riskMedium, valid: matches(reURL, false), read: temporalUnset},
	"permanent-redirect-code":                  {risk: riskLow, valid: isInt, read: temporalUnset},
	"rewrite-target":                           {risk: riskMedium},
	"ssl-redirect":                             {risk: riskLow},
	"preserve-trailing-slash":                  {risk: riskMedium},
	"force-ssl-redirect":                       {risk: riskMedium},
	"use-regex":                                {risk: riskLow},
	"app-root":                                 {risk: riskMedium},
	"satisfy":                                  {risk: riskLow},
	"server-snippet":                           {risk: riskCritical},
	"service-upstream":                         {risk: riskLow},
	"affinity":                                 {risk: riskLow},
	"affinity-mode":                            {risk: riskMedium},
	"affinity-canary-behavior":                 {risk: riskLow},
	"session-cookie-name":                      {risk: riskMedium},
	"session-cookie-secure":                    {risk: riskLow},
	"session-cookie-expires":                   {risk: riskMedium},
	"session-cookie-max-age":                   {risk: riskMedium},
	"session-cookie-path":                      {risk: riskMedium},
	"session-cookie-domain":                    {risk: riskMedium},
	"session-cookie-samesite":                  {risk: riskLow},
	"session-cookie-conditional-samesite-none": {risk: riskLow},
	"session-cookie-change-on-failure":         {risk: riskLow},
	"configuration-snippet":                    {risk: riskCritical},
	"ssl-prefer-server-ciphers":                {risk: riskLow},
	"ssl-ciphers":                              {risk: riskLow, valid: matches(reSSLCipher, true)},
	"ssl-passthrough":                          {risk: riskLow, valid: isBool},
	"stream-snippet":                           {risk: riskCritical},
	"upstream-hash-by":                         {risk: riskHigh, valid: matches(reHashBy, true)},
	"upstream-hash-by-subset":                  {risk: riskLow, valid: isBool},
	"upstream-hash-by-subset-size":             {risk: riskLow, valid: isInt},
	"upstream-vhost":                           {risk: riskLow, valid: isServerName},
	"x-forwarded-prefix":                       {risk: riskMedium, valid: matches(rePathCapture, true)},
}

// deepInspectRefused are the deep inspector's patterns: nginx directives
// and paths a value must not smuggle into the configuration.
var deepInspectRefused = []*regexp.Regexp{
	regexp.MustCompile(`(?s)\s*alias\s*.*;`),
	regexp.MustCompile(`(?s)\s*root\s*.*;`),
	regexp.MustCompile(`/etc/(passwd|shadow|group|nginx|ingress-controller)`),
	regexp.MustCompile(`/var/run/secrets`),
	regexp.MustCompile(`.*_by_lua.*`),
}

var strictPath = regexp.MustCompile(`(?i)^/[[:alnum:]._\-/]*$`)

// NginxRefusal is why ingress-nginx v1.15's validating webhook refuses
// ing on its own, before looking at other Ingresses; "" when it does not.
// o are the compile options (their ConfigMap's allow-snippet-annotations
// and annotations-risk-level apply). Every Secret ing names is taken as
// there: a Reviewer looks them up in its snapshot.
func NginxRefusal(ing *networkingv1.Ingress, o Options, s AdmissionSettings) string {
	return nginxRefusal(ing, o, s, nginxStore{ns: ing.Namespace, crossNS: o.WithConfigMap().AllowCrossNamespaceResources})
}

func nginxRefusal(ing *networkingv1.Ingress, o Options, s AdmissionSettings, st nginxStore) string {
	if why := deepInspect(ing, s); why != "" {
		return why
	}
	if !s.LaxPathType {
		var bad []string
		for _, rule := range ing.Spec.Rules {
			if rule.HTTP == nil {
				continue
			}
			for _, p := range rule.HTTP.Paths {
				if p.Path == "" || p.PathType != nil && *p.PathType == networkingv1.PathTypeImplementationSpecific || strictPath.MatchString(p.Path) {
					continue
				}
				typ := "<nil>"
				if p.PathType != nil {
					typ = string(*p.PathType)
				}
				bad = append(bad, fmt.Sprintf("path %s cannot be used with pathType %s", p.Path, typ))
			}
		}
		if len(bad) > 0 {
			return "ingress contains invalid paths: " + strings.Join(bad, "\n")
		}
	}
	keys := make([]string, 0, len(ing.Annotations))
	for k := range ing.Annotations {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, NginxPrefix) {
			continue
		}
		for _, word := range s.WordBlocklist {
			if word != "" && strings.Contains(ing.Annotations[k], word) {
				return fmt.Sprintf("%s annotation contains invalid word %s", k, word)
			}
		}
	}
	o = o.WithConfigMap()
	if !o.AllowSnippetAnnotations {
		for _, k := range keys {
			if strings.HasSuffix(k, "-snippet") {
				return fmt.Sprintf("%s annotation cannot be used. Snippet directives are disabled by the Ingress administrator", k)
			}
		}
	}
	return annotationRefusal(ing.Annotations, keys, riskLevel(o.AnnotationsRiskLevel), st)
}

// annotationRefusal is why ingress-nginx's annotation parsers refuse
// annotations (keys sorted, all of them): too risky for level, or a
// value refused.
// An Ingress they refuse is also left out of ingress-nginx's store.
func annotationRefusal(anns map[string]string, keys []string, level nginxRisk, st nginxStore) string {
	for _, k := range keys {
		// A key without the prefix is judged by its name as it stands
		// (CheckAnnotationRisk trims the prefix only where it is).
		name := strings.TrimPrefix(k, NginxPrefix)
		if strings.Contains(name, "/") {
			continue // another prefix's: no name of ingress-nginx's
		}
		c, known := nginxChecks[name]
		if !known {
			for key, check := range nginxChecks {
				if check.alias == name {
					c, known = nginxChecks[key], true
				}
			}
		}
		if known && c.risk > level {
			return fmt.Sprintf("annotation %s is too risky for environment: it is %s-risk and annotations-risk-level is %s", k, riskNames[c.risk], riskNames[level])
		}
	}
	for _, k := range keys {
		name, ok := strings.CutPrefix(k, NginxPrefix)
		if !ok {
			continue
		}
		c, known := nginxChecks[name]
		value := anns[k]
		if !known || c.valid == nil {
			continue
		}
		if value == "" && c.alias != "" {
			k, value = NginxPrefix+c.alias, anns[NginxPrefix+c.alias]
		}
		// The gate last: it may look up a Secret and read its certificates.
		if value != "" && !c.valid(value) && (c.read == nil || c.read(anns, st)) {
			return "annotation " + k + " contains invalid value"
		}
	}
	// An alias set alone is read through its key.
	for key, c := range nginxChecks {
		if c.alias == "" || c.valid == nil || anns[NginxPrefix+key] != "" {
			continue
		}
		if v := anns[NginxPrefix+c.alias]; v != "" && !c.valid(v) && (c.read == nil || c.read(anns, st)) {
			return "annotation " + NginxPrefix + c.alias + " contains invalid value"
		}
	}
	return ""
}

// deepInspect is ingress-nginx's deep inspector over hosts, paths and TLS
// Secret names: its webhook's refusal, "" when it has none.
func deepInspect(ing *networkingv1.Ingress, s AdmissionSettings) string {
	if s.NoDeepInspect {
		return ""
	}
	f := deepInspectFinding(ing)
	name := ing.Namespace + "/" + ing.Name
	switch f.what {
	case "":
		return ""
	case "host":
		return fmt.Sprintf("invalid object: invalid host in ingress %s: invalid value found: %s", name, f.value)
	case "path":
		return fmt.Sprintf("invalid object: invalid rule in ingress %s: invalid http path: invalid value found: %s", name, f.value)
	case "TLS Secret name":
		return fmt.Sprintf("invalid object: invalid secret in ingress %s: invalid value found: %s", name, f.value)
	}
	return fmt.Sprintf("invalid object: invalid host in ingress tls config %s: invalid value found: %s", name, f.value)
}

// inspected is the first value of an Ingress the deep inspector refuses:
// what it is, as a warning names it ("host", "path", "TLS Secret name",
// "TLS host"; "" for none), its
// field and the value.
type inspected struct{ what, field, value string }

// deepInspectFinding runs the deep inspector's patterns over ing's hosts,
// paths and TLS entries, in ingress-nginx's order.
func deepInspectFinding(ing *networkingv1.Ingress) inspected {
	for i, rule := range ing.Spec.Rules {
		if rule.Host != "" && deepInspectRefuses(rule.Host) {
			return inspected{"host", ruleField(i) + ".host", rule.Host}
		}
		if rule.HTTP == nil {
			continue
		}
		for j, p := range rule.HTTP.Paths {
			if deepInspectRefuses(p.Path) {
				return inspected{"path", pathField(i, j) + ".path", p.Path}
			}
		}
	}
	for i, tls := range ing.Spec.TLS {
		if deepInspectRefuses(tls.SecretName) {
			return inspected{"TLS Secret name", tlsField(i) + ".secretName", tls.SecretName}
		}
		for j, h := range tls.Hosts {
			if deepInspectRefuses(h) {
				return inspected{"TLS host", tlsField(i) + ".hosts[" + strconv.Itoa(j) + "]", h}
			}
		}
	}
	return inspected{}
}

// deepInspectRefuses reports whether a pattern of deepInspectRefused
// matches v. Each needs one of the substrings tested first, which spares
// the regular expressions for nearly every value a compile reads.
func deepInspectRefuses(v string) bool {
	if !strings.Contains(v, ";") && !strings.Contains(v, "/etc/") && !strings.Contains(v, "/var/run/secrets") && !strings.Contains(v, "_by_lua") {
		return false
	}
	for _, re := range deepInspectRefused {
		if re.MatchString(v) {
			return true
		}
	}
	return false
}

// nginxStored reports whether ingress-nginx keeps ing in its store: the
// deep inspector (unless s turns it off), the word blocklist and its
// annotation parsers do not refuse it. An Ingress the inspector refuses
// is dropped by the store's event handlers before it is synced, one with
// a blocked word by syncIngress.
func nginxStored(ing *networkingv1.Ingress, s AdmissionSettings, level nginxRisk, st nginxStore) bool {
	if deepInspect(ing, s) != "" {
		return false
	}
	words := s.storeWords
	if words == nil {
		words = s.WordBlocklist
	}
	keys := make([]string, 0, len(ing.Annotations))
	for k, v := range ing.Annotations {
		if strings.HasPrefix(k, NginxPrefix) {
			for _, w := range words {
				// An empty word, which the webhook's refusal skips too.
				if w != "" && strings.Contains(v, w) {
					return false
				}
			}
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return annotationRefusal(ing.Annotations, keys, level, st) == ""
}
