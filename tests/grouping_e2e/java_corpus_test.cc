// A generated corpus of real Java crashes with known true groups, through Restack's pipeline.
//
// The test writes an app of `kSites` crash sites (each a chain of three app methods in one of
// `kFeatures` classes, ending in one of eight kinds of crash: a JDK parse, an app throw, an
// index error, a real Jackson parse error, a lambda run synchronously, a static-initializer
// lambda run on its own thread (the only app frame is the lambda), an anonymous class, and a
// wrapped cause), reached through `kPaths` call paths that differ above the site's chain. It
// compiles it once with javac and obfuscates it three ways: ProGuard 7 with two different
// dictionaries and R8 (release, class files). Every build runs every (site, path) in one JVM
// and prints the printStackTrace() text; every trace becomes two raw events (the exception
// stated in the event, and in the text only), restored against that build's mapping.
//
// The true group of an event is the crash site it came from (the site number the program
// printed before the trace); nothing here computes or writes an expected fingerprint. The table
// it prints is the one in docs/grouping.md.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "tests/grouping_e2e/e2e_support.h"

namespace restack::grouping_e2e {
namespace {

constexpr int kSites = 420;
constexpr int kFeatures = 30;
constexpr int kPaths = 4;
constexpr int kKinds = 8;
const char* kKindNames[kKinds] = {"jdk parse",   "app throw",     "index",           "jackson parse",
                                  "sync lambda", "thread lambda", "anonymous class", "wrapped cause"};

int kindOf(int site) {
  return (site / kFeatures) % kKinds;
}

// The statement that crashes at `site`; `x` is the path number (>= 0).
std::string crashStatement(int site) {
  const std::string n = std::to_string(site);
  switch (kindOf(site)) {
    case 0:
      return "Integer.parseInt(\"n\" + x);";
    case 1:
      return "throw new IllegalStateException(\"state \" + x + \" of site " + n + "\");";
    case 2:
      return "new java.util.ArrayList<Integer>(java.util.List.of(1)).get(x + 3);";
    case 3:
      return "try { new com.fasterxml.jackson.databind.ObjectMapper().readTree(\"{\\\"a\\\":\" + x + \",\"); }"
             " catch (java.io.IOException e) { throw new java.io.UncheckedIOException(e); }";
    case 4:
      return "java.util.function.IntUnaryOperator op = v -> Integer.parseInt(\"v\" + v);\n    op.applyAsInt(x);";
    case 5:
      return "Main.runOnThread(R" + n + ");";
    case 6:
      return "new Runnable() { public void run() { Object o = x > -1 ? null : \"a\"; o.hashCode(); } }.run();";
    default:
      return "try { java.time.LocalDate.parse(\"w\" + x); } catch (RuntimeException e) {"
             " throw new RuntimeException(\"wrap \" + x, e); }";
  }
}

// Static lambdas run alone on a thread, two in each feature class: the lambda is the only app
// frame, its name is the same for every static lambda of the class (lambda$static$N with the
// number dropped), and every one throws NumberFormatException; only the JDK function below it
// that threw tells the sites apart.
std::string threadLambda(int site) {
  const std::string n = std::to_string(site);
  static const char* kCalls[] = {"Integer.parseInt(\"s\")", "Long.parseLong(\"s\")", "Double.parseDouble(\"s\")",
                                 "new java.math.BigDecimal(\"s\")"};
  return "  static final Runnable R" + n + " = () -> System.out.println(" + kCalls[(site / (kFeatures * kKinds)) % 4] +
         ");\n";
}

std::map<std::string, std::string> appSources() {
  std::map<std::string, std::string> files;
  for (int k = 0; k < kFeatures; ++k) {
    std::ostringstream java;
    java << "package com.shop.f" << k << ";\nimport com.shop.Main;\npublic class Feature" << k << " {\n";
    for (int site = k; site < kSites; site += kFeatures) {
      if (kindOf(site) == 5) java << threadLambda(site);
    }
    for (int site = k; site < kSites; site += kFeatures) {
      java << "  public static void entry" << site << "(int x) { step" << site << "(x + 1); }\n"
           << "  static void step" << site << "(int x) { site" << site << "(x - 1); }\n"
           << "  static void site" << site << "(int x) {\n    " << crashStatement(site) << "\n  }\n";
    }
    java << "}\n";
    files["com/shop/f" + std::to_string(k) + "/Feature" + std::to_string(k) + ".java"] = java.str();
  }
  std::ostringstream router;
  router
      << "package com.shop;\npublic class Router {\n  public static void go(int site, int x) {\n    switch (site) {\n";
  for (int site = 0; site < kSites; ++site) {
    router << "      case " << site << ": com.shop.f" << site % kFeatures << ".Feature" << site % kFeatures << ".entry"
           << site << "(x); break;\n";
  }
  router << "      default: break;\n    }\n  }\n}\n";
  files["com/shop/Router.java"] = router.str();
  // Call paths: one or two screen hops above the router.
  for (int p = 0; p < kPaths; ++p) {
    std::ostringstream screen;
    screen << "package com.shop.ui;\npublic class Screen" << p << " {\n"
           << "  public static void open(int site) { "
           << (p % 2 ? "prepare(site);" : "com.shop.Router.go(site, " + std::to_string(p) + ");")
           << " }\n  static void prepare(int site) { com.shop.Router.go(site, " << p << "); }\n}\n";
    files["com/shop/ui/Screen" + std::to_string(p) + ".java"] = screen.str();
  }
  std::ostringstream main;
  main << "package com.shop;\npublic class Main {\n"
       << "  public static void runOnThread(Runnable task) {\n"
       << "    Thread thread = new Thread(task, \"worker\");\n"
       << "    thread.setUncaughtExceptionHandler((t, e) -> e.printStackTrace(System.out));\n"
       << "    thread.start();\n"
       << "    try { thread.join(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }\n"
       << "  }\n"
       << "  public static void main(String[] args) {\n"
       << "    for (int site = 0; site < " << kSites << "; ++site) {\n"
       << "      for (int path = 0; path < " << kPaths << "; ++path) {\n"
       << "        System.out.println(\"@@event \" + site + \" \" + path);\n"
       << "        try {\n"
       << "          switch (path) {\n";
  for (int p = 0; p < kPaths; ++p)
    main << "            case " << p << ": com.shop.ui.Screen" << p << ".open(site); break;\n";
  main << "            default: break;\n          }\n"
       << "        } catch (Throwable t) { t.printStackTrace(System.out); }\n"
       << "      }\n    }\n    System.out.println(\"@@end\");\n  }\n}\n";
  files["com/shop/Main.java"] = main.str();
  return files;
}

struct Trace {
  int site = -1;
  int path = -1;
  std::string text;
};

std::vector<Trace> splitTraces(const std::string& output) {
  std::vector<Trace> traces;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("@@event ")) {
      Trace trace;
      if (std::sscanf(line.c_str(), "@@event %d %d", &trace.site, &trace.path) != 2) continue;
      traces.push_back(trace);
    } else if (line.starts_with("@@end")) {
      break;
    } else if (!traces.empty()) {
      traces.back().text += line + "\n";
    }
  }
  return traces;
}

