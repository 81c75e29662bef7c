// End to end against a real obfuscator: Java classes compiled at test time, shrunk, optimized
// (inlining on) and obfuscated by ProGuard 7, run before and after; the obfuscated stack traces
// restored through ingest + ProguardResolver must equal the original ones. A second test checks
// the traces of a build with every optimization on against ProGuard's own ReTrace, and a third
// the class names inside ClassCastException messages against the original run.
// Needs javac/java 17 and the jars that scripts/setup.sh puts in .deps/proguard.
#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "formats/common/mapped_file.h"
#include "tests/proguard/java_run.h"
#include "tests/proguard/retrace_harness.h"

namespace restack::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kDeps = fs::path(RESTACK_DEPS_DIR) / "proguard";
const fs::path kJavaSources = fs::path(RESTACK_SOURCE_DIR) / "tests/proguard/java";
const fs::path kR8Jar = fs::path(RESTACK_DEPS_DIR) / "java-corpus/r8/r8-8.5.35.jar";  // setup.d/java_corpus.sh

void requireTools() {
  bool jars = fs::exists(kDeps / "lib") && fs::exists(kDeps / "retrace");
  ASSERT_TRUE(jars) << "ProGuard jars missing in " << kDeps << ": run scripts/setup.sh (scripts/setup.d/proguard.sh)";
  ASSERT_TRUE(run("javac -version") && run("java -version")) << "javac/java 17 missing: run scripts/setup.sh";
}

// Compiles the demo sources, obfuscates them with `optimizations`, and runs both builds.
struct Build {
  std::string original_trace;
  std::string obfuscated_trace;
  std::string mapping;
};

// `desugar`: the classes go through D8's desugaring first (lambdas become classes), as the
// Android Gradle plugin did before ProGuard when it still used ProGuard.
Expected<Build> buildAndRun(const fs::path& dir, const std::string& optimizations, const std::string& program_args = "",
                            bool desugar = false) {
  fs::create_directories(dir / "classes");
  std::string sources;
  for (const auto& entry : fs::recursive_directory_iterator(kJavaSources)) {
    if (entry.path().extension() == ".java") sources += " " + quote(entry.path());
  }
  if (auto out = run("javac -g -d " + quote(dir / "classes") + sources); !out) return out.error();
  if (auto out = run("cd " + quote(dir / "classes") + " && jar cf ../in.jar ."); !out) return out.error();
  fs::path injar = dir / "in.jar";
  if (desugar) {
    injar = dir / "desugared.jar";
    auto d8 = run("java -cp " + quote(kR8Jar) + " com.android.tools.r8.D8 --classfile --min-api 21 --lib " +
                  "\"$(dirname \"$(dirname \"$(readlink -f \"$(command -v java)\")\")\")\" --output " + quote(injar) +
                  " " + quote(dir / "in.jar"));
    if (!d8) return d8.error();
  }
  std::ofstream config(dir / "proguard.pro");
  config << "-injars " << injar.string() << "\n"
         << "-outjars " << (dir / "out.jar").string() << "\n"
         << "-libraryjars <java.home>/jmods/java.base.jmod(!**.jar;!module-info.class)\n"
         << "-keep public class org.restack.demo.Main { public static void main(java.lang.String[]); }\n"
         << "-keepattributes SourceFile,LineNumberTable\n"
         << "-renamesourcefileattribute SourceFile\n"
         << "-optimizationpasses 5\n"
         << "-allowaccessmodification\n"
         << optimizations << "\n"
         << "-printmapping " << (dir / "mapping.txt").string() << "\n"
         << "-dontwarn\n";
  config.close();
  auto proguard = run("java -cp " + quote(kDeps / "lib") + "'/*' proguard.ProGuard @" + quote(dir / "proguard.pro"));
  if (!proguard) return proguard.error();
  Build build;
  auto original = run("java -cp " + quote(dir / "classes") + " org.restack.demo.Main " + program_args);
  if (!original) return original.error();
  auto obfuscated = run("java -cp " + quote(dir / "out.jar") + " org.restack.demo.Main " + program_args);
  if (!obfuscated) return obfuscated.error();
  auto mapping = readFile((dir / "mapping.txt").string());
  if (!mapping) return mapping.error();
  build.original_trace = std::move(*original);
  build.obfuscated_trace = std::move(*obfuscated);
  build.mapping = std::move(*mapping);
  return build;
}

