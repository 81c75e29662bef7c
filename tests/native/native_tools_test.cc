// Native symbolication on binaries built at test time (aarch64 ELF for Android, arm64/x86_64
// Mach-O + dSYM for iOS), every restored frame compared with llvm-symbolizer-19 --inlines on the
// same file and address. Needs clang-19, lld-19 and llvm-19 (scripts/setup.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/DebugInfo/DWARF/DWARFDebugAbbrev.h>
#include <llvm/Object/ObjectFile.h>

#include "formats/native/dwarf_preflight.h"
#include "formats/native/dwarf_walker.h"
#include "formats/native/native_object.h"
#include "formats/stack/native_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/native/native_resolver.h"
#include "tests/native/dwp_fuzz_entry.h"
#include "tests/native/native_test_support.h"
#include "tests/native/test_sources.h"

namespace restack::native_test {
namespace {

const char* kAndroid = "clang-19 --target=aarch64-linux-android24 -fPIC -ffreestanding -nostdlibinc";

bool haveTools() {
  for (const char* tool : {"clang-19", "ld.lld-19", "ld64.lld-19", "dsymutil-19", "llvm-lipo-19", "llvm-symbolizer-19",
                           "llvm-objcopy-19", "llvm-strip-19"}) {
    if (!requireTool(tool)) return false;
  }
  return true;
}

std::string debugIdOf(const IngestReport& report, size_t index = 0) {
  return index < report.ids.size() ? report.ids[index] : "";
}

Expected<IngestReport> ingestPath(SymbolStore& store, const std::string& path, SymbolKind kind,
                                  const std::string& app = "demo", const std::string& build = "1.0",
                                  bool shared = false) {
  UploadMeta meta;
  meta.kind = kind;
  meta.app = app;
  meta.build_id = build;
  meta.shared = shared;
  UploadContent content;
  content.path = path;
  content.display_name = std::filesystem::path(path).filename().string();
  return ingestNative(store, meta, content, IngestOptions{});
}

// Where section `wanted` of the object file at `path` lies in the file, and its index; nullopt
// when the file has no such section or cannot be read.
struct SectionInFile {
  size_t offset = 0;
  size_t index = 0;
};
std::optional<SectionInFile> sectionInFile(const std::string& path, llvm::StringRef wanted) {
  auto object = llvm::object::ObjectFile::createObjectFile(path);
  if (!object) {
    llvm::consumeError(object.takeError());
    return std::nullopt;
  }
  for (const llvm::object::SectionRef& section : object->getBinary()->sections()) {
    auto name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      return std::nullopt;
    }
    if (*name != wanted) continue;
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      return std::nullopt;
    }
    return SectionInFile{static_cast<size_t>(contents->data() - object->getBinary()->getData().data()),
                         static_cast<size_t>(section.getIndex())};
  }
  return std::nullopt;
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
    out << "[" << f.function << " " << f.file << ":" << f.line << ":" << f.column << (f.inlined ? " inlined" : "")
        << "] ";
  }
  return out.str();
}

struct Comparison {
  size_t addresses = 0;
  size_t restored = 0;
  size_t with_inlines = 0;
  size_t max_depth = 0;
  size_t mismatches = 0;
  std::map<std::string, size_t> tiers;
};

enum class Expect { kFullFrames, kFunctionOnly };

// Looks up every `step`-th address of `range` in Restack and in llvm-symbolizer (on `oracle`) and
// compares every frame. `image_base` is subtracted for Restack (iOS frames carry offsets).
Comparison compareWithLlvm(NativeResolver& resolver, const std::string& debug_id, const std::string& module,
                           const std::string& oracle, CodeRange range, uint64_t image_base, uint64_t step,
                           Expect expect, const std::string& oracle_arguments = "") {
  Comparison result;
  std::vector<uint64_t> addresses;
  for (uint64_t a = range.begin; a < range.end; a += step) addresses.push_back(a);
  auto answers = symbolizeWithLlvm(oracle, addresses, oracle_arguments);
  if (answers.size() != addresses.size()) return result;
  stack::NativeFrameLine frame;
  frame.debug_id = debug_id;
  frame.module = module;
  EventScope scope{"demo", "1.0", "android", {}};
  for (size_t i = 0; i < addresses.size(); ++i) {
    const auto& expected = answers[i];
    auto lookup = resolver.lookup(scope, frame, addresses[i] - image_base);
    ++result.addresses;
    if (!lookup) {
      ADD_FAILURE() << lookup.error().describe();
      return result;
    }
    bool oracle_knows = !expected.empty() && !expected[0].function.empty();
    bool same = true;
    if (!oracle_knows) {
      same = lookup->status != FrameStatus::kSymbolicated;
    } else if (lookup->status != FrameStatus::kSymbolicated) {
      same = false;
    } else if (expect == Expect::kFunctionOnly) {
      same = lookup->frames.back().function == expected.back().function;
    } else {
      same = lookup->frames.size() == expected.size();
      for (size_t f = 0; same && f < expected.size(); ++f) {
        const SymbolizedFrame& got = lookup->frames[f];
        same = got.function == expected[f].function && got.file == expected[f].file && got.line == expected[f].line &&
               got.column == expected[f].column && got.inlined == (f + 1 < expected.size()) && got.module == module;
      }
    }
    if (lookup->status == FrameStatus::kSymbolicated) {
      ++result.restored;
      ++result.tiers[std::string(lookup->tier)];
      if (lookup->frames.size() > 1) ++result.with_inlines;
      result.max_depth = std::max(result.max_depth, lookup->frames.size());
    }
    if (!same) {
      if (++result.mismatches <= 8) {
        char address[32];
        snprintf(address, sizeof(address), "0x%llx", static_cast<unsigned long long>(addresses[i]));
        ADD_FAILURE() << module << " " << address << "\n  llvm-symbolizer: " << describe(expected)
                      << "\n  restack:         " << describe(*lookup);
      }
    }
  }
  EXPECT_EQ(result.mismatches, 0u) << "of " << result.addresses << " addresses";
  printf(
      "  %s: %zu addresses, %zu restored (dwarf %zu, symtab %zu, objc %zu), %zu with inlines, "
      "deepest %zu frames, %zu mismatches\n",
      module.c_str(), result.addresses, result.restored, result.tiers["dwarf"], result.tiers["symtab"],
      result.tiers["objc"], result.with_inlines, result.max_depth, result.mismatches);
  return result;
}

class NativeToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Missing tools fail the test (ctest would count a skip as a pass).
    if (!haveTools()) FAIL() << "reference tools missing: run scripts/setup.sh";
  }
  TempDir work;
};

// ---------------------------------------------------------------------------------------------
// Android: aarch64 ELF shared objects

std::string buildAndroidLibrary(const TempDir& dir, const std::string& name, const std::string& flags) {
  writeFile(dir.file("shapes.cc"), kCxxSource);
  writeFile(dir.file("blend.c"), kCSource);
  std::string so = dir.file(name);
  if (!runOrFail(std::string(kAndroid) + " " + flags + " -O2 -c " + dir.file("shapes.cc") + " -o " +
                 dir.file("shapes.o")) ||
      !runOrFail(std::string(kAndroid) + " " + flags + " -O3 -c " + dir.file("blend.c") + " -o " +
                 dir.file("blend.o")) ||
      !runOrFail(std::string(kAndroid) + " -shared -nostdlib -fuse-ld=lld -Wl,--build-id " + dir.file("shapes.o") +
                 " " + dir.file("blend.o") + " -o " + so)) {
    return "";
  }
  return so;
}

TEST_F(NativeToolsTest, ElfDwarf5EveryAddressMatchesLlvmSymbolizer) {
  std::string so = buildAndroidLibrary(work, "libshapes.so", "-g");
  ASSERT_FALSE(so.empty());
  TestStore store;
  auto report = ingestPath(*store.store, so, SymbolKind::kElf);
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->ids.size(), 1u);
  NativeResolver resolver(*store.store, {});
  auto result =
      compareWithLlvm(resolver, debugIdOf(*report), "libshapes.so", so, codeRange(so), 0, 4, Expect::kFullFrames);
  EXPECT_GT(result.addresses, 100u);
  EXPECT_GT(result.with_inlines, 10u) << "the sources should inline at -O2/-O3";
  EXPECT_GE(result.max_depth, 3u);
  EXPECT_EQ(result.tiers["dwarf"], result.restored - result.tiers["symtab"]);
}

TEST_F(NativeToolsTest, ElfDwarf4WithCompressedSectionsMatchesLlvmSymbolizer) {
  std::string so = buildAndroidLibrary(work, "libshapes4.so", "-gdwarf-4 -gz=zlib");
  ASSERT_FALSE(so.empty());
  ASSERT_NE(runCommand("llvm-readelf-19 -S " + so).output.find("C "), std::string::npos)
      << "expected SHF_COMPRESSED debug sections";
  TestStore store;
  auto report = ingestPath(*store.store, so, SymbolKind::kElf);
  ASSERT_TRUE(report) << report.error().describe();
  NativeResolver resolver(*store.store, {});
  auto result =
      compareWithLlvm(resolver, debugIdOf(*report), "libshapes4.so", so, codeRange(so), 0, 4, Expect::kFullFrames);
  EXPECT_GT(result.with_inlines, 10u);
}

