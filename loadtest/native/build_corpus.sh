#!/usr/bin/env bash
# Builds the benchmark corpus: RocksDB 9.9.3 (a large real C++ code base, vendored by the
# librocksdb-sys crate on crates.io) compiled at -O2 -g into one x86_64 shared library with a build
# id: 111.5 MB, of which 102.4 MB DWARF. Benchmarks only, never part of CI: about 45 min with
# JOBS=2 on a shared 2-core machine; run it as `JOBS=2 nice -n 19 loadtest/native/build_corpus.sh`.
# Output: .deps/native/bench/librocksdb_bench.so (idempotent: rebuilt only when missing).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=.deps/native/bench
mkdir -p "$OUT/obj"
if [[ -s "$OUT/librocksdb_bench.so" ]]; then echo "corpus ready: $OUT/librocksdb_bench.so"; exit 0; fi

# Fetch the crate with cargo (its ordinary client) to get the vendored sources.
source loadtest/native/fetch_crates.sh
fetch_crates "$OUT/fetch" restack-native-bench-corpus <<'TOML'
librocksdb-sys = { version = "=0.17.1", default-features = false }
TOML
CRATE=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/librocksdb-sys-0.17.1+9.9.3 | head -1)
SRC="$CRATE/rocksdb"

export SRC OUT
compile() {
  local source=$1
  local object="$OUT/obj/$(echo "$source" | tr '/' '_').o"
  [[ -s "$object" ]] && return 0
  nice -n 10 clang++-19 -std=c++17 -O2 -g -fPIC -w \
    -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX -DOS_LINUX -DROCKSDB_SUPPORT_THREAD_LOCAL \
    -I"$SRC" -I"$SRC/include" -c "$SRC/$source" -o "$object.tmp" && mv "$object.tmp" "$object"
}
export -f compile
# util/build_version.cc only exists as a CMake template (build_version.cc.in); the crate ships a
# generated copy at its root and compiles that instead, and so do we.
grep -v '^\s*$' "$CRATE/rocksdb_lib_sources.txt" | grep -vx 'util/build_version.cc' |
  xargs -P "${JOBS:-2}" -I{} bash -c 'compile "$@"' _ {}
if [[ ! -s "$OUT/obj/crate_build_version.cc.o" ]]; then
  nice -n 10 clang++-19 -std=c++17 -O2 -g -fPIC -w -DROCKSDB_PLATFORM_POSIX -DOS_LINUX \
    -I"$SRC" -I"$SRC/include" -c "$CRATE/build_version.cc" -o "$OUT/obj/crate_build_version.cc.o"
fi
nice -n 10 clang++-19 -shared -fuse-ld=lld -Wl,--build-id -o "$OUT/librocksdb_bench.so.tmp" "$OUT"/obj/*.o
mv "$OUT/librocksdb_bench.so.tmp" "$OUT/librocksdb_bench.so"
ls -l "$OUT/librocksdb_bench.so"
llvm-readelf-19 -S -W "$OUT/librocksdb_bench.so" | grep -F .debug_ || true
