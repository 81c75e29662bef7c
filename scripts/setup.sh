#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for Restack: Debian packages (compiler, LLVM 19, librdkafka,
# RocksDB, simdjson, …), then the test tools of scripts/setup.d/*.sh (Apache Kafka jars,
# ProGuard, npm packages and bundlers, SpiderMonkey, Helm) into .deps/. Idempotent: a second run
# only checks.
#
#   scripts/setup.sh            everything (what the tests need)
#   scripts/setup.sh --build    only what building and `restack demo` need
set -euo pipefail
cd "$(dirname "$0")/.."

only_build=false
[[ "${1:-}" == "--build" ]] && only_build=true

sudo_cmd=()
[[ "$(id -u)" -ne 0 ]] && sudo_cmd=(sudo)

packages=(
  build-essential cmake ninja-build pkg-config git curl ca-certificates unzip
  clang-19 lld-19 llvm-19 llvm-19-dev libclang-rt-19-dev clang-format-19
  librdkafka-dev librocksdb-dev libsimdjson-dev libspdlog-dev libfmt-dev libcli11-dev
  libyaml-cpp-dev libzstd-dev libzip-dev zlib1g-dev libcurl4-openssl-dev libssl-dev libjemalloc-dev libmicrohttpd-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev
)
if ! $only_build; then
  packages+=(kcat)
  packages+=(gcc-12 g++-12 libpng-dev googletest libc6-dbg)  # tests/native/native_accuracy_test.cc
  packages+=(libjavascriptcoregtk-4.0-bin)  # jsc: JavaScriptCore runs in tests/sourcemap/js_names_accuracy_test.cc
  packages+=(python3-venv)  # scripts/setup.d/spidermonkey.sh: SpiderMonkey through PyPI's pythonmonkey
  # tests/grouping_e2e/native_corpus_test.cc: aarch64 builds (glibc, libstdc++) run under qemu-user
  packages+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user)
  packages+=(gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf)  # armeabi-v7a rows of tests/native/native_accuracy_test.cc
  # The machine image may bring its own Java, Maven and Node.js; use Debian's only when absent.
  command -v java >/dev/null && command -v javac >/dev/null || packages+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null || packages+=(maven)
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if (( ${#missing[@]} > 0 )); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 update -q
  "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 install -y -q --no-install-recommends "${missing[@]}"
fi

# Rust builds the Swift demangler (formats/swift); Debian 12's rustc (1.63) is too old for it.
cargo_bin="$(command -v cargo || echo "$HOME/.cargo/bin/cargo")"
if [[ ! -x "$cargo_bin" ]]; then
  echo "setup: cargo (Rust 1.83 or later) is needed to build the Swift demangler; install Rust with" >&2
  echo "setup: rustup (https://rustup.rs), or build with -DRESTACK_SWIFT_DEMANGLER=OFF (Swift names stay mangled)" >&2
  exit 1
fi

if ! $only_build; then
  for step in scripts/setup.d/*.sh; do
    echo "setup: ${step#scripts/setup.d/}"
    ( set -euo pipefail; source "$step" )
  done
fi
echo "setup: done"
