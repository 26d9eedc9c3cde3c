package compile

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"ramjet.dev/ramjet/balance"
)

func init() {
	registerAnnotations(map[string]annotationSpec{
		"load-balance":                 {apply: applyLoadBalance},
		"upstream-hash-by":             {apply: applyUpstreamHashBy},
		"upstream-hash-by-subset":      {apply: applyUpstreamHashBySubset},
		"upstream-hash-by-subset-size": {apply: applyUpstreamHashBySubsetSize},
	})
}

// defaultHashSubset is ingress-nginx's upstream-hash-by-subset-size
// default (internal/ingress/annotations/upstreamhashby/main.go:100-102).
const defaultHashSubset = 3

// subsetValues are an Ingress's upstream-hash-by-subset annotations, each
// with the annotation that set it; size is the subset size the Ingress
// asks for once resolveHashSubset has read them (0: no subsets).
type subsetValues struct {
	on              bool
	onKey, sizeKey  string
	sizeValue, size int
}

func (v *annotationValues) subsetW() *subsetValues {
	if v.subset == nil {
		v.subset = &subsetValues{}
	}
	return v.subset
}

// hashSubset is the subset size the Ingress asks for, 0 for none.
func (v *annotationValues) hashSubset() int {
	if v.subset == nil {
		return 0
	}
	return v.subset.size
}

// subsetSizeOr is the upstream-hash-by-subset-size the Ingress sets, def
// when it sets none.
func (v *annotationValues) subsetSizeOr(def int) int {
	if v.subset != nil && v.subset.sizeKey != "" {
		return v.subset.sizeValue
	}
	return def
}

var applyUpstreamHashBySubset = boolAnnotation(func(v *annotationValues, key string, on bool) {
	v.subsetW().on, v.subsetW().onKey = on, key
})

// applyUpstreamHashBySubsetSize reads a whole number as ingress-nginx's
// ValidateInt does (strconv.Atoi); 0 means the default, as there. A
// negative size, which breaks ingress-nginx's subset map, is refused.
func applyUpstreamHashBySubsetSize(v *annotationValues, key, value string) error {
	n, err := strconv.Atoi(value)
	if err != nil || n < 0 || n > math.MaxInt32 {
		return fmt.Errorf("%s %q is not a whole number of endpoints of at least 1; not applied, the subset size is %d", key, value, defaultHashSubset)
	}
	if n == 0 {
		n = defaultHashSubset
	}
	v.subsetW().sizeValue, v.subsetW().sizeKey = n, key
	return nil
}

// Load balancing (SPEC §9, §11.3): the load-balance and upstream-hash-by
// annotations say how an Ingress wants its backends balanced; the oldest
// Ingress serving a backend decides.

// balanceValues are load-balance and upstream-hash-by as parsed, each with
// the annotation that set it ("" when unset); ewma: load-balance said
// "ewma".
type balanceValues struct {
	loadBalance    balance.Algorithm
	loadBalanceKey string
	ewma           bool
	// nginxOnly is a balancer name ingress-nginx accepts that ramjet
	// serves by what it does (nginxBalancer): chash, chashsubset,
	// sticky_balanced or sticky_persistent; "" otherwise.
	nginxOnly string
	hashBy    balance.HashKey
	hashByKey string
	// algorithm and hashKey are what the Ingress asks for its backends, once
	// resolveBalancing has combined the two; algorithmKey is the annotation
	// that decided, "" for the default.
	algorithm    balance.Algorithm
	hashKey      balance.HashKey
	algorithmKey string
}

// noBalancing is what an Ingress that sets neither annotation asks for;
// shared, never written.
var noBalancing balanceValues

func (v *annotationValues) balancingW() *balanceValues {
	if v.balancing == nil {
		v.balancing = new(balanceValues)
	}
	return v.balancing
}

func (v *annotationValues) balancingR() *balanceValues {
	if v.balancing == nil {
		return &noBalancing
	}
	return v.balancing
}

func applyLoadBalance(v *annotationValues, key, value string) error {
	switch value {
	case "chash", "chashsubset", "sticky_balanced", "sticky_persistent":
		// ingress-nginx's own balancers (loadbalancing/main.go,
		// balancer.lua IMPLEMENTATIONS), resolved by nginxBalancer.
		w := v.balancingW()
		w.loadBalance, w.loadBalanceKey, w.ewma, w.nginxOnly = balance.RoundRobin, key, false, value
		return nil
	}
	p, substituted, err := balance.ParseAlgorithm(value)
	if !native(key) && (err != nil || p != balance.RoundRobin && !substituted) {
		// least_conn and hash are ramjet's: ingress-nginx's validator
		// (loadbalancing/main.go loadBalanceAlgorithms) refuses them, and
		// its balancer.lua serves a ConfigMap value it has no balancer for
		// as round_robin.
		msg := fmt.Sprintf("%s %q: not a balancer ingress-nginx accepts (round_robin, ewma, chash, chashsubset, sticky_balanced, sticky_persistent); not applied", key, value)
		if err == nil {
			msg += ", " + NativePrefix + "load-balance takes it"
		}
		return errors.New(msg)
	}
	if err != nil {
		return annotationError(key, "load-balance", fmt.Errorf("%w (or ingress-nginx's chash, chashsubset, sticky_balanced, sticky_persistent)", err))
	}
	w := v.balancingW()
	w.loadBalance, w.loadBalanceKey, w.ewma, w.nginxOnly = p, key, substituted, ""
	return nil
}

