package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Advice for the ingress-nginx v1.15 controller flags ramjet does not
// implement (pkg/flags/flags.go, plus the klog flags it also took). Such a
// flag stops the process, saying what to do: ignoring it could change what
// the operator believes is served.
const (
	adviceRemove     = "remove it"
	adviceFullTest   = "ramjet's webhook always compiles the whole snapshot's related objects and never runs nginx -t; remove the flag"
	adviceLogging    = "ramjet logs with log/slog; set RAMJET_LOG=debug|info|warn|error instead"
	adviceHTTPPort   = "use --http-addr=:PORT"
	adviceHTTPSPort  = "use --https-addr=:PORT"
	adviceHealthPort = "use --debug-addr=HOST:PORT: /healthz, /readyz and /debug/* all listen there"
	adviceAPIServer  = "use --kubeconfig (or in-cluster credentials)"
	adviceMaxmind    = "ramjet has no GeoIP; remove the flag"
	adviceProfiler   = "ramjet serves no pprof; remove the flag"
	adviceNamespaces = "use --watch-namespace for one namespace, or none for all"
	adviceElection   = "the Lease timings are client-go's defaults (15 s lease); remove the flag"
)

// ingressNginxFlags maps each unimplemented flag to its advice.
var ingressNginxFlags = map[string]string{
	"apiserver-host":                adviceAPIServer,
	"certificate-authority":         adviceAPIServer,
	"watch-namespace-selector":      adviceNamespaces,
	"ingress-class-by-name":         "ramjet matches IngressClasses by spec.controller (--controller-class) only; remove the flag",
	"profiling":                     adviceProfiler,
	"profiler-port":                 adviceProfiler,
	"profiler-address":              adviceProfiler,
	"health-check-timeout":          "set the probe's timeoutSeconds instead; remove the flag",
	"healthz-port":                  adviceHealthPort,
	"healthz-host":                  adviceHealthPort,
	"election-ttl":                  adviceElection,
	"disable-leader-election":       "every replica serves; the Lease only picks who writes status and Events; remove the flag, or use --update-status=false",
	"update-status-on-shutdown":     "ramjet never clears status on shutdown (as with =false); remove the flag",
	"status-update-interval":        "ramjet writes status when the table or the publish Service changes; remove the flag",
	"ssl-passthrough-proxy-port":    "ramjet's TLS listener splices passthrough connections itself, with no internal port; remove the flag",
	"disable-svc-external-name":     "ExternalName Services always answer 503 in ramjet (SPEC §8); remove the flag",
	"annotations-prefix":            "ramjet reads the nginx.ingress.kubernetes.io/ annotations it implements; remove the flag",
	"enable-annotation-validation":  "ramjet always validates annotations and warns about bad ones; remove the flag",
	"enable-ssl-chain-completion":   "put the full chain in tls.crt; remove the flag",
	"sync-rate-limit":               "ramjet rebuilds 200 ms after the last change, at least once a second; remove the flag",
	"bucket-factor":                 "ramjet exports classic histograms only; remove the flag",
	"max-buckets":                   "ramjet exports classic histograms only; remove the flag",
	"monitor-max-batch-size":        "ramjet counts each request in process, without batches; remove the flag",
	"http-port":                     adviceHTTPPort,
	"https-port":                    adviceHTTPSPort,
	"default-server-port":           "the catch-all is served on --http-addr and --https-addr; remove the flag",
	"disable-catch-all":             "ramjet serves catch-all Ingresses (SPEC §6); remove the flag",
	"disable-full-test":             adviceFullTest,
	"status-port":                   "nginx's internal port; remove the flag",
	"stream-port":                   "nginx's internal port; remove the flag",
	"internal-logger-address":       "nginx's internal syslog; remove the flag",
	"post-shutdown-grace-period":    "ramjet exits as soon as it has drained (--shutdown-grace-period); remove the flag",
	"deep-inspect":                  "ramjet always withholds, as ingress-nginx's deep inspection, an Ingress whose host, path or TLS entry holds an nginx directive or a system path; remove the flag",
	"dynamic-configuration-retries": "ramjet publishes in memory and cannot fail to apply a table; remove the flag",
	"disable-sync-events":           "ramjet posts no Sync Events, only Warning Events (as with --disable-sync-events); remove the flag",
	"enable-topology-aware-routing": "ramjet balances over every ready endpoint; remove the flag",
	"maxmind-mirror":                adviceMaxmind,
	"maxmind-license-key":           adviceMaxmind,
	"maxmind-edition-ids":           adviceMaxmind,
	"maxmind-retries-count":         adviceMaxmind,
	"maxmind-retries-timeout":       adviceMaxmind,
	// klog's flags, which ingress-nginx added to its own (its --v is
	// ramjet's -v).
	"vmodule":           adviceLogging,
	"logtostderr":       adviceLogging,
	"alsologtostderr":   adviceLogging,
	"stderrthreshold":   adviceLogging,
	"log_dir":           adviceLogging,
	"log_file":          adviceLogging,
	"log_file_max_size": adviceLogging,
	"one_output":        adviceLogging,
	"skip_headers":      adviceLogging,
	"skip_log_headers":  adviceLogging,
	"add_dir_header":    adviceLogging,
}

