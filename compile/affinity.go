package compile

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"ramjet.dev/ramjet/balance"
	"ramjet.dev/ramjet/match"
)

// Session affinity (SPEC §9): ingress-nginx's affinity: cookie with the
// session-cookie-* settings. Like load-balance, the oldest Ingress serving
// a backend decides its affinity; a canary shares its primary's, so that
// a session pinned to the canary stays there (affinity-canary-behavior
// sticky, the default), unless the canary Ingress asks for legacy.

func init() {
	registerAnnotations(map[string]annotationSpec{
		"affinity":                                 {apply: applyAffinity},
		"affinity-mode":                            {apply: applyAffinityMode},
		"affinity-canary-behavior":                 {apply: applyAffinityCanaryBehavior},
		"session-cookie-name":                      {apply: applySessionCookieName},
		"session-cookie-path":                      {apply: applySessionCookiePath},
		"session-cookie-domain":                    {apply: applySessionCookieDomain},
		"session-cookie-max-age":                   {apply: applySessionCookieMaxAge},
		"session-cookie-expires":                   {apply: applySessionCookieExpires},
		"session-cookie-samesite":                  {apply: applySessionCookieSameSite},
		"session-cookie-secure":                    {apply: applySessionCookieSecure},
		"session-cookie-conditional-samesite-none": {apply: applySessionCookieConditionalSameSiteNone},
		"session-cookie-change-on-failure":         {apply: applySessionCookieChangeOnFailure},
	})
}

// defaultSessionCookie is ingress-nginx's session-cookie-name default.
const defaultSessionCookie = "INGRESSCOOKIE"

type canaryBehavior uint8

const (
	stickyCanary canaryBehavior = iota
	legacyCanary
)

// affinityValues are an Ingress's affinity annotations as parsed.
type affinityValues struct {
	// key is the affinity annotation when it said "cookie", else "".
	key string
	// cookie holds the session-cookie-* settings and affinity-mode.
	cookie         match.SessionAffinity
	canaryBehavior canaryBehavior
	// canaryBehaviorKey is the affinity-canary-behavior annotation when
	// set, for the warning on an Ingress that is not a canary.
	canaryBehaviorKey string
	// settingKeys are the other affinity annotations set, for the warning
	// when affinity is not on.
	settingKeys []string
}

func (a *affinityValues) set(key string) { a.settingKeys = append(a.settingKeys, key) }

// applyAffinity reads affinity: "cookie", trimmed but case-sensitive, as
// ingress-nginx's validator reads it
// (internal/ingress/annotations/sessionaffinity/main.go:73-76).
func applyAffinity(v *annotationValues, key, value string) error {
	if strings.TrimSpace(value) != "cookie" {
		return fmt.Errorf("%s %q is not cookie, the only affinity type (in lower case); not applied", key, value)
	}
	v.trafficW().affinity.key = key
	return nil
}

func applyAffinityMode(v *annotationValues, key, value string) error {
	m, err := balance.ParseAffinityMode(strings.TrimSpace(value))
	if err != nil {
		return annotationError(key, "affinity-mode", err)
	}
	v.trafficW().affinity.cookie.Mode = m
	v.trafficW().affinity.set(key)
	return nil
}

// applyAffinityCanaryBehavior reads sticky or legacy, trimmed; under
// ingress-nginx's prefix in lower case only, as its validator takes them
// (sessionaffinity/main.go: ValidateOptions, case-sensitive), "Legacy"
// leaving the canary sticky there.
func applyAffinityCanaryBehavior(v *annotationValues, key, value string) error {
	value = strings.TrimSpace(value)
	if native(key) {
		value = strings.ToLower(value)
	}
	switch value {
	case "sticky":
		v.trafficW().affinity.canaryBehavior = stickyCanary
	case "legacy":
		v.trafficW().affinity.canaryBehavior = legacyCanary
	default:
		return fmt.Errorf("%s %q is not sticky or legacy; not applied", key, value)
	}
	v.trafficW().affinity.canaryBehaviorKey = key
	return nil
}

func applySessionCookieName(v *annotationValues, key, value string) error {
	if !isToken(value) {
		return fmt.Errorf("%s %q is not a valid cookie name; not applied", key, value)
	}
	v.trafficW().affinity.cookie.CookieName = value
	v.trafficW().affinity.set(key)
	return nil
}

