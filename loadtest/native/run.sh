#!/usr/bin/env bash
# Native benchmarks side by side, on the same file and the same addresses:
#   Restack (loadtest/native/native_bench)  vs  llvm-symbolizer-19 (batch, --inlines)
#                                           vs  llvm-gsymutil-19 --convert (ingest)
# Usage: loadtest/native/run.sh [FILE]
#   FILE defaults to the RocksDB corpus of build_corpus.sh (built first when missing).
#   BUILD_DIR (default build-native) must be configured; ADDRESSES (default 100000) sets the count.
# Prints a markdown table for docs/benchmarks.md (native section).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build-native}
COUNT=${ADDRESSES:-100000}
if [[ $# -ge 1 ]]; then FILE=$1; else loadtest/native/build_corpus.sh >&2; FILE=.deps/native/bench/librocksdb_bench.so; fi
cmake --build "$BUILD_DIR" --target native_bench >&2
WORK=$(mktemp -d /tmp/restack-native-bench-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Addresses: pseudo-random (fixed seed) inside the sized function symbols of the file.
llvm-nm-19 --defined-only -S "$FILE" | python3 -c '
import random, sys
count = int(sys.argv[1])
functions = []
for line in sys.stdin:
    parts = line.split()
    if len(parts) == 4 and parts[2] in "tTwW" and int(parts[1], 16) > 0:
        functions.append((int(parts[0], 16), int(parts[1], 16)))
rng = random.Random(42)
for _ in range(count):
    start, size = rng.choice(functions)
    print(hex(start + rng.randrange(size)))
' "$COUNT" > "$WORK/addresses"
head -1 "$WORK/addresses" > "$WORK/one"

FILE_MB=$(du -k "$FILE" | awk '{printf "%.1f", $1 / 1024}')
DWARF_MB=$(llvm-readelf-19 -S -W "$FILE" | python3 -c '
import sys
total = 0
for line in sys.stdin:
    fields = line.replace("[ ", "[").split()
    if len(fields) > 5 and fields[1].startswith(".debug_"):
        total += int(fields[5], 16)
print(f"{total / 1e6:.1f}")')

measure() {  # measure OUT CMD... -> "seconds peak_rss_kb user_s system_s"
  local out=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$out" "$@" > /dev/null
}
measure "$WORK/sym1" llvm-symbolizer-19 --inlines --obj="$FILE" < "$WORK/one"
measure "$WORK/symN" llvm-symbolizer-19 --inlines --obj="$FILE" < "$WORK/addresses"
measure "$WORK/gsym" llvm-gsymutil-19 --convert "$FILE" --out-file "$WORK/out.gsym"
measure "$WORK/gsym1" llvm-gsymutil-19 --convert "$FILE" --num-threads 1 --out-file "$WORK/out1.gsym"
GSYM_MB=$(du -k "$WORK/out.gsym" | awk '{printf "%.1f", $1 / 1024}')

RESTACK_NATIVE_BENCH_FILE="$FILE" RESTACK_NATIVE_BENCH_ADDRESSES="$WORK/addresses" \
RESTACK_NATIVE_BENCH_STORE="$WORK/store" \
  "$BUILD_DIR/loadtest/native/native_bench" --benchmark_out="$WORK/bench.json" \
  --benchmark_out_format=json >&2

python3 - "$WORK" "$FILE" "$FILE_MB" "$DWARF_MB" "$COUNT" "$GSYM_MB" <<'PY'
import json, sys
work, path, file_mb, dwarf_mb, count, gsym_mb = sys.argv[1:]
count = int(count)
def timing(name):
    seconds, rss, user, system = open(f"{work}/{name}").read().split()
    return float(seconds), int(rss) / 1024, float(user) + float(system)
s1, s1_rss, s1_cpu = timing("sym1"); sn, sn_rss, sn_cpu = timing("symN")
g, g_rss, g_cpu = timing("gsym"); g1, g1_rss, g1_cpu = timing("gsym1")
bench = {b["name"]: b for b in json.load(open(f"{work}/bench.json"))["benchmarks"]}
ingest = bench["BM_Ingest/iterations:1/real_time"]
first = bench["BM_FirstFrame/iterations:50"]
warm1 = next(b for n, b in bench.items() if n.startswith("BM_WarmLookup") and n.endswith("threads:1"))
warm2 = next(b for n, b in bench.items() if n.startswith("BM_WarmLookup") and n.endswith("threads:2"))
ingest_s = ingest["real_time"] / 1e3
sym_rate = count / max(sn - s1, 1e-9)
print(f"File: `{path}` — {file_mb} MB, DWARF {dwarf_mb} MB; {count} addresses inside sized function symbols (seed 42).\n")
print("| measure | Restack | llvm-symbolizer-19 | llvm-gsymutil-19 --convert |")
print("|---|---|---|---|")
print(f"| warm lookups / s, 1 thread | {warm1['items_per_second']:,.0f} ({warm1['frames_per_address']:.2f} frames/address, {warm1['restored_pct']:.1f}% restored) | {sym_rate:,.0f} (batch, startup excluded) | |")
print(f"| warm lookups / s, 2 threads (total) | {warm2['items_per_second']:,.0f} | | |")
print(f"| warm lookups per CPU-second (1 thread) | {warm1['iterations'] / (warm1['cpu_time'] * warm1['iterations'] / 1e9):,.0f} | {count / max(sn_cpu - s1_cpu, 1e-9):,.0f} (user+sys, startup excluded) | |")
print(f"| time to first restored frame | {first['real_time']:.0f} µs (fresh store + resolver) | {s1*1000:.0f} ms (process start + DWARF load) | |")
print(f"| ingest / convert wall time | {ingest_s:.2f} s (units walked on all hardware threads, ≤4) | | {g:.2f} s (all threads), {g1:.2f} s (1 thread) |")
print(f"| ingest / convert CPU time (user+sys) | {ingest['cpu_s']:.2f} s | | {g_cpu:.2f} s (all threads), {g1_cpu:.2f} s (1 thread) |")
print(f"| ingest MB/s of the file (wall) | {float(file_mb)/ingest_s:.1f} | | {float(file_mb)/g:.1f} (all threads), {float(file_mb)/g1:.1f} (1 thread) |")
print(f"| ingest MB of the file per CPU-second | {float(file_mb)/ingest['cpu_s']:.1f} | | {float(file_mb)/g_cpu:.1f} (all threads), {float(file_mb)/g1_cpu:.1f} (1 thread) |")
print(f"| stored bytes | {ingest['sst_MB']:.1f} MB on disk ({ingest['sst_MB']/float(dwarf_mb):.3f} per DWARF MB), {ingest['records']:,.0f} records | | {gsym_mb} MB GSYM |")
print(f"| peak RSS | {ingest['peak_rss_MB']:.0f} MB (ingest) | {sn_rss:.0f} MB | {g_rss:.0f} MB (all threads), {g1_rss:.0f} MB (1 thread) |")
PY
