# Real bundlers for the JavaScript grouping corpus (tests/grouping_e2e/js_corpus_test.cc), installed
# from the npm registry into .deps/bundlers/node_modules (their own folder, so their dependency
# tree never moves the pinned tools of setup.d/sourcemap.sh):
#   webpack                  webpack 5 (production mode minifies with its bundled terser plugin);
#                            driven through its Node API, so webpack-cli is not needed
#   rollup                   rollup 4 (its native binary comes as an optional npm dependency)
#   @rollup/plugin-terser    rollup's own minifier plugin
#   @rollup/plugin-commonjs, @rollup/plugin-node-resolve, @rollup/plugin-json
#                            rollup bundling CommonJS programs with npm packages (which
#                            require JSON files too; tests/sourcemap/js_names_accuracy_test.cc)
#   @swc/core                SWC's minifier (Next.js, Parcel), over an esbuild bundle in the same
#                            test; its native binary comes as an optional npm dependency
# Sourced by scripts/setup.sh with `set -euo pipefail` and cwd = repo root. Idempotent: returns at
# once when the stamp of the pinned versions is present. Needs node and npm.
bundlers_packages=(webpack@5.102.1 rollup@4.52.5 @rollup/plugin-terser@0.4.4 @rollup/plugin-commonjs@29.0.3
  @rollup/plugin-node-resolve@16.0.3 @rollup/plugin-json@6.1.0 @swc/core@1.16.22)
bundlers_dir=.deps/bundlers
bundlers_stamp="$bundlers_dir/.bundlers-$(echo "${bundlers_packages[*]}" | md5sum | cut -c1-12)"

if [[ ! -f "$bundlers_stamp" ]]; then
  for tool in node npm; do
    if ! command -v "$tool" >/dev/null; then
      echo "setup.d/bundlers.sh: '$tool' is missing (apt-get install nodejs npm)" >&2
      return 1
    fi
  done
  mkdir -p "$bundlers_dir"
  [[ -f "$bundlers_dir/package.json" ]] || echo '{"name":"restack-bundlers","private":true}' >"$bundlers_dir/package.json"
  npm install --prefix "$bundlers_dir" --no-audit --no-fund --save-exact --loglevel=error "${bundlers_packages[@]}"
  "$bundlers_dir/node_modules/.bin/rollup" --version >/dev/null
  node -e "require('$PWD/$bundlers_dir/node_modules/webpack')" >/dev/null
  node -e "require('$PWD/$bundlers_dir/node_modules/@swc/core')" >/dev/null
  touch "$bundlers_stamp"
fi
unset bundlers_packages bundlers_dir bundlers_stamp