// ingressNginxNoop are boolean flags whose given value asks for what
// ramjet does anyway: accepted, so that a Deployment that spells out
// ingress-nginx's defaults starts unchanged.
var ingressNginxNoop = map[string]bool{
	"disable-leader-election":       false,
	"update-status-on-shutdown":     false,
	"disable-catch-all":             false,
	"disable-svc-external-name":     false,
	"enable-ssl-chain-completion":   false,
	"ingress-class-by-name":         false,
	"enable-topology-aware-routing": false,
	"disable-sync-events":           true, // ramjet posts none
	"deep-inspect":                  true, // ramjet's compile inspects as ingress-nginx's
	"profiling":                     false,
	"logtostderr":                   true,
	// ramjet always validates annotations, and its webhook always
	// compiles with the whole snapshot, as ingress-nginx's full test.
	"enable-annotation-validation": true,
	"disable-full-test":            false,
}

// ingressNginxNoopValues are flags taking a value whose given value asks
// for what ramjet does anyway: accepted as ingressNginxNoop's are.
var ingressNginxNoopValues = map[string]func(v string) bool{
	// socket.go turns native histograms on above 1 only.
	"bucket-factor": func(v string) bool { f, err := strconv.ParseFloat(v, 64); return err == nil && f <= 1 },
	// Native histograms' bucket cap: nothing to cap without them.
	"max-buckets": func(v string) bool { _, err := strconv.ParseUint(v, 10, 32); return err == nil },
	// monitor.lua's batch cap, past which a worker drops request metrics;
	// ramjet counts every request in process.
	"monitor-max-batch-size": func(v string) bool { n, err := strconv.Atoi(v); return err == nil && n > 0 },
	// Its default, spelled out by older ingress-nginx Deployments: the
	// prefix ramjet reads.
	"annotations-prefix": func(v string) bool { return v == "nginx.ingress.kubernetes.io" },
}

// foreignFlags finds the flags fs does not define before Parse sees them,
// so that an unknown flag is named alone rather than with the whole
// usage, and every such flag of the command line at once (one run tells
// all there is to fix). It returns args without the accepted no-op flags,
// and their names.
func foreignFlags(fs *flag.FlagSet, args []string) (rest, noop []string, err error) {
	rest = make([]string, 0, len(args))
	var problems []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" || len(arg) < 2 || arg[0] != '-' {
			rest = append(rest, args[i:]...) // the flags end here
			break
		}
		name := strings.TrimPrefix(arg[1:], "-")
		name, value, hasValue := strings.Cut(name, "=")
		if name == "h" || name == "help" {
			rest = append(rest, args[i:]...) // Parse answers with the usage
			break
		}
		if f := fs.Lookup(name); f != nil {
			rest = append(rest, arg)
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) && i+1 < len(args) {
				i++
				rest = append(rest, args[i])
			}
			continue
		}
		advice, known := ingressNginxFlags[name]
		if !known {
			problems = append(problems, fmt.Sprintf("unknown flag %s (controller -h lists the flags)", arg))
			i += separateValue(args, i, hasValue, false)
			continue
		}
		if accept := ingressNginxNoopValues[name]; accept != nil {
			v, has := value, hasValue
			if !has && i+1 < len(args) {
				v, has = args[i+1], true
			}
			if has && accept(v) {
				if !hasValue {
					i++
				}
				if !slices.Contains(noop, name) {
					noop = append(noop, name)
				}
				continue
			}
		}
		want, isNoop := ingressNginxNoop[name]
		if isNoop {
			v, perr := strconv.ParseBool(value)
			if !hasValue {
				v, perr = true, nil
			}
			if perr == nil && v == want {
				if !slices.Contains(noop, name) {
					noop = append(noop, name)
				}
				continue
			}
		}
		problems = append(problems, fmt.Sprintf("%s is an ingress-nginx flag ramjet does not implement: %s", arg, advice))
		i += separateValue(args, i, hasValue, isNoop)
	}
	switch len(problems) {
	case 0:
		return rest, noop, nil
	case 1:
		return nil, nil, fmt.Errorf("%w: %s", errUsage, problems[0])
	}
	return nil, nil, fmt.Errorf("%w: %d flags to fix:\n  %s", errUsage, len(problems), strings.Join(problems, "\n  "))
}

// separateValue is 1 when the flag at args[i] takes its value from the
// next argument (no "=value", not boolean, and the next one is no flag),
// so that the value is not read as a flag of its own.
func separateValue(args []string, i int, hasValue, boolean bool) int {
	if hasValue || boolean || i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
		return 0
	}
	return 1
}