// Code that a unit's line table covers and no subprogram does, answered as llvm-symbolizer
// answers it: the symbol table's name and the unit's line row. Two real shapes: an assembly file
// assembled by clang (the NDK's only assembler), which describes its functions with DW_TAG_label,
// and a -gsplit-dwarf library uploaded without its .dwo files (its skeleton units keep the line
// table). Before, both answered from the symbol table alone, without a file or line.
TEST_F(NativeToolsTest, CodeOutsideEverySubprogramGetsItsUnitsLineRowsLikeLlvmSymbolizer) {
  writeFile(work.file("blend.c"), kCSource);
  const std::string assembly = work.file("libchecksum.so");
  ASSERT_TRUE(runOrFail(std::string(kAndroid) + " -g -O2 -c " + work.file("blend.c") + " -o " + work.file("blend.o")));
  ASSERT_TRUE(runOrFail(std::string(kAndroid) + " -g -c " RESTACK_SOURCE_DIR "/tests/native/fixtures/checksum.S -o " +
                        work.file("checksum.o")));
  ASSERT_TRUE(runOrFail(std::string(kAndroid) + " -shared -nostdlib -fuse-ld=lld -Wl,--build-id " +
                        work.file("blend.o") + " " + work.file("checksum.o") + " -o " + assembly));
  ASSERT_EQ(runCommand("llvm-dwarfdump-19 --debug-info " + work.file("checksum.o") + " | grep -c DW_TAG_subprogram")
                .output.substr(0, 1),
            "0")
      << "clang should describe the assembly's functions without subprograms";

  // Split DWARF: the .dwo files are gone, as they are when only the library is uploaded.
  TempDir split_dir;
  writeFile(split_dir.file("shapes.cc"), kCxxSource);
  const std::string split = split_dir.file("libsplit.so");
  ASSERT_TRUE(
      runOrFail("cd " + split_dir.path() + " && " + kAndroid + " -g -gsplit-dwarf -O2 -c shapes.cc -o shapes.o"));
  ASSERT_TRUE(runOrFail(std::string(kAndroid) + " -shared -nostdlib -fuse-ld=lld -Wl,--build-id " +
                        split_dir.file("shapes.o") + " -o " + split));
  ASSERT_TRUE(runOrFail("rm " + split_dir.file("shapes.dwo")));

  for (const std::string& library : {assembly, split}) {
    SCOPED_TRACE(library);
    TestStore store;
    auto report = ingestPath(*store.store, library, SymbolKind::kElf);
    ASSERT_TRUE(report) << report.error().describe();
    NativeResolver resolver(*store.store, {});
    const std::string module = library.substr(library.rfind('/') + 1);
    auto result =
        compareWithLlvm(resolver, debugIdOf(*report), module, library, codeRange(library), 0, 2, Expect::kFullFrames);
    EXPECT_GT(result.restored, 20u);
    // Every restored frame has its line from the DWARF, none from the symbol table alone.
    EXPECT_EQ(result.tiers["symtab"], 0u);
  }
}

// A -gsplit-dwarf library uploaded with its split-DWARF package (llvm-dwp's libfoo.so.dwp) in one
// zip, or one folder: every frame, inline chains and DWARF names included, as llvm-symbolizer
// answers given the package (--dwp). Uploaded alone, the library still restores as before
// (symbol-table names and the skeleton units' lines, no inline frame), and a package without its
// library is refused with a message saying what to upload.
TEST_F(NativeToolsTest, SplitDwarfLibraryWithItsDwpMatchesLlvmSymbolizer) {
  ASSERT_TRUE(requireTool("llvm-dwp-19"));
  for (const std::string dwarf : {"-gdwarf-5", "-gdwarf-4"}) {
    SCOPED_TRACE(dwarf);
    TempDir dir;
    writeFile(dir.file("shapes.cc"), kCxxSource);
    writeFile(dir.file("blend.c"), kCSource);
    const std::string compile = "cd " + dir.path() + " && " + kAndroid + " -g " + dwarf + " -gsplit-dwarf ";
    ASSERT_TRUE(runOrFail(compile + "-O2 -c shapes.cc -o shapes.o"));
    ASSERT_TRUE(runOrFail(compile + "-O3 -c blend.c -o blend.o"));
    ASSERT_TRUE(runOrFail("cd " + dir.path() + " && mkdir up alone && " + kAndroid +
                          " -shared -nostdlib -fuse-ld=lld -Wl,--build-id shapes.o blend.o -o up/libsplit.so"));
    // The .dwo files are gone, so llvm-symbolizer reads the package or nothing.
    ASSERT_TRUE(
        runOrFail("cd " + dir.path() +
                  " && llvm-dwp-19 shapes.dwo blend.dwo -o up/libsplit.so.dwp && mkdir partial && cp "
                  "up/libsplit.so partial/ && llvm-dwp-19 shapes.dwo -o partial/libsplit.so.dwp && rm shapes.dwo "
                  "blend.dwo"));
    ASSERT_TRUE(runOrFail("cd " + dir.path() + " && cp up/libsplit.so alone/ && cd up && zip -q ../split.zip *"));
    const std::string library = dir.file("up/libsplit.so");
    const std::string package = dir.file("up/libsplit.so.dwp");

    for (const std::string& upload : {dir.file("split.zip"), dir.file("up")}) {
      SCOPED_TRACE(upload);
      TestStore store;
      auto report = uploadPath(*store.store, upload);
      ASSERT_TRUE(report) << report.error().describe();
      ASSERT_EQ(report->ids.size(), 1u);
      for (const std::string& warning : report->warnings) ADD_FAILURE() << "unexpected warning: " << warning;
      NativeResolver resolver(*store.store, {});
      auto result = compareWithLlvm(resolver, debugIdOf(*report), "libsplit.so", library, codeRange(library), 0, 3,
                                    Expect::kFullFrames, "--dwp=" + package);
      EXPECT_GT(result.addresses, 100u);
      EXPECT_GT(result.with_inlines, 10u) << "the package's inlined subroutines should be read";
      EXPECT_GE(result.max_depth, 3u);
      EXPECT_GE(result.restored - result.mismatches, result.addresses * 995 / 1000);
    }

    // The library alone: as before this change, compared with llvm-symbolizer on a copy that has
    // no package beside it.
    {
      const std::string alone = dir.file("alone/libsplit.so");
      TestStore store;
      auto report = uploadPath(*store.store, alone);
      ASSERT_TRUE(report) << report.error().describe();
      NativeResolver resolver(*store.store, {});
      auto result = compareWithLlvm(resolver, debugIdOf(*report), "libsplit.so", alone, codeRange(alone), 0, 3,
                                    Expect::kFullFrames);
      EXPECT_GT(result.restored, 20u);
      EXPECT_EQ(result.with_inlines, 0u);
      ASSERT_EQ(report->warnings.size(), 1u);
      EXPECT_NE(report->warnings[0].find("libsplit.so.dwp"), std::string::npos) << report->warnings[0];
    }

    // A package that lacks a unit (blend.c's): told in a warning, the rest still read.
    {
      TestStore store;
      auto report = uploadPath(*store.store, dir.file("partial"));
      ASSERT_TRUE(report) << report.error().describe();
      ASSERT_EQ(report->warnings.size(), 1u);
      EXPECT_NE(report->warnings[0].find("no split unit for 1 of the 2"), std::string::npos) << report->warnings[0];
    }

    // A package without its library, zipped or not.
    ASSERT_TRUE(runOrFail("cd " + dir.path() + "/up && zip -q ../package.zip libsplit.so.dwp"));
    for (const std::string& upload : {package, dir.file("package.zip")}) {
      TestStore store;
      auto report = uploadPath(*store.store, upload);
      ASSERT_FALSE(report) << upload;
      EXPECT_NE(report.error().describe().find("together"), std::string::npos) << report.error().describe();
    }
  }
}

// A corrupt split-DWARF package is refused with a message or read as far as it goes, never a
// crash: LLVM 19 trusts a package's unit index (formats/native/dwarf_preflight.h), and two of 150
// randomly mutated packages crashed the process before the index was checked.
TEST_F(NativeToolsTest, CorruptDwpIsRefusedOrSurvivedNeverCrash) {
  ASSERT_TRUE(requireTool("llvm-dwp-19"));
  writeFile(work.file("shapes.cc"), kCxxSource);
  const std::string compile = "cd " + work.path() + " && " + kAndroid + " -g -gsplit-dwarf -O2 ";
  ASSERT_TRUE(runOrFail(compile + "-c shapes.cc -o shapes.o && " + kAndroid +
                        " -shared -nostdlib -fuse-ld=lld -Wl,--build-id shapes.o -o libsplit.so && llvm-dwp-19 "
                        "shapes.dwo -o libsplit.so.dwp && rm shapes.dwo"));
  const std::string package = readBinary(work.file("libsplit.so.dwp"));
  // Where .debug_cu_index lies in the file.
  const auto cu_index = sectionInFile(work.file("libsplit.so.dwp"), ".debug_cu_index");
  ASSERT_TRUE(cu_index);
  const size_t index = cu_index->offset;
  ASSERT_NE(index, 0u);
  auto u32 = [&](const std::string& bytes, size_t at) {
    uint32_t value;
    memcpy(&value, bytes.data() + at, 4);
    return value;
  };
  auto withU32 = [](std::string bytes, size_t at, uint32_t value) {
    memcpy(bytes.data() + at, &value, 4);
    return bytes;
  };
  const uint32_t buckets = u32(package, index + 12);
  size_t used_bucket = 0;
  for (uint32_t bucket = 0; bucket < buckets && used_bucket == 0; ++bucket) {
    const size_t at = index + 16 + size_t{buckets} * 8 + size_t{bucket} * 4;
    if (u32(package, at) != 0) used_bucket = at;
  }
  ASSERT_NE(used_bucket, 0u);

  auto upload = [&](const std::string& bytes) {
    TempDir dir;
    runOrFail("cp " + work.file("libsplit.so") + " " + dir.path() + "/");
    writeFile(dir.file("libsplit.so.dwp"), bytes);
    TestStore store;
    return uploadPath(*store.store, dir.path());
  };
  const std::pair<std::string, std::string> cases[] = {
      {withU32(package, used_bucket, 0x7fffffff), "names unit 2147483647 of 1"},
      {withU32(package, used_bucket, 0), "no bucket names unit 1"},
      {withU32(package, index + 8, 0x40000000), "counts are corrupt"},
  };
  for (const auto& [bytes, message] : cases) {
    auto report = upload(bytes);
    ASSERT_FALSE(report) << message;
    EXPECT_NE(report.error().describe().find(message), std::string::npos) << report.error().describe();
    EXPECT_NE(report.error().describe().find("libsplit.so.dwp"), std::string::npos) << report.error().describe();
  }
  // Bytes flipped anywhere in the package, deterministically: an answer or an error, each time;
  // what LLVM reports is in the warnings (each once, at most 20), never on standard error.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  size_t warned = 0;
  for (int round = 0; round < 80; ++round) {
    std::string corrupt = package;
    for (int flips = 0; flips < 8; ++flips) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      corrupt[state % corrupt.size()] = static_cast<char>(state >> 56);
    }
    testing::internal::CaptureStderr();
    auto report = upload(corrupt);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "round " << round;
    if (!report) {
      EXPECT_FALSE(report.error().message().empty());
      continue;
    }
    std::vector<std::string> sorted = report->warnings;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end()) << "round " << round;
    EXPECT_LE(report->warnings.size(), 20u);
    for (const std::string& warning : report->warnings) warned += warning.starts_with("libsplit.so.dwp: ") ? 1 : 0;
  }
  EXPECT_GT(warned, 0u) << "some damage should be read and reported";
}