TEST(ProguardTools, RestoredTracesEqualTheOriginalRun) {
  requireTools();
  RetraceHarness harness;
  // Inlining, class merging and renaming on; the optimizations that rename a method to
  // "name$hash" in the mapping itself (parameter removal, specialization) are off, since no
  // retrace can recover a name the mapping does not hold.
  auto build = buildAndRun(harness.dir() / "java",
                           "-optimizations !method/removal/parameter,!method/specialization/**,!method/propagation/**");
  ASSERT_TRUE(build) << build.error().message();
  ASSERT_NE(build->obfuscated_trace, build->original_trace);
  ASSERT_NE(build->mapping.find("1:"), std::string::npos);
  // ProGuard really inlined across methods: some minified range maps to several frames.
  ASSERT_TRUE(std::regex_search(build->mapping, std::regex(R"(\n +(\d+:\d+):[^\n]+\n +\1:)"))) << build->mapping;
  auto report = harness.ingest(build->mapping, "demo", "1.0");
  ASSERT_TRUE(report) << report.error().describe();
  std::string restored = harness.retrace(build->obfuscated_trace, {"demo", "1.0", "android", {}});
  EXPECT_EQ(expandMoreLines(restored), expandMoreLines(build->original_trace)) << "mapping:\n"
                                                                               << build->mapping << "\nobfuscated:\n"
                                                                               << build->obfuscated_trace;
}

// ClassCastException messages name the classes involved ("class a.b cannot be cast to class
// a.c (a.b and a.c are in unnamed module of loader 'app')"): restored, they must read as the
// original run's messages.
TEST(ProguardTools, ClassNamesInsideExceptionMessagesEqualTheOriginalRun) {
  requireTools();
  RetraceHarness harness;
  auto build = buildAndRun(harness.dir() / "java",
                           "-optimizations !method/removal/parameter,!method/specialization/**,!method/propagation/**",
                           "messages");
  ASSERT_TRUE(build) << build.error().message();
  ASSERT_NE(build->original_trace.find("class org.restack.demo.Cart cannot be cast to class"), std::string::npos)
      << build->original_trace;
  ASSERT_EQ(build->obfuscated_trace.find("demo.Cart"), std::string::npos) << build->obfuscated_trace;
  auto report = harness.ingest(build->mapping, "demo", "3.0");
  ASSERT_TRUE(report) << report.error().describe();
  std::string restored = harness.retrace(build->obfuscated_trace, {"demo", "3.0", "android", {}});
  EXPECT_EQ(expandMoreLines(restored), expandMoreLines(build->original_trace)) << "mapping:\n"
                                                                               << build->mapping << "\nobfuscated:\n"
                                                                               << build->obfuscated_trace;
}

// With every optimization on, ProGuard specializes castToStage(Object) and castToCart(Object)
// (their argument types narrowed) and renames them "castToStage$5d527804" in the mapping itself.
// ReTrace prints that name; the original run printed "castToStage", and so must the restored
// trace.
TEST(ProguardTools, SpecializedMethodNamesEqualTheOriginalRun) {
  requireTools();
  RetraceHarness harness;
  auto build = buildAndRun(harness.dir() / "java", "", "messages");
  ASSERT_TRUE(build) << build.error().message();
  // The build really holds specialized names, and the obfuscated run really passes through them.
  ASSERT_TRUE(std::regex_search(build->mapping, std::regex(R"( castTo(Cart|Stage)\$[0-9a-f]{5,8}\()")))
      << build->mapping;
  auto report = harness.ingest(build->mapping, "demo", "4.0");
  ASSERT_TRUE(report) << report.error().describe();
  std::string restored = harness.retrace(build->obfuscated_trace, {"demo", "4.0", "android", {}});
  ASSERT_NE(restored.find("org.restack.demo.Main.castToCart(Main.java:"), std::string::npos) << restored;
  EXPECT_EQ(expandMoreLines(restored), expandMoreLines(build->original_trace)) << "mapping:\n"
                                                                               << build->mapping << "\nobfuscated:\n"
                                                                               << build->obfuscated_trace;
}

