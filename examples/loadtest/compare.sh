#!/usr/bin/env bash
# compare.sh measures the ramjet router against nginx on loopback (issues
# 15, 26 and 41). Every proxy is a process of its own in front of one Go
# backend process answering 100 bytes, so that each pays the same hop.
#
# MODES (default all: every one below, one table) is how clients come:
#
#   http          plain HTTP/1.1, keep-alive (wrk)
#   https         HTTP/1.1 over TLS, keep-alive (wrk)
#   https-new     HTTPS with a new connection per request, every handshake
#                 a full one (tlsload: "Connection: close", no client
#                 session cache)
#   https-resume  the same, each client worker resuming the session of its
#                 previous connection (tlsload -resume; how many
#                 handshakes resumed is printed per run, on stderr)
#   h2            HTTP/2 over TLS (h2load, H2_CLIENTS=24 connections with
#                 H2_STREAMS=3 streams each; Debian: apt-get install
#                 nghttp2-client). Each connection makes 1,000 requests,
#                 however long they take: nginx ends a connection after
#                 keepalive_requests (ingress-nginx's keep-alive-requests,
#                 1000), and h2load does not reconnect
#   grpc          gRPC unary calls over TLS (grpcload -role client,
#                 GRPC_CLIENTS=8 connections with GRPC_STREAMS=8 calls in
#                 flight each) to a Go gRPC backend (grpcload -role
#                 backend) behind the host grpc.load: nginx's grpc_pass,
#                 ramjet's backend-protocol GRPC
#
# The TLS modes use an ECDSA P-256 certificate made here for both, and
# nginx is set up as ingress-nginx v1.15's template sets it up: TLS 1.2
# and 1.3, its default ssl-ciphers, ssl_prefer_server_ciphers,
# ssl_session_cache shared:SSL:10m, ssl_session_timeout 10m,
# ssl_session_tickets off, ssl_buffer_size 4k, ssl_ecdh_curve auto, HTTP/2
# on the TLS listener (nginx before 1.25.1 spells "http2 on" as "listen
# ... ssl http2"), keep-alive; ramjet runs its defaults, which are those.
# The TLS modes run the configs that serve TLS: nginx, router-loop,
# router-loop-h2net, router-loop-gotls and controller(-otel).
#
# The configs (CONFIGS, default "backend nginx router-loop controller"):
#
#   backend         the load straight to the backend (http only)
#   nginx           worker_processes 1, keepalive 64 to the backend and the
#                   forwarding headers ingress-nginx sets (where installed;
#                   Debian: apt-get install nginx)
#   router          the router, one catch-all Ingress, plain http.Server
#   router-nethttp  the same with a net/http Transport upstream
#   proxy           a bare httputil.ReverseProxy
#   router-1000     the router with 1,000 Ingresses loaded (INGRESSES=1000)
#   router-loop-1000  the same behind router/h1 (INGRESSES=1000 with
#                   router-loop in CONFIGS)
#   router-loop     the router behind router/h1, the controller's own
#                   HTTP/1.1 server loop, and over TLS behind a handshake
#                   listener as the controller's (upstreams/tls.go): an
#                   embedder serving the router with the library's server
#   router-loop-h2net  router-loop with net/http's HTTP/2 server in place
#                   of router/h2's (upstreams -http2-server net/http): what
#                   router/h2 changes (issue 41)
#   router-loop-gotls  router-loop with its TLS connections' sockets read
#                   and written by Go's own calls instead of raw ones
#                   (upstreams -tls-raw=false): a measuring device for
#                   rawsock.NetConn (issue 41)
#   router-rawloop  the router behind a minimal HTTP/1.1 loop instead of
#                   http.Server: a measuring device for what net/http's
#                   server costs (upstreams/rawloop.go)
#   controller      the example controller offline (-manifests) with the
#                   router configs' objects (upstreams -role manifests), an
#                   ingress-nginx ConfigMap without keys, no access log,
#                   the harness's certificate as -default-ssl-certificate.
#                   router-loop against it is an embedder serving the
#                   router with router/h1 against the controller (issue 35)
#   controller-otel the same with OpenTelemetry on (issue 39): the
#                   ConfigMap's enable-opentelemetry, the default sampler
#                   (AlwaysOn: every request's span exported), OTLP/gRPC to
#                   examples/controller/otlpsink on the load CPU
#
# The load tool (wrk, tlsload, h2load or grpcload) runs pinned to CPU 0,
# the proxy and the backend pinned together to CPU 1, 64 connections, in
# ROUNDS rounds of SECONDS_PER_ROUND seconds per mode, the configs in a
# rotating order within each round. A round is cut into SLICES slices
# (default 3; h2, whose runs are counted in requests, takes one): each
# config has its turn in every slice, and its round's figures are the
# sums over its slices (p99: their mean). On a shared machine the speed of
# the core drifts over seconds (the backend, the same program for every
# config, has seen its own CPU per request move by half between two
# configs' turns), and the shorter turns let every config meet the same
# drift. Per mode, config and round it prints
# req/s, p99, the CPU time per request of the proxy process alone and of
# the backend (utime+stime from /proc/<pid>/stat, before and after, over
# the requests the load tool counted), and the ratios to nginx within the
# same round; then the medians. CPU per request hardly depends on how much
# of the core the proxy got, so on a machine shared with other work it is
# the figure to trust, with the within-round ratios. The output is one
# Markdown table, with the load average at the start and the end.
#
#   examples/loadtest/compare.sh                  # every mode, 5 rounds of 6 s
#   MODES="https h2" examples/loadtest/compare.sh # these modes only
#   ROUNDS=3 SECONDS_PER_ROUND=4 examples/loadtest/compare.sh
#   SLICES=1 examples/loadtest/compare.sh         # one turn per config and round
#   CONFIGS="nginx router" MODES=http examples/loadtest/compare.sh
#   INGRESSES=1000 examples/loadtest/compare.sh   # adds router-1000
#   PROFILE=router-loop examples/loadtest/compare.sh # CPU and allocation profiles of these proxies
#                                                    # (controller, controller-otel: CPU only)
#   NOPIN=1 examples/loadtest/compare.sh          # no pinning
#
# Everything listens on 127.0.0.1 (ports BASE_PORT=18080 and up, TLS 1000
# higher); every process it starts is stopped when it ends, and each stops
# by itself after 30 minutes whatever happens (the controller under
# timeout(1), whose CPU figures count its child).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_ROUND:-6}
SLICES=${SLICES:-3}
CONNS=${CONNECTIONS:-64}
H2_CLIENTS=${H2_CLIENTS:-24}
H2_STREAMS=${H2_STREAMS:-3}
GRPC_CLIENTS=${GRPC_CLIENTS:-8}
GRPC_STREAMS=${GRPC_STREAMS:-8}
BASE_PORT=${BASE_PORT:-18080}
LOAD_CPU=${LOAD_CPU:-0}
PROXY_CPU=${PROXY_CPU:-1}
INGRESSES=${INGRESSES:-}
ALL_MODES="http https https-new https-resume h2 grpc"
MODES=${MODES:-all}
[[ $MODES != all ]] || MODES=$ALL_MODES
for m in $MODES; do
	[[ " $ALL_MODES " == *" $m "* ]] || { echo "compare.sh: unknown mode $m (modes: $ALL_MODES)" >&2; exit 2; }
