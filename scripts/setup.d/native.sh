# Native symbolication tools (tests/native, loadtest/native). All are Debian 12 packages:
#   clang-19, lld-19 (ld.lld-19, ld64.lld-19)     build the aarch64 .so / arm64 Mach-O test binaries
#   llvm-19 (dsymutil-19, llvm-lipo-19, llvm-symbolizer-19, llvm-gsymutil-19, llvm-objcopy-19,
#            llvm-strip-19, llvm-dwarfdump-19)    dSYMs, fat files, the reference symbolizer
# plus .deps/native/bin/lipo -> llvm-lipo-19, because dsymutil-19 calls `lipo` for fat files.
# Sourced by scripts/setup.sh with `set -euo pipefail` and cwd = repo root. Idempotent and fast
# when everything is present. The benchmark corpus (loadtest/native/build_corpus.sh) is not built
# here: it takes tens of minutes and only benchmarks need it.
native_missing=()
for native_tool in clang-19 ld.lld-19 ld64.lld-19 dsymutil-19 llvm-lipo-19 llvm-symbolizer-19 \
                   llvm-gsymutil-19 llvm-objcopy-19 llvm-strip-19 llvm-dwarfdump-19; do
  command -v "$native_tool" >/dev/null || native_missing+=("$native_tool")
done
if (( ${#native_missing[@]} > 0 )); then
  echo "setup.d/native.sh: installing clang-19 lld-19 llvm-19 (missing: ${native_missing[*]})"
  apt-get -o DPkg::Lock::Timeout=900 install -y clang-19 lld-19 llvm-19
fi
mkdir -p .deps/native/bin
[[ -L .deps/native/bin/lipo ]] || ln -sf "$(command -v llvm-lipo-19)" .deps/native/bin/lipo
unset native_missing native_tool
