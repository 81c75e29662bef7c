# Sourced by the benchmark-input builders (build_corpus.sh, build_bigdwarf.sh): fetches crates with
# cargo, their ordinary client, for the C/C++ sources they vendor.
#   fetch_crates DIR PACKAGE <<'TOML'
#   librocksdb-sys = { version = "=0.17.1", default-features = false }
#   TOML
# writes DIR/Cargo.toml (a package named PACKAGE depending on the lines read from stdin) and runs
# `cargo fetch`; the sources are then under ${CARGO_HOME:-$HOME/.cargo}/registry/src/*/.
fetch_crates() {
  local dir=$1 package=$2
  mkdir -p "$dir/src"
  {
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n[dependencies]\n' "$package"
    cat
  } > "$dir/Cargo.toml"
  : > "$dir/src/lib.rs"
  (cd "$dir" && cargo fetch --quiet)
}
