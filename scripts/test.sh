#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to the whole test suite: set up (packages and test
# tools), build, run every test (unit, tools, kafka), then the unit tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

# Prints how many tests each label holds in build folder $1 (ctest then runs them all and fails
# on any failure, or when it finds none).
count_tests() {
  local labels
  labels=$(cd "$1" && ctest --print-labels | sed -n 's/^  //p')
  for label in $labels; do
    echo "test: $1 has $(cd "$1" && ctest -N -L "^${label}\$" | sed -n 's/^Total Tests: //p') tests labelled ${label}"
  done
}
scripts/setup.sh
# Every option is passed explicitly: a CMake cache keeps -D options from an earlier configure of
# the same folder, so nothing configured elsewhere may change what is built and tested here.
scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESTACK_TESTS=ON -DRESTACK_BENCHMARKS=OFF \
  -DRESTACK_SANITIZE=OFF -DRESTACK_FUZZ=OFF
count_tests build
(cd build && ctest --no-tests=error --output-on-failure -j2 --timeout 600)
echo "test: release suite passed after $(( $(date +%s) - start )) s"
scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DRESTACK_TESTS=ON -DRESTACK_SANITIZE=ON \
  -DRESTACK_BENCHMARKS=OFF -DRESTACK_FUZZ=OFF
echo "test: sanitizer suite runs $(cd build-asan && ctest -N -L '^unit$' | sed -n 's/^Total Tests: //p') unit tests"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --no-tests=error --output-on-failure -j2 --timeout 900 -L '^unit$')
echo "test: all passed after $(( $(date +%s) - start )) s"
