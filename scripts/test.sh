#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to the whole test suite: set up (packages and test
# tools), build, run every test (unit, tools, kafka), then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
scripts/setup.sh
scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESTACK_BENCHMARKS=OFF
(cd build && ctest --output-on-failure -j2 --timeout 600)
echo "test: release suite passed after $(( $(date +%s) - start )) s"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DRESTACK_SANITIZE=ON -DRESTACK_BENCHMARKS=OFF
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j2 --timeout 900 -L unit)
echo "test: all passed after $(( $(date +%s) - start )) s"
