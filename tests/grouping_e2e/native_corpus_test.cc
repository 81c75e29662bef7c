// A generated corpus of real native crashes with known true groups, through Restack's pipeline.
//
// The test writes a C++ app of `kSites` crash sites (each a chain of three functions in one of
// `kFeatures` namespaces, ending in one of eight kinds of crash: a null dereference, abort(), an
// uncaught app exception, std::vector::at throwing inside libstdc++, strlen(nullptr) crashing
// inside libc, a lambda run by std::for_each, a comparator run by libc's qsort, a lambda run on its
// own thread), reached through `kPaths` routes. It compiles the app for aarch64 Linux eight ways
// (GCC 12 and Clang 19, -O0, -O2 and -O3, PIE and fixed link addresses, a padding file linked
// first) and runs every build under qemu-aarch64: the program forks one child per (site, path),
// whose crash handler writes the tombstone lines of its own stack (the faulting pc from the signal
// context, then backtrace()'s return addresses, each as an offset in its ELF image with the image's
// GNU build id). Every crash becomes two raw Android events: one stating the signal in `exception`
// (as an SDK sends it), one carrying the tombstone's reason lines in the stack text instead. Each
// build's executable is ingested with its DWARF under the app; the aarch64 glibc and libstdc++ it
// ran against are ingested as shared system images (their dynamic symbols only).
//
// The true group is the site the child printed before crashing; nothing writes an expected
// fingerprint. The table it prints is the one in docs/grouping.md.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "tests/grouping_e2e/e2e_support.h"