// "<source> | frame | frame" of one outcome, to show what a split or merge hashed.
std::string hashedFrames(const Outcome& outcome) {
  std::string out = outcome.source + " " + outcome.exception_type;
  for (const std::string& frame : outcome.frames) out += " | " + frame;
  return out;
}

TEST(JavaCorpus, RealBuildsGroupByCrashSite) {
  for (const char* tool : {"javac", "java", "jar"}) {
    if (!requireTool(tool)) return;
  }
  const std::string proguard = kDepsDir + "/proguard/lib";
  const std::string corpus = kDepsDir + "/java-corpus";
  ASSERT_TRUE(std::filesystem::exists(proguard)) << proguard << ": run scripts/setup.sh";
  ASSERT_TRUE(std::filesystem::exists(corpus + "/r8")) << corpus << ": run scripts/setup.sh";
  const std::string jackson = corpus + "/libs/jackson-databind-2.16.2.jar:" + corpus +
                              "/libs/jackson-core-2.16.2.jar:" + corpus + "/libs/jackson-annotations-2.16.2.jar";
  auto dir = TempDir::create("restack-grouping-java-corpus-");
  ASSERT_TRUE(dir) << dir.error().message();
  const std::string root = dir->path();
  for (const auto& [path, text] : appSources()) writeFile(root + "/src/" + path, text);
  ASSERT_TRUE(runOrFail(root, "javac --release 17 -g -cp '" + jackson +
                                  "' -d classes $(find src -name '*.java') && jar cf in.jar -C classes ."));

  const std::string keep =
      "-keep class com.shop.Main { public static void main(java.lang.String[]); }\n"
      "-keepattributes SourceFile,LineNumberTable\n-renamesourcefileattribute SourceFile\n-dontwarn **\n";
  const std::string library_jars = replaceAll(jackson, ":", "\n-libraryjars ");
  struct Build {
    std::string name;
    std::string command;
  };
  const std::vector<Build> builds = {
      {"pg7-a",
       "printf 'alpha\\nbravo\\ncharlie\\ndelta\\necho\\n' > dict.txt && printf '%s' \"$CONF\" > pg.pro && "
       "java -cp '" +
           proguard + "/*' proguard.ProGuard @pg.pro"},
      {"pg7-b",
       "printf 'zulu\\nyankee\\nxray\\nwhiskey\\nvictor\\n' > dict.txt && printf '%s' \"$CONF\" > pg.pro && "
       "java -cp '" +
           proguard + "/*' proguard.ProGuard @pg.pro"},
      {"r8",
       "printf '%s' \"$R8CONF\" > r8.pro && java -cp '" + corpus +
           "/r8/r8-8.5.35.jar' com.android.tools.r8.R8 --release --classfile --output out.jar --pg-conf r8.pro "
           "--pg-map-output mapping.txt --lib \"$(dirname $(dirname $(readlink -f $(command -v java))))\" --lib " +
           replaceAll(jackson, ":", " --lib ") + " ../in.jar"},
  };
  const std::string pg_conf =
      "-injars ../in.jar\n-outjars out.jar\n"
      "-libraryjars <java.home>/jmods/java.base.jmod(!**.jar;!module-info.class)\n"
      "-libraryjars " +
      library_jars + "\n" + keep +
      "-dontoptimize\n-printmapping mapping.txt\n-obfuscationdictionary dict.txt\n"
      "-classobfuscationdictionary dict.txt\n-packageobfuscationdictionary dict.txt\n";
  const std::string r8_conf = keep;

  auto pipeline = Pipeline::create();
  ASSERT_NE(pipeline, nullptr);
  CorpusTally tally;  // by kind, and "all"
  size_t events = 0;
  for (const Build& build : builds) {
    SCOPED_TRACE(build.name);
    const std::string folder = root + "/" + build.name;
    std::filesystem::create_directories(folder);
    ASSERT_TRUE(runOrFail(folder, "CONF='" + pg_conf + "' R8CONF='" + r8_conf + "' && " + build.command));
    UploadMeta meta;
    meta.app = "shop";
    meta.build_id = build.name;
    ASSERT_TRUE(pipeline->ingest(meta, folder + "/mapping.txt"));
    CommandResult ran = run(folder, "java -cp 'out.jar:" + jackson + "' com.shop.Main");
    ASSERT_EQ(ran.exit_code, 0) << ran.output.substr(0, 4000);
    const std::vector<Trace> traces = splitTraces(ran.output);
    ASSERT_EQ(traces.size(), size_t(kSites * kPaths)) << ran.output.substr(0, 4000);
    for (const Trace& trace : traces) {
      ASSERT_FALSE(trace.text.empty()) << "site " << trace.site << " did not crash";
      const std::string first = trace.text.substr(0, trace.text.find('\n'));
      const size_t colon = first.find(": ");
      for (bool field : {true, false}) {
        const std::string exception =
            field ? R"("exception":{"type":)" + jsonString(first.substr(0, colon)) + R"(,"message":)" +
                        jsonString(colon == std::string::npos ? "" : first.substr(colon + 2)) + "},"
                  : "";
        const std::string event =
            R"({"event_id":"e","kind":"crash","platform":"android","app":"shop","build_id":)" + jsonString(build.name) +
            "," + exception + R"("threads":[{"name":"main","crashed":true,"stack":)" + jsonString(trace.text) + "}]}";
        Outcome outcome = pipeline->process("shop:" + build.name, event);
        ASSERT_TRUE(outcome.processed || !outcome.fingerprint.empty()) << event;
        ++events;
        for (const std::string& label : {std::string(kKindNames[kindOf(trace.site)]), std::string("all")}) {
          tally.add(label, trace.site, outcome.fingerprint);
        }
        tally.show(outcome.fingerprint, build.name + " " + hashedFrames(outcome));
        tally.countSource(outcome.source + " " + outcome.quality);
      }
    }
  }

  const auto [split, merged] =
      tally.report("crash kind", "all", [](int site) { return std::string(kKindNames[kindOf(site)]); });
  EXPECT_EQ(events, size_t(kSites * kPaths) * builds.size() * 2);
  EXPECT_EQ(merged, 0u);
  EXPECT_LT(double(split), 0.01 * kSites);
}

}  // namespace
}  // namespace restack::grouping_e2e