// D8 turns every lambda into a class ("Main$$ExternalSyntheticLambda2", source file
// "D8$$SyntheticClass") whose run() calls the lambda body; ProGuard then maps those classes like
// any other, and the obfuscated run prints their frames ("at a.d.run(SourceFile)"). The JVM's own
// lambda proxies are hidden frames, so the original run never printed them: restored, they are
// dropped, and the traces equal the original run's (ReTrace prints them).
TEST(ProguardTools, DesugaredLambdaFramesAreDroppedAsInTheOriginalRun) {
  requireTools();
  ASSERT_TRUE(fs::exists(kR8Jar)) << kR8Jar << " missing: run scripts/setup.sh (scripts/setup.d/java_corpus.sh)";
  RetraceHarness harness;
  auto build = buildAndRun(harness.dir() / "java", "", "", true);
  ASSERT_TRUE(build) << build.error().message();
  ASSERT_NE(build->mapping.find("$$ExternalSyntheticLambda"), std::string::npos) << build->mapping;
  ASSERT_TRUE(std::regex_search(build->obfuscated_trace, std::regex(R"(\.run\(SourceFile\))")))
      << build->obfuscated_trace;
  auto report = harness.ingest(build->mapping, "demo", "5.0");
  ASSERT_TRUE(report) << report.error().describe();
  std::string restored = harness.retrace(build->obfuscated_trace, {"demo", "5.0", "android", {}});
  EXPECT_EQ(expandMoreLines(restored), expandMoreLines(build->original_trace)) << "mapping:\n"
                                                                               << build->mapping << "\nobfuscated:\n"
                                                                               << build->obfuscated_trace;
}

