#!/usr/bin/env bash
# Side by side, on the same generated mapping and traces: Restack's proguard_bench and ProGuard's
# ReTrace (from scripts/setup.sh, .deps/proguard/retrace). Prints a markdown table.
#
#   loadtest/proguard/run_vs_retrace.sh [path/to/proguard_bench] [classes] [frames]
#
# ReTrace is a command-line tool: every run starts a JVM and reads the whole mapping. Its time to
# the first restored frame is a run on a one-frame trace; its warm rate is
# (frames - 1) / (time of the big trace - time of the one-frame trace), in wall seconds and in
# CPU seconds (the JVM's JIT and GC threads use the second core): Restack on one thread is
# compared with ReTrace's frames per CPU-second, Restack on two threads with its wall rate.
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=${1:-}
classes=${2:-20000}
frames=${3:-200000}
if [[ -z "$bench" ]]; then
  for candidate in build/loadtest/proguard/proguard_bench build-proguard/loadtest_proguard/proguard_bench; do
    [[ -x "$candidate" ]] && bench=$candidate && break
  done
fi
[[ -x "$bench" ]] || { echo "proguard_bench not found: build it (cmake --build build --target proguard_bench)" >&2; exit 1; }
retrace_cp=".deps/proguard/retrace/*"
compgen -G ".deps/proguard/retrace/*.jar" >/dev/null || { echo "ReTrace jars missing: run scripts/setup.sh" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bench" --generate "$work" --classes "$classes" --frames "$frames"
mapping_mb=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$work/mapping.txt")/1e6}")
trace_frames=$(grep -c '^\s*at ' "$work/trace.txt")

# ReTrace's runs, three of each trace, medians: wall seconds and CPU seconds (user + system of
# the JVM, all its threads: the JIT and the garbage collector run beside the retrace itself).
read -r t_one t_all cpu_one cpu_all < <(python3 - "$retrace_cp" "$work" <<'PY'
import resource, statistics, subprocess, sys, time, glob
cp, work = sys.argv[1], sys.argv[2]
def run(trace):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(["java", "-cp", cp, "proguard.retrace.ReTrace", f"{work}/mapping.txt", f"{work}/{trace}"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
def median(trace):
    runs = [run(trace) for _ in range(3)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
one, all_ = median("trace_one.txt"), median("trace.txt")
print(f"{one[0]:.3f} {all_[0]:.3f} {one[1]:.3f} {all_[1]:.3f}")
PY
)
retrace_rate=$(awk "BEGIN{d=$t_all-$t_one; if (d<=0) d=0.001; printf \"%.0f\", ($trace_frames-1)/d}")
retrace_cpu_rate=$(awk "BEGIN{d=$cpu_all-$cpu_one; if (d<=0) d=0.001; printf \"%.0f\", ($trace_frames-1)/d}")

json="$work/bench.json"
RESTACK_PG_BENCH_CLASSES=$classes "$bench" --benchmark_format=json --benchmark_out="$json" >/dev/null 2>&1
python3 - "$json" "$mapping_mb" "$trace_frames" "$t_one" "$t_all" "$retrace_rate" "$retrace_cpu_rate" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
mapping_mb, frames, t_one, t_all = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
retrace_rate, retrace_cpu_rate = float(sys.argv[6]), float(sys.argv[7])
rows = {b["name"]: b for b in data["benchmarks"]}
ingest = rows["BM_IngestMapping/iterations:3/real_time"]
warm1 = rows["BM_RetraceWarm/real_time/threads:1"]
warm2 = rows["BM_RetraceWarm/real_time/threads:2"]
cold = rows["BM_FirstFrameCold/iterations:7/real_time"]
cold_s = cold["real_time"] / 1e6  # microseconds -> seconds
print(f"mapping: {mapping_mb} MB generated R8-style; trace: {frames} frames")
print()
print("| measure | Restack | ProGuard ReTrace | ratio |")
print("|---|---|---|---|")
print(f"| warm frames per CPU-second (Restack: 1 thread) | {warm1['items_per_second']:,.0f} | {retrace_cpu_rate:,.0f} | {warm1['items_per_second']/retrace_cpu_rate:.1f}x |")
print(f"| warm frames/s, wall (Restack: 2 threads) | {warm2['items_per_second']:,.0f} | {retrace_rate:,.0f} | {warm2['items_per_second']/retrace_rate:.1f}x |")
print(f"| warm frames/s, Restack 1 thread vs ReTrace wall | {warm1['items_per_second']:,.0f} | {retrace_rate:,.0f} | {warm1['items_per_second']/retrace_rate:.1f}x |")
print(f"| time to first restored frame, untouched build | {cold_s*1e6:,.0f} µs | {t_one*1e3:,.0f} ms | {t_one/cold_s:,.0f}x |")
print(f"| ingest of the mapping | {ingest['bytes_per_second']/1e6:,.1f} MB/s | (reads it on every run: {t_one:.2f} s) | |")
print(f"| stored bytes per mapping MB | {ingest['stored_bytes_per_mapping_MB']/1e6:.2f} MB | — | |")
PY
