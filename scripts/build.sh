#!/usr/bin/env bash
# Configures and builds Restack with clang-19 and Ninja.
#   scripts/build.sh BUILD_DIR [cmake -D options…] [--target T]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
cmake_args=()
build_args=()
while (( $# > 0 )); do
  if [[ "$1" == "--target" ]]; then build_args+=(--target "$2"); shift 2; else cmake_args+=("$1"); shift; fi
done
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir" -j"$(nproc)" "${build_args[@]}"