// LLVM's reports on a damaged package that is still read go into the upload's warnings, named
// after the package, and never to the process's standard error (LLVM creates a package's context
// with its default handlers, which print there). The damage: one DIE in the middle of the split
// unit names an abbreviation its unit does not have; LLVM reads the unit up to that DIE.
TEST_F(NativeToolsTest, DamagedDwpIsReportedInTheUploadsWarningsNotOnStderr) {
  ASSERT_TRUE(requireTool("llvm-dwp-19"));
  for (const std::string dwarf : {"-gdwarf-5", "-gdwarf-4"}) {
    SCOPED_TRACE(dwarf);
    TempDir dir;
    writeFile(dir.file("shapes.cc"), kCxxSource);
    ASSERT_TRUE(runOrFail("cd " + dir.path() + " && mkdir up && " + kAndroid + " -g " + dwarf +
                          " -gsplit-dwarf -O2 -c shapes.cc -o shapes.o && " + kAndroid +
                          " -shared -nostdlib -fuse-ld=lld -Wl,--build-id shapes.o -o up/libsplit.so && llvm-dwp-19 "
                          "shapes.dwo -o up/libsplit.so.dwp && rm shapes.dwo"));
    const std::string package_path = dir.file("up/libsplit.so.dwp");
    std::string package = readBinary(package_path);
    // Where the middle DIE of the split unit starts in the file: its first byte is its
    // abbreviation code (ULEB128; one byte below 0x80).
    size_t damaged_at = 0;
    uint64_t codes = 0;
    {
      auto object = llvm::object::ObjectFile::createObjectFile(package_path);
      ASSERT_TRUE(static_cast<bool>(object));
      const auto info_section = sectionInFile(package_path, ".debug_info.dwo");
      ASSERT_TRUE(info_section);
      const size_t info = info_section->offset;
      ASSERT_NE(info, 0u);
      auto context = llvm::DWARFContext::create(*object->getBinary());
      ASSERT_EQ(context->getNumDWOCompileUnits(), 1u);
      llvm::DWARFUnit* unit = context->getDWOUnitAtIndex(0);
      ASSERT_TRUE(unit->getUnitDIE(/*ExtractUnitDIEOnly=*/false));
      ASSERT_GT(unit->getNumDIEs(), 20u);
      llvm::DWARFDie die = unit->getDIEAtIndex(unit->getNumDIEs() / 2);
      ASSERT_TRUE(die && die.getAbbreviationDeclarationPtr());
      damaged_at = info + die.getOffset();
      ASSERT_EQ(static_cast<uint8_t>(package[damaged_at]), die.getAbbreviationDeclarationPtr()->getCode());
      for (const auto& declaration : *unit->getAbbreviations())
        codes = std::max<uint64_t>(codes, declaration.getCode());
    }
    ASSERT_LT(codes, 0x7fu);
    package[damaged_at] = 0x7f;
    writeFile(package_path, package);

    TestStore store;
    testing::internal::CaptureStderr();
    auto report = uploadPath(*store.store, dir.file("up"));
    const std::string stderr_text = testing::internal::GetCapturedStderr();
    ASSERT_TRUE(report) << report.error().describe();
    EXPECT_EQ(stderr_text, "");
    size_t reported = 0;
    for (const std::string& warning : report->warnings) {
      if (warning.starts_with("libsplit.so.dwp: ") && warning.find("invalid abbreviation 127") != std::string::npos) {
        ++reported;
      }
    }
    EXPECT_EQ(reported, 1u) << ::testing::PrintToString(report->warnings);
    // The package is still read: frames restore, some of them with the DWARF of the split unit.
    // (llvm-symbolizer is no oracle here: it prints the same report amid its answers.)
    NativeResolver resolver(*store.store, {});
    const std::string library = dir.file("up/libsplit.so");
    const CodeRange range = codeRange(library);
    stack::NativeFrameLine frame;
    frame.debug_id = debugIdOf(*report);
    frame.module = "libsplit.so";
    size_t restored = 0, from_dwarf = 0;
    for (uint64_t address = range.begin; address < range.end; address += 3) {
      auto lookup = resolver.lookup(EventScope{"demo", "1.0", "android", {}}, frame, address);
      ASSERT_TRUE(lookup) << lookup.error().describe();
      if (lookup->status != FrameStatus::kSymbolicated) continue;
      ++restored;
      if (lookup->tier == "dwarf") ++from_dwarf;
    }
    EXPECT_GT(restored, 100u);
    EXPECT_GT(from_dwarf, 20u);
  }
}

// What LLVM reports while it opens a package, before the walk can take its reports, is checked
// first (checkPackageSections): a package compressed after llvm-dwp (llvm-objcopy
// --compress-sections) is read as before; one whose compressed stream is cut, or with a
// relocation section naming a section that does not exist, is refused, and nothing reaches stderr.
TEST_F(NativeToolsTest, DwpThatLlvmCannotOpenCleanlyIsRefused) {
  ASSERT_TRUE(requireTool("llvm-dwp-19"));
  writeFile(work.file("shapes.cc"), kCxxSource);
  ASSERT_TRUE(runOrFail("cd " + work.path() + " && " + kAndroid + " -g -gsplit-dwarf -O2 -c shapes.cc -o shapes.o && " +
                        kAndroid +
                        " -shared -nostdlib -fuse-ld=lld -Wl,--build-id shapes.o -o libsplit.so && llvm-dwp-19 "
                        "shapes.dwo -o libsplit.so.dwp && llvm-objcopy-19 --compress-sections "
                        "'.debug_str.dwo=zlib' libsplit.so.dwp compressed.dwp"));
  const std::string compressed = readBinary(work.file("compressed.dwp"));
  const std::string plain = readBinary(work.file("libsplit.so.dwp"));
  // Where a section's bytes and its header lie in the file.
  auto find = [](const std::string& path, llvm::StringRef wanted) {
    const auto section = sectionInFile(path, wanted);
    if (!section) ADD_FAILURE() << "no section " << wanted.str() << " in " << path;
    return section ? std::pair<size_t, size_t>(section->offset, section->index) : std::pair<size_t, size_t>(0, 0);
  };
  auto upload = [&](const std::string& package, std::string& stderr_text) {
    TempDir dir;
    runOrFail("cp " + work.file("libsplit.so") + " " + dir.path() + "/");
    writeFile(dir.file("libsplit.so.dwp"), package);
    TestStore store;
    testing::internal::CaptureStderr();
    auto report = uploadPath(*store.store, dir.path());
    stderr_text = testing::internal::GetCapturedStderr();
    return report;
  };
  std::string stderr_text;
  {
    auto report = upload(compressed, stderr_text);
    ASSERT_TRUE(report) << report.error().describe();
    EXPECT_TRUE(report->warnings.empty()) << ::testing::PrintToString(report->warnings);
    EXPECT_EQ(stderr_text, "");
  }
  // The zlib stream of .debug_str.dwo cut short: its last 16 bytes zeroed (Elf64_Chdr first).
  {
    auto [at, index] = find(work.file("compressed.dwp"), ".debug_str.dwo");
    ASSERT_NE(at, 0u);
    std::string cut = compressed;
    uint64_t stream_bytes = 0;
    {
      auto object = llvm::object::ObjectFile::createObjectFile(work.file("compressed.dwp"));
      ASSERT_TRUE(static_cast<bool>(object));
      auto section = std::next(object->getBinary()->section_begin(), index);
      stream_bytes = section->getSize() - 24;
    }
    ASSERT_GT(stream_bytes, 32u);
    memset(cut.data() + at + 24 + stream_bytes - 16, 0, 16);
    auto report = upload(cut, stderr_text);
    ASSERT_FALSE(report);
    EXPECT_NE(report.error().describe().find("libsplit.so.dwp: section " + std::to_string(index) +
                                             " is compressed and cannot be inflated"),
              std::string::npos)
        << report.error().describe();
    EXPECT_EQ(stderr_text, "");
  }
  // .debug_str_offsets.dwo turned into a SHT_RELA section relocating section 0xffff.
  {
    auto [at, index] = find(work.file("libsplit.so.dwp"), ".debug_str_offsets.dwo");
    ASSERT_NE(at, 0u);
    uint64_t section_headers;
    memcpy(&section_headers, plain.data() + 0x28, 8);
    std::string relocating = plain;
    const size_t header = section_headers + index * 64;
    const uint32_t rela = 4, target = 0xffff;
    memcpy(relocating.data() + header + 4, &rela, 4);     // sh_type
    memcpy(relocating.data() + header + 44, &target, 4);  // sh_info
    auto report = upload(relocating, stderr_text);
    ASSERT_FALSE(report);
    EXPECT_NE(report.error().describe().find("libsplit.so.dwp: section " + std::to_string(index) +
                                             " relocates a section that does not exist"),
              std::string::npos)
        << report.error().describe();
    EXPECT_EQ(stderr_text, "");
  }
}

