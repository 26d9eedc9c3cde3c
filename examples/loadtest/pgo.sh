#!/usr/bin/env bash
# pgo.sh writes examples/controller/default.pgo, the profile the example
# controller is built with (go build and go run use it by default): CPU
# profiles of the controller, plain and with tracing on, under
# compare.sh's load in the http, https, h2 and grpc modes, merged. Needs
# what compare.sh needs (wrk, h2load). Run it again after large changes to
# the request path: a stale profile costs only part of the gain, as Go
# matches it to the code by function.
#
#   examples/loadtest/pgo.sh                       # about 2 minutes
#   SECONDS_PER_ROUND=30 examples/loadtest/pgo.sh  # longer profiles
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
PROFILE="controller controller-otel" CONFIGS="controller controller-otel" MODES="http https h2 grpc" \
	ROUNDS=1 SLICES=1 SECONDS_PER_ROUND="${SECONDS_PER_ROUND:-12}" "$root/examples/loadtest/compare.sh" >&2
go tool pprof -proto controller.pprof controller-otel.pprof >"$root/examples/controller/default.pgo"
echo "wrote examples/controller/default.pgo" >&2