// cookieAttr checks a cookie attribute value: printable ASCII without ';',
// which would end the attribute.
func cookieAttr(key, value string) error {
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x21 || c > 0x7e || c == ';' {
			return fmt.Errorf("%s %q holds a space, ';' or a byte a cookie attribute cannot carry; not applied", key, value)
		}
	}
	return nil
}

func applySessionCookiePath(v *annotationValues, key, value string) error {
	if err := cookieAttr(key, value); err != nil {
		return err
	}
	if !strings.HasPrefix(value, "/") {
		return fmt.Errorf("%s %q does not begin with /; not applied", key, value)
	}
	v.trafficW().affinity.cookie.Path = value
	v.trafficW().affinity.set(key)
	return nil
}

func applySessionCookieDomain(v *annotationValues, key, value string) error {
	if err := cookieAttr(key, value); err != nil {
		return err
	}
	v.trafficW().affinity.cookie.Domain = value
	v.trafficW().affinity.set(key)
	return nil
}

// cookieSeconds parses a cookie lifetime: whole seconds under
// ingress-nginx's prefix, as nginxCookieSeconds reads them; a duration
// with a unit ("1h") under ramjet.dev/ (SPEC §11.3).
func cookieSeconds(key, value string) (string, error) {
	if strings.HasPrefix(key, NativePrefix) {
		d, err := time.ParseDuration(value)
		if err != nil || d < 0 || d%time.Second != 0 {
			return "", fmt.Errorf("%s %q is not a whole number of seconds with a unit (3600s, 1h); not applied", key, value)
		}
		return strconv.FormatInt(int64(d/time.Second), 10), nil
	}
	if s, ok := nginxCookieSeconds(value, strings.HasSuffix(key, "-expires")); ok {
		return s, nil
	}
	return "", fmt.Errorf("%s %q is not a whole number of seconds; not applied", key, value)
}

// nginxCookieExpiresRE is ingress-nginx's affinityCookieExpiresRegex,
// anchored only at one end in each alternative, as it is written there.
var nginxCookieExpiresRE = regexp.MustCompile(`(^0|-?[1-9]\d*$)`)