// The fuzz entry of split-DWARF packages (dwp_fuzz_entry.h) on the real seeds fuzz_dwp starts
// from (make_dwp_fuzz_seeds.sh: DWARF 5 and 4, type units, compressed sections, a partial
// package): each is ingested and its package read (inline frames only the package has), and
// deterministic mutations of each package run through the entry, their reports never on stderr.
TEST_F(NativeToolsTest, DwpFuzzEntryReadsTheRealSeedsAndSurvivesTheirMutations) {
  ASSERT_TRUE(requireTool("llvm-dwp-19"));
  ASSERT_TRUE(
      runOrFail(RESTACK_SOURCE_DIR "/tests/native/make_dwp_fuzz_seeds.sh " + work.file("seeds") + " > /dev/null"));
  size_t seeds = 0;
  uint64_t state = 0x2545f4914f6cdd1dull;
  for (const auto& entry : std::filesystem::directory_iterator(work.file("seeds"))) {
    SCOPED_TRACE(entry.path().filename().string());
    const std::string input = readBinary(entry.path().string());
    auto pair = splitDwpPair(input);
    ASSERT_TRUE(pair);
    ++seeds;
    testing::internal::CaptureStderr();
    DwpFuzzOutcome outcome = fuzzDwpInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_TRUE(outcome.ingested);
    EXPECT_EQ(outcome.warnings, entry.path().stem() == "dwp5-partial" ? 1u : 0u);
    EXPECT_GE(outcome.symbols, 3u);
    EXPECT_EQ(outcome.restored, outcome.symbols);
    EXPECT_GT(outcome.restored_with_inlines, 0u);
    const size_t head = input.size() - pair->package.size();
    size_t package_warnings = 0;
    for (int round = 0; round < 60; ++round) {
      std::string mutated = input;
      for (int flips = 0; flips < 4; ++flips) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        mutated[head + state % pair->package.size()] = static_cast<char>(state >> 56);
      }
      testing::internal::CaptureStderr();
      package_warnings +=
          fuzzDwpInput(reinterpret_cast<const uint8_t*>(mutated.data()), mutated.size()).package_warnings;
      EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "round " << round;
    }
    EXPECT_GT(package_warnings, 0u) << "some damage should be read and reported";
  }
  EXPECT_EQ(seeds, 7u);
}

// A write-time transform in the manner of IL2CPP's line mappings: the lines of one generated file
// ("blend.c") stand for lines of another source ("Assets/Blend.cs", 1000 lines further down).
// Only the image it was made for is rewritten.
class BlendLineMapping final : public native_store::NativeRecordTransform {
 public:
  explicit BlendLineMapping(std::string debug_id) : debug_id_(std::move(debug_id)) {}
  std::string_view name() const override { return "blend line mapping"; }
  Expected<std::unique_ptr<native_store::FunctionRewriter>> forImage(
      const SymbolStore&, std::string_view debug_id, const native_store::ImageRecord& image) const override {
    ++images_asked;
    if (debug_id != debug_id_ || image.module != "libmapped.so")
      return std::unique_ptr<native_store::FunctionRewriter>();
    return std::unique_ptr<native_store::FunctionRewriter>(std::make_unique<Rewriter>());
  }
  mutable int images_asked = 0;

 private:
  struct Rewriter final : native_store::FunctionRewriter {
    Status rewrite(native_store::FunctionRecord& function, native_store::ImageStrings& strings) override {
      auto map = [&](uint32_t& file, uint32_t& line) -> Status {
        if (file == native_store::kNoString || !strings.text(file).ends_with("/blend.c")) return Status::ok();
        auto mapped = strings.intern("Assets/Blend.cs");
        if (!mapped) return mapped.error();
        file = *mapped;
        if (line != 0) line += 1000;
        return Status::ok();
      };
      for (native_store::StoredLine& span : function.lines) RESTACK_RETURN_IF_ERROR(map(span.file, span.line));
      for (native_store::StoredNode& node : function.nodes)
        RESTACK_RETURN_IF_ERROR(map(node.call_file, node.call_line));
      return Status::ok();
    }
  };
  std::string debug_id_;
};

TEST_F(NativeToolsTest, WriteTimeTransformRewritesTheLinesOfItsImage) {
  std::string so = buildAndroidLibrary(work, "libmapped.so", "-g");
  ASSERT_FALSE(so.empty());
  TestStore plain_store;
  auto plain = ingestPath(*plain_store.store, so, SymbolKind::kElf);
  ASSERT_TRUE(plain) << plain.error().describe();
  ASSERT_EQ(plain->ids.size(), 1u);
  const std::string debug_id = debugIdOf(*plain);

  BlendLineMapping mapping(debug_id);
  BlendLineMapping other_image("00112233445566778899aabbccddeeff00112233");
  TestStore mapped_store;
  UploadMeta meta;
  meta.kind = SymbolKind::kElf;
  meta.app = "demo";
  meta.build_id = "1.0";
  UploadContent content;
  content.path = so;
  content.display_name = "libmapped.so";
  IngestOptions options;
  options.native_transforms = {&other_image, &mapping};
  auto mapped = ingestNative(*mapped_store.store, meta, content, options);
  ASSERT_TRUE(mapped) << mapped.error().describe();
  EXPECT_EQ(mapping.images_asked, 1);
  EXPECT_EQ(other_image.images_asked, 1);

  // Every frame of every address: blend.c frames moved to Assets/Blend.cs, the rest unchanged.
  NativeResolver plain_resolver(*plain_store.store, {});
  NativeResolver mapped_resolver(*mapped_store.store, {});
  stack::NativeFrameLine frame;
  frame.debug_id = debug_id;
  frame.module = "libmapped.so";
  EventScope scope{"demo", "1.0", "android", {}};
  const CodeRange range = codeRange(so);
  size_t moved = 0, kept = 0;
  for (uint64_t address = range.begin; address < range.end; address += 4) {
    auto before = plain_resolver.lookup(scope, frame, address);
    auto after = mapped_resolver.lookup(scope, frame, address);
    ASSERT_TRUE(before && after);
    ASSERT_EQ(before->status, after->status) << describe(*before) << " / " << describe(*after);
    ASSERT_EQ(before->frames.size(), after->frames.size()) << describe(*before) << " / " << describe(*after);
    for (size_t i = 0; i < before->frames.size(); ++i) {
      const SymbolizedFrame& b = before->frames[i];
      const SymbolizedFrame& a = after->frames[i];
      EXPECT_EQ(a.function, b.function);
      EXPECT_EQ(a.column, b.column);
      if (b.file.ends_with("/blend.c")) {
        EXPECT_EQ(a.file, "Assets/Blend.cs");
        EXPECT_EQ(a.line, b.line == 0 ? 0 : b.line + 1000) << describe(*before) << " / " << describe(*after);
        ++moved;
      } else {
        EXPECT_EQ(a.file, b.file);
        EXPECT_EQ(a.line, b.line);
        if (!b.file.empty()) ++kept;
      }
    }
  }
  printf("  %zu frames moved to Assets/Blend.cs, %zu kept\n", moved, kept);
  EXPECT_GT(moved, 20u) << "blend.c inlines clamp/scale/blend: many of its frames should move";
  EXPECT_GT(kept, 20u) << "shapes.cc frames must stay as they were";
}

TEST_F(NativeToolsTest, StrippedLibraryAndSeparateDebugFileMerge) {
  std::string so = buildAndroidLibrary(work, "libsplit.so", "-g");
  ASSERT_FALSE(so.empty());
  std::string debug = work.file("libsplit.so.debug");
  std::string stripped = work.file("stripped/libsplit.so");
  std::filesystem::create_directories(work.file("stripped"));
  ASSERT_TRUE(runOrFail("llvm-objcopy-19 --only-keep-debug " + so + " " + debug));
  ASSERT_TRUE(runOrFail("llvm-strip-19 --strip-all " + so + " -o " + stripped));

  TestStore store;
  // 1. The stripped library alone: its .dynsym answers (symbol-table tier), like llvm-symbolizer.
  auto first = ingestPath(*store.store, stripped, SymbolKind::kElf);
  ASSERT_TRUE(first) << first.error().describe();
  {
    NativeResolver resolver(*store.store, {});
    auto result = compareWithLlvm(resolver, debugIdOf(*first), "libsplit.so", stripped, codeRange(stripped), 0, 4,
                                  Expect::kFunctionOnly);
    EXPECT_GT(result.tiers["symtab"], 0u);
    EXPECT_EQ(result.tiers["dwarf"], 0u);
  }
  // 2. Then its debug file, same build id: DWARF answers every frame as for the unstripped file.
  auto second = ingestPath(*store.store, debug, SymbolKind::kElf);
  ASSERT_TRUE(second) << second.error().describe();
  EXPECT_EQ(debugIdOf(*first), debugIdOf(*second));
  {
    NativeResolver resolver(*store.store, {});
    auto result =
        compareWithLlvm(resolver, debugIdOf(*first), "libsplit.so", so, codeRange(so), 0, 4, Expect::kFullFrames);
    EXPECT_GT(result.tiers["dwarf"], 0u);
  }
  // 3. Uploading the stripped file again must not replace the debug file's richer symbols.
  auto third = ingestPath(*store.store, stripped, SymbolKind::kElf);
  ASSERT_TRUE(third) << third.error().describe();
  NativeResolver resolver(*store.store, {});
  auto result =
      compareWithLlvm(resolver, debugIdOf(*first), "libsplit.so", so, codeRange(so), 0, 4, Expect::kFullFrames);
  EXPECT_GT(result.tiers["dwarf"], 0u);
}

