#!/usr/bin/env bash
# Instructions per event of the restore path, counted by callgrind, for one or more `restack`
# binaries (for example two commits' builds): instruction counts do not depend on what else the
# machine is doing, so two builds compare on a busy machine. Each binary restores the demo's
# sample events (every stack kind, one unreadable event in nine) with `restack symbolicate --json`
# twice, 20 and 100 copies; the difference over the 720 extra lines removes startup and ingest.
#   loadtest/worker/restore_instructions.sh build/worker/restack [other/build/worker/restack …]
# valgrind 3.19 cannot read clang-19's DWARF 5: each binary is copied without debug info first.
set -euo pipefail
binaries=()
for binary in "$@"; do binaries+=("$(realpath "$binary")"); done
cd "$(dirname "$0")/../../worker/demo/samples"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for copies in 20 100; do
  for ((i = 0; i < copies; ++i)); do cat events.jsonl; done > "$work/events$copies.jsonl"
done
lines=$(( $(wc -l < "$work/events100.jsonl") - $(wc -l < "$work/events20.jsonl") ))
functions='EventProcessor::process\(|EventRestorer::restore\(|NativeResolver::lookup\(|ProguardResolver::retrace\(|SourcemapResolver::lookup\(|computeFingerprint\('
for binary in "${binaries[@]}"; do
  strip --strip-debug -o "$work/restack" "$binary"
  declare -A total=() inclusive=()
  for copies in 20 100; do
    valgrind --tool=callgrind --callgrind-out-file="$work/cg$copies.out" "$work/restack" symbolicate --json \
      --symbols ios/DemoApp.app.dSYM.zip android/libdemo.so android/mapping.txt web/main.3f9a1c2b.js.map \
      react-native/index.android.bundle.map --app demo --build "1.0.0(100)" \
      < "$work/events$copies.jsonl" > /dev/null 2> "$work/vg$copies.txt" || true
    total[$copies]=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/vg$copies.txt")
    while read -r count name; do inclusive[$copies:$name]=${count//,/}; done < <(
      callgrind_annotate --inclusive=yes --threshold=100 "$work/cg$copies.out" | grep -E "$functions" |
        sed -E 's/^ *([0-9,]+) .*restack::([A-Za-z:]*[a-zA-Z])\(.*/\1 \2/')
  done
  echo "$binary: instructions per event line ($lines lines)"
  echo "  whole process: $(( (total[100] - total[20]) / lines ))"
  # The three resolvers are each stack kind's warm lookup (what native_bench, proguard_bench and
  # sourcemap_bench time); their callers differ between builds, the resolvers' entry points do not.
  for name in pipeline::EventProcessor::process pipeline::EventRestorer::restore NativeResolver::lookup \
              ProguardResolver::retrace SourcemapResolver::lookup grouping::computeFingerprint; do
    echo "  $name: $(( (${inclusive[100:$name]:-0} - ${inclusive[20:$name]:-0}) / lines ))"
  done
  unset total inclusive
done
