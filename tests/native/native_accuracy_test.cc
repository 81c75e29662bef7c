// Agreement with llvm-symbolizer-19 --inlines on real third-party code compiled here (the zlib and
// libpng example programs, GoogleTest) with gcc-12 and clang-19 at -O2/-O3, DWARF 4 and 5, for
// x86-64, aarch64 and 32-bit ARM, whole
// or split into a stripped library plus a debug file (found by llvm-symbolizer through
// .gnu_debuglink or the build id), as an arm64 iOS dylib with its dSYM, and on Debian's own
// libc.so.6 with its libc6-dbg debug file.
// Every frame of every sampled address is compared (function, file, line, column, inline chain);
// the oracle runs at test time, nothing is written by hand.
//
// RESTACK_ACCURACY_STEP=N samples every N-th byte of .text (default: every 3rd for the built
// libraries, every 17th for libc); docs/accuracy.md records the figures of a run with N=1.
#include <gtest/gtest.h>

#include <llvm/Demangle/Demangle.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "formats/stack/native_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/native/native_resolver.h"
#include "tests/native/native_test_support.h"

namespace restack::native_test {
namespace {

// Distribution sources (Debian packages zlib1g-dev, libpng-dev, googletest; scripts/setup.sh).
const char* kZlibExamples = "/usr/share/doc/zlib1g-dev/examples";
const char* kPngTest = "/usr/share/doc/libpng-dev/examples/pngtest.c";
const char* kGoogleTest = "/usr/src/googletest/googletest";
const char* kLibc = "/lib/x86_64-linux-gnu/libc.so.6";

uint64_t stepFromEnvironment(uint64_t fallback) {
  const char* text = std::getenv("RESTACK_ACCURACY_STEP");
  if (!text) return fallback;
  uint64_t step = std::strtoull(text, nullptr, 10);
  return step == 0 ? fallback : step;
}

std::string describe(const std::vector<OracleFrame>& frames) {
  std::ostringstream out;
  for (const auto& f : frames) out << "[" << f.function << " " << f.file << ":" << f.line << ":" << f.column << "] ";
  return out.str();
}

std::string describe(const FrameLookup& lookup) {
  std::ostringstream out;
  out << frameStatusName(lookup.status) << " " << lookup.tier << " ";
  for (const auto& f : lookup.frames) {
    out << "[" << f.function << (f.clone.empty() ? "" : " {clone " + f.clone + "}") << " " << f.file << ":" << f.line
        << ":" << f.column << (f.inlined ? " inlined" : "") << "] ";
  }
  return out.str();
}

// How llvm-symbolizer spells a function whose symbol-table name is a compiler clone of it: the C
// name with the suffix ("f.isra.0"), or the demangled C++ or Rust name followed by " (.isra.0)"
// (Rust's demangled names have no parameter list, but a path: "core::ptr::drop_in_place::h…").
std::string withClone(const std::string& function, const std::string& clone) {
  if (clone.empty()) return function;
  const bool demangled = function.find('(') != std::string::npos || function.find("::") != std::string::npos;
  if (!demangled) return function + "." + clone;
  return function + " (." + clone + ")";
}

// A short name for how Restack's answer differs from llvm-symbolizer's (printed per build, so a
// failing run says which rule differs).
std::string classify(const std::vector<OracleFrame>& expected, const FrameLookup& got, bool symtab_names) {
  bool oracle_knows = !expected.empty() && !expected[0].function.empty();
  if (!oracle_knows) return "restored where llvm-symbolizer knows nothing (" + std::string(got.tier) + ")";
  if (got.status != FrameStatus::kSymbolicated) return "not restored";
  if (got.frames.size() != expected.size()) {
    return std::string("inline chain ") + (got.frames.size() < expected.size() ? "shorter" : "longer") + " (" +
           std::string(got.tier) + ")";
  }
  std::string what;
  for (size_t f = 0; f < expected.size(); ++f) {
    const SymbolizedFrame& frame = got.frames[f];
    std::string where = f + 1 == expected.size() ? "outermost " : "inlined ";
    std::string name = symtab_names ? withClone(frame.function, frame.clone) : frame.function;
    if (name != expected[f].function) what += where + "function, ";
    if (frame.file != expected[f].file) what += where + "file, ";
    if (frame.line != expected[f].line) what += where + "line, ";
    if (frame.column != expected[f].column) what += where + "column, ";
  }
  return what + "(" + std::string(got.tier) + ")";
}

struct Agreement {
  size_t addresses = 0;
  size_t equal = 0;
  size_t restored = 0;
  size_t with_inlines = 0;
  size_t clones = 0;
  std::map<std::string, size_t> kinds;  // how the differing addresses differ
  double percent() const { return addresses ? 100.0 * static_cast<double>(equal) / static_cast<double>(addresses) : 0; }
};

// Compares every frame of every address. `symtab_names` says whether llvm-symbolizer saw the
// full symbol table (an unstripped file): it then prints clone names, which Restack reports as the
// source function plus its `clone` attribute; with a stripped file it prints the function itself.
// `oracle_names`, when given, rewrites llvm-symbolizer's function names before the comparison.
Agreement compare(NativeResolver& resolver, const std::string& debug_id, const std::string& module,
                  const std::string& oracle, uint64_t step, bool symtab_names, const std::string& oracle_arguments = "",
                  const std::function<void(std::vector<std::vector<OracleFrame>>&)>& oracle_names = {}) {
  Agreement result;
  CodeRange range = codeRange(oracle);
  std::vector<uint64_t> addresses;
  for (uint64_t a = range.begin; a < range.end; a += step) addresses.push_back(a);
  auto answers = symbolizeWithLlvm(oracle, addresses, oracle_arguments);
  if (answers.size() != addresses.size()) return result;
  if (oracle_names) oracle_names(answers);
  stack::NativeFrameLine frame;
  frame.debug_id = debug_id;
  frame.module = module;
  EventScope scope{"accuracy", "1", "android", {}};
  size_t shown = 0;
  for (size_t i = 0; i < addresses.size(); ++i) {
    const auto& expected = answers[i];
    auto lookup = resolver.lookup(scope, frame, addresses[i]);
    if (!lookup) {
      ADD_FAILURE() << lookup.error().describe();
      return result;
    }
    ++result.addresses;
    bool oracle_knows = !expected.empty() && !expected[0].function.empty();
    bool same;
    if (!oracle_knows) {
      same = lookup->status != FrameStatus::kSymbolicated;
    } else if (lookup->status != FrameStatus::kSymbolicated) {
      same = false;
    } else {
      same = lookup->frames.size() == expected.size();
      for (size_t f = 0; same && f < expected.size(); ++f) {
        const SymbolizedFrame& got = lookup->frames[f];
        std::string name = symtab_names ? withClone(got.function, got.clone) : got.function;
        same = name == expected[f].function && got.file == expected[f].file && got.line == expected[f].line &&
               got.column == expected[f].column && got.inlined == (f + 1 < expected.size());
      }
    }
    if (lookup->status == FrameStatus::kSymbolicated) {
      ++result.restored;
      if (lookup->frames.size() > 1) ++result.with_inlines;
      if (!lookup->frames.back().clone.empty()) ++result.clones;
    }
    if (same) {
      ++result.equal;
    } else if (std::string kind = classify(expected, *lookup, symtab_names);
               ++result.kinds[kind] <= 3 && shown++ < 40) {
      printf("  [%s]", kind.c_str());
      char address[32];
      snprintf(address, sizeof(address), "0x%llx", static_cast<unsigned long long>(addresses[i]));
      printf("  differs at %s\n    llvm-symbolizer: %s\n    restack:         %s\n", address, describe(expected).c_str(),
             describe(*lookup).c_str());
    }
  }
  printf("  %s: %zu addresses (every %llu bytes), %zu equal (%.3f %%), %zu restored, %zu with inlines, %zu clones\n",
         module.c_str(), result.addresses, static_cast<unsigned long long>(step), result.equal, result.percent(),
         result.restored, result.with_inlines, result.clones);
  for (const auto& [kind, count] : result.kinds) printf("    %zu differ in: %s\n", count, kind.c_str());
  return result;
}

Expected<IngestReport> ingest(SymbolStore& store, const std::string& path, SymbolKind kind = SymbolKind::kElf) {
  UploadMeta meta;
  meta.kind = kind;
  meta.app = "accuracy";
  meta.build_id = "1";
  UploadContent content;
  content.path = path;
  content.display_name = std::filesystem::path(path).filename().string();
  return ingestNative(store, meta, content, IngestOptions{});
}

// kDwp: built with -gsplit-dwarf, the .dwo files packed by llvm-dwp-19 into `<library>.dwp` and
// removed; the library and its package are uploaded in one zip, llvm-symbolizer gets --dwp.
enum class Split { kNone, kDebuglink, kBuildId, kDwp };

struct Build {
  std::string c_compiler;
  std::string cxx_compiler;
  std::string flags;  // optimization and DWARF version
  Split split = Split::kNone;
  // Cross-compiled for another Linux architecture (Android's arm64-v8a libraries are aarch64 ELF,
  // its armeabi-v7a ones 32-bit ARM ELF): the GNU triplet of Debian's cross binutils, or empty.
  std::string cross = {};
  bool ios = false;  // an arm64 iOS dylib (Mach-O) with its dSYM; C sources only
};

// iOS: no Apple SDK here, so the C examples compile against the aarch64 glibc headers of Debian's
// cross toolchain (they only declare what the programs call; nothing is linked or run). clang
// reads `__nonnull` as a nullability keyword for Apple targets, which glibc's headers use as a
// macro: it is defined away. GoogleTest's headers need Apple's own, so the iOS build has the C
// programs only.
const char* kIosHeaders = " -D'__nonnull(p)=' -isystem /usr/aarch64-linux-gnu/include -idirafter /usr/include";

// aarch64 and 32-bit ARM: the cross compilers of Debian's gcc-aarch64-linux-gnu /
// g++-aarch64-linux-gnu and gcc-arm-linux-gnueabihf / g++-arm-linux-gnueabihf, and clang-19 with
// its target set (it finds the same cross toolchains). zlib's and libpng's headers
// hold no architecture-specific part, so the host's copies serve (searched after the cross
// sysroot's own headers); the library is linked without -lpng -lz (a shared library may leave
// them undefined), since their aarch64 builds are not installed.
const char* kCrossHeaders = " -idirafter /usr/include";

class NativeAccuracyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool :
         {"gcc-12", "g++-12", "clang-19", "clang++-19", "llvm-symbolizer-19", "objcopy", "aarch64-linux-gnu-gcc-12",
          "aarch64-linux-gnu-g++-12", "aarch64-linux-gnu-objcopy", "arm-linux-gnueabihf-gcc-12",
          "arm-linux-gnueabihf-g++-12", "arm-linux-gnueabihf-objcopy"}) {
      if (!requireTool(tool)) FAIL() << "reference tools missing: run scripts/setup.sh";
    }
    for (const char* path : {kPngTest, kGoogleTest}) {
      if (!std::filesystem::exists(path)) FAIL() << path << " missing: run scripts/setup.sh";
    }
  }

  // One shared library of every example program (each `main` renamed) and part of GoogleTest.
  std::string buildLibrary(const Build& build, const std::string& name) {
    std::vector<std::string> objects;
    auto compile = [&](const std::string& compiler, const std::string& source, const std::string& extra) {
      std::string object = work.file(std::filesystem::path(source).stem().string() + ".o");
      objects.push_back(object);
      const char* headers = build.ios ? kIosHeaders : !build.cross.empty() ? kCrossHeaders : "";
      return runOrFail(compiler + " " + build.flags + headers + " -fPIC -w " + extra + " -c " + source + " -o " +
                       object);
    };
    for (const char* program : {"gun", "enough", "gzappend", "gzjoin", "minigzip", "example", "gznorm", "gzlog"}) {
      if (!compile(build.c_compiler, std::string(kZlibExamples) + "/" + program + ".c",
                   std::string("-Dmain=main_") + program)) {
        return "";
      }
    }
    if (!compile(build.c_compiler, kPngTest, "-Dmain=main_pngtest")) return "";
    if (build.ios) {
      // A dylib as an iOS app embeds it (libz and libpng left to the loader), then its dSYM;
      // dsymutil-19 calls `lipo`, llvm-lipo-19 under that name (scripts/setup.d/native.sh).
      std::string library = work.file(name);
      std::string link =
          build.c_compiler + " -fuse-ld=lld -nostdlib -dynamiclib -Wl,-undefined,dynamic_lookup -o " + library;
      for (const std::string& object : objects) link += " " + object;
      if (!runOrFail(link) || !runOrFail("PATH=" RESTACK_DEPS_DIR "/native/bin:$PATH dsymutil-19 " + library + " -o " +
                                         library + ".dSYM")) {
        return "";
      }
      return library;
    }
    std::string gtest = kGoogleTest;
    for (const char* source : {"gtest-printers.cc", "gtest-filepath.cc", "gtest-port.cc", "gtest-test-part.cc"}) {
      if (!compile(build.cxx_compiler, gtest + "/src/" + source, "-I" + gtest + " -I" + gtest + "/include")) return "";
    }
    std::string library = work.file(name);
    std::string link = build.cxx_compiler + " -shared -Wl,--build-id -o " + library;
    for (const std::string& object : objects) link += " " + object;
    if (!runOrFail(!build.cross.empty() ? link : link + " -lpng -lz")) return "";
    return library;
  }

  // Builds, uploads (the stripped library first, then its debug file, when split) and compares.
  Agreement run(const Build& build, const std::string& name) {
    std::string library = buildLibrary(build, name);
    if (library.empty()) return {};
    TestStore store;
    std::vector<std::string> uploads{library};
    std::string oracle = library;
    std::string oracle_arguments;
    const std::string objcopy = build.cross.empty() ? "objcopy" : build.cross + "-objcopy";
    if (build.split == Split::kDebuglink || build.split == Split::kBuildId) {
      // As distributions ship them: the debug file keeps .symtab and DWARF, the library only
      // .dynsym (objcopy --strip-unneeded, Debian's dh_strip).
      std::filesystem::create_directories(work.file("lib"));
      std::string stripped = work.file("lib/" + name);
      std::string debug = work.file(name + ".debug");
      if (!runOrFail(objcopy + " --only-keep-debug " + library + " " + debug)) return {};
      if (build.split == Split::kDebuglink) {
        if (!runOrFail(objcopy + " --strip-unneeded --add-gnu-debuglink=" + debug + " " + library + " " + stripped) ||
            !runOrFail("cp " + debug + " " + work.file("lib/" + name + ".debug"))) {
          return {};
        }
      } else {
        auto id = runCommand("readelf -n " + library + " | awk '/Build ID/{print $3}'").output;
        while (!id.empty() && id.back() == '\n') id.pop_back();
        if (id.size() < 4) {
          ADD_FAILURE() << "no build id in " << library;
          return {};
        }
        std::string folder = work.file("debug/.build-id/" + id.substr(0, 2));
        std::filesystem::create_directories(folder);
        if (!runOrFail(objcopy + " --strip-unneeded " + library + " " + stripped) ||
            !runOrFail("cp " + debug + " " + folder + "/" + id.substr(2) + ".debug")) {
          return {};
        }
        oracle_arguments = "--debug-file-directory=" + work.file("debug");
      }
      uploads = {stripped, debug};
      oracle = stripped;
    }
    if (build.ios) {
      // Uploaded as an iOS build uploads them: the app's binary and its dSYM; llvm-symbolizer
      // reads the dSYM's DWARF file.
      uploads = {library, library + ".dSYM"};
      oracle = library + ".dSYM/Contents/Resources/DWARF/" + name;
    }
    if (build.split == Split::kDwp) return runWithPackage(library, name);
    std::string debug_id;
    for (const std::string& upload : uploads) {
      auto report = ingest(*store.store, upload,
                           !build.ios                  ? SymbolKind::kElf
                           : upload.ends_with(".dSYM") ? SymbolKind::kDsym
                                                       : SymbolKind::kMachO);
      if (!report) {
        ADD_FAILURE() << report.error().describe();
        return {};
      }
      EXPECT_EQ(report->ids.size(), 1u);
      if (!report->ids.empty()) debug_id = report->ids[0];
    }
    NativeResolver resolver(*store.store, {});
    return compare(resolver, debug_id, name, oracle, stepFromEnvironment(3), build.split == Split::kNone,
                   oracle_arguments);
  }

  // Split DWARF: the package made of the objects' .dwo files (which are then removed, so that
  // llvm-symbolizer reads the package or nothing), the zip of library and package uploaded as a
  // worker receives it.
  Agreement runWithPackage(const std::string& library, const std::string& name) {
    const std::string package = library + ".dwp";
    if (!runOrFail("cd " + work.path() + " && llvm-dwp-19 *.dwo -o " + package + " && rm *.dwo") ||
        !runOrFail("cd " + work.path() + " && zip -q upload.zip " + name + " " + name + ".dwp")) {
      return {};
    }
    TestStore store;
    UploadMeta meta;
    meta.app = "accuracy";
    meta.build_id = "1";
    UploadContent content;
    content.path = work.file("upload.zip");
    content.display_name = "upload.zip";
    auto report = ingestUpload(*store.store, meta, content, IngestOptions{});
    if (!report) {
      ADD_FAILURE() << report.error().describe();
      return {};
    }
    EXPECT_EQ(report->ids.size(), 1u);
    for (const std::string& warning : report->warnings) ADD_FAILURE() << "unexpected warning: " << warning;
    NativeResolver resolver(*store.store, {});
    return compare(resolver, report->ids.empty() ? "" : report->ids[0], name, library, stepFromEnvironment(3),
                   /*symtab_names=*/true, "--dwp=" + package);
  }

  TempDir work;
};

