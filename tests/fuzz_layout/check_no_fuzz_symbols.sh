#!/usr/bin/env bash
# Fuzz code stays out of production (docs/design.md, "Testing"): no production library (the
# restack_* libraries under formats/, symbolstore/, grouping/, worker/, config/ other than the
# *_fuzz ones) and not the restack binary defines a symbol with "fuzz" in its name. Inline
# functions of third-party headers instantiated in our objects are not ours: fmt (through
# spdlog) has fmt::detail::abort_fuzzing_if, which unoptimized builds emit as a weak symbol.
#   check_no_fuzz_symbols.sh BUILD_DIR RESTACK_BINARY
set -euo pipefail
build_dir=$1
binary=$2
if [[ ! -x "$binary" ]]; then
  echo "no $binary: build the restack target first" >&2
  exit 1
fi
fuzz_symbols() { grep -i fuzz | grep -v -E ' (fmt|spdlog)::'; }
found=0
libraries=0
while IFS= read -r library; do
  libraries=$((libraries + 1))
  if symbols=$(nm -C --defined-only "$library" 2>/dev/null | fuzz_symbols); then
    echo "$library defines fuzz symbols:" >&2
    echo "$symbols" | head -5 >&2
    found=1
  fi
done < <(find "$build_dir"/formats "$build_dir"/symbolstore "$build_dir"/grouping "$build_dir"/worker \
           "$build_dir"/config -name 'librestack_*.a' ! -name '*fuzz*' 2>/dev/null)
if symbols=$(nm -C --defined-only "$binary" | fuzz_symbols); then
  echo "$binary defines fuzz symbols:" >&2
  echo "$symbols" | head -5 >&2
  found=1
fi
echo "checked $libraries production libraries and $binary"
exit $found