// Why a frame is not fully restored, decided by the resolver on a real library: its debug file
// restores `plain` fully; stripped to its symbol table, `plain` has no line (no_line_info), the
// function whose symbol is an invalid Itanium mangling keeps that name (demangle_failed), an
// address past the code is outside the image, and an image never uploaded is named by debug id.
TEST_F(NativeToolsTest, FramesNotFullyRestoredCarryTheResolversReason) {
  writeFile(work.file("reasons.c"),
            "int __attribute__((noinline)) plain(int x) { return x * 3 + 1; }\n"
            "int odd(int x) __asm__(\"_ZN3foo\");\n"
            "int __attribute__((noinline)) odd(int x) { return plain(x) * 7; }\n");
  const std::string so = work.file("libreasons.so");
  const std::string stripped = work.file("stripped/libreasons.so");
  std::filesystem::create_directories(work.file("stripped"));
  ASSERT_TRUE(
      runOrFail(std::string(kAndroid) + " -g -O2 -c " + work.file("reasons.c") + " -o " + work.file("reasons.o")));
  ASSERT_TRUE(runOrFail(std::string(kAndroid) + " -shared -nostdlib -fuse-ld=lld -Wl,--build-id " +
                        work.file("reasons.o") + " -o " + so));
  ASSERT_TRUE(runOrFail("llvm-strip-19 --strip-all " + so + " -o " + stripped));
  std::map<std::string, uint64_t> symbols;
  std::istringstream nm(runCommand("llvm-nm-19 -D --defined-only " + so).output);
  for (std::string line; std::getline(nm, line);) {
    if (line.size() > 19) symbols[line.substr(19)] = std::stoull(line.substr(0, 16), nullptr, 16);
  }
  ASSERT_TRUE(symbols.count("plain") && symbols.count("_ZN3foo")) << runCommand("llvm-nm-19 -D " + so).output;
  ASSERT_EQ(runCommand("llvm-cxxfilt-19 _ZN3foo").output, "_ZN3foo\n") << "the mangling must be one LLVM refuses";

  TestStore full_store, stripped_store;
  auto full = ingestPath(*full_store.store, so, SymbolKind::kElf);
  ASSERT_TRUE(full) << full.error().describe();
  auto symtab = ingestPath(*stripped_store.store, stripped, SymbolKind::kElf);
  ASSERT_TRUE(symtab) << symtab.error().describe();
  ASSERT_EQ(debugIdOf(*full), debugIdOf(*symtab));
  stack::NativeFrameLine frame;
  frame.debug_id = debugIdOf(*full);
  frame.module = "libreasons.so";
  const EventScope scope{"demo", "1.0", "android", {}};

  NativeResolver with_dwarf(*full_store.store, {});
  auto restored = with_dwarf.lookup(scope, frame, symbols["plain"]);
  ASSERT_TRUE(restored) << restored.error().describe();
  ASSERT_EQ(restored->status, FrameStatus::kSymbolicated) << describe(*restored);
  EXPECT_EQ(restored->tier, "dwarf");
  EXPECT_EQ(restored->reason, FrameReason::kNone) << frameReasonName(restored->reason);

  NativeResolver resolver(*stripped_store.store, {});
  auto no_line = resolver.lookup(scope, frame, symbols["plain"] + 4);
  ASSERT_TRUE(no_line) << no_line.error().describe();
  ASSERT_EQ(no_line->status, FrameStatus::kSymbolicated) << describe(*no_line);
  EXPECT_EQ(no_line->tier, "symtab");
  ASSERT_FALSE(no_line->frames.empty());
  EXPECT_EQ(no_line->frames[0].function, "plain");
  EXPECT_EQ(no_line->frames[0].line, 0u);
  EXPECT_EQ(no_line->reason, FrameReason::kNoLineInfo) << frameReasonName(no_line->reason);

  auto mangled = resolver.lookup(scope, frame, symbols["_ZN3foo"]);
  ASSERT_TRUE(mangled) << mangled.error().describe();
  ASSERT_EQ(mangled->status, FrameStatus::kSymbolicated) << describe(*mangled);
  ASSERT_FALSE(mangled->frames.empty());
  EXPECT_EQ(mangled->frames[0].function, "_ZN3foo");
  EXPECT_EQ(mangled->reason, FrameReason::kDemangleFailed) << frameReasonName(mangled->reason);

  const CodeRange code = codeRange(so);
  ASSERT_GT(code.end, code.begin);
  auto outside = resolver.lookup(scope, frame, code.end + 0x100000);
  ASSERT_TRUE(outside) << outside.error().describe();
  EXPECT_EQ(outside->status, FrameStatus::kNotFound) << describe(*outside);
  EXPECT_EQ(outside->reason, FrameReason::kAddressOutsideModule) << frameReasonName(outside->reason);

  stack::NativeFrameLine unknown = frame;
  unknown.debug_id = "0123456789abcdef0123456789abcdef01234567";
  auto missing = resolver.lookup(scope, unknown, symbols["plain"]);
  ASSERT_TRUE(missing) << missing.error().describe();
  EXPECT_EQ(missing->status, FrameStatus::kMissingSymbols);
  EXPECT_EQ(missing->reason, FrameReason::kMissingSymbols);
  EXPECT_EQ(missing->missing_id_kind, MissingIdKind::kDebugId);
  EXPECT_EQ(missing->missing_id, unknown.debug_id);
  stack::NativeFrameLine by_name;
  by_name.module = "libnever.so";
  auto missing_module = resolver.lookup(scope, by_name, 0x1000);
  ASSERT_TRUE(missing_module) << missing_module.error().describe();
  EXPECT_EQ(missing_module->missing_id_kind, MissingIdKind::kModule);
  EXPECT_EQ(missing_module->missing_id, "libnever.so");
}

TEST_F(NativeToolsTest, AndroidLinesFindTheUploadByEveryIdForm) {
  std::string so = buildAndroidLibrary(work, "libapm.so", "-g");
  ASSERT_FALSE(so.empty());
  TestStore store;
  auto report = ingestPath(*store.store, so, SymbolKind::kElf, "apm", "7.8.0");
  ASSERT_TRUE(report) << report.error().describe();
  std::string build_id = debugIdOf(*report);
  ASSERT_EQ(build_id.size(), 40u);
  std::string prefix = build_id.substr(0, 32);
  // Breakpad: the first three GUID fields byte-swapped.
  std::string breakpad = build_id.substr(6, 2) + build_id.substr(4, 2) + build_id.substr(2, 2) + build_id.substr(0, 2) +
                         build_id.substr(10, 2) + build_id.substr(8, 2) + build_id.substr(14, 2) +
                         build_id.substr(12, 2) + build_id.substr(16, 16);
  CodeRange range = codeRange(so);
  uint64_t pc = range.begin + 8;
  auto oracle = symbolizeWithLlvm(so, {pc});
  ASSERT_EQ(oracle.size(), 1u);
  ASSERT_FALSE(oracle[0].empty());

  char hex[32];
  snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(pc));
  std::vector<std::string> lines = {
      "pc " + std::string(hex) + " /data/app/lib/arm64/libapm.so [arm64-v8a::" + prefix + "]",
      "pc " + std::string(hex) + " libapm.so [arm64-v8a::" + breakpad + "]",
      "#00 pc " + std::string(hex) + "  /data/app/lib/arm64/libapm.so (BuildId: " + build_id + ")",
      "#00 pc " + std::string(hex) + "  /data/app/lib/arm64/libapm.so",
      // An ANR dump's native frame, among the thread's Java frames, with the device's symbol.
      "  native: #00 pc " + std::string(hex) +
          "  /data/app/lib/arm64/libapm.so (Java_apm_Native_run+8) (BuildId: " + build_id + ")",
  };
  NativeResolver resolver(*store.store, {});
  EventScope scope{"apm", "7.8.0", "android", {}};
  for (const std::string& text : lines) {
    stack::StackLine line = stack::parseStackLine(text);
    ASSERT_EQ(line.kindName(), "native") << text;
    auto lookup = resolver.lookup(scope, *stack::asNative(line), stack::asNative(line)->address);
    ASSERT_TRUE(lookup) << lookup.error().describe();
    ASSERT_EQ(lookup->status, FrameStatus::kSymbolicated) << text << " -> " << describe(*lookup);
    EXPECT_EQ(lookup->frames.back().function, oracle[0].back().function) << text;
    EXPECT_EQ(lookup->frames[0].line, oracle[0][0].line) << text;
    EXPECT_EQ(lookup->frames[0].in_app, true);
  }
  // Another build's app never uploaded it: no debug id and unknown module -> missing symbols.
  stack::StackLine unknown = stack::parseStackLine("#01 pc 0000000000001000  /system/lib64/libnope.so");
  auto missing = resolver.lookup(scope, *stack::asNative(unknown), 0x1000);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, FrameStatus::kMissingSymbols);
  EXPECT_EQ(missing->missing_id, "libnope.so");
  stack::NativeFrameLine never;
  never.debug_id = "0123456789abcdef0123456789abcdef";
  missing = resolver.lookup(scope, never, 0x10);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, FrameStatus::kMissingSymbols);
  EXPECT_EQ(missing->missing_id, never.debug_id);
  // Known image, address below every function and symbol (the ELF header).
  stack::NativeFrameLine outside;
  outside.debug_id = build_id;
  auto not_found = resolver.lookup(scope, outside, 0x10);
  ASSERT_TRUE(not_found);
  EXPECT_EQ(not_found->status, FrameStatus::kNotFound);
}

