// Java accuracy corpus: real libraries (Commons Collections 3.2.2, Jackson 2.16.2) obfuscated
// together with a driver (tests/proguard/corpus) by real obfuscators under several settings.
// The unobfuscated program and the obfuscated one both run at test time; every trace of the
// obfuscated run is restored by Restack (ingest, then the worker's restorer: the `restored`
// text users see) and by the obfuscator's own retrace (ProGuard ReTrace for ProGuard builds,
// R8's retrace for R8 builds), and each is compared, trace by trace, with the original run's
// trace. No expected text is written by hand.
//
// Asserted: every trace the reference retrace restores exactly, Restack restores exactly too,
// and Restack is exact on at least as many traces. The counts are printed (docs/accuracy.md).
//
// By default a small matrix runs (about two minutes on 2 cores): Commons Collections and the
// demo of proguard_tools_test.cc under ProGuard 7 (optimized, and after D8's desugaring) and R8.
// RESTACK_JAVA_CORPUS=full adds Jackson, ProGuard 6 and unoptimized builds (about half an hour). Needs javac/java 17
// and the jars of scripts/setup.d/proguard.sh and scripts/setup.d/java_corpus.sh.
#include <cstdlib>
#include <fstream>
#include <map>

#include "formats/common/mapped_file.h"
#include "tests/proguard/java_run.h"
#include "tests/proguard/retrace_harness.h"

namespace restack::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kDeps = fs::path(RESTACK_DEPS_DIR);
const fs::path kCorpus = kDeps / "java-corpus";
const fs::path kSources = fs::path(RESTACK_SOURCE_DIR) / "tests/proguard/corpus";
const fs::path kDemoSources = fs::path(RESTACK_SOURCE_DIR) / "tests/proguard/java";
const fs::path kDowngrade = fs::path(RESTACK_SOURCE_DIR) / "tests/proguard/corpus_tools/DowngradeClasses.java";
const char* kJdkModules[] = {"java.base", "java.sql", "java.desktop", "java.xml"};
const char* kJavaHome = "\"$(dirname \"$(dirname \"$(readlink -f \"$(command -v java)\")\")\")\"";

enum class Tool { kProguard7, kProguard6, kR8 };

struct Library {
  std::string name;
  std::vector<std::string> jars;  // obfuscated with the driver
  std::string main_class;
  std::string args;  // the driver's arguments
};

struct Setting {
  std::string name;
  Tool tool;
  std::string rules;     // added to the common keep rules
  bool desugar = false;  // D8 desugars the program first (lambdas become classes), as the Android
                         // Gradle plugin did before ProGuard
};

const std::vector<Library>& libraries() {
  // The demo of proguard_tools_test.cc too: small, and its "messages" scenarios reach the methods
  // ProGuard specializes.
  static const std::vector<Library> all = {
      {"collections", {"commons-collections-3.2.2.jar"}, "org.restack.corpus.Main", "collections"},
      {"jackson",
       {"jackson-databind-2.16.2.jar", "jackson-core-2.16.2.jar", "jackson-annotations-2.16.2.jar"},
       "org.restack.corpus.Main",
       "jackson"},
      {"demo", {}, "org.restack.demo.Main", ""},
      {"demo-messages", {}, "org.restack.demo.Main", "messages"},
  };
  return all;
}

// Keep rules every build shares: the entry point, the beans Jackson reflects on, the classes
// Jackson and enums look up by name, and the attributes a stack trace needs.
const char* kCommonRules =
    R"(-keep public class org.restack.corpus.Main { public static void main(java.lang.String[]); }
-keep public class org.restack.demo.Main { public static void main(java.lang.String[]); }
-keep public class org.restack.corpus.JacksonScenarios$* { public *; }
-keepattributes SourceFile,LineNumberTable,*Annotation*,Signature,InnerClasses,EnclosingMethod,Exceptions
-renamesourcefileattribute SourceFile
-keepclassmembers enum * { public static **[] values(); public static ** valueOf(java.lang.String); }
-keep class com.fasterxml.jackson.databind.ext.** { *; }
-keep class com.fasterxml.jackson.annotation.** { *; }
-allowaccessmodification
-dontwarn
-dontnote
)";

