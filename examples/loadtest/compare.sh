#!/usr/bin/env bash
# compare.sh measures the ramjet router against nginx on loopback (issues
# 15 and 26). Every proxy is a process of its own in front of one Go
# backend process answering 100 bytes, so that each pays the same hop:
#
#   backend         wrk straight to the backend
#   nginx           worker_processes 1, keepalive 64 to the backend and the
#                   forwarding headers ingress-nginx sets (where installed;
#                   Debian: apt-get install nginx)
#   router          the router, one catch-all Ingress, plain http.Server
#   router-nethttp  the same with a net/http Transport upstream
#   proxy           a bare httputil.ReverseProxy
#   router-1000     the router with 1,000 Ingresses loaded (INGRESSES=1000)
#   router-loop-1000  the same behind router/h1 (INGRESSES=1000 with
#                   router-loop in CONFIGS)
#   router-loop     the router behind router/h1, the controller's
#                   own HTTP/1.1 server loop; only when named in CONFIGS
#   router-rawloop  the router behind a minimal HTTP/1.1 loop instead of
#                   http.Server: a measuring device for what net/http's
#                   server costs (upstreams/rawloop.go); only when named
#                   in CONFIGS
#   controller      the example controller offline (-manifests) with the
#                   router configs' objects (upstreams -role manifests), an
#                   ingress-nginx ConfigMap without keys, no access log;
#                   only when named in CONFIGS. router-loop against it is
#                   an embedder serving the router with router/h1 against
#                   the controller (issue 35)
#   controller-otel the same with OpenTelemetry on (issue 39): the
#                   ConfigMap's enable-opentelemetry, the default sampler
#                   (AlwaysOn: every request's span exported), OTLP/gRPC to
#                   examples/controller/otlpsink on the load CPU; only when
#                   named in CONFIGS
#
# wrk (Debian: apt-get install wrk) runs pinned to CPU 0, the proxy and
# the backend pinned together to CPU 1, 64 connections, in ROUNDS rounds of
# SECONDS_PER_ROUND seconds, the configs in a rotating order within each
# round. Per config and round it prints req/s, p99, the CPU time per
# request of the proxy process alone and of the backend (utime+stime from
# /proc/<pid>/stat, before and after, over the requests wrk counted), and
# the ratios to nginx within the same round; then the medians. CPU per
# request hardly depends on how much of the core the proxy got, so on a
# machine shared with other work it is the figure to trust, with the
# within-round ratios. The output is one Markdown table.
#
#   examples/loadtest/compare.sh                  # 5 rounds of 6 s
#   ROUNDS=3 SECONDS_PER_ROUND=4 examples/loadtest/compare.sh
#   CONFIGS="nginx router" examples/loadtest/compare.sh
#   INGRESSES=1000 examples/loadtest/compare.sh   # adds router-1000
#   PROFILE=router examples/loadtest/compare.sh   # CPU profiles of these proxies
#   NOPIN=1 examples/loadtest/compare.sh          # no pinning
#
# Everything listens on 127.0.0.1 (ports BASE_PORT=18080 and up); every
# process it starts is stopped when it ends, and each stops by itself
# after 30 minutes whatever happens (the controller under timeout(1),
# whose CPU figures count its child).
set -euo pipefail

ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_ROUND:-6}
CONNS=${CONNECTIONS:-64}
BASE_PORT=${BASE_PORT:-18080}
LOAD_CPU=${LOAD_CPU:-0}
PROXY_CPU=${PROXY_CPU:-1}
INGRESSES=${INGRESSES:-}
CONFIGS=${CONFIGS:-backend nginx router router-nethttp proxy}
# router-N once, whether CONFIGS names it or not: two of one config would
# share its port and its process's CPU figures.
if [[ -n $INGRESSES && " $CONFIGS " != *" router-$INGRESSES "* ]]; then CONFIGS+=" router-$INGRESSES"; fi
if [[ -n $INGRESSES && " $CONFIGS " == *" router-loop "* && " $CONFIGS " != *" router-loop-$INGRESSES "* ]]; then CONFIGS+=" router-loop-$INGRESSES"; fi

command -v wrk >/dev/null || { echo "compare.sh: wrk is needed (Debian: apt-get install wrk)" >&2; exit 2; }
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
		cp "$work/upstreams" "./upstreams.bin"
		echo "CPU profile of $c: go tool pprof -top upstreams.bin $c.pprof" >&2
	done
	rm -rf "$work"
}
trap cleanup EXIT