done
CONFIGS=${CONFIGS:-backend nginx router-loop controller}
# router-N once, whether CONFIGS names it or not: two of one config would
# share its port and its process's CPU figures.
if [[ -n $INGRESSES && " $CONFIGS " != *" router-$INGRESSES "* ]]; then CONFIGS+=" router-$INGRESSES"; fi
if [[ -n $INGRESSES && " $CONFIGS " == *" router-loop "* && " $CONFIGS " != *" router-loop-$INGRESSES "* ]]; then CONFIGS+=" router-loop-$INGRESSES"; fi
has_mode() { [[ " $MODES " == *" $1 "* ]]; }
tls_modes=false
for m in $MODES; do [[ $m == http ]] || tls_modes=true; done

need() { command -v "$1" >/dev/null || { echo "compare.sh: $1 is needed ($2)" >&2; exit 2; }; }
need wrk "Debian: apt-get install wrk"
! has_mode h2 || need h2load "Debian: apt-get install nghttp2-client"
! $tls_modes || need openssl "Debian: apt-get install openssl"
# Prefixes that pin a command to a CPU; taskset execs the command, so $!
# of a background one is the command's own pid.
pin_load=(taskset -c "$LOAD_CPU")
pin_proxy=(taskset -c "$PROXY_CPU")
if [[ -n ${NOPIN:-} ]]; then pin_load=() pin_proxy=(); fi

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	for c in ${PROFILE:-}; do
		[[ -s $work/$c.pprof ]] || continue
		cp "$work/$c.pprof" "./$c.pprof"
		local bin=upstreams
		[[ $c != controller* ]] || bin=ramjet-controller
		cp "$work/$bin" "./$bin.bin"
		echo "CPU profile of $c: go tool pprof -top $bin.bin $c.pprof" >&2
		[[ -s $work/$c.allocs ]] || continue
		cp "$work/$c.allocs" "./$c.allocs"
		echo "allocations of $c: go tool pprof -sample_index=alloc_space -top upstreams.bin $c.allocs" >&2
	done
	rm -rf "$work"
}
trap cleanup EXIT

