#!/usr/bin/env bash
# Builds the large-DWARF benchmark input of issue 15 ("a .so with at least 1 GB of DWARF"): one
# x86_64 shared library with a build id that statically holds five real C/C++ code bases, as an
# app's native library links its dependencies, all compiled here with clang-19 at
# -O1 -g -fstandalone-debug (DWARF 5; full type info in every unit, no padding, no copies):
#   - DuckDB 2.0.0, vendored as duckdb.tar.gz by the crate libduckdb-sys 1.20000.1: the 379
#     translation units its `bundled` build compiles (core, core_functions, parquet, json; most
#     are DuckDB's own unity files ub_*.cpp). Alone: 706.9 MB of DWARF.
#   - RocksDB 9.9.3, vendored by librocksdb-sys 0.17.1 (the 323 files of build_corpus.sh).
#   - llama.cpp, vendored by llama-cpp-sys-2 0.1.161: src/, src/models/, common/, the ggml core.
#   - GoogleTest/GoogleMock 1.12.1 (Debian's googletest package) and SQLite (libsqlite3-sys 0.30.1).
# Result: .deps/native/bigdwarf/libbigdwarf.so, 1,149,557,744 bytes, of which 1,046,576,059
# bytes DWARF (.debug_info 649.1 MB, .debug_str 145.0 MB, .debug_loclists 82.5 MB, ...).
# Benchmarks only, never part of CI. Run time: about 55 min with JOBS=2 on this shared 2-core
# machine (DuckDB 43 min, RocksDB 7, the rest 3; load average 1-7 from other users); run it as
# `JOBS=2 loadtest/native/build_bigdwarf.sh` (every compile runs at nice 10). Idempotent: the
# library is rebuilt only when missing, and objects that exist are kept, so a rerun resumes.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.deps/native/bigdwarf
mkdir -p "$OUT/obj" "$OUT/src"
NAME=libbigdwarf.so
if [[ -s "$OUT/$NAME" ]]; then echo "input ready: $OUT/$NAME"; exit 0; fi

# Fetch the crates with cargo (its ordinary client) to get the vendored sources.
source loadtest/native/fetch_crates.sh
fetch_crates "$OUT/fetch" restack-native-bigdwarf-corpus <<'TOML'
libduckdb-sys = { version = "=1.20000.1", default-features = false, features = ["bundled"] }
librocksdb-sys = { version = "=0.17.1", default-features = false }
libsqlite3-sys = { version = "=0.30.1", default-features = false, features = ["bundled"] }
llama-cpp-sys-2 = { version = "=0.1.161", default-features = false }
TOML
CRATE=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/libduckdb-sys-1.20000.1 | head -1)
if [[ ! -s "$OUT/src/duckdb/manifest.json" ]]; then tar xzf "$CRATE/duckdb.tar.gz" -C "$OUT/src"; fi

# The crate's manifest.json lists the sources and include directories of the base and of each
# extension; we take the base and all three extensions (the crate's features `parquet` and `json`).
python3 - "$OUT/src/duckdb/manifest.json" > "$OUT/sources.txt" <<'PY'
import json, os, sys
m = json.load(open(sys.argv[1]))
files, inc = set(m["base"]["cpp_files"]), set(m["base"]["include_dirs"])
for e in m["extensions"].values():
    files |= set(e["cpp_files"]); inc |= set(e["include_dirs"])
root = os.path.dirname(os.path.dirname(sys.argv[1]))
# Largest first, so that two jobs finish together.
for f in sorted(files, key=lambda f: -os.path.getsize(os.path.join(root, f))):
    print(f)
print("#INC " + " ".join("-Iduckdb/" + i for i in sorted(inc)))
PY

export OUT
export INC=$(sed -n 's/^#INC //p' "$OUT/sources.txt")
compile() {
  local source=$1
  local object="$OUT/obj/$(echo "$source" | tr '/' '_').o"
  [[ -s "$object" ]] && return 0
  # shellcheck disable=SC2086
  (cd "$OUT/src" && nice -n 10 clang++-19 -std=c++17 -O1 -g -fstandalone-debug -fPIC -w -DNDEBUG \
    -DDUCKDB_EXTENSION_CORE_FUNCTIONS_LINKED=1 -DDUCKDB_EXTENSION_PARQUET_LINKED=1 \
    -DDUCKDB_EXTENSION_JSON_LINKED=1 -DDUCKDB_EXTENSION_AUTOINSTALL_DEFAULT=1 \
    -DDUCKDB_EXTENSION_AUTOLOAD_DEFAULT=1 -Iduckdb $INC \
    -c "$source" -o "../obj/$(basename "$object").tmp") && mv "$object.tmp" "$object"
}
export -f compile
grep -v '^#INC ' "$OUT/sources.txt" | xargs -P "${JOBS:-2}" -I{} bash -c 'compile "$@"' _ {}