(cd "$root" && go build -o "$work/upstreams" ./examples/loadtest/upstreams)

backend=127.0.0.1:$BASE_PORT
declare -A url proc
port=$BASE_PORT
# start NAME ARGS... runs one upstreams process on the proxy CPU and waits
# until it listens.
start() {
	local name=$1
	shift
	local prof=()
	[[ " ${PROFILE:-} " != *" $name "* ]] || prof=(-cpuprofile "$work/$name.pprof")
	"${pin_proxy[@]}" "$work/upstreams" -max 30m "${prof[@]}" "$@" >"$work/$name.out" &
	pids+=($!)
	proc[$name]=$!
	for _ in $(seq 300); do grep -q ready "$work/$name.out" 2>/dev/null && return; sleep 0.1; done
	echo "compare.sh: $name did not start" >&2
	exit 1
}
start backend -role backend -listen "$backend"
url[backend]=http://$backend/

# start_controller NAME ADDR runs the example controller offline on the
# proxy CPU, one catch-all Ingress to the backend and an ingress-nginx
# ConfigMap; controller-otel's turns tracing on and exports to an
# otlpsink on the load CPU (a collector is another machine's work).
start_controller() {
	local name=$1 addr=$2 dir=$work/$1.d data="{}"
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
	mkdir -p "$dir"
	# The objects the router configs load, so that router-loop and
	# controller serve the same table (issue 35), and the ConfigMap.
	"$work/upstreams" -role manifests -backend "$backend" >"$dir/app.yaml"
	cat >"$dir/configmap.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata: {name: nginx, namespace: ingress}
data: $data
EOF
	"${pin_proxy[@]}" timeout 30m "$work/ramjet-controller" -manifests "$dir" -configmap ingress/nginx -http-addr "$addr" -debug-addr "" \
		-enable-access-log=false >"$work/$name.out" 2>&1 &
	pids+=($!)
	proc[$name]=$!
	for _ in $(seq 300); do curl -sf "http://$addr/" >/dev/null 2>&1 && return; sleep 0.1; done
	echo "compare.sh: $name did not start" >&2
	cat "$work/$name.out" >&2
	exit 1
}

configs=()
for c in $CONFIGS; do
	port=$((port + 1))
	addr=127.0.0.1:$port
	case $c in
	backend) ;;
	router | router-nethttp | router-loop | router-rawloop | proxy) start "$c" -role "$c" -listen "$addr" -backend "$backend" ;;
	router-[0-9]*) start "$c" -role router -ingresses "${c#router-}" -listen "$addr" -backend "$backend" ;;
	router-loop-[0-9]*) start "$c" -role router-loop -ingresses "${c#router-loop-}" -listen "$addr" -backend "$backend" ;;
	controller | controller-otel) start_controller "$c" "$addr" ;;
	nginx)
		if ! command -v nginx >/dev/null; then
			echo "compare.sh: nginx is not installed: left out" >&2
			continue
		fi
		mkdir -p "$work/nginx/logs"
		cat >"$work/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	client_body_temp_path $work/nginx/body;
	proxy_temp_path $work/nginx/proxy;
	fastcgi_temp_path $work/nginx/fastcgi;
	uwsgi_temp_path $work/nginx/uwsgi;
	scgi_temp_path $work/nginx/scgi;
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
		listen $addr;
		location / {
			proxy_http_version 1.1;
			proxy_set_header Connection "";
			proxy_set_header Host \$host;
			proxy_set_header X-Request-ID \$req_id;
			proxy_set_header X-Real-IP \$remote_addr;
			proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
			proxy_set_header X-Forwarded-Host \$host;
			proxy_set_header X-Forwarded-Port \$server_port;
			proxy_set_header X-Forwarded-Proto \$scheme;
			proxy_set_header X-Forwarded-Scheme \$scheme;
			proxy_set_header X-Scheme \$scheme;
			proxy_buffering off;
			proxy_pass http://backend;
		}
	}
}
EOF
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
done

for c in "${configs[@]}"; do # warm up connections and pools
	"${pin_load[@]}" wrk -t1 -c"$CONNS" -d1s "${url[$c]}" >/dev/null
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
us_per_req() { awk -v t="$1" -v hz="$hz" -v n="$2" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }

# wrk's "99%" latency in milliseconds.
p99_ms() { awk '$1 == "99%" { v = $2; if (v ~ /us$/) m = 0.001; else if (v ~ /ms$/) m = 1; else m = 1000; sub(/[a-z]+$/, "", v); printf "%.2f", v * m }'; }