namespace restack::grouping_e2e {
namespace {

constexpr int kFeatures = 12;
constexpr int kKinds = 8;
constexpr int kSites = kFeatures * kKinds;
constexpr int kPaths = 3;
const char* kKindNames[kKinds] = {"null deref",     "abort",           "app exception",    "vector::at",
                                  "strlen in libc", "for_each lambda", "qsort comparator", "thread lambda"};

// GCC names the call operator of a lambda inlined at -O2/-O3 in DWARF by its bare name,
// "operator()", without the function that defines it; run on its own thread, nothing else on the
// stack names that function. The restorer reads it from DWARF's scopes (the frame's `scope`,
// formats/native/dwarf_walker.h), so those events are counted like the others; each one's record
// must show the rule that used it.
constexpr int kThreadLambda = 7;

// Where the cross toolchain and the runtime the builds run against live (Debian's
// gcc-aarch64-linux-gnu and libstdc++ for arm64, qemu-user).
const std::string kSysroot = "/usr/aarch64-linux-gnu";

int kindOf(int site) {
  return (site / kFeatures) % kKinds;
}

// The crashing function of `site`. Every crash instruction is the site's own (a load at the
// site's offset from the null pointer): a compiler merges identical instructions of functions
// inlined into one caller (Clang's tail merging, GCC's cross-jumping of noreturn calls such as
// abort()), and such sites then really crash at one pc that no debugger could tell apart. For
// the same reason the router calls a non-inlined entry function per site; site and step are
// inlined into it at -O2 and -O3.
std::string siteFunction(int site) {
  const std::string n = std::to_string(site);
  switch (kindOf(site)) {
    case 0:
      return "int site" + n + "(int x) {\n  return g_null[" + n + "] + x;\n}\n";
    case 1:
      return "int site" + n + "(int x) {\n  if (x > -100) std::abort();\n  return x + " + n + ";\n}\n";
    case 2:
      return "int site" + n + "(int x) {\n  if (x > -100) throw shop::AppError(\"site " + n + "\");\n  return x + " +
             n + ";\n}\n";
    case 3:
      return "int site" + n + "(int x) {\n  std::vector<int> values(3, x);\n  return values.at(size_t(x) + " + n +
             ");\n}\n";
    case 4:
      return "int site" + n + "(int x) {\n  return int(std::strlen(g_text)) + x * " + n + ";\n}\n";
    case 5:
      return "int site" + n + "(int x) {\n  std::vector<int> values(2, x);\n  int sum = 0;\n" +
             "  std::for_each(values.begin(), values.end(), [&](int value) {\n    sum += g_null[" + n +
             "] + value;\n  });\n  return sum;\n}\n";
    case 6:
      return "int compare" + n + "(const void* a, const void* b) {\n  return g_null[" + n +
             "] + *static_cast<const int*>(a) - *static_cast<const int*>(b);\n}\nint site" + n +
             "(int x) {\n  int values[2] = {x, x + 1};\n  std::qsort(values, 2, sizeof(int), compare" + n +
             ");\n  return values[0];\n}\n";
    default:
      // Two sites share one function whose two lambdas run on their own threads (the function
      // is not on their stacks) and differ only in the libc function that crashes below them.
      // kFeatures is even: the pair's first site is in the namespace written just before.
      if (site % 2 == 0) {
        return "void spawn" + n + "(int which, int x) {\n  if (which == 0) {\n" +
               "    std::thread([x] { g_sink = int(std::strlen(g_text)) + x; }).join();\n  } else {\n" +
               "    std::thread([x] { g_sink = int(std::strchr(g_text, x) - g_text); }).join();\n  }\n}\n" +
               "int site" + n + "(int x) {\n  spawn" + n + "(0, x);\n  return g_sink + " + n + ";\n}\n";
      }
      return "int site" + n + "(int x) {\n  shop::feature" + std::to_string((site - 1) % kFeatures) + "::spawn" +
             std::to_string(site - 1) + "(1, x);\n  return g_sink + " + n + ";\n}\n";
  }
}

std::string appSource() {
  std::ostringstream cc;
  cc << "#include <algorithm>\n#include <cstdlib>\n#include <cstring>\n#include <stdexcept>\n#include "
        "<thread>\n#include <vector>\n"
     << "#include <unistd.h>\n#include <sys/wait.h>\n#include <cstdio>\n"
     << "void installCrashHandler(const char* program);\n"
     << "namespace shop {\n"
     << "struct AppError : std::runtime_error {\n  using std::runtime_error::runtime_error;\n};\n"
     // volatile: the compiler cannot prove the pointers null and turn the crash into a trap.
     << "int* volatile g_null = nullptr;\nconst char* volatile g_text = nullptr;\nvolatile int g_sink = 0;\n}  // "
        "namespace shop\n";
  for (int k = 0; k < kFeatures; ++k) {
    cc << "namespace shop::feature" << k << " {\nusing shop::g_null;\nusing shop::g_sink;\nusing shop::g_text;\n";
    for (int site = k; site < kSites; site += kFeatures) {
      const std::string n = std::to_string(site);
      cc << siteFunction(site) << "int step" << n << "(int x) {\n  return site" << n << "(x - 1) + 1;\n}\n"
         << "__attribute__((noinline)) int entry" << n << "(int x) {\n  return step" << n << "(x + 1) * 2;\n}\n";
    }
    cc << "}  // namespace shop::feature" << k << "\n";
  }
  cc << "namespace shop::router {\nint go(int site, int x) {\n  switch (site) {\n";
  for (int site = 0; site < kSites; ++site) {
    cc << "    case " << site << ": return shop::feature" << site % kFeatures << "::entry" << site << "(x);\n";
  }
  cc << "    default: return 0;\n  }\n}\n}  // namespace shop::router\n";
  // Three routes: straight in, through one more function, through two.
  cc << "namespace shop::routes {\n"
     << "int open0(int site) {\n  return shop::router::go(site, 0) + 2;\n}\n"
     << "int prepare1(int site) {\n  return shop::router::go(site, 1) + 1;\n}\n"
     << "int open1(int site) {\n  return prepare1(site) + 2;\n}\n"
     << "int load2(int site) {\n  return shop::router::go(site, 2) * 3;\n}\n"
     << "int prepare2(int site) {\n  return load2(site) + 1;\n}\n"
     << "int open2(int site) {\n  return prepare2(site) + 2;\n}\n"
     << "}  // namespace shop::routes\n";
  cc << "int main(int, char** argv) {\n"
     << "  int (*routes[])(int) = {shop::routes::open0, shop::routes::open1, shop::routes::open2};\n"
     << "  for (int site = 0; site < " << kSites << "; ++site) {\n"
     << "    for (int path = 0; path < " << kPaths << "; ++path) {\n"
     << "      std::fflush(stdout);\n"
     << "      pid_t child = fork();\n"
     << "      if (child == 0) {\n"
     // The child's stderr (libstdc++'s terminate message) goes where its report goes.
     << "        dup2(1, 2);\n"
     << "        installCrashHandler(argv[0]);\n"
     << "        std::printf(\"=== site %d path %d\\n\", site, path);\n"
     << "        std::fflush(stdout);\n"
     << "        int result = routes[path](site);\n"
     << "        std::printf(\"=== no crash %d\\n\", result);\n"
     << "        return 0;\n"
     << "      }\n"
     << "      int status = 0;\n"
     << "      waitpid(child, &status, 0);\n"
     << "    }\n  }\n  return 0;\n}\n";
  return cc.str();
}

// The crash handler the program links: writes what debuggerd writes for a tombstone (the signal
// line, the cause of a null dereference, the backtrace as image offsets with build ids), from
// the signal context and glibc's backtrace(), which unwinds through the signal frame.
const char* kHandlerSource = R"(#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

namespace {
const char* g_program = "";

void say(const char* text) { (void)!write(1, text, strlen(text)); }

struct Image {
  uintptr_t address = 0;
  bool found = false;
  uintptr_t bias = 0;
  const char* path = "";
  char build_id[80] = "";
};

int findImage(dl_phdr_info* info, size_t, void* data) {
  Image* image = static_cast<Image*>(data);
  bool inside = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    inside = inside || (segment.p_type == PT_LOAD && image->address >= start && image->address < start + segment.p_memsz);
  }
  if (!inside) return 0;
  image->found = true;
  image->bias = info->dlpi_addr;
  image->path = info->dlpi_name[0] ? info->dlpi_name : g_program;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_NOTE) continue;
    const char* at = reinterpret_cast<const char*>(info->dlpi_addr + segment.p_vaddr);
    const char* end = at + segment.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(at);
      const char* name = at + sizeof(ElfW(Nhdr));
      const auto* desc = reinterpret_cast<const unsigned char*>(name + ((note->n_namesz + 3) & ~3u));
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
        for (unsigned k = 0; k < note->n_descsz && k < 32; ++k) snprintf(image->build_id + 2 * k, 3, "%02x", desc[k]);
      }
      at = reinterpret_cast<const char*>(desc) + ((note->n_descsz + 3) & ~3u);
    }
  }
  return 1;
}