// GCC names the call operator of a lambda in DWARF by its bare name, "operator()", without a
// linkage name; an inlined copy restores to that name, as llvm-symbolizer prints it. The frame
// also carries the function the lambda is defined in (its `scope`, from the closure type's parent
// DW_TAG_subprogram), which grouping keys it by (docs/grouping.md).
TEST_F(NativeToolsTest, GccInlinedLambdaKeepsLlvmSymbolizersNameAndReportsItsScope) {
  if (!requireTool("aarch64-linux-gnu-g++")) return;
  writeFile(work.file("lambda.cc"),
            "template <class F> __attribute__((noinline)) int run(F f) { return f() + 1; }\n"
            "namespace shop {\n"
            "int total(int x) {\n"
            "  return run([x] { return x * 3 + x / 7; });\n"
            "}\n"
            "}  // namespace shop\n");
  const std::string so = work.file("liblambda.so");
  ASSERT_TRUE(runOrFail("aarch64-linux-gnu-g++ -g -O2 -fPIC -shared -nostdlib -Wl,--build-id " +
                        work.file("lambda.cc") + " -o " + so));
  TestStore store;
  auto report = ingestPath(*store.store, so, SymbolKind::kElf);
  ASSERT_TRUE(report) << report.error().describe();
  NativeResolver resolver(*store.store, {});
  const CodeRange range = codeRange(so);
  std::vector<uint64_t> addresses;
  for (uint64_t pc = range.begin; pc < range.end; pc += 4) addresses.push_back(pc);
  const auto oracle = symbolizeWithLlvm(so, addresses);
  ASSERT_EQ(oracle.size(), addresses.size());
  size_t lambda_frames = 0;
  for (size_t i = 0; i < addresses.size(); ++i) {
    stack::NativeFrameLine frame;
    frame.debug_id = debugIdOf(*report);
    auto lookup = resolver.lookup(EventScope{"demo", "1.0", "android", {}}, frame, addresses[i]);
    ASSERT_TRUE(lookup) << lookup.error().describe();
    if (lookup->status != FrameStatus::kSymbolicated) continue;
    ASSERT_EQ(lookup->frames.size(), oracle[i].size()) << describe(*lookup) << " vs " << describe(oracle[i]);
    for (size_t f = 0; f < lookup->frames.size(); ++f) {
      const SymbolizedFrame& restored = lookup->frames[f];
      EXPECT_EQ(restored.function, oracle[i][f].function);
      if (restored.function == "operator()") {
        ++lambda_frames;
        EXPECT_EQ(restored.scope, "shop::total(int)") << describe(*lookup);
      } else {
        EXPECT_EQ(restored.scope, "") << restored.function;
      }
    }
  }
  EXPECT_GT(lambda_frames, 0u) << "GCC -O2 should inline the lambda into run<…>";
}

TEST_F(NativeToolsTest, SharedLibraryServesEveryApp) {
  std::string so = buildAndroidLibrary(work, "libc_like.so", "-g");
  ASSERT_FALSE(so.empty());
  TestStore store;
  auto report = ingestPath(*store.store, so, SymbolKind::kElf, "", "", /*shared=*/true);
  ASSERT_TRUE(report) << report.error().describe();
  NativeResolver resolver(*store.store, {});
  CodeRange range = codeRange(so);
  for (const char* app : {"shopee", "other"}) {
    EventScope scope{app, "9.9", "android", {}};
    stack::NativeFrameLine with_id;
    with_id.debug_id = debugIdOf(*report);
    with_id.module = "libc_like.so";
    auto lookup = resolver.lookup(scope, with_id, range.begin + 4);
    ASSERT_TRUE(lookup);
    ASSERT_EQ(lookup->status, FrameStatus::kSymbolicated) << app;
    EXPECT_EQ(lookup->frames[0].in_app, false);
    stack::NativeFrameLine by_name;
    by_name.module = "libc_like.so";
    lookup = resolver.lookup(scope, by_name, range.begin + 4);
    ASSERT_TRUE(lookup);
    EXPECT_EQ(lookup->status, FrameStatus::kSymbolicated) << app << " by module name";
  }
}

// ---------------------------------------------------------------------------------------------
// iOS: arm64 Mach-O, dSYM bundles, fat files, Objective-C metadata

struct IosBuild {
  std::string binary;
  std::string dsym;   // the .dSYM directory
  std::string dwarf;  // the DWARF file inside it
};

IosBuild buildIosExecutable(const TempDir& dir, const std::string& name, const std::string& arch) {
  IosBuild build;
  writeFile(dir.file("shapes.cc"), kCxxSource);
  writeFile(dir.file("blend.c"), kCSource);
  writeFile(dir.file("widget.m"), kObjcSource);
  std::string target = "clang-19 --target=" + arch + "-apple-ios14";
  std::string objects;
  for (auto [source, flags] : std::vector<std::pair<std::string, std::string>>{
           {"shapes.cc", "-O2"}, {"blend.c", "-O3"}, {"widget.m", "-O2 -fobjc-runtime=ios-14"}}) {
    std::string object = dir.file(name + "-" + arch + "-" + source + ".o");
    if (!runOrFail(target + " -g " + flags + " -c " + dir.file(source) + " -o " + object)) {
      return build;
    }
    objects += " " + object;
  }
  build.binary = dir.file(name);
  if (!runOrFail(target + " -fuse-ld=lld -nostdlib -Wl,-e,_entry -Wl,-undefined,dynamic_lookup" + objects + " -o " +
                 build.binary)) {
    build.binary.clear();
  }
  return build;
}

bool makeDsym(const TempDir& dir, IosBuild& build, const std::string& name) {
  build.dsym = dir.file(name + ".dSYM");
  // dsymutil needs `lipo` for fat files; llvm-lipo-19 under that name, on PATH for this command.
  std::filesystem::create_directories(dir.file("bin"));
  std::error_code ignored;
  std::filesystem::create_symlink("/usr/bin/llvm-lipo-19", dir.file("bin/lipo"), ignored);
  if (!runOrFail("PATH=" + dir.file("bin") + ":$PATH dsymutil-19 " + build.binary + " -o " + build.dsym)) {
    return false;
  }
  build.dwarf = build.dsym + "/Contents/Resources/DWARF/" + std::filesystem::path(build.binary).filename().string();
  return true;
}

TEST_F(NativeToolsTest, DsymOfExecutableMatchesLlvmSymbolizerWithTextVmaddr) {
  IosBuild build = buildIosExecutable(work, "Shapes", "arm64");
  ASSERT_FALSE(build.binary.empty());
  ASSERT_TRUE(makeDsym(work, build, "Shapes"));
  TestStore store;
  auto report = ingestPath(*store.store, build.dsym, SymbolKind::kDsym);
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->ids.size(), 1u);
  NativeResolver resolver(*store.store, {});
  CodeRange range = codeRange(build.dwarf);
  ASSERT_GT(range.begin, 0x100000000u) << "an executable's __TEXT starts at 4 GiB";
  auto result =
      compareWithLlvm(resolver, debugIdOf(*report), "Shapes", build.dwarf, range, 0x100000000, 4, Expect::kFullFrames);
  EXPECT_GT(result.with_inlines, 10u);
  EXPECT_GT(result.tiers["dwarf"], 100u);
}

// Xcode's dSYMs folder and App Store Connect's "Download dSYMs" zip hold one bundle per image
// (the app and each framework): every bundle is ingested, from the folder and from the zip, and
// answers as llvm-symbolizer does on its DWARF. A file beside the bundles is named in a warning.
// Before, the zip kept its first bundle only and the folder was refused.
TEST_F(NativeToolsTest, AFolderOrZipOfDsymBundlesIngestsEveryBundle) {
  IosBuild app = buildIosExecutable(work, "Shop", "arm64");
  ASSERT_FALSE(app.binary.empty());
  ASSERT_TRUE(makeDsym(work, app, "Shop"));
  IosBuild kit;
  kit.binary = work.file("ShopKit");
  ASSERT_TRUE(
      runOrFail("clang-19 --target=arm64-apple-ios14 -g -O2 -c " + work.file("blend.c") + " -o " + work.file("kit.o")));
  ASSERT_TRUE(
      runOrFail("clang-19 --target=arm64-apple-ios14 -fuse-ld=lld -dylib -shared -nostdlib "
                "-Wl,-undefined,dynamic_lookup " +
                work.file("kit.o") + " -o " + kit.binary));
  ASSERT_TRUE(makeDsym(work, kit, "ShopKit"));
  const std::string folder = work.file("dSYMs");
  ASSERT_TRUE(runOrFail("mkdir -p " + folder + " && cp -r " + app.dsym + " " + kit.dsym + " " + folder +
                        " && echo notes > " + folder + "/README.txt"));
  ASSERT_TRUE(runOrFail("cd " + folder + " && zip -qr " + work.file("dSYMs.zip") + " ."));

  for (const std::string& upload : {folder, work.file("dSYMs.zip")}) {
    SCOPED_TRACE(upload);
    TestStore store;
    auto report = uploadPath(*store.store, upload);
    ASSERT_TRUE(report) << report.error().describe();
    EXPECT_EQ(report->kind, SymbolKind::kDsym);
    ASSERT_EQ(report->ids.size(), 2u);
    std::string warnings;
    for (const std::string& warning : report->warnings) warnings += warning + "\n";
    EXPECT_NE(warnings.find("README.txt"), std::string::npos) << warnings;
    NativeResolver resolver(*store.store, {});
    for (const IosBuild* build : {&app, &kit}) {
      const std::string module = std::filesystem::path(build->binary).filename().string();
      auto ids = runCommand("llvm-dwarfdump-19 --uuid " + build->dwarf).output;
      std::string id;
      for (const std::string& candidate : report->ids) {
        std::string dashed = candidate.substr(0, 8) + "-" + candidate.substr(8, 4) + "-" + candidate.substr(12, 4) +
                             "-" + candidate.substr(16, 4) + "-" + candidate.substr(20);
        std::transform(dashed.begin(), dashed.end(), dashed.begin(), ::toupper);
        if (ids.find(dashed) != std::string::npos) id = candidate;
      }
      ASSERT_FALSE(id.empty()) << module << " not among the ingested ids; dwarfdump: " << ids;
      CodeRange range = codeRange(build->dwarf);
      auto result = compareWithLlvm(resolver, id, module, build->dwarf, range, range.begin & ~uint64_t{0xffffffff}, 8,
                                    Expect::kFullFrames);
      EXPECT_GT(result.tiers["dwarf"], 10u);
    }
  }
}

