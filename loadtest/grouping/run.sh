#!/usr/bin/env bash
# Grouping figures for docs/grouping.md and docs/benchmarks.md (grouping section).
# No reference tool computes crash fingerprints offline on this machine, so the comparison is
# against a naive baseline (type + top three restored names) on the same generated corpus.
#   loadtest/grouping/run.sh [build-dir]     (default: build)
set -euo pipefail
build=${1:-build}
cmake --build "$build" --target grouping_corpus grouping_bench >/dev/null
echo "## split/merge, every event restored"
"$build/loadtest/grouping/grouping_corpus" --seed 42
echo
echo "## split/merge, 5 % of events without the app's symbols"
"$build/loadtest/grouping/grouping_corpus" --seed 42 --missing-share 0.05
echo
echo "## cost per event"
"$build/loadtest/grouping/grouping_bench" --benchmark_min_time=1 --benchmark_counters_tabular=true