void onCrash(int signal, siginfo_t* info, void* context) {
  char line[512];
  const char* name = signal == SIGSEGV ? "SIGSEGV" : signal == SIGABRT ? "SIGABRT" : signal == SIGBUS ? "SIGBUS" : "SIGILL";
  const char* code = signal == SIGSEGV ? (info->si_code == SEGV_MAPERR ? "SEGV_MAPERR" : "SEGV_ACCERR")
                     : info->si_code == SI_TKILL ? "SI_TKILL" : "?";
  if (signal == SIGSEGV || signal == SIGBUS) {
    snprintf(line, sizeof line, "signal %d (%s), code %d (%s), fault addr 0x%016lx\n", signal, name, info->si_code,
             code, reinterpret_cast<unsigned long>(info->si_addr));
  } else {
    snprintf(line, sizeof line, "signal %d (%s), code %d (%s), fault addr --------\n", signal, name, info->si_code, code);
  }
  say(line);
  if (signal == SIGSEGV && reinterpret_cast<uintptr_t>(info->si_addr) < 4096) say("Cause: null pointer dereference\n");
  const uintptr_t pc = static_cast<ucontext_t*>(context)->uc_mcontext.pc;
  void* frames[128];
  const int count = backtrace(frames, 128);
  int first = 0;
  while (first < count && reinterpret_cast<uintptr_t>(frames[first]) != pc) ++first;
  if (first == count) say("!!! the faulting pc is not on the unwound stack\n");
  for (int i = first; i < count; ++i) {
    Image image;
    image.address = reinterpret_cast<uintptr_t>(frames[i]);
    dl_iterate_phdr(findImage, &image);
    // As Android's unwinder prints them: a caller frame's return address less the size of the
    // call instruction (4 on aarch64), the crashing frame's pc as it is.
    snprintf(line, sizeof line, "      #%02d pc %016lx  %s (BuildId: %s)\n", i - first,
             static_cast<unsigned long>(image.address - image.bias - (i > first ? 4 : 0)), image.path,
             image.build_id);
    say(line);
  }
  say("=== end\n");
  _exit(0);
}
}  // namespace