// The Android Gradle plugin's native-debug-symbols.zip (what Play Console takes): one folder per
// ABI, each library's debug file named libfoo.so.dbg (debugSymbolLevel FULL) or its symbol table
// libfoo.so.sym (SYMBOL_TABLE). Every image is ingested under the library's name and answers as
// llvm-symbolizer does on the unstripped library. Before, the zip was refused ("upload one symbol
// file per message").
TEST_F(NativeToolsTest, NativeDebugSymbolsZipIngestsEveryAbisLibrary) {
  writeFile(work.file("blend.c"), kCSource);
  struct Abi {
    const char* folder;
    const char* target;
  };
  std::vector<std::string> libraries;
  for (const Abi& abi : {Abi{"arm64-v8a", "aarch64-linux-android24"}, Abi{"x86_64", "x86_64-linux-android24"}}) {
    const std::string folder = work.file(std::string("zip/") + abi.folder);
    std::filesystem::create_directories(folder);
    const std::string library = work.file(std::string(abi.folder) + "-libblend.so");
    ASSERT_TRUE(runOrFail(std::string("clang-19 --target=") + abi.target +
                          " -fPIC -ffreestanding -nostdlibinc -g -O2 -shared -nostdlib -fuse-ld=lld -Wl,--build-id " +
                          work.file("blend.c") + " -o " + library));
    ASSERT_TRUE(runOrFail("llvm-objcopy-19 --only-keep-debug " + library + " " + folder + "/libblend.so.dbg"));
    libraries.push_back(library);
  }
  ASSERT_TRUE(runOrFail("cd " + work.file("zip") + " && zip -qr " + work.file("native-debug-symbols.zip") + " ."));

  TestStore store;
  auto report = uploadPath(*store.store, work.file("native-debug-symbols.zip"));
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->ids.size(), 2u);
  NativeResolver resolver(*store.store, {});
  EventScope scope{"demo", "1.0", "android", {}};
  for (const std::string& library : libraries) {
    SCOPED_TRACE(library);
    const std::string build_id = runCommand("llvm-readelf-19 -n " + library + " | awk '/Build ID/{print $3}'").output;
    const std::string id = build_id.substr(0, build_id.find('\n'));
    ASSERT_NE(std::find(report->ids.begin(), report->ids.end(), id), report->ids.end()) << id;
    auto result = compareWithLlvm(resolver, id, "libblend.so", library, codeRange(library), 0, 4, Expect::kFullFrames);
    EXPECT_GT(result.tiers["dwarf"], 20u);
  }
  // A frame that prints no build id finds the image by the library's name, not "libblend.so.dbg".
  // Nothing in it says which ABI ran: where the two libraries answer differently (llvm-symbolizer
  // on each), the first answer comes with the other as its alternative (reason ambiguous); where
  // they agree, the answer is plain.
  stack::NativeFrameLine frame;
  frame.module = "libblend.so";
  const CodeRange arm = codeRange(libraries[0]);
  const CodeRange intel = codeRange(libraries[1]);
  std::vector<uint64_t> addresses;
  for (uint64_t a = std::max(arm.begin, intel.begin); a < std::min(arm.end, intel.end); a += 4) addresses.push_back(a);
  const auto arm_answers = symbolizeWithLlvm(libraries[0], addresses);
  const auto intel_answers = symbolizeWithLlvm(libraries[1], addresses);
  ASSERT_EQ(arm_answers.size(), addresses.size());
  ASSERT_EQ(intel_answers.size(), addresses.size());
  size_t differing = 0, agreeing = 0;
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (arm_answers[i].empty() || intel_answers[i].empty() || arm_answers[i][0].function.empty() ||
        intel_answers[i][0].function.empty()) {
      continue;
    }
    auto by_name = resolver.lookup(scope, frame, addresses[i]);
    ASSERT_TRUE(by_name) << by_name.error().describe();
    ASSERT_EQ(by_name->status, FrameStatus::kSymbolicated) << describe(*by_name);
    if (arm_answers[i][0].function != intel_answers[i][0].function) {
      ++differing;
      EXPECT_EQ(by_name->reason, FrameReason::kAmbiguous) << addresses[i] << " " << describe(*by_name);
      ASSERT_EQ(by_name->alternatives.size(), 1u);
      std::vector<std::string> answers{by_name->frames.front().function,
                                       by_name->alternatives.front().front().function};
      std::sort(answers.begin(), answers.end());
      std::vector<std::string> expected{arm_answers[i][0].function, intel_answers[i][0].function};
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(answers, expected) << addresses[i];
    } else {
      ++agreeing;
      EXPECT_TRUE(by_name->alternatives.empty()) << addresses[i] << " " << describe(*by_name);
    }
  }
  EXPECT_GT(differing, 5u);
  EXPECT_GT(agreeing, 5u);

  // A tombstone's path names the ABI folder Android installed the library to: that ABI's image
  // answers alone, as llvm-symbolizer does on that library. A folder of no uploaded ABI (or none)
  // leaves the choice open, as above.
  struct Installed {
    const char* path;
    const std::vector<std::vector<OracleFrame>>* answers;
  };
  size_t chosen = 0;
  for (const Installed& installed :
       {Installed{"/data/app/~~Xq3V==/com.demo-Jf7u==/lib/arm64/libblend.so", &arm_answers},
        Installed{"/data/app/~~Xq3V==/com.demo-Jf7u==/lib/x86_64/libblend.so", &intel_answers},
        Installed{"/data/app/com.demo-1/base.apk!lib/arm64-v8a/libblend.so", &arm_answers}}) {
    SCOPED_TRACE(installed.path);
    stack::NativeFrameLine from_device = frame;
    from_device.module_path = installed.path;
    for (size_t i = 0; i < addresses.size(); ++i) {
      const auto& expected = (*installed.answers)[i];
      if (expected.empty() || expected[0].function.empty()) continue;
      auto lookup = resolver.lookup(scope, from_device, addresses[i]);
      ASSERT_TRUE(lookup) << lookup.error().describe();
      ASSERT_EQ(lookup->status, FrameStatus::kSymbolicated) << describe(*lookup);
      EXPECT_TRUE(lookup->alternatives.empty()) << addresses[i] << " " << describe(*lookup);
      EXPECT_EQ(lookup->frames.back().function, expected.back().function) << addresses[i];
      EXPECT_EQ(lookup->frames.back().line, expected.back().line) << addresses[i];
      ++chosen;
    }
  }
  EXPECT_GT(chosen, 3 * agreeing);
  stack::NativeFrameLine other_abi = frame;
  other_abi.module_path = "/data/app/~~Xq3V==/com.demo-Jf7u==/lib/arm/libblend.so";
  size_t still_ambiguous = 0;
  for (size_t i = 0; i < addresses.size(); ++i) {
    auto lookup = resolver.lookup(scope, other_abi, addresses[i]);
    ASSERT_TRUE(lookup) << lookup.error().describe();
    if (lookup->reason == FrameReason::kAmbiguous) ++still_ambiguous;
  }
  EXPECT_EQ(still_ambiguous, differing);
}

TEST_F(NativeToolsTest, BareMachOWithoutDsymUsesItsSymbolTable) {
  IosBuild build = buildIosExecutable(work, "Bare", "arm64");
  ASSERT_FALSE(build.binary.empty());
  // llvm-symbolizer picks up a Bare.dSYM next to the binary; there is none in this folder.
  TestStore store;
  auto report = ingestPath(*store.store, build.binary, SymbolKind::kMachO);
  ASSERT_TRUE(report) << report.error().describe();
  NativeResolver resolver(*store.store, {});
  auto result = compareWithLlvm(resolver, debugIdOf(*report), "Bare", build.binary, codeRange(build.binary),
                                0x100000000, 4, Expect::kFunctionOnly);
  EXPECT_GT(result.tiers["symtab"], 50u);
}

TEST_F(NativeToolsTest, FatDsymStoresOneImagePerArchitecture) {
  IosBuild arm = buildIosExecutable(work, "Fat-arm64", "arm64");
  IosBuild intel = buildIosExecutable(work, "Fat-x86_64", "x86_64");
  ASSERT_FALSE(arm.binary.empty());
  ASSERT_FALSE(intel.binary.empty());
  IosBuild fat;
  fat.binary = work.file("Fat");
  ASSERT_TRUE(runOrFail("llvm-lipo-19 -create " + arm.binary + " " + intel.binary + " -output " + fat.binary));
  ASSERT_TRUE(makeDsym(work, fat, "Fat"));
  TestStore store;
  auto report = ingestPath(*store.store, fat.dsym, SymbolKind::kDsym);
  ASSERT_TRUE(report) << report.error().describe();
  ASSERT_EQ(report->ids.size(), 2u);
  EXPECT_NE(report->ids[0], report->ids[1]);
  NativeResolver resolver(*store.store, {});
  std::map<std::string, std::string> id_of_arch;
  for (const std::string& arch : {"arm64", "x86_64"}) {
    std::string uuid = runCommand("llvm-dwarfdump-19 --uuid --arch=" + arch + " " + fat.dwarf).output;
    std::string id;
    for (char c : uuid.substr(6, 36)) {
      if (c != '-') id.push_back(static_cast<char>(tolower(c)));
    }
    id_of_arch[arch] = id;
  }
  auto arm_result = compareWithLlvm(resolver, id_of_arch["arm64"], "Fat", fat.dwarf, codeRange(fat.dwarf, "arm64"),
                                    0x100000000, 4, Expect::kFullFrames, "--default-arch=arm64");
  EXPECT_GT(arm_result.tiers["dwarf"], 100u);
  auto intel_result = compareWithLlvm(resolver, id_of_arch["x86_64"], "Fat", fat.dwarf, codeRange(fat.dwarf, "x86_64"),
                                      0x100000000, 1, Expect::kFullFrames, "--default-arch=x86_64");
  EXPECT_GT(intel_result.tiers["dwarf"], 100u);
}