const char* toolName(Tool tool) {
  switch (tool) {
    case Tool::kProguard7:
      return "ProGuard 7.7.0";
    case Tool::kProguard6:
      return "ProGuard 6.2.2";
    case Tool::kR8:
      return "R8 8.5.35";
  }
  return "";
}

std::vector<Setting> settings(bool full) {
  std::vector<Setting> all = {
      {"proguard7-optimized", Tool::kProguard7, "-optimizationpasses 5\n"},
      {"r8-release", Tool::kR8, ""},
      {"d8-desugared-proguard7-optimized", Tool::kProguard7, "-optimizationpasses 5\n", true},
  };
  if (full) {
    all.push_back({"proguard7-unoptimized", Tool::kProguard7, "-dontoptimize\n"});
    all.push_back({"proguard7-no-specialization", Tool::kProguard7,
                   "-optimizationpasses 5\n-optimizations !method/specialization/**,!method/removal/parameter\n"});
    all.push_back({"proguard6-optimized", Tool::kProguard6, "-optimizationpasses 5\n"});
    all.push_back({"proguard6-unoptimized", Tool::kProguard6, "-dontoptimize\n"});
    all.push_back({"r8-unoptimized", Tool::kR8, "-dontoptimize\n"});
  }
  return all;
}

std::string jarList(const std::vector<std::string>& jars) {
  std::string list;
  for (const std::string& jar : jars) list += (list.empty() ? "" : ":") + (kCorpus / "libs" / jar).string();
  return list;
}

// The traces of one run, by scenario number, "... N more" expanded.
std::map<std::string, std::string> scenarios(const std::string& output) {
  std::map<std::string, std::string> out;
  std::string current;
  std::string text;
  std::istringstream in(output);
  std::string line;
  auto flush = [&] {
    if (!current.empty()) out[current] = expandMoreLines(text);
  };
  while (std::getline(in, line)) {
    if (line.starts_with("=== scenario ")) {
      flush();
      current = line.substr(13);
      text.clear();
      continue;
    }
    text += line + "\n";
  }
  flush();
  return out;
}

struct Counts {
  size_t total = 0;
  size_t restack = 0;
  size_t reference = 0;
};

class Corpus {
 public:
  explicit Corpus(const fs::path& dir) : dir_(dir) {}