# The routers are built with the controller's profile (default.pgo), as
# the controller is, so that router-loop and controller compare the same
# compiled router (issue 35).
(cd "$root" && go build -pgo="$root/examples/controller/default.pgo" -o "$work/upstreams" ./examples/loadtest/upstreams &&
	go build -o "$work/tlsload" ./examples/loadtest/tlsload)

backend=127.0.0.1:$BASE_PORT
grpc_backend=127.0.0.1:$((BASE_PORT + 999))
declare -A url proc taddr
port=$BASE_PORT
# start NAME ARGS... runs one upstreams process on the proxy CPU and waits
# until it listens.
start() {
	local name=$1
	shift
	local prof=()
	[[ " ${PROFILE:-} " != *" $name "* ]] || prof=(-cpuprofile "$work/$name.pprof" -memprofile "$work/$name.allocs")
	"${pin_proxy[@]}" "$work/upstreams" -max 30m "${prof[@]}" "$@" >"$work/$name.out" &
	pids+=($!)
	proc[$name]=$!
	for _ in $(seq 300); do grep -q ready "$work/$name.out" 2>/dev/null && return; sleep 0.1; done
	echo "compare.sh: $name did not start" >&2
	exit 1
}
start backend -role backend -listen "$backend"
url[backend]=http://$backend/

# What the TLS modes add to every router's table and the controller's
# objects: the certificate, as the routers' default certificate and the
# Secret load/tls, and for gRPC the grpc.load Ingress to the gRPC backend.
extra=()
if $tls_modes; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-keyout "$work/tls.key" -out "$work/tls.crt" -subj /CN=load.example \
		-addext "subjectAltName=DNS:load.example,DNS:grpc.load,IP:127.0.0.1" 2>/dev/null
	extra+=(-cert "$work/tls.crt" -key "$work/tls.key")
fi
if has_mode grpc; then
	(cd "$root/examples/loadtest/grpcload" && GOWORK=off go build -o "$work/grpcload" .)
	"${pin_proxy[@]}" "$work/grpcload" -role backend -listen "$grpc_backend" -max 30m >"$work/grpc-backend.out" &
	pids+=($!)
	proc[grpc-backend]=$!
	for _ in $(seq 100); do grep -q ready "$work/grpc-backend.out" 2>/dev/null && break; sleep 0.1; done
	extra+=(-grpc-backend "$grpc_backend")
fi