// nginxBalancer is what load-balance naming one of ingress-nginx's own
// balancers serves when upstream-hash-by is unset (with it, the hash decides,
// as balancer.lua get_implementation picks chash then), and what to say:
//
//   - chash and chashsubset hash their missing expression, which Lua turns
//     into the constant "nil" (util.lua parse_complex_value, resty.chash
//     find): every request goes to one endpoint, or to one subset of
//     upstream-hash-by-subset-size endpoints (default 3) for chashsubset.
//   - sticky_balanced and sticky_persistent without affinity set no cookie
//     (sticky.lua should_set_cookie finds no locations) and read none: their
//     cookie name is the backend's cookieSessionAffinity.name, which the
//     controller always sends, "" without affinity (pkg/apis/ingress/types.go
//     CookieSessionAffinity.Name has no omitempty; sticky.lua cookie_name
//     falls back to "route" only for a missing name), so each request is
//     placed anew, at random there: round-robin here (a zero key).
func nginxBalancer(v *balanceValues, subsetSize int) (key balance.HashKey, subset int, why string) {
	switch v.nginxOnly {
	case "chash":
		return balance.ConstantKey("nil"), 0, `"chash" without upstream-hash-by hashes the same key for every request, as in ingress-nginx: every request goes to one endpoint of each backend; set upstream-hash-by to spread them`
	case "chashsubset":
		return balance.ConstantKey("nil"), subsetSize, `"chashsubset" without upstream-hash-by hashes the same key for every request, as in ingress-nginx: every request goes to one subset of ` + strconv.Itoa(subsetSize) + ` endpoints of each backend; set upstream-hash-by to spread them`
	}
	return balance.HashKey{}, 0, strconv.Quote(v.nginxOnly) + ` without affinity sets and reads no cookie, as in ingress-nginx: requests are balanced round-robin (ingress-nginx picks at random); set affinity: cookie for sticky sessions`
}

// nginxAlgorithm is the algorithm of an nginxBalancer key: hash when it
// has one, round_robin when not.
func nginxAlgorithm(key balance.HashKey) balance.Algorithm {
	if key.IsZero() {
		return balance.RoundRobin
	}
	return balance.Hash
}

func applyUpstreamHashBy(v *annotationValues, key, value string) error {
	k, err := balance.ParseHashKey(value)
	if err != nil {
		return annotationError(key, "upstream-hash-by", err)
	}
	w := v.balancingW()
	w.hashBy, w.hashByKey = k, key
	return nil
}

// annotationError words a parse error from package balance, which names the
// annotation without its prefix, with the full key the Ingress wrote.
func annotationError(key, name string, err error) error {
	msg := err.Error()
	if strings.HasPrefix(msg, name) {
		msg = key[:len(key)-len(name)] + msg
	} else {
		msg = key + ": " + msg
	}
	return errors.New(msg + "; not applied")
}

// resolveBalancing turns an Ingress's parsed load-balance and
// upstream-hash-by into the algorithm it asks for, once all its annotations
// are read (they arrive in map order).
//
//   - upstream-hash-by selects consistent hashing on its key whatever
//     load-balance says, as in ingress-nginx, where a hash key overrides
//     the load-balance algorithm.
//   - load-balance "hash" without a (valid) upstream-hash-by has no key to
//     hash: AnnotationRejected, and the Ingress asks for round_robin.
//   - "ewma" is served as least_conn: AnnotationSubstituted.
//   - ingress-nginx's chash, chashsubset and sticky_* are served as
//     nginxBalancer says: AnnotationSubstituted, Cosmetic, as a client
//     sees the same under both.
func (b *builder) resolveBalancing(ing *ingress) {
	b.resolveHashSubset(ing)
	v := ing.ann.balancing
	if v == nil {
		return // the default
	}
	switch {
	case v.hashByKey != "":
		v.algorithm, v.hashKey, v.algorithmKey = balance.Hash, v.hashBy, v.hashByKey
	case v.loadBalanceKey == "":
		// Neither is set: the default.
	case v.nginxOnly != "" && ing.ann.trafficR().affinity.key != "":
		// Affinity picks ingress-nginx's sticky balancer whatever
		// load-balance names; new sessions are spread, as round_robin does.
	case v.nginxOnly != "":
		var why string
		var subset int
		v.hashKey, subset, why = nginxBalancer(v, ing.ann.subsetSizeOr(defaultHashSubset))
		v.algorithm, v.algorithmKey = nginxAlgorithm(v.hashKey), v.loadBalanceKey
		if subset > 0 {
			ing.ann.subsetW().size = subset
		}
		if !strings.HasPrefix(v.loadBalanceKey, configMapKeyName) { // the ConfigMap warns once
			b.warn(AnnotationSubstituted, ing.ref(), annotationField(v.loadBalanceKey), v.loadBalanceKey+" "+why)
			b.warnings[len(b.warnings)-1].Rated = Cosmetic
		}
	case v.loadBalance == balance.Hash:
		b.warn(AnnotationRejected, ing.ref(), annotationField(v.loadBalanceKey),
			v.loadBalanceKey+` "hash" needs upstream-hash-by to name the request key to hash; not applied, the Ingress's backends are balanced round_robin`)
	default:
		v.algorithm, v.algorithmKey = v.loadBalance, v.loadBalanceKey
		if v.ewma && !strings.HasPrefix(v.loadBalanceKey, configMapKeyName) { // the ConfigMap warns once
			b.warn(AnnotationSubstituted, ing.ref(), annotationField(v.loadBalanceKey),
				v.loadBalanceKey+` "ewma" is served as least_conn (fewest requests in flight, ties round-robin); ramjet does not implement ewma`)
		}
	}
}

