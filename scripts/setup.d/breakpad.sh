# Mozilla's dump_syms (tests/breakpad): turns the test programs' DWARF into Breakpad .sym files so
# the Breakpad ingester is checked against real producer output. Installed with cargo from
# crates.io into .deps/breakpad/bin/dump_syms, pinned and --locked. Only the `cli` feature: the
# default `http` feature (symbol-server downloads) is not needed and adds a TLS stack to build.
# A cold build took 25 min wall clock (5 min CPU) on a busy 2-core machine.
# Sourced by scripts/setup.sh with `set -euo pipefail` and cwd = repo root. Idempotent: returns at
# once when the pinned version is installed.
breakpad_version=2.3.9
breakpad_dir=.deps/breakpad
if [[ "$("$breakpad_dir/bin/dump_syms" --version 2>/dev/null)" != "dump_syms $breakpad_version" ]]; then
  breakpad_cargo="$(command -v cargo || echo "$HOME/.cargo/bin/cargo")"
  mkdir -p "$breakpad_dir"
  echo "setup.d/breakpad.sh: building dump_syms $breakpad_version (several minutes)"
  "$breakpad_cargo" install dump_syms --version "$breakpad_version" --locked \
    --no-default-features --features cli --root "$breakpad_dir"
  "$breakpad_dir/bin/dump_syms" --version
fi
unset breakpad_version breakpad_dir breakpad_cargo