// A class compiled without javac's SourceFile attribute (as kotlinc writes its multifile facades)
// prints "Unknown Source", and R8 8.0 and later leave its `sourceFile` entry out of the mapping.
// Restored, its frames read "Unknown Source" too, with the lines the class has: the same program
// compiled with every attribute gives them (the JVM prints no line without a file; Android
// prints "Unknown Source:N"). A class with its file keeps it.
TEST(ProguardTools, FramesOfAClassWithoutASourceFileRestoreToUnknownSource) {
  requireTools();
  const fs::path r8_jars[] = {kR8Jar, kR8Jar.parent_path() / "r8-9.5.28.jar"};
  for (const fs::path& r8 : r8_jars) {
    ASSERT_TRUE(fs::exists(r8)) << r8 << " missing: run scripts/setup.sh (scripts/setup.d/java_corpus.sh)";
    RetraceHarness harness;
    const fs::path dir = harness.dir() / "unknown-source";
    fs::create_directories(dir / "src/p");
    std::ofstream(dir / "src/p/Checks.java")
        << "package p;\n"
           "public class Checks {\n"
           "  public static int positive(int value) {\n"
           "    if (value > 2) throw new IllegalStateException(\"too big: \" + value);\n"
           "    return value;\n"
           "  }\n"
           "}\n";
    std::ofstream(dir / "src/p/Main.java") << "package p;\n"
                                              "public class Main {\n"
                                              "  static int twice(int value) {\n"
                                              "    return Checks.positive(value) * 2;\n"
                                              "  }\n"
                                              "  public static void main(String[] args) {\n"
                                              "    System.out.println(twice(args.length + 3));\n"
                                              "  }\n"
                                              "}\n";
    const std::string sources = quote(dir / "src/p/Checks.java") + " " + quote(dir / "src/p/Main.java");
    // The truth for the lines: every attribute. The program as shipped: Main without its file.
    ASSERT_TRUE(run("javac -g -d " + quote(dir / "full") + " " + sources));
    ASSERT_TRUE(run("javac -g -d " + quote(dir / "shipped") + " " + quote(dir / "src/p/Checks.java") +
                    " && javac -g:lines,vars -cp " + quote(dir / "shipped") + " -d " + quote(dir / "shipped") + " " +
                    quote(dir / "src/p/Main.java")));
    ASSERT_TRUE(run("cd " + quote(dir / "shipped") + " && jar cf ../in.jar ."));
    std::ofstream(dir / "rules.pro") << "-keep class p.Main { public static void main(java.lang.String[]); }\n"
                                        "-keepattributes SourceFile,LineNumberTable\n";
    auto r8_run = run("java -cp " + quote(r8) + " com.android.tools.r8.R8 --classfile --release --lib " +
                      "\"$(dirname \"$(dirname \"$(readlink -f \"$(command -v java)\")\")\")\" --output " +
                      quote(dir / "out.jar") + " --pg-conf " + quote(dir / "rules.pro") + " --pg-map-output " +
                      quote(dir / "mapping.txt") + " " + quote(dir / "in.jar"));
    ASSERT_TRUE(r8_run) << r8_run.error().message();
    // Each run exits with the exception: its trace is the command's output, the error's text.
    auto trace = [](const std::string& command) {
      auto out = run(command);
      return out ? *out : out.error().message().substr(out.error().message().find('\n') + 1);
    };
    const std::string truth = trace("java -cp " + quote(dir / "full") + " p.Main");
    const std::string shipped = trace("java -cp " + quote(dir / "shipped") + " p.Main");
    const std::string obfuscated = trace("java -cp " + quote(dir / "out.jar") + " p.Main");
    ASSERT_NE(shipped.find("p.Main.twice(Unknown Source)"), std::string::npos) << shipped;
    auto mapping = readFile((dir / "mapping.txt").string());
    ASSERT_TRUE(mapping);
    ASSERT_TRUE(harness.ingest(*mapping, "unknown-source", r8.filename().string()));
    const std::string restored = harness.retrace(obfuscated, {"unknown-source", r8.filename().string(), "android", {}});
    const std::string expected = std::regex_replace(truth, std::regex(R"(\(Main\.java:)"), "(Unknown Source:");
    EXPECT_EQ(restored, expected) << r8 << "\nmapping:\n" << *mapping << "\nobfuscated:\n" << obfuscated;
    EXPECT_EQ(std::regex_replace(restored, std::regex(R"(\(Unknown Source:\d+\))"), "(Unknown Source)"), shipped) << r8;
  }
}