void installCrashHandler(const char* program) {
  g_program = program;
  struct sigaction action = {};
  action.sa_sigaction = onCrash;
  action.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &action, nullptr);
  sigaction(SIGABRT, &action, nullptr);
  sigaction(SIGBUS, &action, nullptr);
  sigaction(SIGILL, &action, nullptr);
}
)";

// Build 4 and 8 link it first: every later function moves.
const char* kPaddingSource = R"(namespace shop::padding {
int table(int n) {
  int values[256];
  for (int i = 0; i < 256; ++i) values[i] = (i * 7 + n) % 13;
  int sum = 0;
  for (int i = 0; i < 256; ++i) sum += values[(i * n) & 255];
  return sum;
}
int table2(int n) { return table(n + 1) * 3 + table(n * 5); }
}  // namespace shop::padding
)";

std::string hashedFrames(const Outcome& outcome) {
  std::string out = outcome.source + " " + outcome.quality + " " + outcome.exception_type;
  for (const std::string& frame : outcome.frames) out += " | " + frame;
  return out;
}

// One crash the program reported.
struct Crash {
  int site = -1;
  int path = -1;
  std::vector<std::string> reasons;  // "signal …", "Cause: …", "Abort message: …"
  std::vector<std::string> frames;   // tombstone frame lines
  std::string signal;                // SIGSEGV, SIGABRT
};

// libstdc++'s terminate handler prints "terminate called after throwing an instance of 'T'" and
// "  what():  M"; on Android libc++abi states the same as the abort message debuggerd reports:
// "Abort message: 'terminating due to uncaught exception of type T: M'".
std::vector<Crash> parseReports(const std::string& output, std::string& problems) {
  std::vector<Crash> crashes;
  std::istringstream lines(output);
  std::string line, thrown_type;
  Crash* current = nullptr;
  while (std::getline(lines, line)) {
    int site = 0, path = 0;
    if (std::sscanf(line.c_str(), "=== site %d path %d", &site, &path) == 2) {
      crashes.push_back(Crash{site, path, {}, {}, ""});
      current = &crashes.back();
      thrown_type.clear();
    } else if (current == nullptr) {
      problems += "outside a report: " + line + "\n";
    } else if (line.starts_with("terminate called after throwing an instance of '")) {
      thrown_type = line.substr(48, line.size() - 49);
    } else if (line.starts_with("  what():  ")) {
      current->reasons.push_back("Abort message: 'terminating due to uncaught exception of type " + thrown_type + ": " +
                                 line.substr(11) + "'");
    } else if (line.starts_with("signal ")) {
      current->reasons.insert(current->reasons.begin(), line);
      const size_t open = line.find('('), close = line.find(')');
      current->signal = line.substr(open + 1, close - open - 1);
    } else if (line.starts_with("Cause: ")) {
      current->reasons.push_back(line);
    } else if (line.starts_with("      #")) {
      current->frames.push_back(line);
    } else if (line == "=== end") {
      current = nullptr;
    } else {
      problems += "site " + std::to_string(current->site) + ": " + line + "\n";
    }
  }
  return crashes;
}

