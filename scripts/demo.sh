#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to `restack demo`: set up, build, run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build
scripts/build.sh build -DRESTACK_TESTS=OFF -DRESTACK_BENCHMARKS=OFF --target restack
exec build/worker/restack demo "$@"