TEST_F(NativeToolsTest, ObjectiveCMethodsOfAStrippedAppWithoutDsym) {
  IosBuild build = buildIosExecutable(work, "Widgets", "arm64");
  ASSERT_FALSE(build.binary.empty());
  std::filesystem::create_directories(work.file("stripped"));
  std::string stripped = work.file("stripped/Widgets");
  ASSERT_TRUE(runOrFail("llvm-strip-19 -x " + build.binary + " -o " + stripped));
  ASSERT_EQ(runCommand("llvm-nm-19 " + stripped).output.find("[Widget"), std::string::npos)
      << "the stripped binary must not name methods in its symbol table";
  TestStore store;
  auto report = ingestPath(*store.store, stripped, SymbolKind::kMachO);
  ASSERT_TRUE(report) << report.error().describe();
  NativeResolver resolver(*store.store, {});
  // Every method's first instruction, as the unstripped binary's symbol table names it.
  std::string nm = runCommand("llvm-nm-19 -n " + build.binary).output;
  std::istringstream lines(nm);
  std::string line;
  size_t methods = 0;
  while (std::getline(lines, line)) {
    size_t open = line.find("[Widget");
    if (open == std::string::npos || line.size() < 20) continue;
    uint64_t address = std::stoull(line.substr(0, 16), nullptr, 16);
    std::string expected = line.substr(open - 1);
    stack::NativeFrameLine frame;
    frame.debug_id = debugIdOf(*report);
    frame.module = "Widgets";
    for (uint64_t offset : {0, 4}) {
      auto lookup = resolver.lookup({"demo", "1.0", "ios", {}}, frame, address + offset - 0x100000000);
      ASSERT_TRUE(lookup);
      ASSERT_EQ(lookup->status, FrameStatus::kSymbolicated) << expected;
      EXPECT_EQ(lookup->tier, "objc") << expected;
      EXPECT_EQ(lookup->frames[0].function, expected);
      EXPECT_EQ(lookup->frames[0].symbol_offset, offset);
    }
    ++methods;
  }
  EXPECT_EQ(methods, 4u) << "render, resize:height:, +count, (Debug) dump";
}

TEST_F(NativeToolsTest, AppleCrashReportLinesResolveByModuleName) {
  IosBuild build = buildIosExecutable(work, "Report", "arm64");
  ASSERT_FALSE(build.binary.empty());
  ASSERT_TRUE(makeDsym(work, build, "Report"));
  TestStore store;
  auto report = ingestPath(*store.store, build.dsym, SymbolKind::kDsym, "shop", "2.1(210)");
  ASSERT_TRUE(report) << report.error().describe();
  CodeRange range = codeRange(build.dwarf);
  uint64_t runtime = 0x104a14000 + (range.begin - 0x100000000) + 8;
  char text[160];
  snprintf(text, sizeof(text), "3   Report   0x%016llx 0x104a14000 + %llu", static_cast<unsigned long long>(runtime),
           static_cast<unsigned long long>(runtime - 0x104a14000));
  stack::StackLine line = stack::parseStackLine(text);
  ASSERT_EQ(line.kindName(), "native") << text;
  NativeResolver resolver(*store.store, {});
  auto lookup =
      resolver.lookup({"shop", "2.1(210)", "ios", {}}, *stack::asNative(line), stack::asNative(line)->address);
  ASSERT_TRUE(lookup);
  ASSERT_EQ(lookup->status, FrameStatus::kSymbolicated) << describe(*lookup);
  auto oracle = symbolizeWithLlvm(build.dwarf, {range.begin + 8});
  ASSERT_EQ(oracle.size(), 1u);
  EXPECT_EQ(lookup->frames.back().function, oracle[0].back().function);
  // Another build of the same app did not upload this module.
  auto other = resolver.lookup({"shop", "2.2(220)", "ios", {}}, *stack::asNative(line), stack::asNative(line)->address);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, FrameStatus::kMissingSymbols);
}

// ---------------------------------------------------------------------------------------------
// Walking compile units on several threads

// Everything walkDwarf hands to its sink, as text, unit by unit in delivery order.
std::string walkAsText(const native::ImageSlice& slice, unsigned threads, unsigned in_flight) {
  native::DwarfWalkOptions options;
  options.threads = threads;
  options.max_units_in_flight = in_flight;
  std::ostringstream out;
  auto status = native::walkDwarf(slice, options, [&](const native::CompileUnitFunctions& unit) {
    out << "unit " << unit.unit_offset << "\n";
    for (const auto& f : unit.functions) {
      out << std::hex << f.begin << "-" << f.end << std::dec;
      for (const auto& n : f.nodes) {
        out << " {" << n.parent << " " << n.name << " "
            << (n.call_file < unit.files.size() ? unit.files[n.call_file] : "-") << ":" << n.call_line << ":"
            << n.call_column << "}";
      }
      for (const auto& t : f.tiles) out << " t" << std::hex << t.begin << std::dec << ">" << t.node;
      for (const auto& l : f.lines) {
        out << " l" << std::hex << l.begin << std::dec << "=" << (l.file < unit.files.size() ? unit.files[l.file] : "-")
            << ":" << l.line << ":" << l.column;
      }
      out << "\n";
    }
    return Status::ok();
  });
  EXPECT_TRUE(status) << status.error().describe();
  return out.str();
}

bool unitsIndependent(const std::string& path) {
  auto file = native::NativeFile::open(path);
  if (!file) return false;
  auto context = llvm::DWARFContext::create(*(*file)->slices()[0].object);
  std::vector<llvm::DWARFUnit*> units;
  for (const auto& unit : context->compile_units()) {
    if (!unit->isTypeUnit()) units.push_back(unit.get());
  }
  return native::unitsAreIndependent(*context, units);
}

TEST_F(NativeToolsTest, ParallelWalkDeliversExactlyTheSequentialWalk) {
  std::string so = buildAndroidLibrary(work, "libparallel.so", "-g");
  ASSERT_FALSE(so.empty());
  ASSERT_TRUE(unitsIndependent(so));
  auto file = native::NativeFile::open(so);
  ASSERT_TRUE(file);
  const native::ImageSlice& slice = (*file)->slices()[0];
  std::string sequential = walkAsText(slice, 1, 0);
  EXPECT_NE(sequential.find("unit "), sequential.rfind("unit ")) << "needs two compile units";
  EXPECT_EQ(walkAsText(slice, 2, 1), sequential);
  EXPECT_EQ(walkAsText(slice, 4, 0), sequential);
}

TEST_F(NativeToolsTest, CrossUnitInliningAfterLtoIsWalkedSequentiallyAndMatchesLlvmSymbolizer) {
  // Full LTO inlines helper() of one unit into user() of the other: the inlined copy names its
  // abstract origin in the other unit (DW_FORM_ref_addr), so units are not independent.
  writeFile(work.file("helper.c"),
            "int helper(int x) { int s = 0; for (int i = 0; i < x; ++i) s += i * x; return s; }\n");
  writeFile(work.file("user.c"),
            "int helper(int);\n__attribute__((noinline)) int user(int n) {\n"
            "  return helper(n) + helper(n + 3) * 2;\n}\nint entry(int n) { return user(n); }\n");
  std::string so = work.file("liblto.so");
  for (const char* name : {"helper", "user"}) {
    ASSERT_TRUE(runOrFail(std::string(kAndroid) + " -g -O2 -flto -c " + work.file(std::string(name) + ".c") + " -o " +
                          work.file(std::string(name) + ".o")));
  }
  ASSERT_TRUE(runOrFail(std::string(kAndroid) + " -flto -shared -nostdlib -fuse-ld=lld -Wl,--build-id " +
                        work.file("helper.o") + " " + work.file("user.o") + " -o " + so));
  ASSERT_FALSE(unitsIndependent(so)) << runCommand("llvm-dwarfdump-19 --debug-info " + so).output;
  TestStore store;
  auto report = ingestPath(*store.store, so, SymbolKind::kElf);
  ASSERT_TRUE(report) << report.error().describe();
  NativeResolver resolver(*store.store, {});
  auto result =
      compareWithLlvm(resolver, debugIdOf(*report), "liblto.so", so, codeRange(so), 0, 2, Expect::kFullFrames);
  EXPECT_GT(result.with_inlines, 2u) << "helper() should be inlined into user() across units";
}

// ---------------------------------------------------------------------------------------------
// Malformed inputs built from real files

TEST_F(NativeToolsTest, TruncatedAndCorruptedFilesAreRejectedOrSurvivedNeverCrash) {
  std::string so = buildAndroidLibrary(work, "libbroken.so", "-g");
  ASSERT_FALSE(so.empty());
  std::string bytes = readBinary(so);
  TestStore store;
  UploadMeta meta;
  meta.kind = SymbolKind::kElf;
  meta.app = "demo";
  meta.build_id = "1";
  size_t errors = 0;
  for (size_t length :
       {size_t{0}, size_t{3}, size_t{16}, size_t{64}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 100}) {
    UploadContent content;
    std::string truncated = bytes.substr(0, length);
    content.bytes = truncated;
    content.display_name = "libbroken.so";
    auto result = ingestNative(*store.store, meta, content, IngestOptions{});
    if (!result) {
      ++errors;
      EXPECT_NE(result.error().message().find("libbroken.so"), std::string::npos) << result.error().describe();
    }
  }
  EXPECT_GE(errors, 4u) << "short files must be rejected with a message naming the file";
  // Flip bytes inside the file (DWARF included), deterministically.
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int round = 0; round < 60; ++round) {
    std::string corrupt = bytes;
    for (int flips = 0; flips < 40; ++flips) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      corrupt[state % corrupt.size()] = static_cast<char>(state >> 32);
    }
    UploadContent content;
    content.bytes = corrupt;
    content.display_name = "libbroken.so";
    auto result = ingestNative(*store.store, meta, content, IngestOptions{});
    if (result) {
      NativeResolver resolver(*store.store, {});
      for (const std::string& id : result->ids) {
        stack::NativeFrameLine frame;
        frame.debug_id = id;
        for (uint64_t a = 0; a < 0x10000; a += 0x40) {
          auto lookup = resolver.lookup({"demo", "1", "android", {}}, frame, a);
          ASSERT_TRUE(lookup);
        }
      }
    }
  }
}

}  // namespace
}  // namespace restack::native_test
