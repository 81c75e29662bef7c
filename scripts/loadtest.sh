#!/usr/bin/env bash
# Runs a load-test scenario of the worker end to end (loadtest/worker/restack_loadtest.cc):
# builds restack and restack_loadtest, makes the symbol corpus once (.deps/loadtest/corpus), starts
# a real Apache Kafka broker on loopback and `restack run` processes, and prints the figures.
#   scripts/loadtest.sh standard            # 200,000 events flat out, 50 builds, one worker
#   scripts/loadtest.sh latency --rate 5000 # any restack_loadtest flag may follow the scenario
# Scenarios: standard, latency, memory, scaling, coldstart. Needs scripts/setup.sh's tools.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-standard}
shift || true
build_dir=${BUILD_DIR:-build}
scripts/build.sh "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo --target restack --target restack_loadtest
exec "$build_dir/loadtest/worker/restack_loadtest" --scenario "$scenario" "$@"