  // Compiles the driver once, for Java 11: ProGuard 6.2.2 reads class files up to Java 13.
  Status compile() {
    fs::create_directories(dir_ / "classes");
    std::string sources;
    for (const fs::path& root : {kSources, kDemoSources}) {
      for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (entry.path().extension() == ".java") sources += " " + quote(entry.path());
      }
    }
    std::vector<std::string> every_jar;
    for (const Library& library : libraries())
      every_jar.insert(every_jar.end(), library.jars.begin(), library.jars.end());
    all_jars_ = jarList(every_jar);
    if (auto out = run("javac --release 11 -g -nowarn -cp '" + all_jars_ + "' -d " + quote(dir_ / "classes") + sources);
        !out) {
      return out.error();
    }
    if (auto out = run("cd " + quote(dir_ / "classes") + " && jar cf ../app.jar ."); !out) return out.error();
    return Status::ok();
  }

  // One library under one setting: obfuscate, run both programs, restore with Restack and the
  // reference retrace, count exact traces. `harness` holds the store the mapping goes into.
  Expected<Counts> measure(const Library& library, const Setting& setting, RetraceHarness& harness,
                           std::string& misses) {
    const fs::path work = dir_ / (library.name + "-" + setting.name);
    fs::create_directories(work);
    std::vector<std::string> other_jars;
    for (const Library& other : libraries()) {
      if (other.name != library.name) other_jars.insert(other_jars.end(), other.jars.begin(), other.jars.end());
    }
    const fs::path out_jar = work / "out.jar";
    const fs::path mapping = work / "mapping.txt";
    std::ofstream(work / "rules.pro") << kCommonRules << setting.rules;
    std::string command;
    if (setting.tool == Tool::kR8) {
      command = "java -cp " + quote(kCorpus / "r8/r8-8.5.35.jar") +
                " com.android.tools.r8.R8 --classfile --release --lib " + kJavaHome + " --output " + quote(out_jar) +
                " --pg-conf " + quote(work / "rules.pro") + " --pg-map-output " + quote(mapping) + " " +
                quote(dir_ / "app.jar");
      for (const std::string& jar : library.jars) command += " " + quote(kCorpus / "libs" / jar);
      for (const std::string& jar : other_jars) command += " --lib " + quote(kCorpus / "libs" / jar);
    } else {
      std::ofstream config(work / "proguard.pro");
      config << "-injars " << (dir_ / "app.jar").string() << "\n";
      for (const std::string& jar : library.jars)
        config << "-injars " << (kCorpus / "libs" / jar).string() << "(!META-INF/**)\n";
      if (setting.tool == Tool::kProguard6) {
        auto jdk = proguard6Library();
        if (!jdk) return jdk.error();
        for (const fs::path& jar : *jdk) config << "-libraryjars " << jar.string() << "\n";
      } else {
        for (const char* module : kJdkModules) {
          config << "-libraryjars <java.home>/jmods/" << module << ".jmod(!**.jar;!module-info.class)\n";
        }
      }
      for (const std::string& jar : other_jars) config << "-libraryjars " << (kCorpus / "libs" / jar).string() << "\n";
      config << "-outjars " << out_jar.string() << "\n-printmapping " << mapping.string() << "\n-include "
             << (work / "rules.pro").string() << "\n";
      config.close();
      const fs::path jars = setting.tool == Tool::kProguard7 ? kDeps / "proguard/lib" : kCorpus / "proguard6";
      command = "java -cp " + quote(jars) + "'/*' proguard.ProGuard @" + quote(work / "proguard.pro");
    }
    if (auto out = run(command); !out) return out.error();
    auto original =
        run("java -cp " + quote(dir_ / "classes") + ":'" + all_jars_ + "' " + library.main_class + " " + library.args);
    if (!original) return original.error();
    auto obfuscated =
        run("java -cp " + quote(out_jar) + ":'" + jarList(other_jars) + "' " + library.main_class + " " + library.args);
    if (!obfuscated) return obfuscated.error();
    std::ofstream(work / "obfuscated.txt") << *obfuscated;
    std::string reference_command =
        setting.tool == Tool::kR8
            ? "java -cp " + quote(kCorpus / "r8/r8-8.5.35.jar") + " com.android.tools.r8.retrace.Retrace " +
                  quote(mapping) + " " + quote(work / "obfuscated.txt")
            : "java -cp " + quote(kDeps / "proguard/retrace") + "'/*' proguard.retrace.ReTrace " + quote(mapping) +
                  " " + quote(work / "obfuscated.txt");
    auto reference = run(reference_command);
    if (!reference) return reference.error();
    auto mapping_text = readFile(mapping.string());
    if (!mapping_text) return mapping_text.error();
    const std::string build = library.name + "-" + setting.name;
    auto report = harness.ingest(*mapping_text, "corpus", build);
    if (!report) return report.error();
    std::string restored = harness.retrace(*obfuscated, {"corpus", build, "android", {}});
    std::ofstream(work / "restored.txt") << restored;
    std::ofstream(work / "original.txt") << *original;
    std::ofstream(work / "reference.txt") << *reference;

    auto expected = scenarios(*original);
    auto ours = scenarios(restored);
    auto theirs = scenarios(*reference);
    Counts counts;
    for (const auto& [number, trace] : expected) {
      ++counts.total;
      const bool restack_exact = ours[number] == trace;
      const bool reference_exact = theirs[number] == trace;
      counts.restack += restack_exact ? 1 : 0;
      counts.reference += reference_exact ? 1 : 0;
      if (!restack_exact || !reference_exact) {
        misses += "--- " + build + " scenario " + number + (restack_exact ? "" : " restack differs") +
                  (reference_exact ? "" : " reference differs") + "\noriginal:\n" + trace;
        if (!restack_exact) misses += "restack:\n" + ours[number];
        if (!reference_exact) misses += "reference:\n" + theirs[number];
      }
      if (reference_exact && !restack_exact) ++reference_only_;
    }
    return counts;
  }

  size_t referenceOnly() const { return reference_only_; }

  // The JDK modules as class-file-version-57 jars, which ProGuard 6 can read (DowngradeClasses).
  Expected<std::vector<fs::path>> proguard6Library() {
    std::vector<fs::path> jars;
    for (const char* module : kJdkModules) {
      const fs::path jar = dir_ / "jdk" / (std::string(module) + ".jar");
      jars.push_back(jar);
      if (fs::exists(jar)) continue;
      const fs::path extracted = dir_ / "jdk" / module;
      auto out =
          run(std::string("jmod extract --dir ") + quote(extracted) + " " + kJavaHome + "/jmods/" + module +
              ".jmod && java " + quote(kDowngrade) + " " + quote(extracted / "classes") + " " + quote(jar) + " 57");
      if (!out) return out.error();
    }
    return jars;
  }

 private:
  fs::path dir_;
  std::string all_jars_;
  size_t reference_only_ = 0;
};