// resolveHashSubset reads upstream-hash-by-subset and its size: subsets
// need a hash key, as ingress-nginx picks its chashsubset balancer only
// for an upstream with upstream-hash-by (rootfs/etc/nginx/lua/balancer.lua:56-62);
// a size without subsets does nothing there either. Both warn here.
func (b *builder) resolveHashSubset(ing *ingress) {
	v := ing.ann.subset
	if v == nil {
		return
	}
	switch {
	case v.on && ing.ann.balancingR().hashByKey == "":
		b.warn(AnnotationRejected, ing.ref(), annotationField(v.onKey),
			v.onKey+" has no effect without a valid upstream-hash-by to hash")
	case v.on:
		v.size = defaultHashSubset
		if v.sizeKey != "" {
			v.size = v.sizeValue
		}
		return
	}
	if v.sizeKey != "" && !(ing.ann.balancingR().nginxOnly == "chashsubset" && ing.ann.balancingR().hashByKey == "") {
		b.warn(AnnotationRejected, ing.ref(), annotationField(v.sizeKey),
			v.sizeKey+" has no effect without upstream-hash-by-subset: \"true\" and upstream-hash-by")
	}
}

// balancingText describes an algorithm as the warnings and the table show it.
func balancingText(p balance.Algorithm, k balance.HashKey, subset int) string {
	if p == balance.Hash {
		if subset > 0 {
			return "hash on " + k.String() + " onto subsets of " + strconv.Itoa(subset)
		}
		return "hash on " + k.String()
	}
	return p.String()
}

// sameBalancing compares what two Ingresses ask for. Hash keys compare by
// the variable they name (HashKey.Same): $http_X_User, $http_x_user and
// ${http_x_user} hash alike.
func sameBalancing(x, y *annotationValues) bool {
	xb, yb := x.balancingR(), y.balancingR()
	return xb.algorithm == yb.algorithm && xb.hashKey.Same(yb.hashKey) && x.hashSubset() == y.hashSubset()
}

// decideBalancing sets each backend's algorithm and hash key (SPEC §9). When
// the Ingresses serving one backend disagree, the oldest decides and each
// other one gets AnnotationConflict naming it. An Ingress that sets neither
// annotation asks for round_robin, the default: the oldest Ingress decides
// whether or not it wrote an annotation, as ingress-nginx configures an
// upstream from the first Ingress that uses it.
func (b *builder) decideBalancing() {
	for _, bi := range b.backendList {
		if len(bi.claims) == 0 {
			continue
		}
		owner := bi.claims[0]
		ob := owner.ann.balancingR()
		bi.b.Algorithm, bi.b.HashKey, bi.b.HashSubset = ob.algorithm, ob.hashKey, int32(owner.ann.hashSubset())
		for _, ing := range bi.claims[1:] {
			if sameBalancing(&ing.ann, &owner.ann) {
				continue
			}
			ib := ing.ann.balancingR()
			key := ib.algorithmKey
			asked := balancingText(ib.algorithm, ib.hashKey, ing.ann.hashSubset())
			if key == "" {
				key = NativePrefix + "load-balance"
				asked += " (neither load-balance nor upstream-hash-by is set)"
			}
			b.conflict(AnnotationConflict, ing.ref(), annotationField(key),
				"backend "+bi.b.ID+" is balanced "+balancingText(ob.algorithm, ob.hashKey, owner.ann.hashSubset())+
					", as the oldest Ingress serving it decides; this Ingress asks for "+asked,
				owner.ref(), "")
		}
	}
}
