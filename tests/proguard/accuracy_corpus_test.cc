// Java accuracy corpus: real libraries (Commons Collections 3.2.2, Jackson 2.16.2) obfuscated
// together with a driver (tests/proguard/corpus) by real obfuscators under several settings, and
// a Kotlin program (tests/proguard/kotlin, compiled by kotlinc) obfuscated together with
// kotlin-stdlib and kotlinx-coroutines-core, as an Android app ships them.
// The unobfuscated program and the obfuscated one both run at test time; every trace of the
// obfuscated run is restored by Restack (ingest, then the worker's restorer: the `restored`
// text users see) and by the obfuscator's own retrace (ProGuard ReTrace for ProGuard builds,
// R8's retrace for R8 builds), and each is compared, trace by trace, with the original run's
// trace. No expected text is written by hand.
//
// Asserted: every trace the reference retrace restores exactly, Restack restores exactly too,
// and Restack is exact on at least as many traces. The counts are printed (docs/accuracy.md).
//
// By default a small matrix runs (about two minutes on 2 cores): Commons Collections, the
// demo of proguard_tools_test.cc and the Kotlin program under ProGuard 7 and R8 8.5.35, each also
// after D8's desugaring, and under R8 9.5.28.
// RESTACK_JAVA_CORPUS=full adds Jackson, ProGuard 6 and unoptimized builds (about half an hour). Needs javac/java 17
// and the jars of scripts/setup.d/proguard.sh and scripts/setup.d/java_corpus.sh (the Kotlin
// compiler too). RESTACK_JAVA_CORPUS_KEEP=<dir> copies each build's files (rules, mapping.txt,
// out.jar, the original, obfuscated, restored and reference runs) to <dir>/<build>/.
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
const fs::path kKotlinSources = fs::path(RESTACK_SOURCE_DIR) / "tests/proguard/kotlin";
const fs::path kDowngrade = fs::path(RESTACK_SOURCE_DIR) / "tests/proguard/corpus_tools/DowngradeClasses.java";
const char* kJdkModules[] = {"java.base", "java.sql", "java.desktop", "java.xml"};
const char* kJavaHome = "\"$(dirname \"$(dirname \"$(readlink -f \"$(command -v java)\")\")\")\"";

enum class Tool { kProguard7, kProguard6, kR8 };

// The drivers: the Java ones (tests/proguard/corpus, tests/proguard/java) compiled by javac into
// one program, the Kotlin one (tests/proguard/kotlin) by kotlinc into another.
enum class Language { kJava, kKotlin };

struct Library {
  std::string name;
  std::vector<std::string> jars;  // obfuscated with the driver
  std::string main_class;
  std::string args;  // the driver's arguments
  Language language = Language::kJava;
  std::string rules = "";           // added to the common keep rules
  std::string proguard_rules = "";  // added for ProGuard builds only
};

// The Kotlin program's rules: its entry point, and for ProGuard the keep rules
// kotlinx-coroutines-core ships in META-INF/proguard/coroutines.pro (R8 reads the jar's
// META-INF/com.android.tools/r8 copy by itself; ProGuard reads none), less their -dontwarn lines,
// which the common -dontwarn covers (ProGuard would take them as its only filter).
const char* kKotlinRules =
    R"(-keep public class org.restack.kotlin.MainKt { public static void main(java.lang.String[]); }
)";
const char* kKotlinProguardRules =
    R"(-keepnames class kotlinx.coroutines.internal.MainDispatcherFactory {}
