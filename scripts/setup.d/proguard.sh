# ProGuard 7 (the obfuscator) and ProGuard's ReTrace from Maven Central, for the proguard tests
# (tests/proguard) and benchmarks (loadtest/proguard):
#   .deps/proguard/lib/      proguard-base + proguard-core + their runtime dependencies
#   .deps/proguard/retrace/  proguard-retrace (Maven Central carries only 7.1.0-beta5 of it) and
#                            its own dependencies, kept apart so the two versions never mix
# Sourced by scripts/setup.sh with `set -euo pipefail` and cwd = repo root. Idempotent: returns at
# once when the stamp of the pinned versions is present. Needs mvn and JDK 17 (javac, java).
proguard_version=7.7.0
proguard_retrace_version=7.1.0-beta5
proguard_dir=.deps/proguard
proguard_stamp="$proguard_dir/.complete-$proguard_version-$proguard_retrace_version"

# Writes a throwaway pom that depends on one artifact and copies it with every transitive
# runtime jar into $proguard_dir/<folder>.
proguard_fetch() {
  local folder=$1 artifact=$2 version=$3
  mkdir -p "$proguard_dir/$folder"
  cat >"$proguard_dir/$folder.pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>restack.setup</groupId><artifactId>$folder</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>com.guardsquare</groupId><artifactId>$artifact</artifactId><version>$version</version></dependency>
  </dependencies>
</project>
POM
  rm -f "$proguard_dir/$folder"/*.jar
  mvn -q -B -f "$proguard_dir/$folder.pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$folder" -DincludeScope=runtime
}

if [[ ! -f "$proguard_stamp" ]]; then
  for tool in mvn javac java; do
    if ! command -v "$tool" >/dev/null; then
      echo "setup.d/proguard.sh: '$tool' is missing (apt-get install maven openjdk-17-jdk-headless)" >&2
      return 1
    fi
  done
  proguard_fetch lib proguard-base "$proguard_version"
  proguard_fetch retrace proguard-retrace "$proguard_retrace_version"
  touch "$proguard_stamp"
fi
unset -f proguard_fetch
unset proguard_version proguard_retrace_version proguard_dir proguard_stamp