TEST(NativeCorpus, RealAarch64BuildsGroupByCrashSite) {
  for (const char* tool : {"aarch64-linux-gnu-g++", "clang++-19", "qemu-aarch64", "llvm-readelf-19"}) {
    if (!requireTool(tool)) return;
  }
  auto dir = TempDir::create("restack-grouping-native-corpus-");
  ASSERT_TRUE(dir) << dir.error().message();
  const std::string root = dir->path();
  writeFile(root + "/src/app.cc", appSource());
  writeFile(root + "/src/crash_handler.cc", kHandlerSource);
  writeFile(root + "/src/padding.cc", kPaddingSource);

  struct Build {
    std::string name;
    std::string compiler;  // compiles and links
    std::string options;   // optimization and code generation
    std::string link;      // link options
    bool padding = false;  // padding.cc linked first
  };
  const std::string gcc = "aarch64-linux-gnu-g++ ";
  // Clang 19 with the cross GCC's headers, libraries and linker.
  const std::string clang = "clang++-19 --target=aarch64-linux-gnu ";
  const std::vector<Build> builds = {
      {"gcc-O0", gcc, "-O0", ""},
      {"gcc-O2", gcc, "-O2", ""},
      {"gcc-O3-fixed", gcc, "-O3", "-no-pie -Wl,-Ttext-segment=0x1000000"},
      {"gcc-O2-padded", gcc, "-O2", "", true},
      {"clang-O0", clang, "-O0", ""},
      {"clang-O2", clang, "-O2", "-fuse-ld=lld"},
      {"clang-O3-padded", clang, "-O3", "-fuse-ld=lld -Wl,--image-base=0x300000", true},
      {"clang-O2-fixed", clang, "-O2", "-no-pie -Wl,-Ttext-segment=0x2000000"},
  };

  auto pipeline = Pipeline::create();
  ASSERT_NE(pipeline, nullptr);
  // The runtime the builds ran against, as a device's system images: shared, not the app's.
  for (const char* library : {"libc.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libm.so.6"}) {
    UploadMeta meta;
    meta.shared = true;
    ASSERT_TRUE(pipeline->ingest(meta, kSysroot + "/lib/" + library));
  }

  // RESTACK_CORPUS_DUMP=<file>: every event's hashed frames, one line each, to study a split.
  const char* dump_path = std::getenv("RESTACK_CORPUS_DUMP");
  FILE* dump = dump_path ? std::fopen(dump_path, "w") : nullptr;
  CorpusTally tally;
  std::map<std::string, std::string> build_ids;
  size_t titled_terminations = 0;
  size_t gcc_inlined_thread_lambdas = 0, scoped_lambdas = 0;
  for (const Build& build : builds) {
    SCOPED_TRACE(build.name);
    const std::string folder = root + "/" + build.name;
    std::filesystem::create_directories(folder);
    const std::string compile = build.compiler + "-g " + build.options + " -c ../src/";
    std::string commands = compile + "app.cc -o app.o && " + compile + "crash_handler.cc -o crash_handler.o && ";
    std::string objects = "app.o crash_handler.o";
    if (build.padding) {
      commands += compile + "padding.cc -o padding.o && ";
      objects = "padding.o " + objects;
    }
    commands += build.compiler + build.link + " -Wl,--build-id " + objects + " -o shop";
    ASSERT_TRUE(runOrFail(folder, commands));
    const std::string build_id = gnuBuildId(folder, "shop");
    ASSERT_FALSE(build_id.empty()) << "shop has no build id";
    for (const auto& [other, id] : build_ids) ASSERT_NE(id, build_id) << "same build id as " << other;
    build_ids[build.name] = build_id;
    UploadMeta meta;
    meta.app = "shop";
    meta.build_id = build.name;
    ASSERT_TRUE(pipeline->ingest(meta, folder + "/shop"));

    CommandResult ran = run(folder, "qemu-aarch64 -L " + kSysroot + " ./shop");
    ASSERT_EQ(ran.exit_code, 0) << ran.output.substr(0, 4000);
    std::string problems;
    std::vector<Crash> crashes = parseReports(ran.output, problems);
    EXPECT_EQ(problems, "");
    ASSERT_EQ(crashes.size(), size_t(kSites * kPaths)) << ran.output.substr(0, 4000);
    for (const Crash& crash : crashes) {
      ASSERT_FALSE(crash.frames.empty()) << "site " << crash.site << " reported no stack";
      std::string frames;
      for (const std::string& line : crash.frames) frames += line + "\n";
      std::string reasons;
      for (const std::string& line : crash.reasons) reasons += line + "\n";
      // An SDK states the signal; a forwarded tombstone carries only its reason lines.
      const std::string field = R"("exception":{"type":)" + jsonString(crash.signal) + R"(,"message":"")" + "},";
      for (bool from_text : {false, true}) {
        const std::string event = R"({"event_id":"e","kind":"crash","platform":"android","app":"shop","build_id":)" +
                                  jsonString(build.name) + "," + (from_text ? "" : field) +
                                  R"("threads":[{"name":"main","crashed":true,"stack":)" +
                                  jsonString(from_text ? reasons + frames : frames) + "}]}";
        Outcome outcome = pipeline->process("shop:" + build.name, event);
        ASSERT_TRUE(outcome.processed);
        for (const std::string& label :
             {std::string(kKindNames[kindOf(crash.site)]), std::string("all"), "build " + build.name}) {
          tally.add(label, crash.site, outcome.fingerprint);
        }
        if (kindOf(crash.site) == kThreadLambda && build.compiler == gcc && build.options != "-O0") {
          ++gcc_inlined_thread_lambdas;
          scoped_lambdas += outcome.record.find("native:lambda-scope") != std::string::npos;
        }
        if (dump) {
          std::fprintf(dump, "%s site %d path %d %s: %s\n", build.name.c_str(), crash.site, crash.path,
                       from_text ? "text" : "field", hashedFrames(outcome).c_str());
        }
        tally.show(outcome.fingerprint, build.name + (from_text ? " text " : " field ") + hashedFrames(outcome));
        tally.countSource(outcome.source + " " + outcome.quality);
        EXPECT_EQ(outcome.exception_type, crash.signal) << outcome.describe();
        if (from_text && kindOf(crash.site) == 2) {
          // The uncaught exception's type reaches the title through the abort message.
          titled_terminations += outcome.record.find("shop::AppError") != std::string::npos;
        }
      }
    }
  }

  if (dump) std::fclose(dump);
  const auto [split, merged] =
      tally.report("crash kind", "all", [](int site) { return std::string(kKindNames[kindOf(site)]); });
  EXPECT_EQ(merged, 0u);
  EXPECT_LT(double(split), 0.01 * kSites);
  EXPECT_EQ(titled_terminations, builds.size() * kPaths * (kSites / kKinds));
  // Three GCC builds at -O2/-O3, each thread lambda reached through every path, sent twice.
  EXPECT_EQ(gcc_inlined_thread_lambdas, size_t(3 * kPaths * (kSites / kKinds) * 2));
  EXPECT_EQ(scoped_lambdas, gcc_inlined_thread_lambdas);
}

}  // namespace
}  // namespace restack::grouping_e2e
