#!/usr/bin/env bash
# Side-by-side source-map benchmark: Restack (sourcemap_bench) and the JS libraries (reference.js)
# on the same real map and the same frames, in one run.
#   loadtest/sourcemap/run.sh [build-dir]       (needs scripts/setup.sh for the npm tools)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
node_modules=$PWD/.deps/node/node_modules
# SOURCEMAP_BENCH_DIR keeps the generated map and frames (for profiling); default: a temp dir.
if [[ -n ${SOURCEMAP_BENCH_DIR:-} ]]; then
  work=$SOURCEMAP_BENCH_DIR
  rm -rf "$work" && mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
[[ -x $node_modules/.bin/esbuild ]] || { echo "run scripts/setup.sh first (esbuild missing)" >&2; exit 1; }

# A real bundle: several npm packages (terser, @babel/parser, acorn, source-map, metro-source-map)
# minified by esbuild, with sourcesContent.
cat >"$work/entry.js" <<'JS'
module.exports = [require("terser"), require("@babel/parser"), require("acorn"), require("source-map"),
                  require("metro-source-map"), require("@babel/traverse")];
JS
ln -s "$node_modules" "$work/node_modules"
"$node_modules/.bin/esbuild" "$work/entry.js" --bundle --minify --sourcemap --platform=node \
  --log-level=error --outfile="$work/bench.min.js"
# 100k frames at real mapped positions (spread over the whole bundle), 1-based as printed.
node -e '
const { TraceMap, decodedMappings } = require(process.argv[2] + "/@jridgewell/trace-mapping");
const lines = decodedMappings(new TraceMap(require("fs").readFileSync(process.argv[1], "utf8")));
const all = [];
lines.forEach((segments, line) => segments.forEach((s) => { if (s.length >= 4) all.push([line + 1, s[0] + 1]); }));
let seed = 42; const out = [];
for (let i = 0; i < 100000; ++i) { seed = (seed * 1103515245 + 12345) % 2147483648; out.push(all[seed % all.length].join(" ")); }
require("fs").writeFileSync(process.argv[3], out.join("\n") + "\n");
console.error("map", (require("fs").statSync(process.argv[1]).size / 1e6).toFixed(1), "MB,", all.length, "mapped segments");
' "$work/bench.min.js.map" "$node_modules" "$work/frames.txt"

cmake --build "$build" --target sourcemap_bench >/dev/null
SOURCEMAP_BENCH_MAP=$work/bench.min.js.map SOURCEMAP_BENCH_FRAMES=$work/frames.txt \
  SOURCEMAP_BENCH_ANSWERS=$work/restack-answers.txt taskset -c 0 "$build/loadtest/sourcemap/sourcemap_bench" --benchmark_counters_tabular=true
taskset -c 0 node loadtest/sourcemap/reference.js "$work/bench.min.js.map" "$work/frames.txt" "$node_modules" \
  "$work/restack-answers.txt"
