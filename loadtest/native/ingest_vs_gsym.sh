#!/usr/bin/env bash
# Ingest of one large symbol file, side by side with the reference converter, each process whole
# under /usr/bin/time -v (wall, user + system CPU, peak RSS):
#   restack ingest FILE --store S --app bench --build 1    vs    llvm-gsymutil-19 --convert FILE
# Usage: loadtest/native/ingest_vs_gsym.sh FILE [RUNS]   (RUNS default 2, alternating the two)
#   RESTACK (default build/worker/restack), DIGEST (default build/loadtest/native/native_store_digest):
#   the store of every run is digested (records and a checksum of all key/value pairs per family),
#   so runs of two builds can be compared for identical stored bytes.
#   GSYM=0 skips gsymutil. Benchmarks only; the large input comes from build_bigdwarf.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
FILE=$1
RUNS=${2:-2}
RESTACK=${RESTACK:-build/worker/restack}
DIGEST=${DIGEST:-build/loadtest/native/native_store_digest}
WORK=$(mktemp -d /tmp/restack-ingest-vs-gsym-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

field() { sed -n "s/^\s*$1: //p" "$2"; }
report() {  # NAME TIMEFILE
  local wall user sys rss
  wall=$(field "Elapsed (wall clock) time (h:mm:ss or m:ss)" "$2")
  user=$(field "User time (seconds)" "$2")
  sys=$(field "System time (seconds)" "$2")
  rss=$(field "Maximum resident set size (kbytes)" "$2")
  printf '%-10s wall %-8s cpu %6.2f s (user %s, sys %s)  peak RSS %6.0f MB\n' "$1" "$wall" \
    "$(echo "$user + $sys" | bc)" "$user" "$sys" "$(echo "$rss / 1024" | bc -l)"
}

echo "file: $FILE ($(du -m "$FILE" | cut -f1) MB), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$RUNS"); do
  rm -rf "$WORK/store"
  /usr/bin/time -v -o "$WORK/restack.time" "$RESTACK" ingest "$FILE" --store "$WORK/store" --app bench \
    --build 1 > "$WORK/restack.out"
  report "restack" "$WORK/restack.time"
  "$DIGEST" "$WORK/store" | grep -v ' records=0 '
  echo "  store on disk: $(du -sm "$WORK/store" | cut -f1) MB"
  if [[ "${GSYM:-1}" != 0 ]]; then
    /usr/bin/time -v -o "$WORK/gsym.time" llvm-gsymutil-19 --convert "$FILE" --out-file "$WORK/out.gsym" \
      > "$WORK/gsym.out"
    report "gsymutil" "$WORK/gsym.time"
    echo "  GSYM file: $(du -m "$WORK/out.gsym" | cut -f1) MB"
  fi
done