pinning="wrk on CPU $LOAD_CPU, proxy and backend on CPU $PROXY_CPU"
[[ -z ${NOPIN:-} ]] || pinning="none"
echo "$(date -u '+%F %H:%M') UTC, $(nproc) CPUs, $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'); pinning: $pinning; $CONNS connections; $ROUNDS rounds of ${SECS}s"
echo
echo "| round | config | req/s | req/s vs nginx | p99 ms | p99 vs nginx | proxy µs/req | proxy CPU vs nginx | backend µs/req |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
declare -A rate p99 cpu bcpu
row() { # round config rate p99 cpu bcpu nginx-rate nginx-p99 nginx-cpu
	local pc=$5 vc
	vc=$(ratio "$5" "$9")
	[[ $2 != backend ]] || pc=- vc=-
	echo "| $1 | $2 | $3 | $(ratio "$3" "$7") | $4 | $(ratio "$4" "$8") | $pc | $vc | $6 |"
}
for r in $(seq "$ROUNDS"); do
	n=${#configs[@]}
	order=()
	# Rotate the order so that no config always follows the same one.
	for i in $(seq 0 $((n - 1))); do order+=("${configs[$(((i + r) % n))]}"); done
	for c in "${order[@]}"; do
		p=${proc[$c]:-${proc[backend]}}
		t0=$(cpu_ticks "$p") b0=$(cpu_ticks "${proc[backend]}")
		out=$("${pin_load[@]}" wrk -t1 -c"$CONNS" -d"${SECS}s" --latency "${url[$c]}")
		t1=$(cpu_ticks "$p") b1=$(cpu_ticks "${proc[backend]}")
		if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then grep 'Non-2xx\|Socket errors' <<<"$out" | sed "s/^/round $r $c: /" >&2; fi
		reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
		rate[$r,$c]=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")
		p99[$r,$c]=$(p99_ms <<<"$out")
		cpu[$r,$c]=$(us_per_req $((t1 - t0)) "$reqs")
		bcpu[$r,$c]=$(us_per_req $((b1 - b0)) "$reqs")
	done
	for c in "${configs[@]}"; do
		row "$r" "$c" "${rate[$r,$c]}" "${p99[$r,$c]}" "${cpu[$r,$c]}" "${bcpu[$r,$c]}" \
			"${rate[$r,nginx]:-}" "${p99[$r,nginx]:-}" "${cpu[$r,nginx]:-}"
	done
done

# The median rows: of each figure over the rounds, and of the within-round
# ratios (not the ratio of the medians).
median() { # printf format
	tr ' ' '\n' | { grep -v '^-\?$' || true; } | sort -g | awk -v f="$1" '{ v[NR] = $1 } END { if (NR == 0) print "-"; else printf f "\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
col() { # array config format [ratio]
	local -n a=$1
	local r list="" f=$3
	for r in $(seq "$ROUNDS"); do
		if [[ -n ${4:-} ]]; then list+="$(ratio "${a[$r,$2]}" "${a[$r,nginx]:-}") "; else list+="${a[$r,$2]} "; fi
	done
	[[ -z ${4:-} ]] || f=%.2f
	median "$f" <<<"$list"
}
for c in "${configs[@]}"; do
	pc=$(col cpu "$c" %.1f) vc=$(col cpu "$c" - ratio)
	[[ $c != backend ]] || pc=- vc=-
	echo "| median | $c | $(col rate "$c" %.0f) | $(col rate "$c" - ratio) | $(col p99 "$c" %.2f) | $(col p99 "$c" - ratio) | $pc | $vc | $(col bcpu "$c" %.1f) |"
done
if [[ -n ${proc[otlpsink]:-} ]]; then
	kill "${proc[otlpsink]}" 2>/dev/null || true
	wait "${proc[otlpsink]}" 2>/dev/null || true
	echo
	echo "controller-otel exported $(awk '/^spans/ { print $2 }' "$work/otlpsink.out") spans to otlpsink"
fi
echo
echo "Budgets (issue 26, quiet machine): router ≥ 0.85× nginx req/s, p99 ≤ 1.2× nginx's, proxy CPU per request ≤ 1.2× nginx's; router-N within 3% of router (router-loop-N of router-loop); router-loop within 3% of controller (issue 35); controller-otel within 10% of controller (issue 39)."