# start_controller NAME ADDR [TLS-ADDR] runs the example controller
# offline on the proxy CPU, the routers' objects and an ingress-nginx
# ConfigMap, and HTTPS on TLS-ADDR with the harness's certificate as
# -default-ssl-certificate; controller-otel's turns tracing on and exports
# to an otlpsink on the load CPU (a collector is another machine's work).
start_controller() {
	local name=$1 addr=$2 dir=$work/$1.d data="{}" tlsargs=() prof=()
	if [[ ! -x $work/ramjet-controller ]]; then
		(cd "$root/examples/controller" && go build -o "$work/ramjet-controller" . && go build -o "$work/otlpsink" ./otlpsink)
	fi
	if [[ $name == controller-otel ]]; then
		port=$((port + 1))
		local sink=127.0.0.1:$port
		"${pin_load[@]}" "$work/otlpsink" -listen "$sink" -max 30m >"$work/otlpsink.out" &
		pids+=($!)
		proc[otlpsink]=$!
		for _ in $(seq 100); do grep -q ready "$work/otlpsink.out" 2>/dev/null && break; sleep 0.1; done
		data="{enable-opentelemetry: \"true\", otlp-collector-host: \"127.0.0.1\", otlp-collector-port: \"${sink#*:}\"}"
	fi
	if [[ -n ${3:-} ]]; then tlsargs=(-https-addr "$3" -default-ssl-certificate load/tls); fi
	[[ " ${PROFILE:-} " != *" $name "* ]] || prof=(-cpuprofile "$work/$name.pprof")
	mkdir -p "$dir"
	# The objects the router configs load, so that router-loop and
	# controller serve the same table (issue 35), and the ConfigMap.
	"$work/upstreams" -role manifests -backend "$backend" "${extra[@]}" >"$dir/app.yaml"
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nginx, namespace: ingress}\ndata: %s\n' "$data" >"$dir/configmap.yaml"
	# --foreground: timeout passes a stop on to the controller once, not to
	# its process group as well; a second signal would end the controller
	# at once, before its -cpuprofile is written.
	"${pin_proxy[@]}" timeout --foreground 30m "$work/ramjet-controller" -manifests "$dir" -configmap ingress/nginx -http-addr "$addr" -debug-addr "" \
		"${tlsargs[@]}" "${prof[@]}" -enable-access-log=false >"$work/$name.out" 2>&1 &
	pids+=($!)
	proc[$name]=$!
	for _ in $(seq 300); do curl -sf "http://$addr/" >/dev/null 2>&1 && return; sleep 0.1; done
	echo "compare.sh: $name did not start" >&2
	cat "$work/$name.out" >&2
	exit 1
}

# nginx_location KIND UPSTREAM: the location ingress-nginx's template
# writes for an Ingress path, KIND proxy (HTTP) or grpc (backend-protocol
# GRPC), with the forwarding headers it sets.
nginx_location() {
	local k=$1 scheme=http h
	printf '\t\tlocation / {\n'
	if [[ $k == proxy ]]; then
		printf '\t\t\tproxy_http_version 1.1;\n\t\t\tproxy_set_header Connection "";\n\t\t\tproxy_buffering off;\n'
	else
		scheme=grpc
	fi
	for h in 'Host $host' 'X-Request-ID $req_id' 'X-Real-IP $remote_addr' 'X-Forwarded-For $proxy_add_x_forwarded_for' \
		'X-Forwarded-Host $host' 'X-Forwarded-Port $server_port' 'X-Forwarded-Proto $scheme' 'X-Forwarded-Scheme $scheme' 'X-Scheme $scheme'; do
		printf '\t\t\t%s_set_header %s;\n' "$k" "$h"
	done
	printf '\t\t\t%s_pass %s://%s;\n\t\t}\n' "$k" "$scheme" "$2"
}

