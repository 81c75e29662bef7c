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
# Every temporary file of the run (the tests' brokers, stores and compiled programs) goes under one
# folder, removed when the run ends: a test killed by its timeout, or a worker killed on purpose,
# leaves nothing behind on the machine. The brokers stop when their disk fills (Kafka fails the log
# folder and shuts down), which fails Kafka tests with no other sign, so the free space is printed.
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/restack-test-run-XXXXXX")
export TMPDIR="$run_tmp"
free_gib=$(( $(df -Pk "$run_tmp" | awk 'NR == 2 { print $4 }') / 1048576 ))
echo "test: ${free_gib} GiB free for the builds and $run_tmp (a whole run takes about 6 GiB)"
if (( free_gib < 8 )); then
  echo "test: WARNING: under 8 GiB free; the test brokers shut down if the disk fills during the run"
fi
cleanup() {
  [[ -z "${asan_build:-}" ]] || kill "$asan_build" 2>/dev/null || true
  rm -rf "$run_tmp"
}
trap cleanup EXIT
# Every option is passed explicitly: a CMake cache keeps -D options from an earlier configure of
# the same folder, so nothing configured elsewhere may change what is built and tested here.
scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESTACK_TESTS=ON -DRESTACK_BENCHMARKS=OFF \
  -DRESTACK_SANITIZE=OFF -DRESTACK_FUZZ=OFF
count_tests build
# The sanitizer build starts now, at the lowest CPU priority, and only takes the cycles the release
# tests leave idle (Kafka tests mostly wait on brokers); its output goes to build-asan.log.
# Only what the sanitizer suite runs is built: the unit-labelled tests and the restack binary.
asan_options=(-DCMAKE_BUILD_TYPE=Debug -DRESTACK_TESTS=ON -DRESTACK_SANITIZE=ON -DRESTACK_BENCHMARKS=OFF
  -DRESTACK_FUZZ=OFF --target restack_unit_tests)
nice -n 19 scripts/build.sh build-asan "${asan_options[@]}" > build-asan.log 2>&1 &
asan_build=$!
# A failing release suite stops the background build too (set -e exits here, and cleanup runs).
(cd build && ctest --no-tests=error --output-on-failure -j2 --timeout 600)
echo "test: release suite passed after $(( $(date +%s) - start )) s"
if ! wait "$asan_build"; then
  tail -n 60 build-asan.log
  echo "test: the sanitizer build failed (whole log: build-asan.log)"
  exit 1
fi
asan_build=
echo "test: sanitizer build finished after $(( $(date +%s) - start )) s"
echo "test: sanitizer suite runs $(cd build-asan && ctest -N -L '^unit$' | sed -n 's/^Total Tests: //p') unit tests"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --no-tests=error --output-on-failure -j2 --timeout 900 -L '^unit$')
# What the tests left in the run's folder (it is removed anyway): a test that forgets its
# temporary files fills the disk of whoever runs the suite often.
left=$(find "$run_tmp" -mindepth 1 -maxdepth 1 -name 'restack-*' -printf '%f\n' | sed 's/-[A-Za-z0-9]*$//' | sort | uniq -c)
[[ -z "$left" ]] || echo "test: temporary folders the tests left behind (removed now):"$'\n'"$left"
echo "test: all passed after $(( $(date +%s) - start )) s"
