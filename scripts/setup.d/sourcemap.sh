# JavaScript tools for the source-map tests (tests/sourcemap) and benchmarks (loadtest/sourcemap),
# installed from the npm registry into .deps/node/node_modules:
#   esbuild, terser              real bundlers/minifiers that make the test bundles and their maps
#   acorn                        a real npm package bundled into the test apps
#   source-map                   Mozilla's reference consumer (positions, names)
#   @jridgewell/trace-mapping    the fastest JS consumer (benchmark baseline)
#   metro-symbolicate, metro-source-map, @babel/parser
#                                React Native's symbolicator; Metro's function maps
#                                (x_facebook_sources) and map composition
#   hermes-engine-cli            hermesc + the hermes VM of one release (bytecode maps and real
#                                Hermes stack traces: "at f (address at x.hbc:1:130)")
#   hermes-compiler              today's hermesc (current Hermes source-map shape)
# Sourced by scripts/setup.sh with `set -euo pipefail` and cwd = repo root. Idempotent: returns at
# once when the stamp of the pinned versions is present. Needs node and npm (apt-get install
# nodejs npm).
sourcemap_packages=(
  esbuild@0.25.0 terser@5.39.0 acorn@8.14.0 source-map@0.7.4 @jridgewell/trace-mapping@0.3.25
  metro-symbolicate@0.81.0 metro-source-map@0.81.0 @babel/parser@7.26.9
  hermes-engine-cli@0.11.0 hermes-compiler@260318099.0.6
)
sourcemap_dir=.deps/node
sourcemap_stamp="$sourcemap_dir/.sourcemap-$(echo "${sourcemap_packages[*]}" | md5sum | cut -c1-12)"

if [[ ! -f "$sourcemap_stamp" ]]; then
  for tool in node npm; do
    if ! command -v "$tool" >/dev/null; then
      echo "setup.d/sourcemap.sh: '$tool' is missing (apt-get install nodejs npm)" >&2
      return 1
    fi
  done
  mkdir -p "$sourcemap_dir"
  [[ -f "$sourcemap_dir/package.json" ]] || echo '{"name":"restack-deps","private":true}' >"$sourcemap_dir/package.json"
  # esbuild's postinstall only checks its platform package, which npm installs as an optional
  # dependency anyway.
  npm install --prefix "$sourcemap_dir" --no-audit --no-fund --save-exact --loglevel=error \
    "${sourcemap_packages[@]}"
  chmod +x "$sourcemap_dir"/node_modules/hermes-engine-cli/linux64-bin/* \
    "$sourcemap_dir"/node_modules/hermes-compiler/hermesc/linux64-bin/hermesc
  "$sourcemap_dir/node_modules/.bin/esbuild" --version >/dev/null
  "$sourcemap_dir/node_modules/hermes-engine-cli/linux64-bin/hermes" -version >/dev/null
  touch "$sourcemap_stamp"
fi
