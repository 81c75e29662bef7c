# Mozilla's dump_syms (tests/breakpad): turns the test programs' DWARF into Breakpad .sym files so
# the Breakpad ingester is checked against real producer output. Installed with cargo from
# crates.io into .deps/breakpad/bin/dump_syms, pinned and --locked. Only the `cli` feature: the
# default `http` feature (symbol-server downloads) is not needed and adds a TLS stack to build.
# It only turns a few small test programs into .sym files, so it is built at opt-level 1 without
# debug info to shorten setup on a fresh machine (at the crate's default opt-level 3 the cold
# build took 2.5 min of a 33-minute CI run on 2 cores).
# Sourced by scripts/setup.sh with `set -euo pipefail` and cwd = repo root. Idempotent: returns at
# once when the pinned version is installed.
breakpad_version=2.3.9
breakpad_dir=.deps/breakpad
if [[ "$("$breakpad_dir/bin/dump_syms" --version 2>/dev/null)" != "dump_syms $breakpad_version" ]]; then
  breakpad_cargo="$(command -v cargo || echo "$HOME/.cargo/bin/cargo")"
  mkdir -p "$breakpad_dir"
  echo "setup.d/breakpad.sh: building dump_syms $breakpad_version (several minutes)"
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_DEBUG=false \
    "$breakpad_cargo" install dump_syms --version "$breakpad_version" --locked \
    --no-default-features --features cli --root "$breakpad_dir"
  "$breakpad_dir/bin/dump_syms" --version
fi
unset breakpad_version breakpad_dir breakpad_cargo