// Two methods ProGuard renames to one name (their descriptors differ), printed without a line
// number (no LineNumberTable kept): the mapping cannot tell them apart, so the frame is restored
// as ambiguous with both methods as candidates.
TEST(ProguardTools, MethodsSharingAnObfuscatedNameAreAmbiguousWithTheirCandidates) {
  requireTools();
  RetraceHarness harness;
  const fs::path dir = harness.dir() / "overloads";
  fs::create_directories(dir / "src/org/restack/amb");
  std::ofstream(dir / "src/org/restack/amb/Main.java")
      << "package org.restack.amb;\n"
         "public class Main {\n"
         "  static int twice(int x) { if (x < 0) throw new IllegalStateException(\"int\"); return x * 2; }\n"
         "  static long thrice(long x) { if (x < 0) throw new IllegalStateException(\"long\"); return x * 3; }\n"
         "  public static void main(String[] args) { System.out.println(twice(3) + thrice(-4L)); }\n"
         "}\n";
  std::ofstream(dir / "proguard.pro") << "-injars " << (dir / "in.jar").string() << "\n-outjars "
                                      << (dir / "out.jar").string()
                                      << "\n-libraryjars <java.home>/jmods/java.base.jmod(!**.jar;!module-info.class)\n"
                                         "-keep public class org.restack.amb.Main { public static void "
                                         "main(java.lang.String[]); }\n"
                                         "-dontoptimize\n-keepattributes SourceFile\n-renamesourcefileattribute "
                                         "SourceFile\n-printmapping "
                                      << (dir / "mapping.txt").string() << "\n";
  ASSERT_TRUE(run("javac -d " + quote(dir / "classes") + " " + quote(dir / "src/org/restack/amb/Main.java")));
  ASSERT_TRUE(run("cd " + quote(dir / "classes") + " && jar cf ../in.jar ."));
  auto proguard = run("java -cp " + quote(kDeps / "lib") + "'/*' proguard.ProGuard @" + quote(dir / "proguard.pro"));
  ASSERT_TRUE(proguard) << proguard.error().message();
  auto mapping = readFile((dir / "mapping.txt").string());
  ASSERT_TRUE(mapping) << mapping.error().message();
  // Both methods really went to one obfuscated name (ProGuard reuses names across descriptors).
  std::smatch int_name, long_name;
  ASSERT_TRUE(std::regex_search(*mapping, int_name, std::regex(R"(int twice\(int\) -> (\w+))"))) << *mapping;
  ASSERT_TRUE(std::regex_search(*mapping, long_name, std::regex(R"(long thrice\(long\) -> (\w+))"))) << *mapping;
  ASSERT_EQ(int_name[1], long_name[1]) << *mapping;
  // The obfuscated run prints the frame without a line.
  auto obfuscated = run("java -cp " + quote(dir / "out.jar") + " org.restack.amb.Main 2>&1 || true");
  ASSERT_TRUE(obfuscated) << obfuscated.error().message();
  std::smatch frame;
  ASSERT_TRUE(std::regex_search(*obfuscated, frame, std::regex(R"(\tat [\w.$]+\((SourceFile|Unknown Source)\))")))
      << *obfuscated;
  ASSERT_TRUE(harness.ingest(*mapping, "demo", "6.0"));
  auto results = harness.retraceResults(frame.str(), {"demo", "6.0", "android", {}});
  ASSERT_TRUE(results) << results.error().describe();
  ASSERT_EQ(results->size(), 1u);
  const FrameLookup& lookup = (*results)[0].lookup;
  EXPECT_EQ(lookup.status, FrameStatus::kSymbolicated);
  EXPECT_EQ(lookup.reason, FrameReason::kAmbiguous) << frameReasonName(lookup.reason);
  std::vector<std::string> candidates;
  if (!lookup.frames.empty()) candidates.push_back(lookup.frames.front().function);
  for (const auto& alternative : lookup.alternatives) candidates.push_back(alternative.front().function);
  std::sort(candidates.begin(), candidates.end());
  EXPECT_EQ(candidates, (std::vector<std::string>{"org.restack.amb.Main.thrice", "org.restack.amb.Main.twice"}))
      << *mapping << "\n"
      << frame.str();
}

TEST(ProguardTools, AgreesWithProguardRetraceOnFullyOptimizedBuild) {
  requireTools();
  RetraceHarness harness;
  auto build = buildAndRun(harness.dir() / "java", "");
  ASSERT_TRUE(build) << build.error().message();
  {
    std::ofstream(harness.dir() / "obfuscated.txt") << build->obfuscated_trace;
  }
  auto reference = run("java -cp " + quote(kDeps / "retrace") + "'/*' proguard.retrace.ReTrace " +
                       quote(harness.dir() / "java" / "mapping.txt") + " " + quote(harness.dir() / "obfuscated.txt"));
  ASSERT_TRUE(reference) << reference.error().message();
  auto report = harness.ingest(build->mapping, "demo", "2.0");
  ASSERT_TRUE(report) << report.error().describe();
  std::string restored = harness.retrace(build->obfuscated_trace, {"demo", "2.0", "android", {}});
  // Where ReTrace prints a specialized method's "name$<hex>" from the mapping, Restack prints the
  // source name (SpecializedMethodNamesEqualTheOriginalRun): compare with that difference removed.
  std::string expected = std::regex_replace(*reference, std::regex(R"(\$[0-9a-f]{5,8}\()"), "(");
  EXPECT_EQ(restored, expected) << "mapping:\n" << build->mapping;
}

}  // namespace
}  // namespace restack::testing