-keepnames class kotlinx.coroutines.CoroutineExceptionHandler {}
-keepclassmembers class kotlinx.coroutines.** { volatile <fields>; }
-keepclassmembers class kotlin.coroutines.SafeContinuation { volatile <fields>; }
-keepclassmembers class kotlinx.coroutines.flow.ReadonlySharedFlow { kotlinx.coroutines.Job job; }
-keepclassmembers class kotlinx.coroutines.flow.ReadonlyStateFlow { kotlinx.coroutines.Job job; }
# ProGuard 7.7.0's parameter type specialization breaks kotlinx.coroutines (every version from
# 1.8.1 to 1.11.0): JobKt.invokeOnCompletion's parameter is narrowed to the one lambda class
# passed to it, but a caller still passes a Function1, and the first coroutine to suspend fails
# with a VerifyError (a known ProGuard issue). Only this optimization is turned off, for the
# Kotlin program only.
-optimizations !method/specialization/parametertype
)";

struct Setting {
  std::string name;
  Tool tool;
  std::string rules;     // added to the common keep rules
  bool desugar = false;  // D8 desugars the program and its libraries first (lambdas become classes,
                         // interface methods move to companion classes), as the Android Gradle
                         // plugin did before ProGuard, and as R8 does itself on Android
  // The D8 and R8 (and R8's retrace) of this build: the 8.5.35 the corpus began with, or 9.5.28,
  // the newest when it was added, whose mappings differ (scripts/setup.d/java_corpus.sh).
  std::string r8_version = "8.5.35";
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
      {"kotlin",
       {"kotlin-stdlib-2.4.21.jar", "kotlinx-coroutines-core-jvm-1.11.0.jar"},
       "org.restack.kotlin.MainKt",
       "",
       Language::kKotlin,
       kKotlinRules,
       kKotlinProguardRules},
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

fs::path r8Jar(const Setting& setting) {
  return kCorpus / "r8" / ("r8-" + setting.r8_version + ".jar");
}

std::string toolName(const Setting& setting) {
  switch (setting.tool) {
    case Tool::kProguard7:
      return "ProGuard 7.7.0";
    case Tool::kProguard6:
      return "ProGuard 6.2.2";
    case Tool::kR8:
      return "R8 " + setting.r8_version;
  }
  return "";
}

std::vector<Setting> settings(bool full) {
  std::vector<Setting> all = {
      {"proguard7-optimized", Tool::kProguard7, "-optimizationpasses 5\n"},
      {"r8-release", Tool::kR8, ""},
      {"d8-desugared-proguard7-optimized", Tool::kProguard7, "-optimizationpasses 5\n", true},
      {"d8-desugared-r8-release", Tool::kR8, "", true},
      {"r8-9.5-release", Tool::kR8, "", false, "9.5.28"},
  };
  if (full) {
    all.push_back({"proguard7-unoptimized", Tool::kProguard7, "-dontoptimize\n"});
    all.push_back({"proguard7-no-specialization", Tool::kProguard7,
                   "-optimizationpasses 5\n-optimizations !method/specialization/**,!method/removal/parameter\n"});
    all.push_back({"proguard6-optimized", Tool::kProguard6, "-optimizationpasses 5\n"});
    all.push_back({"proguard6-unoptimized", Tool::kProguard6, "-dontoptimize\n"});
    all.push_back({"r8-unoptimized", Tool::kR8, "-dontoptimize\n"});
    all.push_back({"d8-desugared-r8-9.5-release", Tool::kR8, "", true, "9.5.28"});
    all.push_back({"r8-9.5-unoptimized", Tool::kR8, "-dontoptimize\n", false, "9.5.28"});
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

  // The jars of every library whose driver is written in `language`: the driver compiles against
  // them all.
  static std::vector<std::string> languageJars(Language language) {
    std::vector<std::string> jars;
    for (const Library& library : libraries()) {
      if (library.language == language) jars.insert(jars.end(), library.jars.begin(), library.jars.end());
    }
    return jars;
  }

  static const char* languageName(Language language) { return language == Language::kJava ? "java" : "kotlin"; }
  fs::path classes(Language language) const { return dir_ / (std::string("classes-") + languageName(language)); }
  fs::path programJar(Language language) const {
    return dir_ / (std::string("app-") + languageName(language) + ".jar");
  }

  // Compiles the program of `language` once, when a build first needs it, for Java 11: ProGuard
  // 6.2.2 reads class files up to Java 13. javac compiles the Java drivers, kotlinc the Kotlin one.
  Status compile(Language language) {
    if (fs::exists(programJar(language))) return Status::ok();
    fs::create_directories(classes(language));
    const std::string extension = language == Language::kJava ? ".java" : ".kt";
    std::string sources;
    std::vector<fs::path> roots = language == Language::kJava ? std::vector<fs::path>{kSources, kDemoSources}
                                                              : std::vector<fs::path>{kKotlinSources};
    for (const fs::path& root : roots) {
      for (const auto& entry : fs::recursive_directory_iterator(root)) {
        if (entry.path().extension() == extension) sources += " " + quote(entry.path());
      }
    }
    const std::string jars = jarList(languageJars(language));
    std::string command = "javac --release 11 -g -nowarn -cp '" + jars + "'";
    if (language == Language::kKotlin) {
      command = "java -cp " + quote(kCorpus / "kotlinc") +
                "'/*' org.jetbrains.kotlin.cli.jvm.K2JVMCompiler -no-stdlib -no-reflect -nowarn -jvm-target 11 -cp '" +
                jars + "'";
    }
    if (auto out = run(command + " -d " + quote(classes(language)) + sources); !out) return out.error();
    if (auto out = run("cd " + quote(classes(language)) + " && jar cf " + quote(programJar(language)) + " ."); !out) {
      return out.error();
    }
    return Status::ok();
  }

  // One library under one setting: obfuscate, run both programs, restore with Restack and the
  // reference retrace, count exact traces. `harness` holds the store the mapping goes into.
  Expected<Counts> measure(const Library& library, const Setting& setting, RetraceHarness& harness,
                           std::string& misses) {
    const fs::path work = dir_ / (library.name + "-" + setting.name);
    fs::create_directories(work);
    if (Status compiled = compile(library.language); !compiled) return compiled.error();
    const fs::path app_jar = programJar(library.language);
    // The jars of the other libraries the same program drives: libraries of this build.
    std::vector<std::string> other_jars;
    for (const Library& other : libraries()) {
      if (other.name != library.name && other.language == library.language)
        other_jars.insert(other_jars.end(), other.jars.begin(), other.jars.end());
    }
    const fs::path out_jar = work / "out.jar";
    const fs::path mapping = work / "mapping.txt";
    std::ofstream(work / "rules.pro") << kCommonRules << library.rules << setting.rules
                                      << (setting.tool == Tool::kR8 ? "" : library.proguard_rules);
    std::string command;
    // The program as the obfuscator gets it: the driver and the libraries it ships with, or,
    // desugared, one jar that D8 made of them all, as the Android Gradle plugin hands them on
    // (every lambda a class of its own, interface default and static methods moved to
    // companion classes). R8 on Android desugars them itself; R8 cannot desugar when it writes
    // class files, so its desugared builds run D8 first too, and R8 reads D8's markers.
    std::vector<fs::path> program{app_jar};
    for (const std::string& jar : library.jars) program.push_back(kCorpus / "libs" / jar);
    if (setting.desugar) {
      const fs::path desugared = work / "desugared.jar";
      std::string d8 = "java -cp " + quote(r8Jar(setting)) +
                       " com.android.tools.r8.D8 --classfile --min-api 21 --lib " + kJavaHome + " --output " +
                       quote(desugared);
      for (const fs::path& jar : program) d8 += " " + quote(jar);
      for (const std::string& jar : other_jars) d8 += " --classpath " + quote(kCorpus / "libs" / jar);
      if (auto out = run(d8); !out) return out.error();
      program = {desugared};
    }
    if (setting.tool == Tool::kR8) {
      command = "java -cp " + quote(r8Jar(setting)) + " com.android.tools.r8.R8 --classfile --release --lib " +
                kJavaHome + " --output " + quote(out_jar) + " --pg-conf " + quote(work / "rules.pro") +
                " --pg-map-output " + quote(mapping);
      for (const fs::path& jar : program) command += " " + quote(jar);
      for (const std::string& jar : other_jars) command += " --lib " + quote(kCorpus / "libs" / jar);
    } else {
      std::ofstream config(work / "proguard.pro");
      for (size_t i = 0; i < program.size(); ++i) {
        // The libraries' META-INF (their own keep rules, service files) stays out.
        config << "-injars " << program[i].string() << (i == 0 ? "" : "(!META-INF/**)") << "\n";
      }
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
    auto original = run("java -cp " + quote(classes(library.language)) + ":'" +
                        jarList(languageJars(library.language)) + "' " + library.main_class + " " + library.args);
    if (!original) return original.error();
    auto obfuscated =
        run("java -cp " + quote(out_jar) + ":'" + jarList(other_jars) + "' " + library.main_class + " " + library.args);
    if (!obfuscated) return obfuscated.error();
    std::ofstream(work / "obfuscated.txt") << *obfuscated;
    std::string reference_command =
        setting.tool == Tool::kR8 ? "java -cp " + quote(r8Jar(setting)) + " com.android.tools.r8.retrace.Retrace " +
                                        quote(mapping) + " " + quote(work / "obfuscated.txt")
                                  : "java -cp " + quote(kDeps / "proguard/retrace") + "'/*' proguard.retrace.ReTrace " +
                                        quote(mapping) + " " + quote(work / "obfuscated.txt");
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
    if (const char* keep = std::getenv("RESTACK_JAVA_CORPUS_KEEP")) {
      const fs::path kept = fs::path(keep) / build;
      fs::create_directories(kept);
      for (const auto& entry : fs::directory_iterator(work)) {
        if (entry.is_regular_file())
          fs::copy_file(entry.path(), kept / entry.path().filename(), fs::copy_options::overwrite_existing);
      }
    }

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
  size_t reference_only_ = 0;
};

TEST(JavaAccuracyCorpus, RestoredTracesEqualTheOriginalRunAtLeastWhereReferenceRetraceDoes) {
  const bool tools = fs::exists(kDeps / "proguard/lib") && fs::exists(kCorpus / "libs") &&
                     fs::exists(kCorpus / "proguard6") && fs::exists(kCorpus / "r8/r8-8.5.35.jar") &&
                     fs::exists(kCorpus / "r8/r8-9.5.28.jar") && fs::exists(kCorpus / "kotlinc") &&
                     fs::exists(kCorpus / "libs/kotlin-stdlib-2.4.21.jar");
  ASSERT_TRUE(tools) << "jars missing in " << kDeps
                     << ": run scripts/setup.sh (scripts/setup.d/proguard.sh, scripts/setup.d/java_corpus.sh)";
  const char* mode = std::getenv("RESTACK_JAVA_CORPUS");
  const bool full = mode != nullptr && std::string_view(mode) == "full";
  RetraceHarness harness;
  Corpus corpus(harness.dir() / "corpus");
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
      // R8's mappings of Kotlin classes add frames from the classes' line maps to most traces
      // (R8 8.5.35: 16 of 32 exact; R8 9.5.28: 5), which both retraces printed until the mapping
      // reader dropped them (24-27 of 32 since, docs/accuracy.md "Kotlin"): a floor, so that
      // losing the rule fails here and not only in the printed table.
      if (setting.tool == Tool::kR8 && library.language == Language::kKotlin) {
        EXPECT_GE(counts->restack * 10, counts->total * 7)
            << library.name << " " << setting.name << ": Restack exact on " << counts->restack << " of "
            << counts->total << " traces, fewer than 70 %";
      }
      table += "| " + library.name + " | " + setting.name + " (" + toolName(setting) + ") | " +
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
