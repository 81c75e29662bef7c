# Real libraries and obfuscators for the Java accuracy corpus (tests/proguard/accuracy_corpus_test.cc,
# docs/accuracy.md "Java"):
#   .deps/java-corpus/libs/         Commons Collections 3.2.2, Jackson 2.16.2 (databind, core,
#                                   annotations), kotlin-stdlib 2.4.21, kotlinx-coroutines-core-jvm
#                                   1.11.0 from Maven Central: obfuscated with the drivers
#   .deps/java-corpus/kotlinc/      the Kotlin 2.4.21 compiler (kotlin-compiler-embeddable) and
#                                   what it loads at run time, for the Kotlin driver
#                                   (tests/proguard/kotlin): run as
#                                   java -cp 'kotlinc/*' org.jetbrains.kotlin.cli.jvm.K2JVMCompiler
#   .deps/java-corpus/proguard6/    ProGuard 6.2.2 (net.sf.proguard on Maven Central)
#   .deps/java-corpus/r8/           R8 8.5.35 and 9.5.28 (Google's Maven repository; its
#                                   retrace is the reference for R8 builds)
# ProGuard 7 and its ReTrace come from setup.d/proguard.sh. Sourced by scripts/setup.sh with
# `set -euo pipefail` and cwd = repo root. Idempotent (stamp of the pinned versions). Needs mvn.
java_corpus_dir=.deps/java-corpus
java_corpus_stamp="$java_corpus_dir/.complete-cc3.2.2-jackson2.16.2-kotlin2.4.21-coroutines1.11.0-annotations13.0-pg6.2.2-r8-8.5.35-9.5.28"

# Copies the listed artifacts (groupId:artifactId:version, no transitive dependencies: the
# list is complete) from the repository at $2 into $java_corpus_dir/$1.
java_corpus_fetch() {
  local folder=$1 repository=$2
  shift 2
  mkdir -p "$java_corpus_dir/$folder"
  local deps="" coordinate group artifact version
  for coordinate in "$@"; do
    IFS=: read -r group artifact version <<<"$coordinate"
    deps+="<dependency><groupId>$group</groupId><artifactId>$artifact</artifactId><version>$version</version></dependency>"
  done
  cat >"$java_corpus_dir/$folder.pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>restack.setup</groupId><artifactId>$folder</artifactId><version>1</version>
  <packaging>pom</packaging>
  <repositories><repository><id>extra</id><url>$repository</url></repository></repositories>
  <dependencies>$deps</dependencies>
</project>
POM
  rm -f "$java_corpus_dir/$folder"/*.jar
  mvn -q -B -f "$java_corpus_dir/$folder.pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$folder" -DincludeScope=runtime -DexcludeTransitive=true
}

if [[ ! -f "$java_corpus_stamp" ]]; then
  if ! command -v mvn >/dev/null; then
    echo "setup.d/java_corpus.sh: 'mvn' is missing (apt-get install maven)" >&2
    return 1
  fi
  central=https://repo.maven.apache.org/maven2
  java_corpus_fetch libs "$central" commons-collections:commons-collections:3.2.2 \
    com.fasterxml.jackson.core:jackson-databind:2.16.2 com.fasterxml.jackson.core:jackson-core:2.16.2 \
    com.fasterxml.jackson.core:jackson-annotations:2.16.2 org.jetbrains.kotlin:kotlin-stdlib:2.4.21 \
    org.jetbrains.kotlinx:kotlinx-coroutines-core-jvm:1.11.0
  # The compiler's runtime dependencies as its pom names them (kotlin-reflect stays at the 1.6.10
  # it asks for), less kotlin-build-tools-api, which the command line compiler does not load, and
  # with what it loads but does not name: kotlinx-coroutines-core-jvm, and the nullability
  # annotations it writes (org.jetbrains:annotations 13.0, kotlin-stdlib's own dependency).
  java_corpus_fetch kotlinc "$central" org.jetbrains.kotlin:kotlin-compiler-embeddable:2.4.21 \
    org.jetbrains.kotlin:kotlin-stdlib:2.4.21 org.jetbrains.kotlin:kotlin-script-runtime:2.4.21 \
    org.jetbrains.kotlin:kotlin-reflect:1.6.10 org.jetbrains.kotlin:kotlin-daemon-embeddable:2.4.21 \
    org.jetbrains.kotlinx:kotlinx-coroutines-core-jvm:1.11.0 org.jetbrains:annotations:13.0
  java_corpus_fetch proguard6 "$central" net.sf.proguard:proguard-base:6.2.2
  java_corpus_fetch r8 https://maven.google.com com.android.tools:r8:8.5.35
  # Maven resolves one version of an artifact per project: the second R8 is fetched on its own
  # and moved beside the first.
  java_corpus_fetch r8-9.5.28 https://maven.google.com com.android.tools:r8:9.5.28
  mv "$java_corpus_dir/r8-9.5.28/r8-9.5.28.jar" "$java_corpus_dir/r8/"
  rm -rf "$java_corpus_dir/r8-9.5.28" "$java_corpus_dir/r8-9.5.28.pom.xml"
  unset central
  touch "$java_corpus_stamp"
fi
unset -f java_corpus_fetch
unset java_corpus_dir java_corpus_stamp