# nginx_conf ADDR TLS-ADDR: one worker, as ingress-nginx's template sets
# up the http block, the TLS settings and the servers.
nginx_conf() {
	local w=$work/nginx
	cat <<-EOF
	worker_processes 1;
	daemon off;
	pid $w/nginx.pid;
	error_log $w/logs/error.log warn;
	events { worker_connections 4096; }
	http {
	access_log off;
	client_body_temp_path $w/body;
	proxy_temp_path $w/proxy;
	fastcgi_temp_path $w/fastcgi;
	uwsgi_temp_path $w/uwsgi;
	scgi_temp_path $w/scgi;
	# As ingress-nginx: the client's request ID, else a generated one.
	map \$http_x_request_id \$req_id {
		default \$http_x_request_id;
		"" \$request_id;
	}
	upstream backend {
		server $backend;
		keepalive 64;
	}
	server {
		listen $1;
	$(nginx_location proxy backend)
	}
	EOF
	if $tls_modes; then
		cat <<-EOF
		ssl_certificate $work/tls.crt;
		ssl_certificate_key $work/tls.key;
		ssl_protocols TLSv1.2 TLSv1.3;
		ssl_early_data off;
		ssl_session_cache shared:SSL:10m;
		ssl_session_timeout 10m;
		ssl_session_tickets off;
		ssl_buffer_size 4k;
		ssl_ciphers 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256';
		ssl_prefer_server_ciphers on;
		ssl_ecdh_curve auto;
		upstream grpc_backend {
			server $grpc_backend;
			keepalive 64;
		}
		server {
			listen $2 ssl http2 default_server;
		$(nginx_location proxy backend)
		}
		server {
			listen $2 ssl http2;
			server_name grpc.load;
		$(nginx_location grpc grpc_backend)
		}
		EOF
	fi
	echo "}"
}

configs=()
for c in $CONFIGS; do
	port=$((port + 1))
	addr=127.0.0.1:$port
	tls=127.0.0.1:$((port + 1000))
	tlsarg=()
	! $tls_modes || tlsarg=(-tls-listen "$tls")
	case $c in
	backend) ;;
	router-loop) start "$c" -role "$c" -listen "$addr" -backend "$backend" "${extra[@]}" "${tlsarg[@]}" ;;
	router-loop-h2net) start "$c" -role router-loop -http2-server net/http -listen "$addr" -backend "$backend" "${extra[@]}" "${tlsarg[@]}" ;;
	router-loop-gotls) start "$c" -role router-loop -tls-raw=false -listen "$addr" -backend "$backend" "${extra[@]}" "${tlsarg[@]}" ;;
	router | router-nethttp | router-rawloop | proxy) start "$c" -role "$c" -listen "$addr" -backend "$backend" "${extra[@]}" ;;
	router-[0-9]*) start "$c" -role router -ingresses "${c#router-}" -listen "$addr" -backend "$backend" "${extra[@]}" ;;
	router-loop-[0-9]*) start "$c" -role router-loop -ingresses "${c#router-loop-}" -listen "$addr" -backend "$backend" "${extra[@]}" ;;
	controller | controller-otel) start_controller "$c" "$addr" "$($tls_modes && echo "$tls" || true)" ;;
	nginx)
		if ! command -v nginx >/dev/null; then
			echo "compare.sh: nginx is not installed: left out" >&2
			continue
		fi
		mkdir -p "$work/nginx/logs"
		nginx_conf "$addr" "$tls" >"$work/nginx/nginx.conf"
		"${pin_proxy[@]}" nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/logs/error.log" &
		pids+=($!)
		proc[nginx]=$!
		for _ in $(seq 50); do curl -sf "http://$addr/" >/dev/null 2>&1 && break; sleep 0.1; done
		;;
	*)
		echo "compare.sh: unknown config $c" >&2
		exit 2
		;;
	esac
	configs+=("$c")
	url[$c]=${url[$c]:-http://$addr/}
	case $c in nginx | router-loop | router-loop-h2net | router-loop-gotls | controller | controller-otel) ! $tls_modes || taddr[$c]=$tls ;; esac
done

# mode_configs MODE: the configs that serve it.
mode_configs() {
	local c
	for c in "${configs[@]}"; do
		if [[ $1 == http || -n ${taddr[$c]:-} ]]; then echo "$c"; fi
	done
}

# h2 PER-CONNECTION ADDR runs h2load, PER-CONNECTION requests on each
# connection, and prints its figures as wrk's summary lines, the p99 from
# its per-request log (microseconds, third column).
h2() {
	local out log=$work/h2load.log st
	out=$("${pin_load[@]}" h2load -c "$H2_CLIENTS" -m "$H2_STREAMS" -n "$((H2_CLIENTS * $1))" --log-file="$log" "https://$2/" 2>&1) || true
	awk '/^requests:/ { print "  " $8 " requests in" } /^finished in/ { sub(",", "", $4); print "Requests/sec: " $4 }' <<<"$out"
	awk -F'\t' '{ print $3 }' "$log" | sort -n | awk '{ v[NR] = $1 } END { if (NR) { i = int(NR * 0.99); if (i < 1) i = 1; printf "     99%%   %.2fms\n", v[i] / 1000 } }'
	st=$(awk '/^status codes:/ { print $5 + $7 + $9 }' <<<"$out")
	[[ ${st:-0} == 0 ]] || echo "Non-2xx or 3xx responses: $st"
	grep -q '^requests:.* 0 failed, 0 errored' <<<"$out" || grep '^requests:' <<<"$out" | sed 's/^/Socket errors: /'
}

