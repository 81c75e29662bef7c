// Breakpad .sym uploads against the DWARF they were made from. C and C++ programs are built at
// test time (clang-19 and gcc; x86_64 and aarch64; -O0 and -O2 with inlining; DWARF 4 and 5),
// Mozilla's dump_syms (scripts/setup.d/breakpad.sh) turns each into a .sym, and the .sym goes
// into one store, the binary itself into another. Every address of the code section is looked up
// in both: function, file, line and the whole inline chain must be equal. What .sym cannot carry
// is left out of the comparison: columns (line records have none) and the compiler-clone kind
// (`clone`, taken from the symbol table's suffix). A sample is also compared with
// llvm-symbolizer-19 on the binary, as tests/native does. No answer is written by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "symbolstore/breakpad/breakpad_ingest.h"
#include "symbolstore/ingest.h"
#include "symbolstore/native/native_resolver.h"
#include "tests/native/native_test_support.h"
#include "tests/native/test_sources.h"

namespace restack::native_test {
namespace {

// More inlining shapes than tests/native's sources: a four-deep always_inline chain, one inline
// function called from several sites, a static function gcc clones (constprop/isra), and a
// function split into hot and cold parts.
constexpr const char* kDeepSource = R"C(
static inline __attribute__((always_inline)) int d4(int v) { return v * 7 + (v >> 2); }
static inline __attribute__((always_inline)) int d3(int v) { return d4(v) ^ d4(v + 1); }
static inline __attribute__((always_inline)) int d2(int v) { return d3(v) + d3(v * 3); }
static inline __attribute__((always_inline)) int d1(int v) { return d2(v) - d2(v - 5); }

static int __attribute__((noinline)) tuned(int* p, int k, int unused) {
  (void)unused;
  return p[0] * k + p[1];
}

static __attribute__((noinline, cold)) int rare(int v) { return v * 13 + 1; }

__attribute__((noinline)) int deep_entry(int* data, int n) {
  int total = 0;
  for (int i = 0; i < n; ++i) {
    total += d1(data[i]);
    if (data[i] == 12345) total += rare(total);
  }
  return total + tuned(data, 3, n) + tuned(data + 1, 3, n);
}
)C";

std::string dumpSyms() {
  return std::string(RESTACK_DEPS_DIR) + "/breakpad/bin/dump_syms";
}

bool haveDumpSyms() {
  if (std::filesystem::exists(dumpSyms())) return true;
  ADD_FAILURE() << dumpSyms() << " is missing: run scripts/setup.sh (scripts/setup.d/breakpad.sh)";
  return false;
}

struct Toolchain {
  std::string label;
  std::string cc;    // compiles .c
  std::string cxx;   // compiles .cc
  std::string link;  // links the shared library
  std::vector<std::string> tools;
};

Toolchain clangX86() {
  return {"clang-19 x86_64",
          "clang-19 -fPIC -ffreestanding",
          "clang++-19 -fPIC -ffreestanding",
          "clang-19 -shared -nostdlib -fuse-ld=lld -Wl,--build-id",
          {"clang-19", "clang++-19", "ld.lld-19"}};
}
Toolchain gccX86() {
  return {"gcc x86_64",
          "gcc -fPIC -ffreestanding",
          "g++ -fPIC -ffreestanding",
          "gcc -shared -nostdlib -Wl,--build-id",
          {"gcc", "g++"}};
}
Toolchain clangArm64() {
  const std::string android = "clang-19 --target=aarch64-linux-android24 -fPIC -ffreestanding -nostdlibinc";
  return {"clang-19 aarch64",
          android,
          android,
          android + " -shared -nostdlib -fuse-ld=lld -Wl,--build-id",
          {"clang-19", "ld.lld-19"}};
}
Toolchain gccArm64() {
  return {"gcc aarch64",
          "aarch64-linux-gnu-gcc -fPIC -ffreestanding",
          "aarch64-linux-gnu-g++ -fPIC -ffreestanding",
          "aarch64-linux-gnu-gcc -shared -nostdlib -Wl,--build-id",
          {"aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++"}};
}

std::string describe(const FrameLookup& lookup) {
  std::ostringstream out;
  out << frameStatusName(lookup.status) << " " << lookup.tier << " ";
  for (const auto& f : lookup.frames) {
    out << "[" << f.function << " " << f.file << ":" << f.line << (f.inlined ? " inlined" : "") << "] ";
  }
  return out.str();
}
std::string describe(const std::vector<OracleFrame>& frames) {
  std::ostringstream out;
  for (const auto& f : frames) out << "[" << f.function << " " << f.file << ":" << f.line << "] ";
  return out.str();
}

// dump_syms writes names demangled, and its demangler leaves out the return type of a function
// template's instance, which LLVM's (so llvm-symbolizer and the DWARF path) prints:
// "int shapes::apply<f(int)::$_0>(f(int)::$_0, int)" becomes "shapes::apply<f(int)::$_0>(…)".
// A .sym holds no mangled name to redo it from, so the comparison accepts exactly that
// difference (and counts it).
//
// Nor does a .sym know compiler clones: dump_syms names gcc's "tuned.constprop.0" and
// "deep_entry.cold" by their source function, where llvm-symbolizer prints the symbol and the
// DWARF path may name the outermost frame from the symbol table ("f(int) (.constprop.0)").
// Such a suffix on the expected name is accepted (and counted) too.
std::string withoutCloneSuffix(const std::string& name, size_t* clone_names) {
  static const std::regex kSuffix(
      R"(( \((\.(constprop|isra|part|cold|lto_priv)(\.[0-9]+)?)+\))|((\.(constprop|isra|part|cold|lto_priv)(\.[0-9]+)?)+)$)");
  std::string stripped = std::regex_replace(name, kSuffix, "");
  if (stripped != name && clone_names) ++*clone_names;
  return stripped;
}

bool sameName(const std::string& expected_name, const std::string& got, size_t* template_returns,
              size_t* clone_names = nullptr) {
  if (expected_name == got) return true;
  const std::string expected = withoutCloneSuffix(expected_name, clone_names);
  if (expected == got) return true;
  if (got.find('<') != std::string::npos && expected.size() > got.size() + 1 && expected.ends_with(got) &&
      expected[expected.size() - got.size() - 1] == ' ') {
    if (template_returns) ++*template_returns;
    return true;
  }
  return false;
}

// Frames equal in everything a .sym carries.
bool sameFrames(const FrameLookup& a, const FrameLookup& b, size_t* template_returns, size_t* clone_names) {
  if (a.status != b.status || a.frames.size() != b.frames.size()) return false;
  for (size_t i = 0; i < a.frames.size(); ++i) {
    const SymbolizedFrame& x = a.frames[i];
    const SymbolizedFrame& y = b.frames[i];
    if (!sameName(x.function, y.function, template_returns, clone_names) || x.file != y.file || x.line != y.line ||
        x.inlined != y.inlined || x.module != y.module) {
      return false;
    }
  }
  return true;
}

std::string hex(uint64_t value) {
  char buffer[24];
  snprintf(buffer, sizeof(buffer), "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

struct Tally {
  size_t addresses = 0;
  size_t dwarf = 0;    // the binary's DWARF answered
  size_t symbols = 0;  // the binary's symbol table answered
  size_t with_inlines = 0;
  size_t max_depth = 0;
  size_t clones = 0;            // answers whose outermost frame is a compiler clone (kind not compared)
  size_t template_returns = 0;  // names differing only by a template's return type (sameName)
  size_t clone_names = 0;       // names differing only by a clone suffix (withoutCloneSuffix)
  size_t mismatches = 0;
  size_t oracle_checked = 0;
  size_t oracle_mismatches = 0;
};

Expected<IngestReport> ingestFile(SymbolStore& store, const std::string& path, bool breakpad,
                                  SymbolKind kind = SymbolKind::kElf) {
  UploadMeta meta;
  meta.app = "demo";
  meta.build_id = "1.0";
  UploadContent content;
  content.path = path;
  content.display_name = std::filesystem::path(path).filename().string();
  if (breakpad) return ingestBreakpad(store, meta, content, IngestOptions{});
  meta.kind = kind;
  return ingestNative(store, meta, content, IngestOptions{});
}

// Ingests `binary` (as `kind`) into one store and `sym` into another and compares them at every
// address of the code section of `code_object`; `image_base` is subtracted for lookups (Mach-O
// frames carry offsets from __TEXT). A sample is compared with llvm-symbolizer on `oracle_object`.
Tally compareUploads(const std::string& label, const std::string& binary, SymbolKind kind, const std::string& sym,
                     const std::string& code_object, uint64_t image_base, const std::string& oracle_object,
                     const std::string& module) {
  Tally tally;
  TestStore from_sym;
  TestStore from_binary;
  auto sym_report = ingestFile(*from_sym.store, sym, true);
  auto binary_report = ingestFile(*from_binary.store, binary, false, kind);
  if (!sym_report || !binary_report) {
    ADD_FAILURE() << (sym_report ? binary_report.error().describe() : sym_report.error().describe());
    return tally;
  }
  // The .sym upload serves the image's own id: the full GNU build id, or the Mach-O UUID.
  EXPECT_EQ(sym_report->ids, binary_report->ids);
  EXPECT_EQ(sym_report->kind, kind == SymbolKind::kElf ? SymbolKind::kElf : SymbolKind::kMachO);
  EXPECT_GT(sym_report->records, 0u);
  EXPECT_TRUE(sym_report->warnings.empty()) << sym_report->warnings.front();
  if (binary_report->ids.empty()) return tally;
  const std::string id = binary_report->ids[0];

  NativeResolver sym_resolver(*from_sym.store, {});
  NativeResolver binary_resolver(*from_binary.store, {});
  stack::NativeFrameLine frame;
  frame.debug_id = id;
  frame.module = module;
  const EventScope scope{"demo", "1.0", "android", {}};
  const CodeRange code = codeRange(code_object);
  EXPECT_LT(code.begin, code.end);
  std::vector<uint64_t> sample;
  std::map<uint64_t, FrameLookup> sym_answers;
  for (uint64_t address = code.begin; address < code.end; ++address) {
    auto expected = binary_resolver.lookup(scope, frame, address - image_base);
    auto got = sym_resolver.lookup(scope, frame, address - image_base);
    if (!expected || !got) {
      ADD_FAILURE() << (expected ? got.error().describe() : expected.error().describe());
      return tally;
    }
    ++tally.addresses;
    bool same = true;
    if (expected->status == FrameStatus::kSymbolicated && expected->tier == "dwarf") {
      ++tally.dwarf;
      if (!expected->frames.back().clone.empty()) ++tally.clones;
      if (expected->frames.size() > 1) ++tally.with_inlines;
      tally.max_depth = std::max(tally.max_depth, expected->frames.size());
      same = got->tier == "dwarf" && sameFrames(*expected, *got, &tally.template_returns, &tally.clone_names);
      if (address % 7 == 0) sample.push_back(address);
    } else if (expected->status == FrameStatus::kSymbolicated) {
      // Symbol table only (no DWARF covers the address): a PUBLIC record must name it alike.
      ++tally.symbols;
      same = got->status == FrameStatus::kSymbolicated && !got->frames.empty() &&
             sameName(expected->frames.back().function, got->frames.back().function, &tally.template_returns);
    } else {
      same = got->status != FrameStatus::kSymbolicated || got->tier == "symtab";
    }
    EXPECT_TRUE(got->frames.empty() || got->frames.back().clone.empty());
    if (!same && ++tally.mismatches <= 10) {
      ADD_FAILURE() << label << " " << hex(address) << "\n  binary: " << describe(*expected)
                    << "\n  .sym:   " << describe(*got);
    }
    if (address % 7 == 0) sym_answers.emplace(address, std::move(*got));
  }

  // llvm-symbolizer on the binary, on a sample of the addresses its DWARF covers.
  auto oracle = symbolizeWithLlvm(oracle_object, sample);
  EXPECT_EQ(oracle.size(), sample.size());
  for (size_t i = 0; i < sample.size() && i < oracle.size(); ++i) {
    const FrameLookup& got = sym_answers.at(sample[i]);
    ++tally.oracle_checked;
    bool same = got.frames.size() == oracle[i].size();
    for (size_t f = 0; same && f < oracle[i].size(); ++f) {
      same = sameName(oracle[i][f].function, got.frames[f].function, nullptr) &&
             got.frames[f].file == oracle[i][f].file && got.frames[f].line == oracle[i][f].line;
    }
    if (!same && ++tally.oracle_mismatches <= 5) {
      ADD_FAILURE() << label << " " << hex(sample[i]) << "\n  llvm-symbolizer: " << describe(oracle[i])
                    << "\n  .sym:            " << describe(got);
    }
  }
  EXPECT_EQ(tally.mismatches, 0u) << "of " << tally.addresses << " addresses";
  EXPECT_EQ(tally.oracle_mismatches, 0u) << "of " << tally.oracle_checked << " sampled addresses";
  EXPECT_GT(tally.dwarf, 100u);
  printf(
      "  %s: %zu addresses (dwarf %zu, symbols %zu), %zu with inlines, deepest %zu frames, %zu in clones, "
      "%zu template return types, %zu clone names, %zu mismatches; llvm-symbolizer sample %zu, %zu mismatches\n",
      label.c_str(), tally.addresses, tally.dwarf, tally.symbols, tally.with_inlines, tally.max_depth, tally.clones,
      tally.template_returns, tally.clone_names, tally.mismatches, tally.oracle_checked, tally.oracle_mismatches);
  return tally;
}

// Builds the sources with `toolchain` and `flags` into a shared library, dumps it, ingests both
// and compares every code address.
Tally buildAndCompare(const Toolchain& toolchain, const std::string& flags, const std::string& name) {
  Tally tally;
  if (!haveDumpSyms()) return tally;
  for (const std::string& tool : toolchain.tools) {
    if (!requireTool(tool)) return tally;
  }
  if (!requireTool("llvm-symbolizer-19")) return tally;
  TempDir dir;
  writeFile(dir.file("shapes.cc"), kCxxSource);
  writeFile(dir.file("blend.c"), kCSource);
  writeFile(dir.file("deep.c"), kDeepSource);
  const std::string so = dir.file(name);
  const std::string sym = so + ".sym";
  // Compiled from their folder by relative name, as build systems do. (dump_syms 2.3.9 joins
  // DWARF 5's directory 0, the compilation directory, with a file name that is already absolute:
  // "/work" + "/tmp/x/a.c" gives "FILE 0 /work/tmp/x/a.c". Such a .sym names files by those
  // paths; nothing in it tells the true one.)
  const std::string in_dir = "cd " + dir.path() + " && ";
  if (!runOrFail(in_dir + toolchain.cxx + " " + flags + " -c shapes.cc -o shapes.o") ||
      !runOrFail(in_dir + toolchain.cc + " " + flags + " -c blend.c -o blend.o") ||
      !runOrFail(in_dir + toolchain.cc + " " + flags + " -c deep.c -o deep.o") ||
      !runOrFail(toolchain.link + " " + dir.file("shapes.o") + " " + dir.file("blend.o") + " " + dir.file("deep.o") +
                 " -o " + so) ||
      !runOrFail(dumpSyms() + " --inlines --output " + sym + " " + so)) {
    return tally;
  }

  return compareUploads(toolchain.label + " " + flags, so, SymbolKind::kElf, sym, so, 0, so, name);
}

// Breakpad symbols as Crashpad and Electron ship them: one zip, <name>/<id>/<name>.sym per image.
// Every .sym is ingested (each as if uploaded alone) and restores what its library's own DWARF
// restores. Before, the zip was refused ("upload one symbol file per message").
TEST(BreakpadTools, AZipOfSymFilesIngestsEveryImage) {
  if (!haveDumpSyms() || !requireTool("clang-19")) return;
  TempDir dir;
  writeFile(dir.file("blend.c"), kCSource);
  writeFile(dir.file("deep.c"), kDeepSource);
  const Toolchain toolchain = clangX86();
  std::vector<std::pair<std::string, std::string>> libraries;  // library, its .sym
  for (const char* source : {"blend", "deep"}) {
    const std::string so = dir.file(std::string("lib") + source + ".so");
    ASSERT_TRUE(runOrFail("cd " + dir.path() + " && " + toolchain.cc + " -g -O2 -c " + source + ".c -o " + source +
                          ".o && " + toolchain.link + " " + source + ".o -o " + so));
    const std::string sym = dir.file(std::string("lib") + source + ".so.sym");
    ASSERT_TRUE(runOrFail(dumpSyms() + " --inlines --output " + sym + " " + so));
    // <name>/<breakpad id>/<name>.sym, the symbol store layout.
    std::ifstream sym_file(sym);
    std::string module_line;
    std::getline(sym_file, module_line);
    std::istringstream words(module_line);
    std::string word, id;
    for (int i = 0; i < 4 && words >> word; ++i) id = word;
    const std::string folder = dir.file("symbols/lib" + std::string(source) + ".so/" + id);
    std::filesystem::create_directories(folder);
    std::filesystem::copy_file(sym, folder + "/lib" + source + ".so.sym");
    libraries.emplace_back(so, sym);
  }
  ASSERT_TRUE(runOrFail("cd " + dir.file("symbols") + " && zip -qr " + dir.file("symbols.zip") + " ."));

  TestStore zipped;
  auto report = uploadPath(*zipped.store, dir.file("symbols.zip"));
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->ids.size(), 2u);
  NativeResolver zipped_resolver(*zipped.store, {});
  for (const auto& [so, sym] : libraries) {
    SCOPED_TRACE(so);
    TestStore alone;
    auto own = ingestFile(*alone.store, so, false);
    ASSERT_TRUE(own) << own.error().describe();
    ASSERT_EQ(own->ids.size(), 1u);
    ASSERT_NE(std::find(report->ids.begin(), report->ids.end(), own->ids[0]), report->ids.end());
    NativeResolver own_resolver(*alone.store, {});
    stack::NativeFrameLine frame;
    frame.debug_id = own->ids[0];
    frame.module = std::filesystem::path(so).filename().string();
    EventScope scope{"demo", "1.0", "android", {}};
    const CodeRange range = codeRange(so);
    size_t compared = 0;
    for (uint64_t address = range.begin; address < range.end; address += 4) {
      auto from_zip = zipped_resolver.lookup(scope, frame, address);
      auto from_dwarf = own_resolver.lookup(scope, frame, address);
      ASSERT_TRUE(from_zip && from_dwarf);
      ASSERT_EQ(from_zip->status, from_dwarf->status) << address;
      if (from_dwarf->status != FrameStatus::kSymbolicated) continue;
      ASSERT_EQ(from_zip->frames.size(), from_dwarf->frames.size()) << address;
      EXPECT_EQ(from_zip->frames.front().line, from_dwarf->frames.front().line) << address;
      ++compared;
    }
    EXPECT_GT(compared, 20u);
  }
}

TEST(BreakpadTools, ClangX86O0Dwarf4) {
  buildAndCompare(clangX86(), "-g -gdwarf-4 -O0", "libclang_o0_d4.so");
}

TEST(BreakpadTools, ClangX86O2Dwarf5Inlines) {
  Tally tally = buildAndCompare(clangX86(), "-g -gdwarf-5 -O2", "libclang_o2_d5.so");
  EXPECT_GT(tally.with_inlines, 50u);
  EXPECT_GE(tally.max_depth, 5u);  // d1..d4 inside deep_entry
}

TEST(BreakpadTools, GccX86O0Dwarf5) {
  buildAndCompare(gccX86(), "-g -gdwarf-5 -O0", "libgcc_o0_d5.so");
}

TEST(BreakpadTools, GccX86O2Dwarf4Inlines) {
  Tally tally = buildAndCompare(gccX86(), "-g -gdwarf-4 -O2", "libgcc_o2_d4.so");
  EXPECT_GT(tally.with_inlines, 50u);
  EXPECT_GE(tally.max_depth, 5u);
}

TEST(BreakpadTools, ClangArm64O2Dwarf5Inlines) {
  Tally tally = buildAndCompare(clangArm64(), "-g -gdwarf-5 -O2", "libclang_arm64_o2.so");
  EXPECT_GT(tally.with_inlines, 20u);
}

// iOS: an arm64 Mach-O executable (__TEXT at 0x100000000) and its dSYM, dumped from the dSYM. The
// .sym's MODULE id is the UUID unswapped and its addresses are offsets from __TEXT, as frames
// carry them.
TEST(BreakpadTools, MachOArm64ExecutableFromDsym) {
  if (!haveDumpSyms()) return;
  for (const char* tool : {"clang-19", "ld64.lld-19", "dsymutil-19", "llvm-symbolizer-19"}) {
    if (!requireTool(tool)) return;
  }
  TempDir dir;
  writeFile(dir.file("shapes.cc"), kCxxSource);
  writeFile(dir.file("blend.c"), kCSource);
  writeFile(dir.file("deep.c"), kDeepSource);
  const std::string ios = "cd " + dir.path() + " && clang-19 --target=arm64-apple-ios14 -g -O2 ";
  const std::string exe = dir.file("Demo");
  const std::string dwarf = dir.file("Demo.dSYM/Contents/Resources/DWARF/Demo");
  ASSERT_TRUE(runOrFail(ios + "-x c++ -c shapes.cc -o shapes.o") && runOrFail(ios + "-c blend.c -o blend.o") &&
              runOrFail(ios + "-c deep.c -o deep.o") &&
              runOrFail(ios + "-fuse-ld=lld -nostdlib -Wl,-e,_c_entry -undefined dynamic_lookup shapes.o blend.o "
                              "deep.o -o Demo") &&
              runOrFail("dsymutil-19 " + exe + " -o " + dir.file("Demo.dSYM")) &&
              runOrFail(dumpSyms() + " --inlines -a arm64 --output " + dir.file("Demo.sym") + " " + dwarf));
  Tally tally = compareUploads("clang-19 arm64 Mach-O -O2", dir.file("Demo.dSYM"), SymbolKind::kDsym,
                               dir.file("Demo.sym"), exe, 0x100000000, dwarf, "Demo");
  EXPECT_GT(tally.with_inlines, 20u);
}

TEST(BreakpadTools, GccArm64O2Dwarf4Inlines) {
  Tally tally = buildAndCompare(gccArm64(), "-g -gdwarf-4 -O2", "libgcc_arm64_o2.so");
  EXPECT_GT(tally.with_inlines, 20u);
}

}  // namespace
}  // namespace restack::native_test
