#!/usr/bin/env bash
# Builds the seed corpus of fuzz_native: small real symbol files of every kind the native ingest
# reads, compiled with clang-19 from a few lines of C / C++ / Objective-C (no SDK, no NDK).
#   aarch64 .so: DWARF 5; DWARF 4 with zlib-compressed sections; stripped; separate debug file
#   arm64 Mach-O dylib (Objective-C class) + its dSYM companion; fat arm64 + x86_64 dylib
#   aarch64 .so with a clang-assembled .S (functions as DW_TAG_label); split DWARF without its .dwo
# Usage: tests/native/make_fuzz_seeds.sh OUT_DIR   (then: fuzz_native -max_len=100000 CORPUS OUT_DIR)
set -euo pipefail
out=$(mkdir -p "$1" && cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cp "$here/fixtures/seed.c" x.c  # the C both seed scripts compile
cat > y.cc <<'CXX'
template <typename T> struct Box { T v; T get() const { return v + 1; } };
namespace ns { __attribute__((noinline)) int twice(int x) { Box<int> b{x}; return b.get() * 2; } }
extern "C" int cxx_entry(int x) { return ns::twice(x) + Box<long>{x}.get(); }
CXX
cat > z.m <<'OBJC'
__attribute__((objc_root_class)) @interface Root { } + (int)value; - (int)twice:(int)x; @end
@implementation Root + (int)value { return 7; } - (int)twice:(int)x { return x * 2; } @end
OBJC
android="--target=aarch64-linux-android24 -fPIC -ffreestanding -nostdlibinc"
clang-19 $android -g -O2 -c x.c -o x.o
clang++-19 $android -g -O2 -c y.cc -o y.o
clang-19 $android -shared -nostdlib -fuse-ld=lld -Wl,--build-id x.o y.o -o "$out/libx5.so"
clang-19 $android -gdwarf-4 -O2 -c x.c -o x4.o
clang-19 $android -shared -nostdlib -fuse-ld=lld -Wl,--build-id -Wl,--compress-debug-sections=zlib \
  x4.o -o "$out/libx4z.so"
llvm-strip-19 "$out/libx5.so" -o "$out/libx5.stripped.so"
llvm-objcopy-19 --only-keep-debug "$out/libx5.so" "$out/libx5.debug"
ios="--target=arm64-apple-ios14"
clang-19 $ios -g -O2 -c x.c -o mx.o
clang-19 $ios -g -O2 -fobjc-runtime=ios-14 -c z.m -o mz.o
clang-19 $ios -fuse-ld=lld -dylib -shared -nostdlib -Wl,-undefined,dynamic_lookup mx.o mz.o -o libm.dylib
dsymutil-19 libm.dylib -o libm.dSYM
cp libm.dylib "$out/libm.dylib"
cp libm.dSYM/Contents/Resources/DWARF/libm.dylib "$out/libm.dsym.macho"
clang-19 --target=x86_64-apple-macos12 -g -O2 -c x.c -o xx.o
clang-19 --target=x86_64-apple-macos12 -fuse-ld=lld -dylib -shared -nostdlib \
  -Wl,-undefined,dynamic_lookup xx.o -o libx86.dylib
llvm-lipo-19 -create libm.dylib libx86.dylib -output "$out/libfat.dylib"
cp "$here/fixtures/checksum.S" w.S
clang-19 $android -g -c w.S -o w.o
clang-19 $android -shared -nostdlib -fuse-ld=lld -Wl,--build-id x.o w.o -o "$out/libasm.so"
clang-19 $android -g -gsplit-dwarf -O2 -c x.c -o xs.o
clang-19 $android -shared -nostdlib -fuse-ld=lld -Wl,--build-id xs.o -o "$out/libsplit.so"
ls -l "$out"
