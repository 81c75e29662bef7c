#!/usr/bin/env bash
# Builds the large-DWARF benchmark input of issue 15 ("a .so with at least 1 GB of DWARF"):
# DuckDB 2.0.0 (a large real C++ code base, vendored as duckdb.tar.gz by the libduckdb-sys crate
# 1.20000.1 on crates.io: the 379 translation units its `bundled` build compiles, i.e. the core,
# core_functions, parquet and json, most of them DuckDB's own unity files ub_*.cpp) compiled with
# clang++-19 at -O1 -g -fstandalone-debug into one x86_64 shared library with a build id.
# Benchmarks only, never part of CI. Run time: about 60 min with JOBS=2 on this shared 2-core
# machine (load average 4-5 from other users); run it as
# `JOBS=2 nice -n 10 loadtest/native/build_bigdwarf.sh`.
# Output: .deps/native/bigdwarf/libduckdb_bigdwarf.so (idempotent: rebuilt only when missing;
# objects that exist are kept, so a rerun resumes).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.deps/native/bigdwarf
mkdir -p "$OUT/fetch/src" "$OUT/obj" "$OUT/src"
NAME=libbigdwarf.so
if [[ -s "$OUT/$NAME" ]]; then echo "input ready: $OUT/$NAME"; exit 0; fi

# Fetch the crate with cargo (its ordinary client) to get the vendored sources.
cat > "$OUT/fetch/Cargo.toml" <<'TOML'
[package]
name = "restack-native-bigdwarf-corpus"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
libduckdb-sys = { version = "=1.20000.1", default-features = false, features = ["bundled"] }
librocksdb-sys = { version = "=0.17.1", default-features = false }
libsqlite3-sys = { version = "=0.30.1", default-features = false, features = ["bundled"] }
TOML
: > "$OUT/fetch/src/lib.rs"
(cd "$OUT/fetch" && cargo fetch --quiet)
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

nice -n 10 clang++-19 -shared -fuse-ld=lld -Wl,--build-id -o "$OUT/$NAME.tmp" "$OUT"/obj/*.o "$OUT"/obj-rocksdb/*.o \
  "$OUT"/obj-more/*.o
mv "$OUT/$NAME.tmp" "$OUT/$NAME"
ls -l "$OUT/$NAME"
llvm-size-19 -A "$OUT/$NAME" | awk '/^\.debug_/ {s += $2; print} END {print "DWARF total", s}'
