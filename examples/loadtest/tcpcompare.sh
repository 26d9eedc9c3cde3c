#!/usr/bin/env bash
# tcpcompare.sh measures a TCP service of the example controller (ingress-
# nginx's tcp-services ConfigMap, issue 38) against HAProxy splicing the
# same connection, and both against a direct loopback connection: tcpload
# writes 64 KiB writes to a sink in its own process, straight or through
# each proxy (each a process of its own, the controller offline with
# -manifests), the targets in turn within each round, and prints MB/s and
# each proxy's ratio to direct within the round, then the medians. It
# prints the CPU-seconds per GiB moved of tcpload (client and sink) and of
# each proxy too: on a busy machine the throughput varies from round to
# round, the CPU per byte much less.
#
# HAProxy (Debian: apt-get install haproxy) runs one thread in TCP mode
# with option splice-request and splice-response (forced, not
# splice-auto, which here mostly copies through user space) and a
# 256 KiB pipe; the controller splices through a 1 MiB pipe of each
# direction's own, each writing socket's unsent bytes bounded at 128 KiB
# (TCP_NOTSENT_LOWAT). Without haproxy installed only the controller is
# measured.
#
#   examples/loadtest/tcpcompare.sh             # 5 rounds of 2 GiB, no pinning
#   CPU=1 examples/loadtest/tcpcompare.sh       # everything on CPU 1
#   ROUNDS=3 MIB=1024 examples/loadtest/tcpcompare.sh
#
# Everything listens on 127.0.0.1 (BASE_PORT=19950 and the three ports
# after it) and is stopped when it ends; the controller and HAProxy stop
# by themselves after 30 minutes whatever happens.
set -euo pipefail
ROUNDS=${ROUNDS:-5}
MIB=${MIB:-2048}
BASE=${BASE_PORT:-19950}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
pin=() pinned=""
[[ -z ${CPU:-} ]] || pin=(taskset -c "$CPU") pinned="everything on CPU $CPU"

sink=127.0.0.1:$BASE
(cd "$root/examples/loadtest" && go build -o "$work/tcpload" ./tcpload)
(cd "$root/examples/controller" && go build -o "$work/controller" .)

mkdir "$work/m"
cat >"$work/m/sink.yaml" <<YAML
apiVersion: v1
kind: Service
metadata: {name: sink, namespace: default}
spec: {ports: [{name: tcp, port: 9000, protocol: TCP}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: sink-1, namespace: default, labels: {kubernetes.io/service-name: sink}}
addressType: IPv4
ports: [{name: tcp, port: $BASE, protocol: TCP}]
endpoints: [{addresses: [127.0.0.1]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: tcp-services, namespace: ingress-nginx}
data: {"$((BASE + 2))": "default/sink:9000"}
YAML
"${pin[@]}" timeout --foreground 30m "$work/controller" -manifests "$work/m" -tcp-services-configmap ingress-nginx/tcp-services \
	-http-addr 127.0.0.1:$((BASE + 3)) -https-addr "" -debug-addr "" -enable-access-log=false >"$work/controller.log" 2>&1 &
pids+=($!)
ctl=$!
targets="direct=$sink"
if command -v haproxy >/dev/null; then
	cat >"$work/haproxy.cfg" <<CFG
global
  nbthread 1
  tune.pipesize 262144
defaults
  mode tcp
  timeout connect 5s
  timeout client 60s
  timeout server 60s
  option splice-request
  option splice-response
listen sink
  bind 127.0.0.1:$((BASE + 1))
  server sink $sink
CFG
	"${pin[@]}" timeout 30m haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
	pids+=($!)
	hap=$!
	targets+=",haproxy=127.0.0.1:$((BASE + 1))"
fi
targets+=",controller=127.0.0.1:$((BASE + 2))"
for _ in $(seq 100); do
	grep -q "listening for TCP and UDP services" "$work/controller.log" && break
	sleep 0.1
done
# The proxies' own processes, children of timeout (taskset execs).
procs="controller=$(pgrep -P "$ctl")"
[[ -z ${hap:-} ]] || procs+=",haproxy=$(pgrep -P "$hap")"
echo "$(date -u '+%F %H:%M') UTC, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'); pinning: ${pinned:-none}; $(haproxy -v 2>/dev/null | head -1 | cut -d' ' -f1-3); $ROUNDS rounds of $MIB MiB"
echo
"${pin[@]}" "$work/tcpload" -sink "$sink" -targets "$targets" -pids "$procs" -mib "$MIB" -rounds "$ROUNDS"
