// Breakpad .sym reader and ingest on small files written in the test: record parsing, errors with
// line numbers, which ids find the image, inline chains and the PUBLIC tier, and the checked-in
// fuzz regressions. Agreement with real dump_syms output is in breakpad_tools_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "formats/breakpad/sym_reader.h"
#include "symbolstore/breakpad/breakpad_ingest.h"
#include "symbolstore/breakpad/sym_function.h"
#include "symbolstore/native/native_resolver.h"
#include "tests/breakpad/breakpad_fuzz_entry.h"
#include "tests/native/native_test_support.h"

namespace restack {
namespace {

using native_test::TestStore;

// Build id ba78e30f9664d0150fba525ab5981b190011aabb; MODULE id = its first 16 bytes as a GUID
// (first three fields byte-swapped) + age 0.
constexpr const char* kElfSym =
    "MODULE Linux arm64 0FE378BA649615D00FBA525AB5981B190 libdemo.so\r\n"
    "INFO CODE_ID BA78E30F9664D0150FBA525AB5981B190011AABB\n"
    "INFO GENERATOR mozilla/dump_syms 2.3.9\n"
    "FILE 0 /src/a.c\n"
    "FILE 1 /src/util.h\n"
    "INLINE_ORIGIN 0 helper\n"
    "INLINE_ORIGIN 1 leaf\n"
    "\n"
    "FUNC m 1000 40 0 run\n"
    "INLINE 1 4 1 1 1020 4\n"  // deeper record first: callers are found by range, not order
    "INLINE 0 9 0 0 1010 18 1030 8\n"
    "1000 10 8 0\n"
    "1010 10 3 1\n"
    "1020 4 5 1\n"
    "1030 8 12 0\n"
    "FUNC 1040 20 0 _ZN2ns3fooEi\n"
    "1040 20 20 0\n"
    "PUBLIC m 1100 0 exported_thing\n"
    "PUBLIC 1000 0 run\n"
    "STACK CFI INIT 1000 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
    "STACK CFI 1001 .cfa: $rsp 16 +\n";

std::vector<breakpad::Record> readAll(std::string_view text, Status* error = nullptr) {
  breakpad::SymReader reader = breakpad::SymReader::fromBytes(text, "t.sym");
  std::vector<breakpad::Record> records;
  for (;;) {
    auto record = reader.next();
    if (!record) {
      if (error) *error = record.error();
      break;
    }
    if (std::holds_alternative<breakpad::EndOfFile>(*record)) break;
    records.push_back(*record);
  }
  return records;
}

std::string readError(std::string_view text) {
  Status status;
  readAll(text, &status);
  return status ? std::string("(no error)") : status.error().message();
}

TEST(BreakpadReader, ReadsEveryRecordKindAndSkipsUnwindData) {
  Status status;
  auto records = readAll(kElfSym, &status);
  ASSERT_TRUE(status) << status.error().describe();
  ASSERT_EQ(records.size(), 17u);
  const auto& module = std::get<breakpad::ModuleRecord>(records[0]);
  EXPECT_EQ(module.os, "Linux");
  EXPECT_EQ(module.arch, "arm64");
  EXPECT_EQ(module.id, "0FE378BA649615D00FBA525AB5981B190");
  EXPECT_EQ(module.name, "libdemo.so");
  EXPECT_EQ(std::get<breakpad::CodeIdRecord>(records[1]).code_id, "BA78E30F9664D0150FBA525AB5981B190011AABB");
  EXPECT_EQ(std::get<breakpad::FileRecord>(records[3]).name, "/src/util.h");
  EXPECT_EQ(std::get<breakpad::InlineOriginRecord>(records[5]).name, "leaf");
  const auto& func = std::get<breakpad::FuncRecord>(records[6]);
  EXPECT_TRUE(func.multiple);
  EXPECT_EQ(func.address, 0x1000u);
  EXPECT_EQ(func.size, 0x40u);
  EXPECT_EQ(func.name, "run");
  const auto& line = std::get<breakpad::LineRecord>(records[10]);
  EXPECT_EQ(line.address, 0x1010u);
  EXPECT_EQ(line.line, 3u);
  EXPECT_EQ(line.file, 1u);
  const auto& pub = std::get<breakpad::PublicRecord>(records[15]);
  EXPECT_TRUE(pub.multiple);
  EXPECT_EQ(pub.address, 0x1100u);
  EXPECT_EQ(pub.name, "exported_thing");
}

TEST(BreakpadReader, InlineRecordsKeepEveryRange) {
  auto records = readAll("MODULE Linux x86_64 000000000000000000000000000000000 a\nINLINE 2 7 3 4 10 2 20 4 30 1\n");
  ASSERT_EQ(records.size(), 2u);
  const auto& inlined = std::get<breakpad::InlineRecord>(records[1]);
  EXPECT_EQ(inlined.depth, 2u);
  EXPECT_EQ(inlined.call_line, 7u);
  EXPECT_EQ(inlined.call_file, 3u);
  EXPECT_EQ(inlined.origin, 4u);
  // ranges view the reader's buffer: valid until the next record, so checked via a fresh read.
  breakpad::SymReader reader = breakpad::SymReader::fromBytes("INLINE 0 1 0 0 10 2 20 4 30 1\n", "t.sym");
  auto record = reader.next();
  ASSERT_TRUE(record);
  const auto& fresh = std::get<breakpad::InlineRecord>(*record);
  ASSERT_EQ(fresh.ranges.size(), 3u);
  EXPECT_EQ(fresh.ranges[1].address, 0x20u);
  EXPECT_EQ(fresh.ranges[1].size, 4u);
}

TEST(BreakpadReader, ErrorsNameTheLineAndTheField) {
  EXPECT_EQ(readError("MODULE Linux x86_64 000000000000000000000000000000000 a\n\nFUNC zz 10 0 f\n"),
            "t.sym line 3: FUNC: expected a hexadecimal address, got 'zz'");
  EXPECT_EQ(readError("MODULE Linux x86_64 000000000000000000000000000000000 a\n1000 10 x 0\n"),
            "t.sym line 2: line record: expected a decimal line number, got 'x'");
  EXPECT_EQ(readError("MODULE Linux x86_64 000000000000000000000000000000000 a\nINLINE 0 1 0 0\n"),
            "t.sym line 2: INLINE: expected at least one '<address> <size>' range");
  EXPECT_EQ(readError("MODULE Linux x86_64 000000000000000000000000000000000 a\nBOGUS 1\n"),
            "t.sym line 2: unknown record 'BOGUS' (expected MODULE, INFO, FILE, INLINE_ORIGIN, FUNC, INLINE, "
            "PUBLIC, STACK or a line record)");
  EXPECT_EQ(readError("MODULE Linux x86_64 000000000000000000000000000000000 a\nFUNC ffffffffffffffff 2 0 f\n"),
            "t.sym line 2: FUNC: address + size overflows 64 bits");
  EXPECT_EQ(readError("FILE 0 a.c\nMODULE Linux x86_64 000000000000000000000000000000000 a\n"),
            "t.sym line 2: MODULE: only the first line may be a MODULE record");
}

TEST(BreakpadReader, DetectsTheModuleLine) {
  EXPECT_TRUE(looksLikeBreakpad("MODULE Linux x86_64 0FE378BA649615D00FBA525AB5981B190 libdemo.so\nFILE 0 a"));
  EXPECT_TRUE(looksLikeBreakpad("\xEF\xBB\xBFMODULE mac arm64 4C4C44BE55553144A18FB1819E5487350 Demo Name\r\n"));
  EXPECT_FALSE(looksLikeBreakpad("MODULE Linux x86_64 0FE378BA\n"));
  EXPECT_FALSE(looksLikeBreakpad("MODULE Linux x86_64 NOTHEX libdemo.so\n"));
  EXPECT_FALSE(
      looksLikeBreakpad("\x7f"
                        "ELF\x02\x01\x01"));
  EXPECT_FALSE(looksLikeBreakpad("# compiler: R8\nfoo -> a:\n"));
}

TEST(BreakpadNames, GnuClosureSpellingsBecomeLlvms) {
  using breakpad_store::llvmStyleName;
  EXPECT_EQ(llvmStyleName("compute(int)::{lambda(int)#1}::operator()(int) const"),
            "compute(int)::'lambda'(int)::operator()(int) const");
  EXPECT_EQ(llvmStyleName("f()::{lambda(std::function<void (int)>)#3}::operator()"),
            "f()::'lambda1'(std::function<void (int)>)::operator()");
  EXPECT_EQ(llvmStyleName("g()::{unnamed type#2}::h()"), "g()::'unnamed0'::h()");
  EXPECT_EQ(llvmStyleName("_ZN2ns3fooEi"), "ns::foo(int)");
  EXPECT_EQ(llvmStyleName("odd{lambda(#1}"), "odd{lambda(#1}");
  EXPECT_EQ(llvmStyleName("{lambda()#0}"), "{lambda()#0}");
  EXPECT_EQ(llvmStyleName("plain_c"), "plain_c");
}

struct Ingested {
  TestStore store;
  Expected<IngestReport> report = Error(ErrorCode::kInternal, "not run");
};

std::unique_ptr<Ingested> ingestText(std::string_view text, const std::string& name = "libdemo.so.sym") {
  auto result = std::make_unique<Ingested>();
  UploadMeta meta;
  meta.app = "demo";
  meta.build_id = "1.0";
  UploadContent content;
  content.bytes = text;
  content.display_name = name;
  result->report = ingestBreakpad(*result->store.store, meta, content, IngestOptions{});
  return result;
}

std::string frames(NativeResolver& resolver, const std::string& debug_id, uint64_t address,
                   const std::string& module = "libdemo.so") {
  stack::NativeFrameLine frame;
  frame.debug_id = debug_id;
  frame.module = module;
  auto lookup = resolver.lookup(EventScope{"demo", "1.0", "android", {}}, frame, address);
  if (!lookup) return "error: " + lookup.error().describe();
  std::string out = std::string(frameStatusName(lookup->status)) + " " + std::string(lookup->tier);
  for (const auto& f : lookup->frames) {
    out += " | " + f.function + " " + f.file + ":" + std::to_string(f.line) + (f.inlined ? " inlined" : "");
    if (f.symbol_offset) out += " +" + std::to_string(f.symbol_offset);
  }
  return out;
}

// The reason the resolver gives the frame at `address` ("" when fully restored).
std::string reasonAt(NativeResolver& resolver, const std::string& debug_id, uint64_t address) {
  stack::NativeFrameLine frame;
  frame.debug_id = debug_id;
  frame.module = "libdemo.so";
  auto lookup = resolver.lookup(EventScope{"demo", "1.0", "android", {}}, frame, address);
  return lookup ? frameReasonName(lookup->reason) : "error: " + lookup.error().describe();
}

TEST(BreakpadIngest, EveryIdFormFindsTheImageAndInlineChainsRestore) {
  auto ingested = ingestText(kElfSym);
  ASSERT_TRUE(ingested->report) << ingested->report.error().describe();
  const IngestReport& report = *ingested->report;
  EXPECT_EQ(report.kind, SymbolKind::kElf);
  ASSERT_EQ(report.ids, std::vector<std::string>{"ba78e30f9664d0150fba525ab5981b190011aabb"});
  EXPECT_GT(report.records, 5u);
  EXPECT_GT(report.stored_bytes, 100u);
  EXPECT_EQ(report.input_bytes, std::string_view(kElfSym).size());
  EXPECT_TRUE(report.warnings.empty()) << report.warnings.front();

  NativeResolver resolver(*ingested->store.store, {});
  const std::string chain =
      "symbolicated dwarf | leaf /src/util.h:5 inlined | helper /src/util.h:4 inlined | run /src/a.c:9";
  for (const char* id : {"ba78e30f9664d0150fba525ab5981b190011aabb", "ba78e30f9664d0150fba525ab5981b19",
                         "0fe378ba649615d00fba525ab5981b19", "0fe378ba649615d00fba525ab5981b190"}) {
    EXPECT_EQ(frames(resolver, id, 0x1022), chain) << id;
  }
  EXPECT_EQ(frames(resolver, "", 0x1022), chain);  // by module name within the app's build
  EXPECT_EQ(frames(resolver, "ba78e30f9664d0150fba525ab5981b190011aabb", 0x1000),
            "symbolicated dwarf | run /src/a.c:8");
  // The second range of the depth-0 inline; its last 8 bytes have no line record.
  EXPECT_EQ(frames(resolver, "ba78e30f9664d0150fba525ab5981b19", 0x1031),
            "symbolicated dwarf | helper /src/a.c:12 inlined | run /src/a.c:9");
  EXPECT_EQ(frames(resolver, "ba78e30f9664d0150fba525ab5981b19", 0x1039), "symbolicated dwarf | run :0");
  EXPECT_EQ(frames(resolver, "ba78e30f9664d0150fba525ab5981b19", 0x1044),
            "symbolicated dwarf | ns::foo(int) /src/a.c:20");
  EXPECT_EQ(frames(resolver, "ba78e30f9664d0150fba525ab5981b19", 0x1104), "symbolicated symtab | exported_thing :0 +4");
  EXPECT_EQ(frames(resolver, "00000000000000000000000000000000", 0x1000).rfind("missing_symbols", 0), 0u);
  // A FUNC with its lines is fully restored; a FUNC byte without a line record and a PUBLIC
  // symbol name the function only.
  EXPECT_EQ(reasonAt(resolver, "ba78e30f9664d0150fba525ab5981b19", 0x1022), "");
  EXPECT_EQ(reasonAt(resolver, "ba78e30f9664d0150fba525ab5981b19", 0x1039), "no_line_info");
  EXPECT_EQ(reasonAt(resolver, "ba78e30f9664d0150fba525ab5981b19", 0x1104), "no_line_info");
  EXPECT_EQ(reasonAt(resolver, "00000000000000000000000000000000", 0x1000), "missing_symbols");
}

TEST(BreakpadIngest, MachOUuidsAreNotSwapped) {
  auto ingested = ingestText(
      "MODULE mac arm64 4C4C44BE55553144A18FB1819E5487350 Demo\nFILE 0 /src/m.c\nFUNC 40 10 0 main\n40 10 2 0\n",
      "Demo.sym");
  ASSERT_TRUE(ingested->report) << ingested->report.error().describe();
  EXPECT_EQ(ingested->report->kind, SymbolKind::kMachO);
  ASSERT_EQ(ingested->report->ids, std::vector<std::string>{"4c4c44be55553144a18fb1819e548735"});
  NativeResolver resolver(*ingested->store.store, {});
  EXPECT_EQ(frames(resolver, "4c4c44be55553144a18fb1819e548735", 0x44, "Demo"), "symbolicated dwarf | main /src/m.c:2");
  EXPECT_EQ(frames(resolver, "4c4c44be55553144a18fb1819e5487350", 0x44, "Demo"),
            "symbolicated dwarf | main /src/m.c:2");
}

TEST(BreakpadIngest, WithoutCodeIdThePrefixKeysTheImageAndTheReportSaysSo) {
  auto ingested = ingestText(
      "MODULE Linux x86_64 0FE378BA649615D00FBA525AB5981B190 libdemo.so\nFILE 0 /a.c\nFUNC 10 10 0 f\n10 10 1 0\n");
  ASSERT_TRUE(ingested->report) << ingested->report.error().describe();
  ASSERT_EQ(ingested->report->ids, std::vector<std::string>{"ba78e30f9664d0150fba525ab5981b19"});
  ASSERT_EQ(ingested->report->warnings.size(), 1u);
  EXPECT_NE(ingested->report->warnings[0].find("no INFO CODE_ID"), std::string::npos);
  NativeResolver resolver(*ingested->store.store, {});
  EXPECT_EQ(frames(resolver, "0fe378ba649615d00fba525ab5981b190", 0x12), "symbolicated dwarf | f /a.c:1");
}

TEST(BreakpadIngest, RefusesWhatItCannotServe) {
  auto windows = ingestText("MODULE windows x86_64 0FE378BA649615D00FBA525AB5981B191 demo.pdb\n");
  ASSERT_FALSE(windows->report);
  EXPECT_EQ(windows->report.error().code(), ErrorCode::kUnsupported);
  auto not_sym = ingestText("FILE 0 a.c\n");
  ASSERT_FALSE(not_sym->report);
  EXPECT_EQ(not_sym->report.error().code(), ErrorCode::kMalformedInput);
  auto bad_line = ingestText("MODULE Linux x86_64 0FE378BA649615D00FBA525AB5981B190 a.so\nFUNC 10 10 0 f\n10 1 2\n");
  ASSERT_FALSE(bad_line->report);
  EXPECT_NE(bad_line->report.error().message().find("libdemo.so.sym line 3: line record"), std::string::npos)
      << bad_line->report.error().message();

  TestStore store;
  UploadContent content;
  content.bytes = kElfSym;
  content.display_name = "big.sym";
  IngestOptions options;
  options.max_input_bytes = 100;
  auto too_large = ingestBreakpad(*store.store, UploadMeta{}, content, options);
  ASSERT_FALSE(too_large);
  EXPECT_EQ(too_large.error().code(), ErrorCode::kTooLarge);
}

TEST(BreakpadIngest, ReadsAFileFromDisk) {
  native_test::TempDir dir;
  native_test::writeFile(dir.file("libdemo.so.sym"), kElfSym);
  TestStore store;
  UploadContent content;
  content.path = dir.file("libdemo.so.sym");
  content.display_name = "libdemo.so.sym";
  auto report = ingestBreakpad(*store.store, UploadMeta{}, content, IngestOptions{});
  ASSERT_TRUE(report) << report.error().describe();
  NativeResolver resolver(*store.store, {});
  EXPECT_EQ(frames(resolver, "0fe378ba649615d00fba525ab5981b190", 0x1010),
            "symbolicated dwarf | helper /src/util.h:3 inlined | run /src/a.c:9");
}

// Many functions, files and symbols: string blocks past the first 64 strings, symbol chunks past
// the first 128 symbols, write batches flushed along the way, progress reported.
TEST(BreakpadIngest, ManyRecordsSpanStringBlocksAndSymbolChunks) {
  constexpr int kFunctions = 3000;
  std::string text =
      "MODULE Linux x86_64 0FE378BA649615D00FBA525AB5981B190 libmany.so\n"
      "INFO CODE_ID BA78E30F9664D0150FBA525AB5981B190011AABB\n";
  char line[160];
  for (int i = 0; i < 200; ++i) {
    snprintf(line, sizeof(line), "FILE %d /src/dir%d/file%d.c\nINLINE_ORIGIN %d inlined_%d\n", i, i % 7, i, i, i);
    text += line;
  }
  for (int i = 0; i < kFunctions; ++i) {
    const unsigned base = 0x10000 + i * 0x40;
    snprintf(line, sizeof(line), "FUNC %x 40 0 function_%d(int)\nINLINE 0 %d %d %d %x 10\n%x 20 %d %d\n%x 20 %d %d\n",
             base, i, 1000 + i, (i + 1) % 200, i % 200, base + 0x20, base, i + 1, i % 200, base + 0x20, i + 2,
             (i + 3) % 200);
    text += line;
  }
  for (int i = 0; i < kFunctions; ++i) {
    snprintf(line, sizeof(line), "PUBLIC %x 0 public_%d\n", 0x100000 + i * 0x10, i);
    text += line;
  }
  TestStore store;
  UploadContent content;
  content.bytes = text;
  content.display_name = "libmany.so.sym";
  IngestOptions options;
  uint64_t last_done = 0;
  size_t calls = 0;
  options.progress = [&](uint64_t done, uint64_t total, std::string_view stage) {
    EXPECT_EQ(total, text.size());
    EXPECT_GE(done, last_done);
    EXPECT_EQ(stage, "breakpad libmany.so");
    last_done = done;
    ++calls;
  };
  auto report = ingestBreakpad(*store.store, UploadMeta{}, content, options);
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_TRUE(report->warnings.empty()) << report->warnings.front();
  EXPECT_EQ(last_done, text.size());
  EXPECT_GE(calls, 2u);
  // functions + string blocks + symbol chunks + aliases + module index + image
  EXPECT_GT(report->records, static_cast<uint64_t>(kFunctions + kFunctions / 128));
  NativeResolver resolver(*store.store, {});
  for (int i : {0, 1, 63, 64, 65, 1234, kFunctions - 1}) {
    const unsigned base = 0x10000 + i * 0x40;
    char expected[200];
    snprintf(expected, sizeof(expected),
             "symbolicated dwarf | inlined_%d /src/dir%d/file%d.c:%d inlined | function_%d(int) /src/dir%d/file%d.c:%d",
             i % 200, (i + 3) % 200 % 7, (i + 3) % 200, i + 2, i, (i + 1) % 200 % 7, (i + 1) % 200, 1000 + i);
    EXPECT_EQ(frames(resolver, "ba78e30f9664d0150fba525ab5981b190011aabb", base + 0x24, "libmany.so"), expected) << i;
    snprintf(expected, sizeof(expected), "symbolicated symtab | public_%d :0 +8", i);
    EXPECT_EQ(frames(resolver, "ba78e30f9664d0150fba525ab5981b190011aabb", 0x100000 + i * 0x10 + 8, "libmany.so"),
              expected);
  }
}

std::filesystem::path regressionDir() {
  return std::filesystem::path(RESTACK_SOURCE_DIR) / "tests/breakpad/fuzz_regressions";
}

TEST(BreakpadFuzz, EveryCheckedInRegressionInputSurvives) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(regressionDir())) {
    if (entry.path().extension() != ".sym") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    breakpad_test::fuzzBreakpadInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    // The whole ingest too: whatever it stored must read back (no malformed-record errors).
    auto ingested = ingestText(bytes, entry.path().filename().string());
    if (ingested->report) {
      NativeResolver resolver(*ingested->store.store, {});
      for (const std::string& id : ingested->report->ids) {
        for (uint64_t address : {0x0ull, 0x10ull, 0xff8ull, 0x1000ull, 0x1004ull, 0x1010ull, 0x1014ull, 0x1234ull,
                                 0xfffffffffffffff4ull}) {
          std::string answer = frames(resolver, id, address);
          EXPECT_EQ(answer.rfind("error", 0), std::string::npos) << entry.path() << " " << address << ": " << answer;
        }
      }
    }
    ++files;
  }
  EXPECT_GE(files, 3u);
}

}  // namespace
}  // namespace restack
