#!/usr/bin/env bash
# Builds the seed corpus of fuzz_dwp (tests/native/dwp_fuzz_entry.h): real -gsplit-dwarf aarch64
# libraries, each with the package llvm-dwp-19 made of its .dwo files, written as one dwpair
# input (the library's size as a little-endian u32, the library, the package). Compiled with
# clang-19 from a few lines of C and C++ (no SDK, no NDK):
#   dwp5, dwp4               DWARF 5 (.debug_cu_index v5) and DWARF 4 (GNU split DWARF, index v2)
#   dwp5-types, dwp4-types   -fdebug-types-section: type units in the package (.debug_tu_index;
#                            DWARF 4 in .debug_types.dwo)
#   dwp5-zlib, dwp4-zstd     the package's .debug_info.dwo and .debug_str.dwo compressed after
#                            llvm-dwp (llvm-objcopy-19 --compress-sections)
#   dwp5-partial             a library of two units whose package holds only one
# Usage: tests/native/make_dwp_fuzz_seeds.sh OUT_DIR   (then: fuzz_dwp CORPUS OUT_DIR)
set -euo pipefail
out=$(mkdir -p "$1" && cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$here/fixtures/seed.c" x.c  # the C both seed scripts compile
cat > y.cc <<'CXX'
template <typename T> struct Box { T v; T get() const { return v + 1; } };
struct Point { int x, y; int sum() const { return x + y; } };
namespace ns {
__attribute__((noinline)) int twice(int x) { Box<int> b{x}; return b.get() * 2; }
inline int scaled(Point p, int k) { return p.sum() * k; }
}
extern "C" int cxx_entry(int x) { return ns::twice(x) + Box<long>{x}.get() + ns::scaled(Point{x, 2}, 3); }
CXX
android="--target=aarch64-linux-android24 -fPIC -ffreestanding -nostdlibinc -fdebug-compilation-dir=."

# pair NAME LIBRARY PACKAGE: writes OUT_DIR/NAME.dwpair.
pair() {
  local size
  size=$(stat -c %s "$2")
  printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $((size & 255)) $((size >> 8 & 255)) $((size >> 16 & 255)) \
    $((size >> 24 & 255)))" > "$out/$1.dwpair"
  cat "$2" "$3" >> "$out/$1.dwpair"
}

# build NAME "FLAGS" SOURCES…: lib$NAME.so and lib$NAME.so.dwp from the sources' .dwo files.
build() {
  local name=$1 flags=$2
  shift 2
  mkdir -p "$name"
  local objects=() dwos=()
  for source in "$@"; do
    local base=${source%.*}
    local compiler=clang-19
    [[ $source == *.cc ]] && compiler=clang++-19
    (cd "$name" && $compiler $android -g -gsplit-dwarf $flags -O2 -c "../$source" -o "$base.o")
    objects+=("$name/$base.o")
    dwos+=("$name/$base.dwo")
  done
  clang-19 $android -shared -nostdlib -fuse-ld=lld -Wl,--build-id "${objects[@]}" -o "$name/lib$name.so"
  llvm-dwp-19 "${dwos[@]}" -o "$name/lib$name.so.dwp"
}

build dwp5 -gdwarf-5 x.c y.cc
pair dwp5 dwp5/libdwp5.so dwp5/libdwp5.so.dwp
build dwp4 -gdwarf-4 x.c y.cc
pair dwp4 dwp4/libdwp4.so dwp4/libdwp4.so.dwp
build dwp5-types "-gdwarf-5 -fdebug-types-section" y.cc
pair dwp5-types dwp5-types/libdwp5-types.so dwp5-types/libdwp5-types.so.dwp
build dwp4-types "-gdwarf-4 -fdebug-types-section" y.cc
pair dwp4-types dwp4-types/libdwp4-types.so dwp4-types/libdwp4-types.so.dwp
llvm-objcopy-19 --compress-sections '.debug_info.dwo=zlib' --compress-sections '.debug_str.dwo=zlib' \
  dwp5/libdwp5.so.dwp dwp5-zlib.dwp
pair dwp5-zlib dwp5/libdwp5.so dwp5-zlib.dwp
llvm-objcopy-19 --compress-sections '.debug_info.dwo=zstd' --compress-sections '.debug_str.dwo=zstd' \
  dwp4/libdwp4.so.dwp dwp4-zstd.dwp
pair dwp4-zstd dwp4/libdwp4.so dwp4-zstd.dwp
llvm-dwp-19 dwp5/x.dwo -o dwp5-partial.dwp
pair dwp5-partial dwp5/libdwp5.so dwp5-partial.dwp
ls -l "$out"