TEST(JavaAccuracyCorpus, RestoredTracesEqualTheOriginalRunAtLeastWhereReferenceRetraceDoes) {
  const bool tools = fs::exists(kDeps / "proguard/lib") && fs::exists(kCorpus / "libs") &&
                     fs::exists(kCorpus / "proguard6") && fs::exists(kCorpus / "r8");
  ASSERT_TRUE(tools) << "jars missing in " << kDeps
                     << ": run scripts/setup.sh (scripts/setup.d/proguard.sh, scripts/setup.d/java_corpus.sh)";
  const char* mode = std::getenv("RESTACK_JAVA_CORPUS");
  const bool full = mode != nullptr && std::string_view(mode) == "full";
  RetraceHarness harness;
  Corpus corpus(harness.dir() / "corpus");
  auto compiled = corpus.compile();
  ASSERT_TRUE(compiled) << compiled.error().message();
  Counts sum;
  std::string table;
  std::string misses;
  for (const Library& library : libraries()) {
    if (!full && library.name == "jackson") continue;
    for (const Setting& setting : settings(full)) {
      // RESTACK_JAVA_CORPUS_ONLY=<text>[,<text>…]: only the builds whose "library-setting" name
      // contains one of them.
      if (const char* only = std::getenv("RESTACK_JAVA_CORPUS_ONLY")) {
        const std::string build = library.name + "-" + setting.name;
        bool wanted = false;
        std::istringstream parts(only);
        for (std::string part; std::getline(parts, part, ',');) wanted |= build.find(part) != std::string::npos;
        if (!wanted) continue;
      }
      auto counts = corpus.measure(library, setting, harness, misses);
      ASSERT_TRUE(counts) << library.name << " " << setting.name << ": " << counts.error().message();
      ASSERT_GE(counts->total, 2u) << library.name << " " << setting.name;
      table += "| " + library.name + " | " + setting.name + " (" + toolName(setting.tool) + ") | " +
               std::to_string(counts->restack) + " | " + std::to_string(counts->reference) + " | " +
               std::to_string(counts->total) + " |\n";
      std::cout << library.name << " " << setting.name << ": Restack " << counts->restack << ", reference "
                << counts->reference << " of " << counts->total << std::endl;
      sum.total += counts->total;
      sum.restack += counts->restack;
      sum.reference += counts->reference;
    }
  }
  table += "| all | | " + std::to_string(sum.restack) + " | " + std::to_string(sum.reference) + " | " +
           std::to_string(sum.total) + " |\n";
  std::cout << "| library | build | Restack exact | reference retrace exact | traces |\n|---|---|---|---|---|\n"
            << table;
  // RESTACK_JAVA_CORPUS_MISSES=<file>: every trace either retrace got wrong, with both answers.
  if (const char* keep = std::getenv("RESTACK_JAVA_CORPUS_MISSES")) std::ofstream(keep) << misses;
  EXPECT_EQ(corpus.referenceOnly(), 0u) << "traces the reference retrace restores exactly but Restack does not "
                                           "(and the other misses):\n"
                                        << misses;
  EXPECT_GE(sum.restack, sum.reference);
}

}  // namespace
}  // namespace restack::testing
