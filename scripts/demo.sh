#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to `restack demo`: set up, build, run.
# The demo builds in its own folder (build-demo/, without tests) so that it never changes the
# configuration of the folders scripts/test.sh uses.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --build
scripts/build.sh build-demo -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESTACK_TESTS=OFF -DRESTACK_BENCHMARKS=OFF \
  -DRESTACK_SANITIZE=OFF --target restack
exec build-demo/worker/restack demo "$@"