// nginxCookieSeconds reads a cookie lifetime as ingress-nginx does
// (sessionaffinity/main.go): its validator matches nginxCookieExpiresRE
// against the value as written, spaces removed for expires only; its
// parser trims the value and matches it again; sticky.lua writes Lua's
// tonumber of that. A negative number is written as is, so the cookie
// expires at once; a number with a leading zero or sign is written as
// the number. What tonumber does not read as a whole number (a unit, a
// fraction) sets no lifetime there, and is not applied here.
func nginxCookieSeconds(value string, removeSpace bool) (string, bool) {
	checked := value
	if removeSpace {
		checked = strings.ReplaceAll(value, " ", "")
	}
	s := strings.TrimSpace(value)
	if !nginxCookieExpiresRE.MatchString(checked) || !nginxCookieExpiresRE.MatchString(s) {
		return "", false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}

func applySessionCookieMaxAge(v *annotationValues, key, value string) error {
	s, err := cookieSeconds(key, value)
	if err != nil {
		return err
	}
	v.trafficW().affinity.cookie.MaxAge = s
	v.trafficW().affinity.set(key)
	return nil
}

func applySessionCookieExpires(v *annotationValues, key, value string) error {
	s, err := cookieSeconds(key, value)
	if err != nil {
		return err
	}
	v.trafficW().affinity.cookie.Expires = s
	v.trafficW().affinity.set(key)
	return nil
}

// applySessionCookieSameSite reads None, Lax or Strict. Under
// nginx.ingress.kubernetes.io/ the value must be written so: ingress-nginx's
// validator takes any case, but lua-resty-cookie then drops a SameSite not
// written exactly None, Lax or Strict (its lib/resty/cookie.lua:149-157),
// so "lax" there sets no SameSite at all. ramjet.dev/ takes any case.
func applySessionCookieSameSite(v *annotationValues, key, value string) error {
	var s string
	value = strings.TrimSpace(value)
	if strings.HasPrefix(key, NginxPrefix) && value != "None" && value != "Lax" && value != "Strict" {
		switch strings.ToLower(value) {
		case "none", "lax", "strict":
			return fmt.Errorf("%s %q is not written None, Lax or Strict; ingress-nginx's cookie library then drops it, and the cookie has no SameSite; not applied", key, value)
		}
	}
	switch strings.ToLower(value) {
	case "none":
		s = "None"
	case "lax":
		s = "Lax"
	case "strict":
		s = "Strict"
	default:
		return fmt.Errorf("%s %q is not None, Lax or Strict; not applied", key, value)
	}
	v.trafficW().affinity.cookie.SameSite = s
	v.trafficW().affinity.set(key)
	return nil
}

var (
	applySessionCookieSecure = boolAnnotation(func(v *annotationValues, key string, on bool) {
		v.trafficW().affinity.cookie.Secure = on
		v.trafficW().affinity.set(key)
	})
	applySessionCookieConditionalSameSiteNone = boolAnnotation(func(v *annotationValues, key string, on bool) {
		v.trafficW().affinity.cookie.ConditionalSameSiteNone = on
		v.trafficW().affinity.set(key)
	})
	applySessionCookieChangeOnFailure = boolAnnotation(func(v *annotationValues, key string, on bool) {
		v.trafficW().affinity.cookie.ChangeOnFailure = on
		v.trafficW().affinity.set(key)
	})
)

// sessionAffinity is what an Ingress asks for its backends: nil without
// affinity: cookie.
func (ing *ingress) sessionAffinity() *match.SessionAffinity {
	a := &ing.ann.trafficR().affinity
	if a.key == "" {
		return nil
	}
	c := a.cookie
	if c.CookieName == "" {
		c.CookieName = defaultSessionCookie
	}
	if c.Mode == balance.NoAffinity {
		c.Mode = balance.Balanced
	}
	return &c
}

// decideAffinity sets each backend's session affinity (SPEC §9): the
// oldest Ingress serving it with affinity: cookie decides, as ingress-nginx
// takes the upstream's affinity from the first Ingress that sets one, and
// every later one that asks for other settings gets AnnotationConflict. An
// Ingress without affinity is no conflict: its routes follow a session
// cookie but set none (Route.NoAffinityCookie), as ingress-nginx sets the
// cookie only on the locations of Ingresses with affinity
// (internal/ingress/controller/controller.go:883-910,
// rootfs/etc/nginx/lua/balancer/sticky.lua:143-171). An Ingress's affinity
// reaches the backends of its rule paths only: its spec.defaultBackend's
// upstream gets none there (controller.go:1033-1046). Then each sticky
// canary takes its primary's affinity, so that both read one cookie.
func (b *builder) decideAffinity() {
	for _, ing := range b.ingresses {
		a := &ing.ann.trafficR().affinity
		if a.key == "" {
			for _, key := range a.settingKeys {
				b.warn(AnnotationRejected, ing.ref(), annotationField(key),
					key+" has no effect: the Ingress does not set affinity: cookie")
			}
		}
		if a.canaryBehaviorKey != "" && ing.ann.trafficR().canaryKey == "" {
			// ingress-nginx reads it off the canary Ingress alone
			// (controller.go mergeAlternativeBackend).
			b.warn(AnnotationRejected, ing.ref(), annotationField(a.canaryBehaviorKey),
				a.canaryBehaviorKey+" has no effect: the Ingress is not a canary (the canary annotation is not \"true\"); it belongs on the canary Ingress")
		}
	}
	for _, bi := range b.backendList {
		var owner *ingress
		var want *match.SessionAffinity
		for _, ing := range bi.claims {
			asked := ing.sessionAffinity()
			switch {
			case asked == nil, ing.ann.trafficR().canaryKey != "", !slices.Contains(ing.routed, bi.b):
			case owner == nil:
				owner, want = ing, asked
			case !sameAffinity(want, asked):
				b.conflict(AnnotationConflict, ing.ref(), annotationField(ing.ann.trafficR().affinity.key),
					"backend "+bi.b.ID+" has "+affinityText(want)+", as the oldest Ingress serving it with affinity decides; this Ingress asks for "+affinityText(asked),
					owner.ref(), "")
			}
		}
		if want != nil {
			if bi.b.Traffic == nil {
				bi.b.Traffic = &match.Traffic{}
			}
			bi.b.Traffic.Affinity = want
		}
	}
	for _, v := range b.vhostOrder {
		for _, r := range v.vh.Routes {
			if r.NoAffinityCookie && (r.Backend == nil || r.Backend.Traffic == nil || r.Backend.Traffic.Affinity == nil) {
				r.NoAffinityCookie = false
			}
		}
	}
	b.warnPatternCookiePath()
	for _, bi := range b.backendList {
		t := bi.b.Traffic
		if t == nil || t.Canary == nil {
			continue
		}
		c := t.Canary
		c.Sticky = c.Sticky && t.Affinity != nil
		if c.Sticky {
			if c.Backend.Traffic == nil {
				c.Backend.Traffic = &match.Traffic{}
			}
			c.Backend.Traffic.Affinity = t.Affinity
		}
	}
	b.warnCanaryAffinity()
}

// warnPatternCookiePath warns, once per Ingress, about an affinity cookie
// set on a route whose path is a pattern and with no session-cookie-path:
// ingress-nginx writes the pattern as the cookie's Path, which a browser
// never sends back, and logs that session-cookie-path should be set
// (internal/ingress/controller/controller.go:883-887); ramjet sets the
// cookie for "/" (match.CookiePath).
func (b *builder) warnPatternCookiePath() {
	var warned map[string]bool
	for _, v := range b.vhostOrder {
		for _, r := range v.vh.Routes {
			if r.Type != match.Regex || r.NoAffinityCookie || r.Source.Kind != "" || r.Backend == nil || r.Backend.Traffic == nil {
				continue
			}
			a := r.Backend.Traffic.Affinity
			if a == nil || a.Path != "" {
				continue
			}
			if _, pattern := match.CookiePath(r); !pattern || warned[r.Source.Ingress()] {
				continue
			}
			ing := b.ingressNamed(r.Source.Namespace, r.Source.Name)
			if ing == nil || ing.ann.trafficR().affinity.key == "" {
				continue
			}
			if warned == nil {
				warned = map[string]bool{}
			}
			warned[r.Source.Ingress()] = true
			key := ing.ann.trafficR().affinity.key
			b.warn(AnnotationSubstituted, ing.ref(), annotationField(key),
				fmt.Sprintf("%s: path %q is a regular expression, which means nothing as a cookie path; the session cookie is set for \"/\" (ingress-nginx writes the pattern, which browsers do not send back); set session-cookie-path", key, cmp.Or(r.OrderPath, r.Path)))
		}
	}
}

// ingressNamed is the claimed Ingress namespace/name, nil if none.
func (b *builder) ingressNamed(ns, name string) *ingress {
	for _, ing := range b.ingresses {
		if ing.obj.Namespace == ns && ing.obj.Name == name {
			return ing
		}
	}
	return nil
}

// warnCanaryAffinity warns about a canary Ingress's affinity annotations
// that its backends do not follow. They are not read: ingress-nginx skips
// a canary's upstream before reading them
// (internal/ingress/controller/controller.go:806-808), and a sticky canary
// takes its primary's (:1597-1599). A canary asking for what its primary
// has, as one copied from its primary does, is not warned.
func (b *builder) warnCanaryAffinity() {
	var warned map[*ingress]bool
	for _, bi := range b.backendList {
		var got *match.SessionAffinity
		if bi.b.Traffic != nil {
			got = bi.b.Traffic.Affinity
		}
		for _, ing := range bi.claims {
			a := &ing.ann.trafficR().affinity
			if ing.ann.trafficR().canaryKey == "" || warned[ing] || a.key == "" && len(a.settingKeys) == 0 {
				continue
			}
			if asked := ing.sessionAffinity(); asked != nil && sameAffinity(asked, got) {
				continue
			}
			if warned == nil {
				warned = map[*ingress]bool{}
			}
			warned[ing] = true
			for _, key := range append([]string{a.key}, a.settingKeys...) {
				if key != "" {
					b.warn(AnnotationRejected, ing.ref(), annotationField(key),
						key+" has no effect on a canary Ingress, which takes its primary's session affinity (affinity-canary-behavior sticky) or none (legacy): backend "+
							bi.b.ID+" has "+affinityText(got))
					b.warnings[len(b.warnings)-1].Rated = Cosmetic // nor under ingress-nginx
				}
			}
		}
	}
}

func sameAffinity(x, y *match.SessionAffinity) bool {
	if x == nil || y == nil {
		return x == y
	}
	return *x == *y
}

func affinityText(a *match.SessionAffinity) string {
	if a == nil {
		return "no session affinity"
	}
	return "session affinity by cookie " + a.CookieName + " (" + a.Mode.String() + ")"
}