# DuckDB alone gives 707 MB of DWARF. The second code base is RocksDB 9.9.3 (vendored by the
# librocksdb-sys crate, the corpus of build_corpus.sh), same compiler and flags: every file of its
# rocksdb_lib_sources.txt, the crate's generated build_version.cc in place of the CMake template.
ROCKS_CRATE=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/librocksdb-sys-0.17.1+9.9.3 | head -1)
export ROCKS_CRATE
mkdir -p "$OUT/obj-rocksdb"
compile_rocksdb() {
  local source=$1 path
  local object="$OUT/obj-rocksdb/$(echo "$source" | tr '/' '_').o"
  [[ -s "$object" ]] && return 0
  path="$ROCKS_CRATE/rocksdb/$source"
  [[ "$source" == crate/* ]] && path="$ROCKS_CRATE/${source#crate/}"
  nice -n 10 clang++-19 -std=c++17 -O1 -g -fstandalone-debug -fPIC -w \
    -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX -DOS_LINUX -DROCKSDB_SUPPORT_THREAD_LOCAL \
    -I"$ROCKS_CRATE/rocksdb" -I"$ROCKS_CRATE/rocksdb/include" -c "$path" -o "$object.tmp" && mv "$object.tmp" "$object"
}
export -f compile_rocksdb
{ grep -v '^\s*$' "$ROCKS_CRATE/rocksdb_lib_sources.txt" | grep -vx 'util/build_version.cc'; echo crate/build_version.cc; } |
  xargs -P "${JOBS:-2}" -I{} bash -c 'compile_rocksdb "$@"' _ {}

# Two small ones: GoogleTest 1.12.1 with GoogleMock (Debian's googletest package, the sources the
# tests build) and SQLite 3 (the amalgamation vendored by libsqlite3-sys 0.30.1), same flags.
mkdir -p "$OUT/obj-more"
GT=/usr/src/googletest
[[ -d "$GT" ]] || { echo "install Debian's googletest package (scripts/setup.sh does)" >&2; exit 1; }
for part in googletest/src/gtest-all.cc googlemock/src/gmock-all.cc; do
  object="$OUT/obj-more/$(basename "$part").o"
  [[ -s "$object" ]] || nice -n 10 clang++-19 -std=c++17 -O1 -g -fstandalone-debug -fPIC -w -I"$GT/googletest" \
    -I"$GT/googletest/include" -I"$GT/googlemock" -I"$GT/googlemock/include" -c "$GT/$part" -o "$object"
done
SQLITE=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/libsqlite3-sys-0.30.1 | head -1)
[[ -s "$OUT/obj-more/sqlite3.c.o" ]] || nice -n 10 clang-19 -O1 -g -fstandalone-debug -fPIC -w \
  -DSQLITE_THREADSAFE=1 -c "$SQLITE/sqlite3/sqlite3.c" -o "$OUT/obj-more/sqlite3.c.o"

# llama.cpp (vendored by llama-cpp-sys-2 0.1.161): the library (src/, src/models/), its common/
# helpers and the ggml core (ggml/src/*.c, *.cpp; no backend). Its two CMake-generated version
# headers are written here from their templates, as its CMake build would.
LLAMA=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/llama-cpp-sys-2-0.1.161 | head -1)/llama.cpp
mkdir -p "$OUT/obj-llama" "$OUT/gen-llama"
sed -e 's/@GGML_VERSION@/0.26.0/' -e 's/@GGML_BUILD_COMMIT@/unknown/' "$LLAMA/ggml/src/ggml-version.h.in" > "$OUT/gen-llama/ggml-version.h"
sed -e 's/@LLAMA_VERSION@/0.0.0/' -e 's/@LLAMA_BUILD_COMMIT@/unknown/' "$LLAMA/src/llama-version.h.in" > "$OUT/gen-llama/llama-version.h"
export LLAMA
compile_llama() {
  local source=$1 compiler="clang++-19 -std=c++17"
  local object="$OUT/obj-llama/$(echo "$source" | tr '/' '_').o"
  [[ -s "$object" ]] && return 0
  [[ "$source" == *.c ]] && compiler="clang-19 -std=gnu11"
  # shellcheck disable=SC2086
  nice -n 10 $compiler -O1 -g -fstandalone-debug -fPIC -w -D_GNU_SOURCE -I"$OUT/gen-llama" -I"$LLAMA/include" \
    -I"$LLAMA/ggml/include" -I"$LLAMA/ggml/src" -I"$LLAMA/src" -I"$LLAMA/common" -I"$LLAMA/vendor" \
    -c "$LLAMA/$source" -o "$object.tmp" && mv "$object.tmp" "$object"
}
export -f compile_llama
(cd "$LLAMA" && ls src/*.cpp src/models/*.cpp common/*.cpp ggml/src/*.c ggml/src/*.cpp) |
  xargs -P "${JOBS:-2}" -I{} bash -c 'compile_llama "$@"' _ {}

nice -n 10 clang++-19 -shared -fuse-ld=lld -Wl,--build-id -o "$OUT/$NAME.tmp" "$OUT"/obj/*.o "$OUT"/obj-rocksdb/*.o \
  "$OUT"/obj-more/*.o "$OUT"/obj-llama/*.o
mv "$OUT/$NAME.tmp" "$OUT/$NAME"
ls -l "$OUT/$NAME"
llvm-size-19 -A "$OUT/$NAME" | awk '/^\.debug_/ {s += $2; print} END {print "DWARF total", s}'
