#!/usr/bin/env bash
# Instructions per event of the restore path, counted by callgrind, for one or more `restack`
# binaries (for example two commits' builds): instruction counts do not depend on what else the
# machine is doing, so two builds compare on a busy machine. Each binary restores the demo's
# sample events (every stack kind, one unreadable event in nine) with `restack symbolicate --json`
# twice, 20 and 100 copies; the difference over the 720 extra lines removes startup and ingest.
#   loadtest/worker/restore_instructions.sh build/worker/restack [other/build/worker/restack …]
# With --loadtest first, the events are the load test's real-sized ones instead (20-60 frames per
# stack, ANR and lag events; restack_loadtest --write-events, one build of its corpus, made once in
# .deps/loadtest/corpus): lines 101-500 of its first 500 events, against a store each binary
# ingests the build's five symbol files into. RESTACK_LOADTEST names the tool (default:
# build/loadtest/worker/restack_loadtest), RESTACK_CORPUS its corpus folder.
# valgrind 3.19 cannot read clang-19's DWARF 5: each binary is copied without debug info first.
set -euo pipefail
loadtest=0
if [[ ${1:-} == --loadtest ]]; then
  loadtest=1
  shift
fi
root=$(realpath "$(dirname "$0")/../..")
binaries=()
for binary in "$@"; do binaries+=("$(realpath "$binary")"); done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ((loadtest)); then
  sizes=(100 500)
  "${RESTACK_LOADTEST:-$root/build/loadtest/worker/restack_loadtest}" --write-events "$work/all.jsonl" --builds 1 \
    --events 500 --corpus "${RESTACK_CORPUS:-$root/.deps/loadtest/corpus}" > "$work/uploads.tsv"
  for size in "${sizes[@]}"; do head -n "$size" "$work/all.jsonl" > "$work/events$size.jsonl"; done
else
  sizes=(20 100)
  for copies in "${sizes[@]}"; do
    for ((i = 0; i < copies; ++i)); do cat "$root/worker/demo/samples/events.jsonl"; done > "$work/events$copies.jsonl"
  done
fi
small=${sizes[0]} large=${sizes[1]}
lines=$(( $(wc -l < "$work/events$large.jsonl") - $(wc -l < "$work/events$small.jsonl") ))
cd "$root/worker/demo/samples"
functions='EventProcessor::process\(|EventRestorer::restore\(|NativeResolver::lookup\(|ProguardResolver::retrace\(|SourcemapResolver::lookup\(|SourcemapResolver::lookupStack\(|computeFingerprint\('
for binary in "${binaries[@]}"; do
  strip --strip-debug -o "$work/restack" "$binary"
  declare -A total=() inclusive=()
  if ((loadtest)); then
    rm -rf "$work/store"
    while IFS= read -r line; do
      # Tabs are whitespace to `read`, which would merge the empty name of a non-map file.
      IFS=$'\x1f' read -r app build name path <<< "${line//$'\t'/$'\x1f'}"
      "$binary" ingest --store "$work/store" --app "$app" --build "$build" ${name:+--name "$name"} "$path" \
        > /dev/null 2> "$work/ingest.txt" || { cat "$work/ingest.txt" >&2; exit 1; }
    done < "$work/uploads.tsv"
  fi
  for copies in "${sizes[@]}"; do
    if ((loadtest)); then
      # A fresh copy per run: every run starts from the same store.
      rm -rf "$work/run-store" && cp -r "$work/store" "$work/run-store"
      inputs=(--store "$work/run-store")
    else
      inputs=(--symbols ios/DemoApp.app.dSYM.zip android/libdemo.so android/mapping.txt web/main.3f9a1c2b.js.map
        react-native/index.android.bundle.map --app demo --build "1.0.0(100)")
    fi
    valgrind --tool=callgrind --callgrind-out-file="$work/cg$copies.out" "$work/restack" symbolicate --json \
      "${inputs[@]}" < "$work/events$copies.jsonl" > /dev/null 2> "$work/vg$copies.txt" || true
    total[$copies]=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/vg$copies.txt")
    while read -r count name; do inclusive[$copies:$name]=${count//,/}; done < <(
      callgrind_annotate --inclusive=yes --threshold=100 "$work/cg$copies.out" | grep -E "$functions" |
        sed -E 's/^ *([0-9,]+) .*restack::([A-Za-z:]*[a-zA-Z])\(.*/\1 \2/')
  done
  echo "$binary: instructions per event line ($lines lines)"
  echo "  whole process: $(( (total[$large] - total[$small]) / lines ))"
  # The three resolvers are each stack kind's warm lookup (what native_bench, proguard_bench and
  # sourcemap_bench time); their callers differ between builds, the resolvers' entry points do not.
  # JavaScript frames go through lookupStack (a stack's frames together) in builds that have it.
  for name in pipeline::EventProcessor::process pipeline::EventRestorer::restore NativeResolver::lookup \
              ProguardResolver::retrace SourcemapResolver::lookup SourcemapResolver::lookupStack \
              grouping::computeFingerprint; do
    echo "  $name: $(( (${inclusive[$large:$name]:-0} - ${inclusive[$small:$name]:-0}) / lines ))"
  done
  unset total inclusive
done
