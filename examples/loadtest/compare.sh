#!/usr/bin/env bash
# compare.sh measures the ramjet router against nginx on loopback, as in
# issue 15: wrk pinned to one core, the proxy and a Go backend answering
# 100 bytes pinned together on the other, 64 connections, alternating
# rounds. The router runs twice, with its own HTTP/1.1 upstream path (the
# default, "router") and with a net/http Transport ("router-nethttp").
# nginx runs only where it is installed (Debian: apt-get install nginx),
# with keepalive 64 to the backend and the forwarding headers
# ingress-nginx sets. Needs wrk (Debian: apt-get install wrk).
#
#   examples/loadtest/compare.sh             # 5 rounds of 6 s per config
#   ROUNDS=3 SECONDS_PER_ROUND=4 examples/loadtest/compare.sh
#   NOPIN=1 examples/loadtest/compare.sh     # no pinning: the shared case
#
# Everything listens on 127.0.0.1 (ports 18080-18083, BASE_PORT to move
# them); every process it starts is stopped when it ends.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_ROUND:-6}
CONNS=${CONNECTIONS:-64}
BASE_PORT=${BASE_PORT:-18080}
LOAD_CPU=${LOAD_CPU:-0}
PROXY_CPU=${PROXY_CPU:-1}

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
	rm -rf "$work"
}
trap cleanup EXIT

backend=127.0.0.1:$BASE_PORT
own=127.0.0.1:$((BASE_PORT + 1))
nethttp=127.0.0.1:$((BASE_PORT + 2))
nginx_addr=127.0.0.1:$((BASE_PORT + 3))

(cd "$root" && go build -o "$work/upstreams" ./examples/loadtest/upstreams)
"${pin_proxy[@]}" "$work/upstreams" -backend "$backend" -router "$own" -router-nethttp "$nethttp" -max 30m >"$work/upstreams.out" &
pids+=($!)
cpu_pids=($!)
for _ in $(seq 100); do grep -q ready "$work/upstreams.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$work/upstreams.out" || { echo "compare.sh: upstreams did not start" >&2; exit 1; }

configs=(router router-nethttp)
declare -A url=([router]=http://$own/ [router-nethttp]=http://$nethttp/)
if command -v nginx >/dev/null; then
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
		listen $nginx_addr;
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
	nginx_pid=$!
	for _ in $(seq 50); do curl -sf "http://$nginx_addr/" >/dev/null 2>&1 && break; sleep 0.1; done
	cpu_pids+=("$nginx_pid" $(pgrep -P "$nginx_pid"))
	configs=(nginx "${configs[@]}")
	url[nginx]=http://$nginx_addr/
else
	echo "nginx is not installed: comparing the two router paths only" >&2
fi

for c in "${configs[@]}"; do # warm up connections and pools
	"${pin_load[@]}" wrk -t1 -c"$CONNS" -d1s "${url[$c]}" >/dev/null
done

# CPU time (user+system, clock ticks) used so far by the proxies and the
# backend: per request it is steadier than req/s on a machine shared with
# other work, since it hardly depends on how much of the core they got.
cpu_ticks() {
	local total=0 p f
	for p in "${cpu_pids[@]}"; do
		read -r -a f <"/proc/$p/stat" || continue
		total=$((total + f[13] + f[14]))
	done
	echo "$total"
}
hz=$(getconf CLK_TCK)

# wrk's "99%" latency in microseconds.
p99_us() { awk '$1 == "99%" { v = $2; if (v ~ /us$/) m = 1; else if (v ~ /ms$/) m = 1000; else m = 1e6; sub(/[a-z]+$/, "", v); printf "%.0f", v * m }'; }

pinning="load on CPU $LOAD_CPU, proxy and backend on CPU $PROXY_CPU"
[[ -z ${NOPIN:-} ]] || pinning="none"
echo "$(nproc) CPUs; pinning: $pinning; $CONNS connections; $ROUNDS rounds of ${SECS}s per config"
printf '%-6s %-15s %10s %10s %12s\n' round config req/s p99_us cpu_us/req
declare -A rates p99s cpus round_rate
for r in $(seq "$ROUNDS"); do
	# Rotate the order so that no config always follows the same one.
	n=${#configs[@]}
	for i in $(seq 0 $((n - 1))); do
		c=${configs[$(((i + r) % n))]}
		t0=$(cpu_ticks)
		out=$("${pin_load[@]}" wrk -t1 -c"$CONNS" -d"${SECS}s" --latency "${url[$c]}")
		t1=$(cpu_ticks)
		rate=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' <<<"$out")
		reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
		cpu=$(awk -v t="$((t1 - t0))" -v hz="$hz" -v n="$reqs" 'BEGIN { printf "%.1f", t * 1e6 / hz / n }')
		p99=$(p99_us <<<"$out")
		if grep -q 'Non-2xx\|Socket errors' <<<"$out"; then echo "$out" | grep 'Non-2xx\|Socket errors' | sed "s/^/$c: /" >&2; fi
		rates[$c]+="$rate "
		round_rate[$r,$c]=$rate
		p99s[$c]+="$p99 "
		cpus[$c]+="$cpu "
		printf '%-6s %-15s %10s %10s %12s\n' "$r" "$c" "$rate" "$p99" "$cpu"
	done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { tr ' ' '\n' | grep . | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
echo
printf '%-15s %12s %13s %10s %15s %14s\n' config "median req/s" "range" "median p99" "range p99_us" "median cpu_us"
declare -A mr mp mc
for c in "${configs[@]}"; do
	mr[$c]=$(median <<<"${rates[$c]}")
	mp[$c]=$(median <<<"${p99s[$c]}")
	mc[$c]=$(median <<<"${cpus[$c]}")
	printf '%-15s %12s %13s %10s %15s %14s\n' "$c" "${mr[$c]}" "$(range <<<"${rates[$c]}")" "${mp[$c]}" "$(range <<<"${p99s[$c]}")" "${mc[$c]}"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "router/router-nethttp: req/s $(ratio "${mr[router]}" "${mr[router-nethttp]}"), p99 $(ratio "${mp[router]}" "${mp[router-nethttp]}"), CPU/request $(ratio "${mc[router]}" "${mc[router-nethttp]}")"
# The ratio within each round as well: on a machine whose speed drifts
# (other tenants), configs measured seconds apart compare better than
# medians taken across the whole run.
paired() {
	local r list=""
	for r in $(seq "$ROUNDS"); do list+="$(ratio "${round_rate[$r,$1]}" "${round_rate[$r,$2]}") "; done
	echo "median $(median <<<"$list"), range $(range <<<"$list")"
}
if [[ -n ${mr[nginx]:-} ]]; then
	echo "router/nginx: req/s $(ratio "${mr[router]}" "${mr[nginx]}") (budget >= 0.70), p99 $(ratio "${mp[router]}" "${mp[nginx]}") (budget <= 1.20), CPU/request $(ratio "${mc[router]}" "${mc[nginx]}")"
	echo "router/nginx req/s within each round: $(paired router nginx)"
	echo "router-nethttp/nginx: req/s $(ratio "${mr[router-nethttp]}" "${mr[nginx]}"), p99 $(ratio "${mp[router-nethttp]}" "${mp[nginx]}")"
fi