# load MODE CONFIG SECONDS [warm-up] puts MODE's load on CONFIG and prints
# a summary in wrk's format.
load() {
	local t=${taddr[$2]:-}
	case $1 in
	http) "${pin_load[@]}" wrk -t1 -c"$CONNS" -d"$3s" --latency "${url[$2]}" ;;
	https) "${pin_load[@]}" wrk -t1 -c"$CONNS" -d"$3s" --latency "https://$t/" ;;
	https-new) "${pin_load[@]}" "$work/tlsload" -addr "$t" -c "$CONNS" -d "$3s" ;;
	https-resume) "${pin_load[@]}" "$work/tlsload" -addr "$t" -c "$CONNS" -d "$3s" -resume ;;
	h2) h2 "$([[ ${4:-} == warm-up ]] && echo 100 || echo 1000)" "$t" ;;
	grpc) "${pin_load[@]}" "$work/grpcload" -role client -addr "$t" -c "$GRPC_CLIENTS" -streams "$GRPC_STREAMS" -d "$3s" ;;
	esac
}

for m in $MODES; do # warm up connections, pools and session caches
	for c in $(mode_configs "$m"); do load "$m" "$c" 1 warm-up >/dev/null; done
done

# CPU time (user+system, clock ticks) used so far by a process and its
# children that are still running (nginx's worker). Fields 14 and 15 of
# /proc/<pid>/stat; the command name in field 2 has no spaces here.
cpu_ticks() {
	local total=0 p f
	for p in "$1" $(pgrep -P "$1" || true); do
		read -r -a f <"/proc/$p/stat" || continue
		total=$((total + f[13] + f[14]))
	done
	echo "$total"
}
hz=$(getconf CLK_TCK)
us_per_req() { awk -v t="$1" -v hz="$hz" -v n="$2" 'BEGIN { if (n == "" || n == 0) print "-"; else printf "%.1f", t * 1e6 / hz / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

# wrk's "99%" latency in milliseconds.
p99_ms() { awk '$1 == "99%" { v = $2; if (v ~ /us$/) m = 0.001; else if (v ~ /ms$/) m = 1; else m = 1000; sub(/[a-z]+$/, "", v); printf "%.2f", v * m }'; }

pinning="load on CPU $LOAD_CPU, proxy and backend on CPU $PROXY_CPU"
[[ -z ${NOPIN:-} ]] || pinning="none"
echo "$(date -u '+%F %H:%M') UTC, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'); pinning: $pinning; $CONNS connections (h2: $H2_CLIENTS×$H2_STREAMS streams, grpc: $GRPC_CLIENTS×$GRPC_STREAMS calls); $ROUNDS rounds of ${SECS}s, each in $SLICES slices"
echo
echo "| mode | round | config | req/s | req/s vs nginx | p99 ms | p99 vs nginx | proxy µs/req | proxy CPU vs nginx | backend µs/req |"
echo "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
declare -A rate p99 cpu bcpu
row() { # mode round config rate p99 cpu bcpu nginx-rate nginx-p99 nginx-cpu
	local pc=$6 vc
	vc=$(ratio "$6" "${10}")
	[[ $3 != backend ]] || pc=- vc=-
	echo "| $1 | $2 | $3 | $4 | $(ratio "$4" "$8") | $5 | $(ratio "$5" "$9") | $pc | $vc | $7 |"
}
# The median rows: of each figure over the rounds, and of the within-round
# ratios (not the ratio of the medians).
median() { # printf format
	tr ' ' '\n' | { grep -v '^-\?$' || true; } | sort -g | awk -v f="$1" '{ v[NR] = $1 } END { if (NR == 0) print "-"; else printf f "\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { # array mode config format [ratio]
	local -n a=$1
	local r list="" f=$4
	for r in $(seq "$ROUNDS"); do
		if [[ -n ${5:-} ]]; then list+="$(ratio "${a[$2,$r,$3]}" "${a[$2,$r,nginx]:-}") "; else list+="${a[$2,$r,$3]} "; fi
	done
	[[ -z ${5:-} ]] || f=%.2f
	median "$f" <<<"$list"
}
for m in $MODES; do
	mapfile -t mc < <(mode_configs "$m")
	bp=${proc[backend]}
	[[ $m != grpc ]] || bp=${proc[grpc-backend]}
	for r in $(seq "$ROUNDS"); do
		n=${#mc[@]}
		order=()
		# Rotate the order so that no config always follows the same one.
		for i in $(seq 0 $((n - 1))); do order+=("${mc[$(((i + r) % n))]}"); done
		slices=$SLICES secs=$SECS
		[[ $m != h2 ]] || slices=1
		secs=$(awk -v s="$SECS" -v n="$slices" 'BEGIN { v = int(s / n + 0.5); print (v < 1) ? 1 : v }')
		declare -A ticks=() bticks=() nreq=() busy=() p99s=()
		for _ in $(seq "$slices"); do
			for c in "${order[@]}"; do
				p=${proc[$c]:-${proc[backend]}}
				t0=$(cpu_ticks "$p") b0=$(cpu_ticks "$bp")
				out=$(load "$m" "$c" "$secs")
				t1=$(cpu_ticks "$p") b1=$(cpu_ticks "$bp")
				if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then grep 'Non-2xx\|Socket errors' <<<"$out" | sed "s/^/$m round $r $c: /" >&2; fi
				if [[ $m == https-resume ]]; then awk -v m="$m round $r $c: " '/requests in/ { print m $5 " of " $1 " handshakes resumed" }' <<<"$out" >&2; fi
				n=$(awk '/requests in/ { print $1 }' <<<"$out")
				ticks[$c]=$((${ticks[$c]:-0} + t1 - t0)) bticks[$c]=$((${bticks[$c]:-0} + b1 - b0))
				nreq[$c]=$((${nreq[$c]:-0} + ${n:-0}))
				# The seconds the load ran, from its own count and rate.
				busy[$c]=$(awk -v b="${busy[$c]:-0}" -v n="${n:-0}" -v r="$(awk '/^Requests\/sec:/ { print $2 }' <<<"$out")" 'BEGIN { printf "%.6f", b + ((r > 0) ? n / r : 0) }')
				p99s[$c]+="$(p99_ms <<<"$out") "
			done
		done
		for c in "${order[@]}"; do
			rate[$m,$r,$c]=$(awk -v n="${nreq[$c]}" -v t="${busy[$c]}" 'BEGIN { if (t > 0) printf "%.0f", n / t }')
			p99[$m,$r,$c]=$(tr ' ' '\n' <<<"${p99s[$c]}" | awk 'NF { s += $1; k++ } END { if (k) printf "%.2f", s / k }')
			cpu[$m,$r,$c]=$(us_per_req "${ticks[$c]}" "${nreq[$c]}")
			bcpu[$m,$r,$c]=$(us_per_req "${bticks[$c]}" "${nreq[$c]}")
		done
		for c in "${mc[@]}"; do
			row "$m" "$r" "$c" "${rate[$m,$r,$c]}" "${p99[$m,$r,$c]}" "${cpu[$m,$r,$c]}" "${bcpu[$m,$r,$c]}" \
				"${rate[$m,$r,nginx]:-}" "${p99[$m,$r,nginx]:-}" "${cpu[$m,$r,nginx]:-}"
		done
	done
	for c in "${mc[@]}"; do
		pc=$(col cpu "$m" "$c" %.1f) vc=$(col cpu "$m" "$c" - ratio)
		[[ $c != backend ]] || pc=- vc=-
		echo "| $m | median | $c | $(col rate "$m" "$c" %.0f) | $(col rate "$m" "$c" - ratio) | $(col p99 "$m" "$c" %.2f) | $(col p99 "$m" "$c" - ratio) | $pc | $vc | $(col bcpu "$m" "$c" %.1f) |"
	done
done
if [[ -n ${proc[otlpsink]:-} ]]; then
	kill "${proc[otlpsink]}" 2>/dev/null || true
	wait "${proc[otlpsink]}" 2>/dev/null || true
	echo
	echo "controller-otel exported $(awk '/^spans/ { print $2 }' "$work/otlpsink.out") spans to otlpsink"
fi
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "Budgets (issue 41, quiet machine, medians of the within-round ratios): http req/s ≥ 1.0× nginx, p99 ≤ 1.0×, proxy CPU per request ≤ 1.0×; https req/s ≥ 1.0×, CPU ≤ 1.1×; https-new and https-resume req/s ≥ 0.9×; h2 req/s ≥ 0.9×; grpc req/s ≥ 0.9×. router-N within 3% of router, router-loop-N of router-loop (issue 26); router-loop within 3% of controller (issue 35); controller-otel within 10% of controller (issue 39)."