constexpr double kTarget = 99.5;

TEST_F(NativeAccuracyTest, Gcc12O2Dwarf5) {
  auto result = run({"gcc-12", "g++-12", "-O2 -g -gdwarf-5", Split::kNone}, "libgcc-o2-dwarf5.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GT(result.clones, 100u) << "gcc clones (.isra, .constprop, .part, .cold) expected";
  EXPECT_GE(result.percent(), kTarget);
}

TEST_F(NativeAccuracyTest, Gcc12O3Dwarf4SplitByDebuglink) {
  auto result = run({"gcc-12", "g++-12", "-O3 -g -gdwarf-4", Split::kDebuglink}, "libgcc-o3-dwarf4.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

TEST_F(NativeAccuracyTest, Gcc12O2Dwarf4SplitByBuildId) {
  auto result = run({"gcc-12", "g++-12", "-O2 -g -gdwarf-4", Split::kBuildId}, "libgcc-o2-dwarf4.so");
  EXPECT_GE(result.percent(), kTarget);
}

TEST_F(NativeAccuracyTest, Clang19O2Dwarf4) {
  auto result = run({"clang-19", "clang++-19", "-O2 -g -gdwarf-4", Split::kNone}, "libclang-o2-dwarf4.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

TEST_F(NativeAccuracyTest, Clang19O3Dwarf5SplitByBuildId) {
  auto result = run({"clang-19", "clang++-19", "-O3 -g -gdwarf-5", Split::kBuildId}, "libclang-o3-dwarf5.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

// (No gcc-12 DWARF 5 build: llvm-dwp-19 does not finish packing gcc-12's DWARF 5 .dwo of
// pngtest.c, 14 minutes of CPU and counting, while its DWARF 4 ones take a second.)
TEST_F(NativeAccuracyTest, Gcc12O3Dwarf4SplitDwarfWithDwp) {
  ASSERT_TRUE(requireTool("llvm-dwp-19"));
  auto result = run({"gcc-12", "g++-12", "-O3 -g -gdwarf-4 -gsplit-dwarf", Split::kDwp}, "libgcc-o3-dwp4.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

TEST_F(NativeAccuracyTest, Clang19O2Dwarf5SplitDwarfWithDwp) {
  ASSERT_TRUE(requireTool("llvm-dwp-19"));
  auto result = run({"clang-19", "clang++-19", "-O2 -g -gdwarf-5 -gsplit-dwarf", Split::kDwp}, "libclang-o2-dwp5.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

TEST_F(NativeAccuracyTest, Clang19O2Dwarf4SplitDwarfWithDwp) {
  ASSERT_TRUE(requireTool("llvm-dwp-19"));
  auto result = run({"clang-19", "clang++-19", "-O2 -g -gdwarf-4 -gsplit-dwarf", Split::kDwp}, "libclang-o2-dwp4.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

// A release build without -g, not stripped: only the symbol table names frames. llvm-symbolizer
// gives a static function the file of the STT_FILE symbol before it ("gun.c"), so Restack does.
TEST_F(NativeAccuracyTest, Gcc12O2WithoutDebugInfo) {
  auto result = run({"gcc-12", "g++-12", "-O2 -g0", Split::kNone}, "libgcc-o2-nodebug.so");
  EXPECT_EQ(result.with_inlines, 0u);
  EXPECT_GT(result.restored, 10000u);
  EXPECT_GE(result.percent(), kTarget);
}

// Restack prints Rust names as Rust's own backtrace does (formats/native/demangle.h), which
// llvm-symbolizer's demangler does not: it keeps legacy names' escapes and hash
// ("orders::Order$LT$T$GT$::total::hc4157ac8c6a19a9f"). So the oracle prints the mangled names
// (--no-demangle) and GNU c++filt's own Rust demangler (binutils; -i: without the hash, as Rust's
// backtrace prints them) reads those that are Rust's; the rest are demangled as llvm-symbolizer
// does. tests/grouping_e2e/rust_e2e_test.cc compares with a program's own backtrace.
void demangleAsRustPrints(std::vector<std::vector<OracleFrame>>& answers) {
  std::vector<std::string> names;
  std::map<std::string, std::string> demangled;
  for (const auto& frames : answers) {
    for (const OracleFrame& frame : frames) {
      if (!frame.function.empty() && demangled.emplace(frame.function, "").second) names.push_back(frame.function);
    }
  }
  TempDir dir;
  std::string input;
  for (const std::string& name : names) input += name + "\n";
  writeFile(dir.file("names"), input);
  if (!runOrFail("c++filt -i --format=rust < " + dir.file("names") + " > " + dir.file("demangled"))) return;
  std::istringstream lines(readBinary(dir.file("demangled")));
  std::string line;
  for (const std::string& name : names) {
    if (!std::getline(lines, line)) {
      ADD_FAILURE() << "c++filt answered fewer names";
      return;
    }
    demangled[name] = line != name ? line : llvm::demangle(name);
  }
  for (auto& frames : answers) {
    for (OracleFrame& frame : frames) {
      if (!frame.function.empty()) frame.function = demangled[frame.function];
    }
  }
}

// Rust in a native library (tests/native/fixtures/inventory.rs), optimised with full debug info:
// the standard library inlined deeply, ThinLTO's local copies (".llvm.N" clones), legacy mangled
// names, and the standard library's own code that has no DWARF here (named from the symbol table,
// its file the codegen unit's STT_FILE name). rustc comes with the Rust toolchain that
// scripts/setup.sh requires for the Swift demangler. A clone's name is compared without its
// suffix: Rust prints none (both demanglers drop ".llvm.N").
TEST_F(NativeAccuracyTest, RustCdylibOptimisedWithDebugInfo) {
  if (!requireTool("c++filt")) FAIL() << "reference tools missing: run scripts/setup.sh";
  const std::string rustc = runCommand("command -v rustc || echo \"$HOME/.cargo/bin/rustc\"").output;
  const std::string compiler = rustc.substr(0, rustc.find('\n'));
  ASSERT_TRUE(std::filesystem::exists(compiler)) << "rustc missing: install Rust (scripts/setup.sh says how)";
  const std::string library = work.file("libinventory.so");
  ASSERT_TRUE(runOrFail(compiler + " --edition 2021 --crate-type cdylib -C opt-level=3 -C debuginfo=2 " +
                        RESTACK_SOURCE_DIR "/tests/native/fixtures/inventory.rs -o " + library));
  TestStore store;
  auto report = ingest(*store.store, library);
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->ids.size(), 1u);
  NativeResolver resolver(*store.store, {});
  auto result = compare(resolver, report->ids[0], "libinventory.so", library, stepFromEnvironment(7), false,
                        "--no-demangle", demangleAsRustPrints);
  EXPECT_GT(result.with_inlines, 5000u);
  EXPECT_GT(result.clones, 100u) << "ThinLTO's .llvm.N copies expected";
  EXPECT_GE(result.percent(), kTarget);
}

// aarch64 (Android's arm64-v8a ABI is aarch64 ELF): gcc-12 with a split debug file, where gcc's
// clones and DWARF 4 meet, and clang-19 in one file.
TEST_F(NativeAccuracyTest, Gcc12Aarch64O2Dwarf4SplitByDebuglink) {
  Build build{"aarch64-linux-gnu-gcc-12", "aarch64-linux-gnu-g++-12", "-O2 -g -gdwarf-4", Split::kDebuglink};
  build.cross = "aarch64-linux-gnu";
  auto result = run(build, "libgcc-aarch64-o2-dwarf4.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

TEST_F(NativeAccuracyTest, Clang19Aarch64O3Dwarf5) {
  Build build{"clang-19 --target=aarch64-linux-gnu", "clang++-19 --target=aarch64-linux-gnu", "-O3 -g -gdwarf-5"};
  build.cross = "aarch64-linux-gnu";
  auto result = run(build, "libclang-aarch64-o3-dwarf5.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

// 32-bit ARM (Android's armeabi-v7a ABI): gcc-12 emits Thumb-2 by default for this target, so
// every function symbol has its low bit set (the Thumb marker, not part of the address) and
// instructions are 2 or 4 bytes; clang-19 in ARM mode mixes in 4-byte-only code and literal pools.
TEST_F(NativeAccuracyTest, Gcc12Armv7ThumbO2Dwarf4SplitByBuildId) {
  Build build{"arm-linux-gnueabihf-gcc-12", "arm-linux-gnueabihf-g++-12", "-O2 -g -gdwarf-4 -mthumb", Split::kBuildId};
  build.cross = "arm-linux-gnueabihf";
  auto result = run(build, "libgcc-armv7-thumb-o2-dwarf4.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

TEST_F(NativeAccuracyTest, Clang19Armv7ArmModeO2Dwarf5) {
  Build build{"clang-19 --target=arm-linux-gnueabihf -marm", "clang++-19 --target=arm-linux-gnueabihf -marm",
              "-O2 -g -gdwarf-5"};
  build.cross = "arm-linux-gnueabihf";
  auto result = run(build, "libclang-armv7-arm-o2-dwarf5.so");
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

// iOS's arm64 Mach-O with a dSYM, as Xcode builds them with clang.
TEST_F(NativeAccuracyTest, Clang19IosArm64O2DylibAndDsym) {
  Build build{"clang-19 --target=arm64-apple-ios14", "", "-O2 -g"};
  build.ios = true;
  auto result = run(build, "libzacc.dylib");
  EXPECT_GT(result.with_inlines, 500u);
  EXPECT_GE(result.percent(), kTarget);
}

// Debian's libc.so.6 (stripped, .dynsym only) and its detached debug file from libc6-dbg, found
// by llvm-symbolizer under /usr/lib/debug/.build-id.
TEST_F(NativeAccuracyTest, DebianLibcWithLibc6Dbg) {
  auto id = runCommand(std::string("readelf -n ") + kLibc + " | awk '/Build ID/{print $3}'").output;
  while (!id.empty() && id.back() == '\n') id.pop_back();
  ASSERT_GE(id.size(), 4u);
  std::string debug = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  ASSERT_TRUE(std::filesystem::exists(debug)) << debug << " missing: install libc6-dbg (scripts/setup.sh)";
  TestStore store;
  std::string debug_id;
  for (const std::string& upload : {std::string(kLibc), debug}) {
    auto report = ingest(*store.store, upload);
    ASSERT_TRUE(report) << report.error().describe();
    ASSERT_EQ(report->ids.size(), 1u);
    debug_id = report->ids[0];
  }
  NativeResolver resolver(*store.store, {});
  auto result = compare(resolver, debug_id, "libc.so.6", kLibc, stepFromEnvironment(17), false);
  EXPECT_GT(result.with_inlines, 1000u);
  EXPECT_GE(result.percent(), kTarget);
}

// Any file, on request: RESTACK_ACCURACY_FILE=path (an unstripped ELF with DWARF, such as the
// large-DWARF input of loadtest/native/build_bigdwarf.sh), sampled every RESTACK_ACCURACY_STEP-th
// byte of its code (default 997). Skipped when the variable is not set (never in CI).
TEST_F(NativeAccuracyTest, FileFromEnvironment) {
  const char* path = std::getenv("RESTACK_ACCURACY_FILE");
  if (path == nullptr || *path == 0) GTEST_SKIP() << "set RESTACK_ACCURACY_FILE to compare a file of your own";
  TestStore store;
  auto report = ingest(*store.store, path);
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->ids.size(), 1u);
  NativeResolver resolver(*store.store, {});
  auto result = compare(resolver, report->ids[0], std::filesystem::path(path).filename().string(), path,
                        stepFromEnvironment(997), true);
  EXPECT_GT(result.addresses, 0u);
  EXPECT_GE(result.percent(), kTarget);
}

}  // namespace
}  // namespace restack::native_test
