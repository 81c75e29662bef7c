// Native records, debug id forms, the resolver on records written by hand, malformed inputs and a
// deterministic run of the fuzz entry point. No compiler needed (see native_tools_test for the
// comparison with llvm-symbolizer on real binaries).
#include <gtest/gtest.h>

#include <rocksdb/write_batch.h>

#include <llvm/DebugInfo/DWARF/DWARFContext.h>
#include <llvm/Demangle/Demangle.h>
#include <llvm/Support/MemoryBuffer.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "formats/native/demangle.h"
#include "formats/native/dwarf_preflight.h"
#include "formats/native/dwarf_walker.h"
#include "formats/native/native_object.h"
#include "formats/native/objc_metadata.h"
#include "formats/native/symbol_table.h"
#include "formats/swift/rust_demangle.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/native/native_resolver.h"
#include "tests/native/dwp_fuzz_entry.h"
#include "tests/native/native_fuzz_entry.h"
#include "tests/native/native_test_support.h"
#include "tests/support/mutate.h"

namespace restack::native_test {
namespace {

using namespace native_store;

// The worked example of native_records.h.
FunctionRecord workedExample() {
  FunctionRecord function;
  function.begin = 0x10d00;
  function.end = 0x10d80;
  function.nodes = {{UINT32_MAX, 0, kNoString, 0, 0}, {0, 2, 1, 9, 5}};
  function.tiles = {{0x10d00, 0}, {0x10d10, 1}, {0x10d20, 0}};
  function.lines = {{0x10d00, 1, 8, 3}, {0x10d10, 1, 3, 10}, {0x10d20, 1, 10, 1}};
  return function;
}

TEST(NativeRecords, WorkedExampleEncodesAsDocumented) {
  EXPECT_EQ(bytesToHex(encodeFunction(workedExample())),
            "01"
            "8001"
            "00"
            "02"
            "0001000000"
            "0103020905"
            "03"
            "0000"
            "1001"
            "1000"
            "03"
            "00021003"
            "1002090a"
            "10020e01");
  std::string id = hexToBytes("ba78e30f9664d0150fba525ab5981b190011aabb");
  EXPECT_EQ(bytesToHex(functionKey(id, 0x10d00)),
            "4614"
            "ba78e30f9664d0150fba525ab5981b190011aabb"
            "0000000000010d00");
}

TEST(NativeRecords, FunctionRoundTrip) {
  FunctionRecord original = workedExample();
  original.outer_name = 7;
  auto decoded = decodeFunction(original.begin, encodeFunction(original));
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_EQ(decoded->end, original.end);
  EXPECT_EQ(decoded->outer_name, 7u);
  ASSERT_EQ(decoded->nodes.size(), 2u);
  EXPECT_EQ(decoded->nodes[1].parent, 0u);
  EXPECT_EQ(decoded->nodes[1].call_line, 9u);
  EXPECT_EQ(decoded->nodes[0].call_file, kNoString);
  ASSERT_EQ(decoded->lines.size(), 3u);
  EXPECT_EQ(decoded->lines[1].line, 3u);
  EXPECT_EQ(decoded->lines[2].begin, 0x10d20u);
  EXPECT_EQ(decoded->tiles[2].begin, 0x10d20u);
}

TEST(NativeRecords, CloneIsAnOptionalTrailingField) {
  FunctionRecord original = workedExample();
  std::string without = encodeFunction(original);
  original.clone = 4;
  std::string with = encodeFunction(original);
  EXPECT_EQ(with.substr(0, without.size()), without) << "records without a clone keep their layout";
  auto decoded = decodeFunction(original.begin, with);
  ASSERT_TRUE(decoded) << decoded.error().describe();
  EXPECT_EQ(decoded->clone, 4u);
  auto plain = decodeFunction(original.begin, without);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->clone, kNoString);
  EXPECT_FALSE(decodeFunction(original.begin, without + std::string(1, '\0'))) << "a trailing 0 names no clone";
}

TEST(NativeSymbols, CloneSuffixFollowsTheItaniumCloneGrammar) {
  EXPECT_EQ(native::cloneSuffix("f.isra.0", "f"), "isra.0");
  EXPECT_EQ(native::cloneSuffix("_ZL3fooi.constprop.0.isra.0", "_ZL3fooi"), "constprop.0.isra.0");
  EXPECT_EQ(native::cloneSuffix("part_fn.part.0", "part_fn"), "part.0");
  EXPECT_EQ(native::cloneSuffix("__GI__IO_fflush.cold", "__GI__IO_fflush"), "cold");
  EXPECT_EQ(native::cloneSuffix("g.lto_priv.0", "g"), "lto_priv.0");
  EXPECT_EQ(native::cloneSuffix("f.part.0.cold", "f"), "part.0.cold");
  EXPECT_EQ(native::cloneSuffix("f2", "f"), "") << "another function";
  EXPECT_EQ(native::cloneSuffix("f.0", "f"), "") << "a number cannot start the suffix";
  EXPECT_EQ(native::cloneSuffix("f.", "f"), "");
  EXPECT_EQ(native::cloneSuffix("f.isra..0", "f"), "");
  EXPECT_EQ(native::cloneSuffix("f@GLIBC_2.2.5", "f"), "");
  EXPECT_EQ(native::cloneSuffix("f.isra.0", ""), "");
  EXPECT_EQ(native::cloneSuffix("f", "f"), "");
}

TEST(NativeRecords, EveryTruncationAndBadIndexIsRejected) {
  std::string value = encodeFunction(workedExample());
  for (size_t length = 0; length < value.size(); ++length) {
    EXPECT_FALSE(decodeFunction(0x10d00, value.substr(0, length))) << length;
  }
  FunctionRecord cycle = workedExample();
  cycle.nodes[0].parent = 1;  // a parent after its child would let a walk loop
  EXPECT_FALSE(decodeFunction(0x10d00, encodeFunction(cycle)));
  FunctionRecord bad_tile = workedExample();
  bad_tile.tiles[1].node = 5;
  EXPECT_FALSE(decodeFunction(0x10d00, encodeFunction(bad_tile)));
  std::string wrong_version = value;
  wrong_version[0] = 2;
  auto refused = decodeFunction(0x10d00, wrong_version);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("re-ingest"), std::string::npos);
  // A count far larger than the bytes that follow.
  EXPECT_FALSE(decodeStringBlock(std::string("\x01\xff\xff\xff\xff\x0f", 6)));
  EXPECT_FALSE(decodeIdList(std::string("\x01\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10)));
}

TEST(NativeRecords, SymbolChunkImageStringsRoundTrip) {
  SymbolChunk chunk;
  chunk.begin = 0x4000;
  chunk.next_chunk = 0x9000;
  chunk.symbols = {{0x4000, 0x20, 0, "main", "main.c"}, {0x4040, 0, 1, "-[Foo bar]", ""}};
  auto decoded = decodeSymbolChunk(0x4000, encodeSymbolChunk(chunk));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->next_chunk, 0x9000u);
  ASSERT_EQ(decoded->symbols.size(), 2u);
  EXPECT_EQ(decoded->symbols[1].name, "-[Foo bar]");
  EXPECT_EQ(decoded->symbols[1].source, 1);
  // A chunk with a symbol file is version 2 and keeps the file; one without any stays version 1,
  // which older readers read.
  EXPECT_EQ(encodeSymbolChunk(chunk)[0], char{kSymbolChunkWithFilesVersion});
  EXPECT_EQ(decoded->symbols[0].file, "main.c");
  EXPECT_EQ(decoded->symbols[1].file, "");
  chunk.symbols[0].file.clear();
  EXPECT_EQ(encodeSymbolChunk(chunk)[0], char{kRecordVersion});
  auto without_files = decodeSymbolChunk(0x4000, encodeSymbolChunk(chunk));
  ASSERT_TRUE(without_files);
  EXPECT_EQ(without_files->symbols[0].file, "");

  ImageRecord image;
  image.format = native::ObjectFormat::kMachO;
  image.shared = true;
  image.has_dwarf = true;
  image.image_base = 0x100000000;
  image.functions = 12;
  image.arch = "arm64";
  image.module = "UIKitCore";
  auto decoded_image = decodeImage(encodeImage(image));
  ASSERT_TRUE(decoded_image);
  EXPECT_EQ(decoded_image->image_base, 0x100000000u);
  EXPECT_TRUE(decoded_image->shared);
  EXPECT_FALSE(decoded_image->has_symbols);
  EXPECT_EQ(decoded_image->module, "UIKitCore");

  auto strings = decodeStringBlock(encodeStringBlock({"a", "", "/src/x.cc"}));
  ASSERT_TRUE(strings);
  EXPECT_EQ((*strings)[2], "/src/x.cc");
}

TEST(NativeIds, AliasFormsOfBuildIdsAndUuids) {
  auto aliases = native::debugIdAliases(native::ObjectFormat::kElf, "ba78e30f9664d0150fba525ab5981b190011aabb");
  EXPECT_NE(std::find(aliases.begin(), aliases.end(), "ba78e30f9664d0150fba525ab5981b19"), aliases.end());
  EXPECT_NE(std::find(aliases.begin(), aliases.end(), "0fe378ba649615d00fba525ab5981b19"), aliases.end());
  EXPECT_NE(std::find(aliases.begin(), aliases.end(), "0fe378ba649615d00fba525ab5981b190"), aliases.end());
  // Short (8-byte) build ids are zero padded to 16 bytes first, as Breakpad does.
  auto short_id = native::debugIdAliases(native::ObjectFormat::kElf, "0011223344556677");
  EXPECT_NE(std::find(short_id.begin(), short_id.end(), "00112233445566770000000000000000"), short_id.end());
  auto uuid = native::debugIdAliases(native::ObjectFormat::kMachO, "8c17697f2e8439e5b491fcf5169106ff");
  ASSERT_EQ(uuid.size(), 1u);
  EXPECT_EQ(uuid[0], "8c17697f2e8439e5b491fcf5169106ff0");
}

TEST(NativeDemangle, CxxRustObjcSwift) {
  EXPECT_EQ(native::demangleName("_ZN3foo3barEi"), "foo::bar(int)");
  EXPECT_EQ(native::demangleName("_RNvCs1234_7mycrate4main"), "mycrate::main");
  EXPECT_EQ(native::demangleName("-[Foo bar:]"), "-[Foo bar:]");
  EXPECT_EQ(native::demangleName("main"), "main");
  // Swift symbols are left to formats/swift (tests/swift): stored as they are.
  EXPECT_EQ(native::demangleName("$s4main3FooV3baryyF"), "$s4main3FooV3baryyF");
}

// Rust names as Rust's own backtrace prints them (RUST_BACKTRACE=1). The symbols are rustc 1.95's
// for tests/native/fixtures/orders.rs, legacy and `-C symbol-mangling-version=v0`; the expected
// names are the ones that program printed in its own backtrace
// (tests/grouping_e2e/rust_e2e_test.cc compares them at test time).
TEST(NativeDemangle, RustNamesAsRustPrintsThem) {
  if (!rust::rustDemanglerAvailable()) {
    // Configured with RESTACK_SWIFT_DEMANGLER=OFF: LLVM's names, as llvm-symbolizer prints them.
    EXPECT_EQ(native::demangleName("_ZN6orders14Order$LT$T$GT$5total17hc4157ac8c6a19a9fE"),
              "orders::Order$LT$T$GT$::total::hc4157ac8c6a19a9f");
    EXPECT_EQ(native::demangleName("_RNvMs0_Cs7DmIql08n4T_6ordersINtB5_5OrderNtB5_3SkuE5totalB5_"),
              "<orders::Order<orders::Sku>>::total");
    return;
  }
  // Legacy: escapes decoded, rustc's hash dropped (LLVM's demangler keeps both:
  // "orders::Order$LT$T$GT$::total::hc4157ac8c6a19a9f").
  EXPECT_EQ(native::demangleName("_ZN6orders14Order$LT$T$GT$5total17hc4157ac8c6a19a9fE"), "orders::Order<T>::total");
  EXPECT_EQ(native::demangleName("_ZN46_$LT$orders..Sku$u20$as$u20$orders..Priced$GT$5price17heb27dc400083ea54E"),
            "<orders::Sku as orders::Priced>::price");
  EXPECT_EQ(native::demangleName("_ZN6orders4main28_$u7b$$u7b$closure$u7d$$u7d$17h34c690c4d766aa60E"),
            "orders::main::{{closure}}");
  // Mach-O's extra underscore, and ThinLTO's local copies (".llvm.<digits>"), which Rust drops.
  EXPECT_EQ(native::demangleName("__ZN6orders14Order$LT$T$GT$4push17h81f9bc0ff0792773E"), "orders::Order<T>::push");
  EXPECT_EQ(native::demangleName("_ZN6orders14Order$LT$T$GT$4push17h81f9bc0ff0792773E.llvm.11270950225441716396"),
            "orders::Order<T>::push");
  // The worked example of formats/native/demangle.h.
  EXPECT_EQ(native::demangleName("_ZN9inventory14Order$LT$T$GT$4push17h0123456789abcdefE"),
            "inventory::Order<T>::push");
  // v0: generic arguments, closures and trait impls; no crate disambiguators.
  EXPECT_EQ(native::demangleName("_RNvMs0_Cs7DmIql08n4T_6ordersINtB5_5OrderNtB5_3SkuE5totalB5_"),
            "<orders::Order<orders::Sku>>::total");
  EXPECT_EQ(native::demangleName("_RINvCs7DmIql08n4T_6orders9on_screenNCNvB2_4mains0_0EB2_"),
            "orders::on_screen::<orders::main::{closure#2}>");
  EXPECT_EQ(native::demangleName("_RNvXCs7DmIql08n4T_6ordersNtB2_3SkuNtB2_6Priced5price"),
            "<orders::Sku as orders::Priced>::price");
  // A v0 name of the standard library linked into that program, whose back-references make the
  // demangled name (1103 bytes) longer than the symbol and than the wrapper's first buffer. For
  // v0 names without disambiguators LLVM's demangler prints what Rust prints (GNU c++filt -i too).
  const std::string long_v0 =
      "_RNvMs2_NtCs4X4t9plMPHF_9addr2line6lookupINtB5_13LoopingLookupINtNtCsgEmfK2I1SDS_4core6result6ResultINtNtB7_"
      "5frame9FrameIterINtNtNtCsduwmD7cSIQq_5gimli4read12endian_slice11EndianSliceNtNtB24_"
      "9endianity12LittleEndianEENtB22_"
      "5ErrorEINtB5_12MappedLookupIBY_TINtNtB12_6option6OptionRINtNtB7_8function8FunctionB1X_EEIB45_NtB1C_"
      "8LocationEEB3s_EINtB5_12SimpleLookupIBY_TNtB7_9DebugFileINtNtB22_5dwarf7UnitRefB1X_EEB3s_EB1X_NCNvMNtB7_"
      "4unitINtB6K_7ResUnitB1X_E14dwarf_and_units4_0ENCNvB6J_25find_function_or_location0ENCNvMs_B7_INtB7_7ContextB1X_"
      "E11find_frames0E10new_lookupCsjrHSEGnQ3l9_3std";
  const std::string long_name = native::demangleName(long_v0);
  EXPECT_EQ(long_name.size(), 1103u);
  EXPECT_EQ(long_name, llvm::demangle(long_v0));
  EXPECT_TRUE(long_name.starts_with("<addr2line::lookup::LoopingLookup<core::result::Result<")) << long_name;
  EXPECT_TRUE(long_name.ends_with(">>::new_lookup")) << long_name;
}

// rustc-demangle reads any "_ZN<length><name>…E" as Rust; only rustc's hash as the last path
// element makes a legacy name Rust's. Everything else keeps LLVM's answer.
TEST(NativeDemangle, CxxNamesThatLookLikeRustStayCxx) {
  // A C++ function whose last name looks like a hash: its parameters follow the 'E'.
  EXPECT_EQ(native::demangleName("_ZN3foo17h0123456789abcdefEv"), "foo::h0123456789abcdef()");
  EXPECT_EQ(native::demangleName("_ZNK3app5Order17h0123456789abcdefEv"), "app::Order::h0123456789abcdef() const");
  // A C++ variable (no parameters) whose name holds '$' (GCC allows it): no hash, so LLVM's
  // answer, escapes untouched.
  EXPECT_EQ(native::demangleName("_ZN3app10$LT$u8$GT$E"), "app::$LT$u8$GT$");
  // Not quite a hash: 15 hex digits, or a letter past 'f'.
  EXPECT_EQ(native::demangleName("_ZN3app16h0123456789abcdeE"), "app::h0123456789abcde");
  EXPECT_EQ(native::demangleName("_ZN3app17h0123456789abcdegE"), "app::h0123456789abcdeg");
  // C++ templates are not Rust's grammar.
  EXPECT_EQ(native::demangleName("_ZN3app5OrderIiE17h0123456789abcdefE"), "app::Order<int>::h0123456789abcdef");
}

TEST(NativeDemangle, MalformedNamesComeBackAsTheyAre) {
  for (std::string_view name :
       {"_ZN6orders4main17h1276d1c4d766ce1d", "_ZN99orders17h1276d1c4d766ce1dE", "_ZN", "_R", "_RNvC",
        "_RNvCs7DmIql08n4T_6orders", "_RNvCs7DmIql08n4T_6orders4mainB9999_", "__R", "_Z"}) {
    EXPECT_EQ(native::demangleName(name), name) << name;
  }
  // Bytes that are not UTF-8 are no Rust name (LLVM's demangler may still read them), nor is a
  // name too long to be a compiler's.
  EXPECT_FALSE(rust::demangleRust("_ZN6orders4m\xffin17h1276d1c4d766ce1dE").has_value());
  std::string deep = "_RNvC";
  for (int i = 0; i < 20000; ++i) deep += "INtC1a1b";
  EXPECT_FALSE(rust::demangleRust(deep).has_value());
  std::string nested = "_R";
  for (int i = 0; i < 2000; ++i) nested += "INvC1a1b";
  nested += "C1a";
  std::string text = native::demangleName(nested);  // must not crash, whatever it answers
  EXPECT_FALSE(text.empty());
}

// demangleName runs on every name of every upload: edited Rust symbols come back as some name,
// never a crash or an exception (the Rust side catches panics: formats/swift/src/lib.rs).
TEST(NativeDemangle, DeterministicMutationRunOfRustNamesNeverCrashes) {
  const std::string seeds[] = {"_ZN6orders14Order$LT$T$GT$5total17hc4157ac8c6a19a9fE",
                               "_ZN46_$LT$orders..Sku$u20$as$u20$orders..Priced$GT$5price17heb27dc400083ea54E",
                               "_ZN6orders4main28_$u7b$$u7b$closure$u7d$$u7d$17h34c690c4d766aa60E",
                               "_RNvMs0_Cs7DmIql08n4T_6ordersINtB5_5OrderNtB5_3SkuE5totalB5_",
                               "_RINvCs7DmIql08n4T_6orders9on_screenNCNvB2_4mains0_0EB2_",
                               "_RNvXCs7DmIql08n4T_6ordersNtB2_3SkuNtB2_6Priced5price"};
  std::mt19937 random(20261127);
  size_t rust = 0;
  for (const std::string& seed : seeds) {
    for (int round = 0; round < 500; ++round) {
      const std::string mutated = test_support::mutate(seed, random, 4, 4);
      if (rust::demangleRust(mutated)) ++rust;
      EXPECT_EQ(native::demangleName(mutated).empty(), mutated.empty()) << mutated;
    }
  }
  // Many single edits leave a readable symbol: the run must have reached the demangler.
  if (rust::rustDemanglerAvailable()) EXPECT_GT(rust, 50u);
}

TEST(NativeObject, UnreadableUploadsGetActionableErrors) {
  for (std::string bytes : {std::string(), std::string("PK\x03\x04 not really", 15),
                            std::string("\x7f"
                                        "ELF",
                                        4),
                            std::string(200, '\0')}) {
    native::NativeOpenOptions options;
    options.display_name = "libx.so";
    auto file = native::NativeFile::fromBytes(bytes, options);
    ASSERT_FALSE(file);
    EXPECT_NE(file.error().message().find("libx.so"), std::string::npos) << file.error().describe();
  }
  auto directory = native::NativeFile::open(TempDir().path());
  ASSERT_FALSE(directory);
  EXPECT_NE(directory.error().message().find(".dSYM"), std::string::npos);
}

TEST(NativeObject, FilesOfAFolderAreNamedInsideTheUploadNotByTheirTemporaryPath) {
  // An unpacked zip of dSYM bundles lives in a temporary folder the user never saw.
  TempDir unpacked;
  const std::filesystem::path dwarf = std::filesystem::path(unpacked.path()) / "Foo.dSYM/Contents/Resources/DWARF";
  std::filesystem::create_directories(dwarf);
  std::ofstream(dwarf / "Foo") << "not an object file";
  native::NativeOpenOptions options;
  options.display_name = "dSYMs.zip";
  auto file = native::NativeFile::open(unpacked.path(), options);
  ASSERT_FALSE(file);
  const std::string& message = file.error().message();
  EXPECT_TRUE(message.starts_with("dSYMs.zip/Foo.dSYM/Contents/Resources/DWARF/Foo: not a readable ELF or Mach-O file"))
      << message;
  EXPECT_EQ(message.find(unpacked.path()), std::string::npos) << message;
  // Without a name, the folder's own path is the one the user gave.
  auto unnamed = native::NativeFile::open(unpacked.path());
  ASSERT_FALSE(unnamed);
  EXPECT_TRUE(unnamed.error().message().starts_with(unpacked.path() + "/Foo.dSYM/Contents/Resources/DWARF/Foo: "))
      << unnamed.error().message();
}

// ---------------------------------------------------------------------------------------------
// The resolver on records written by hand.

class HandWrittenStore : public ::testing::Test {
 protected:
  void SetUp() override {
    id = hexToBytes("ba78e30f9664d0150fba525ab5981b190011aabb");
    rocksdb::WriteBatch batch;
    auto* family = store.store->family(native_store::kNativeFamily);
    ImageRecord image;
    image.format = native::ObjectFormat::kElf;
    image.has_dwarf = true;
    image.has_symbols = true;
    image.module = "libapm.so";
    image.functions = 1;
    image.strings = 4;
    image.symbols = 2;
    batch.Put(family, imageKey(id), encodeImage(image));
    batch.Put(family, aliasKey("ba78e30f9664d0150fba525ab5981b19"), encodeAlias(id));
    FunctionRecord function = workedExample();
    function.outer_name = 3;
    batch.Put(family, functionKey(id, function.begin), encodeFunction(function));
    batch.Put(family, stringBlockKey(id, 0), encodeStringBlock({"main", "/src/a.c", "helper", "main_from_symtab"}));
    SymbolChunk chunk;
    chunk.begin = 0x10000;
    chunk.symbols = {{0x10000, 0x80, 0, "init", ""}, {0x10d00, 0x80, 0, "main", ""}};
    batch.Put(family, symbolKey(id, chunk.begin), encodeSymbolChunk(chunk));
    ASSERT_TRUE(store.store->write(batch));
  }

  stack::NativeFrameLine frame(const std::string& debug_id) {
    stack::NativeFrameLine line;
    line.debug_id = debug_id;
    line.module = "libapm.so";
    return line;
  }

  TestStore store;
  std::string id;
  EventScope scope{"apm", "1", "android", {}};
};

TEST_F(HandWrittenStore, InlinedFramesInnermostFirstWithSymbolTableOuterName) {
  NativeResolver resolver(*store.store, {});
  auto lookup = resolver.lookup(scope, frame("ba78e30f9664d0150fba525ab5981b19"), 0x10d14);
  ASSERT_TRUE(lookup);
  ASSERT_EQ(lookup->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(lookup->tier, "dwarf");
  ASSERT_EQ(lookup->frames.size(), 2u);
  EXPECT_EQ(lookup->frames[0].function, "helper");
  EXPECT_EQ(lookup->frames[0].file, "/src/a.c");
  EXPECT_EQ(lookup->frames[0].line, 3u);
  EXPECT_EQ(lookup->frames[0].column, 10u);
  EXPECT_TRUE(lookup->frames[0].inlined);
  EXPECT_EQ(lookup->frames[1].function, "main_from_symtab");
  EXPECT_EQ(lookup->frames[1].line, 9u);
  EXPECT_EQ(lookup->frames[1].column, 5u);
  EXPECT_FALSE(lookup->frames[1].inlined);
  EXPECT_EQ(lookup->frames[1].in_app, true);
  EXPECT_EQ(lookup->frames[1].module, "libapm.so");
}

TEST_F(HandWrittenStore, SymbolTierGapsAndMissingImages) {
  NativeResolver resolver(*store.store, {});
  std::string full = bytesToHex(id);
  auto symtab = resolver.lookup(scope, frame(full), 0x10010);
  ASSERT_TRUE(symtab);
  ASSERT_EQ(symtab->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(symtab->tier, "symtab");
  EXPECT_EQ(symtab->frames[0].function, "init");
  EXPECT_EQ(symtab->frames[0].symbol_offset, 0x10u);
  EXPECT_EQ(symtab->reason, FrameReason::kNoLineInfo);
  for (uint64_t gap : {0x100ull, 0x10090ull, 0x10d80ull, 0xffffffffffull}) {
    auto outside = resolver.lookup(scope, frame(full), gap);
    ASSERT_TRUE(outside);
    EXPECT_EQ(outside->status, FrameStatus::kNotFound) << gap;
    EXPECT_EQ(outside->reason, FrameReason::kAddressOutsideModule) << gap;
  }
  auto missing = resolver.lookup(scope, frame("00112233445566778899aabbccddeeff"), 0x10d14);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, FrameStatus::kMissingSymbols);
  EXPECT_EQ(missing->missing_id, "00112233445566778899aabbccddeeff");
  EXPECT_EQ(missing->missing_id_kind, MissingIdKind::kDebugId);
}

TEST_F(HandWrittenStore, ConcurrentLookupsAndATinyCacheGiveTheSameAnswers) {
  NativeResolverOptions options;
  options.cache_bytes = 1;  // every insertion evicts: correctness must not depend on the cache
  NativeResolver resolver(*store.store, options);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        uint64_t address = (i + t) % 2 ? 0x10d14 : 0x10d04;
        auto lookup = resolver.lookup(scope, frame(bytesToHex(id)), address);
        if (!lookup || lookup->status != FrameStatus::kSymbolicated) {
          ++wrong;
          continue;
        }
        const std::string& expected = address == 0x10d14 ? "helper" : "main_from_symtab";
        if (lookup->frames[0].function != expected) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(HandWrittenStore, LaterUploadsBecomeVisibleAfterForget) {
  NativeResolver resolver(*store.store, {});
  std::string other = "00112233445566778899aabbccddeeff";
  auto before = resolver.lookup(scope, frame(other), 0x10);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, FrameStatus::kMissingSymbols);
  rocksdb::WriteBatch batch;
  ImageRecord image;
  image.has_symbols = true;
  image.module = "libother.so";
  batch.Put(store.store->family(native_store::kNativeFamily), imageKey(hexToBytes(other)), encodeImage(image));
  SymbolChunk chunk;
  chunk.begin = 0;
  chunk.symbols = {{0, 0x100, 0, "start", ""}};
  batch.Put(store.store->family(native_store::kNativeFamily), symbolKey(hexToBytes(other), 0),
            encodeSymbolChunk(chunk));
  ASSERT_TRUE(store.store->write(batch));
  resolver.forget(other);
  auto after = resolver.lookup(scope, frame(other), 0x10);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, FrameStatus::kSymbolicated);
}

TEST_F(HandWrittenStore, SymbolsReplacedUnderTheSameIdShowAfterForgetOnTheThreadThatUsedTheOldOnes) {
  // The thread keeps the image it used last (NativeResolver's per-thread memo): forget must
  // reach that memo too, not only the shared cache.
  NativeResolver resolver(*store.store, {});
  const std::string full = bytesToHex(id);
  auto before = resolver.lookup(scope, frame(full), 0x10010);
  ASSERT_TRUE(before);
  ASSERT_EQ(before->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(before->frames[0].function, "init");
  rocksdb::WriteBatch batch;
  SymbolChunk chunk;
  chunk.begin = 0x10000;
  chunk.symbols = {{0x10000, 0x80, 0, "init_rebuilt", ""}, {0x10d00, 0x80, 0, "main", ""}};
  batch.Put(store.store->family(native_store::kNativeFamily), symbolKey(id, chunk.begin), encodeSymbolChunk(chunk));
  ASSERT_TRUE(store.store->write(batch));
  auto cached = resolver.lookup(scope, frame(full), 0x10010);
  ASSERT_TRUE(cached);
  EXPECT_EQ(cached->frames[0].function, "init") << "answered from the cache until forgotten";
  resolver.forget(full);
  auto after = resolver.lookup(scope, frame(full), 0x10010);
  ASSERT_TRUE(after);
  ASSERT_EQ(after->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(after->frames[0].function, "init_rebuilt");
  // So must clear().
  rocksdb::WriteBatch again;
  chunk.symbols = {{0x10000, 0x80, 0, "init_third", ""}, {0x10d00, 0x80, 0, "main", ""}};
  again.Put(store.store->family(native_store::kNativeFamily), symbolKey(id, chunk.begin), encodeSymbolChunk(chunk));
  ASSERT_TRUE(store.store->write(again));
  resolver.clear();
  auto cleared = resolver.lookup(scope, frame(full), 0x10010);
  ASSERT_TRUE(cleared);
  EXPECT_EQ(cleared->frames[0].function, "init_third");
}

TEST_F(HandWrittenStore, AbsentIdsAndModulesAreRememberedWithinABound) {
  // Every event may name debug ids and modules nobody uploaded (each device build of a system
  // library has its own id): what the resolver remembers about them must stay bounded, and the
  // answers must not change when it forgets.
  NativeResolverOptions options;
  options.max_remembered = 8;
  NativeResolver resolver(*store.store, options);
  for (int i = 0; i < 200; ++i) {
    char absent_id[33];
    std::snprintf(absent_id, sizeof absent_id, "%032x", i + 1);
    auto by_id = resolver.lookup(scope, frame(absent_id), 0x10d14);
    ASSERT_TRUE(by_id);
    EXPECT_EQ(by_id->status, FrameStatus::kMissingSymbols);
    EXPECT_EQ(by_id->missing_id, absent_id);
    stack::NativeFrameLine by_name;
    by_name.module = "libvendor" + std::to_string(i) + ".so";
    auto by_module = resolver.lookup(scope, by_name, 0x10d14);
    ASSERT_TRUE(by_module);
    EXPECT_EQ(by_module->status, FrameStatus::kMissingSymbols);
    EXPECT_EQ(by_module->missing_id_kind, MissingIdKind::kModule);
    EXPECT_LE(resolver.rememberedCount(), 2 * options.max_remembered) << i;
    // The uploaded image still answers between the absent ones.
    auto known = resolver.lookup(scope, frame("ba78e30f9664d0150fba525ab5981b19"), 0x10d14);
    ASSERT_TRUE(known);
    EXPECT_EQ(known->status, FrameStatus::kSymbolicated);
  }
}

TEST_F(HandWrittenStore, CorruptRecordsLeaveTheFrameNotFoundWithWhy) {
  rocksdb::WriteBatch batch;
  batch.Put(store.store->family(native_store::kNativeFamily), functionKey(id, 0x20000),
            std::string("\x01\x10\x00\x05\x00", 5));
  ASSERT_TRUE(store.store->write(batch));
  NativeResolver resolver(*store.store, {});
  auto lookup = resolver.lookup(scope, frame(bytesToHex(id)), 0x20004);
  ASSERT_TRUE(lookup) << lookup.error().message();
  EXPECT_EQ(lookup->status, FrameStatus::kNotFound);
  EXPECT_NE(lookup->note.find("corrupt native function record F"), std::string::npos) << lookup->note;
  EXPECT_EQ(lookup->reason, FrameReason::kMalformedSymbols);
  EXPECT_NE(lookup->note.find("re-ingest"), std::string::npos) << lookup->note;
}

// ---------------------------------------------------------------------------------------------
// Deterministic run of the fuzz entry point.

std::string minimalElf() {
  std::string elf(64, '\0');
  memcpy(elf.data(),
         "\x7f"
         "ELF\x02\x01\x01",
         7);
  elf[16] = 3;                       // ET_DYN
  elf[18] = static_cast<char>(183);  // EM_AARCH64
  elf[20] = 1;                       // EV_CURRENT
  elf[52] = 64;                      // e_ehsize
  elf[58] = 64;                      // e_shentsize
  return elf;
}

std::string minimalMachO(uint32_t commands) {
  std::string macho(32 + 24, '\0');
  uint32_t header[] = {0xfeedfacf, 0x0100000c, 0, 6 /*MH_DYLIB*/, commands, 24, 0, 0};
  memcpy(macho.data(), header, sizeof(header));
  uint32_t uuid[] = {0x1b /*LC_UUID*/, 24, 0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff00};
  memcpy(macho.data() + 32, uuid, sizeof(uuid));
  return macho;
}

std::string fatHeader(uint32_t count) {
  std::string fat(8 + 20, '\0');
  uint32_t header[] = {__builtin_bswap32(0xcafebabe), __builtin_bswap32(count)};
  memcpy(fat.data(), header, sizeof(header));
  return fat;
}

// A little-endian ELF64 .so (aarch64) with a GNU build id (PT_NOTE) and one SHF_COMPRESSED
// .debug_info whose Elf64_Chdr declares `declared_size` uncompressed bytes for 16 bytes of
// payload. Layout: ELF header | program header | note | Chdr + payload | .shstrtab | 4 section
// headers (null, .note.gnu.build-id, .debug_info, .shstrtab).
std::string elfWithCompressedDebugInfo(uint64_t declared_size) {
  auto put = [](std::string& out, size_t offset, auto value) {
    if (out.size() < offset + sizeof(value)) out.resize(offset + sizeof(value));
    memcpy(out.data() + offset, &value, sizeof(value));
  };
  constexpr size_t kPhdr = 64, kNote = kPhdr + 56, kNoteSize = 12 + 4 + 8;
  constexpr size_t kDebug = kNote + kNoteSize, kDebugSize = 24 + 16;
  const std::string names = std::string("\0.note.gnu.build-id\0.debug_info\0.shstrtab\0", 42);
  const size_t strtab = kDebug + kDebugSize, headers = (strtab + names.size() + 7) / 8 * 8;
  std::string elf = minimalElf();
  put(elf, 32, uint64_t{kPhdr});    // e_phoff
  put(elf, 40, uint64_t{headers});  // e_shoff
  put(elf, 54, uint16_t{56});       // e_phentsize
  put(elf, 56, uint16_t{1});        // e_phnum
  put(elf, 60, uint16_t{4});        // e_shnum
  put(elf, 62, uint16_t{3});        // e_shstrndx
  put(elf, kPhdr, uint32_t{4});     // PT_NOTE
  put(elf, kPhdr + 8, uint64_t{kNote});
  put(elf, kPhdr + 32, uint64_t{kNoteSize});
  put(elf, kPhdr + 40, uint64_t{kNoteSize});
  put(elf, kPhdr + 48, uint64_t{4});
  put(elf, kNote, uint32_t{4});      // namesz ("GNU\0")
  put(elf, kNote + 4, uint32_t{8});  // descsz
  put(elf, kNote + 8, uint32_t{3});  // NT_GNU_BUILD_ID
  elf.resize(kDebug);
  memcpy(elf.data() + kNote + 12, "GNU\0\x12\x34\x56\x78\x9a\xbc\xde\xf0", 12);
  put(elf, kDebug, uint32_t{1});        // ELFCOMPRESS_ZLIB
  put(elf, kDebug + 8, declared_size);  // ch_size
  put(elf, kDebug + 16, uint64_t{1});   // ch_addralign
  elf.resize(kDebug + kDebugSize, '\x5a');
  elf += names;
  elf.resize(headers + 4 * 64, '\0');  // section 0 stays null
  auto section = [&](size_t index, uint32_t name, uint32_t type, uint64_t flags, uint64_t offset, uint64_t size) {
    size_t at = headers + 64 * index;
    put(elf, at, name);
    put(elf, at + 4, type);
    put(elf, at + 8, flags);
    put(elf, at + 24, offset);
    put(elf, at + 32, size);
    put(elf, at + 48, uint64_t{1});  // sh_addralign
  };
  section(1, 1, 7 /*SHT_NOTE*/, 2 /*SHF_ALLOC*/, kNote, kNoteSize);
  section(2, 20, 1 /*SHT_PROGBITS*/, 0x800 /*SHF_COMPRESSED*/, kDebug, kDebugSize);
  section(3, 32, 3 /*SHT_STRTAB*/, 0, strtab, names.size());
  return elf;
}

// Fuzz regression (libFuzzer, 2026-11-21): a compressed .debug_info whose header declared
// 0x1a00000001 bytes made LLVM's DWARFContext allocate 104 GB and abort the process.
TEST(NativeFuzz, CompressedSectionClaimingHugeSizeIsRejected) {
  std::string hostile = elfWithCompressedDebugInfo(0x1a00000001);
  auto file = native::NativeFile::fromBytes(hostile);
  ASSERT_TRUE(file) << file.error().describe();
  ASSERT_EQ((*file)->slices().size(), 1u);
  EXPECT_EQ((*file)->slices()[0].debug_id, "123456789abcdef0");
  auto walked =
      native::walkDwarf((*file)->slices()[0], {}, [](const native::CompileUnitFunctions&) { return Status::ok(); });
  ASSERT_FALSE(walked);
  EXPECT_EQ(walked.error().code(), ErrorCode::kMalformedInput);
  EXPECT_NE(walked.error().message().find("compressed section .debug_info claims 111669149697 "
                                          "bytes uncompressed from 16 compressed bytes"),
            std::string::npos)
      << walked.error().message();
  fuzzNativeInput(reinterpret_cast<const uint8_t*>(hostile.data()), hostile.size());

  // A plausible size passes the check (LLVM then reports the bad zlib stream as a warning).
  std::string plausible = elfWithCompressedDebugInfo(4096);
  auto plausible_file = native::NativeFile::fromBytes(plausible);
  ASSERT_TRUE(plausible_file);
  std::vector<std::string> warnings;
  native::DwarfWalkOptions options;
  options.warnings = &warnings;
  auto plausible_walk = native::walkDwarf((*plausible_file)->slices()[0], options,
                                          [](const native::CompileUnitFunctions&) { return Status::ok(); });
  EXPECT_TRUE(plausible_walk) << plausible_walk.error().message();

  // The absolute cap (DwarfWalkOptions::max_uncompressed_section_bytes) applies on its own.
  options.max_uncompressed_section_bytes = 1024;
  auto capped = native::walkDwarf((*plausible_file)->slices()[0], options,
                                  [](const native::CompileUnitFunctions&) { return Status::ok(); });
  ASSERT_FALSE(capped);
  EXPECT_NE(capped.error().message().find("claims 4096 bytes"), std::string::npos);
}

// Ingest passes limits.max_decompression_ratio and what limits.max_upload_bytes leaves after the
// file (symbolstore/native/native_ingest.cc).
TEST(NativeFuzz, CompressedSectionLimitsFollowTheConfiguration) {
  std::string elf = elfWithCompressedDebugInfo(8000);
  auto file = native::NativeFile::fromBytes(elf);
  ASSERT_TRUE(file) << file.error().describe();
  const auto& slice = (*file)->slices()[0];
  // 16 compressed bytes: 200 times plus the 4 KiB allowance is 7296, under the 8000 declared.
  Status by_ratio = native::checkCompressedSections(slice, 1 << 20, 200);
  ASSERT_FALSE(by_ratio);
  EXPECT_EQ(by_ratio.error().code(), ErrorCode::kMalformedInput);
  EXPECT_NE(by_ratio.error().message().find("more than 200 times its size (limits.max_decompression_ratio)"),
            std::string::npos)
      << by_ratio.error().message();
  EXPECT_TRUE(native::checkCompressedSections(slice, 1 << 20, 1100));
  Status by_budget = native::checkCompressedSections(slice, 4096, 1100);
  ASSERT_FALSE(by_budget);
  EXPECT_NE(by_budget.error().message().find("over the limit of 4096 bytes"), std::string::npos)
      << by_budget.error().message();
}

// An arm64 Mach-O executable (no __TEXT, image base 0) whose only Objective-C metadata is one category
// "Extras" with one instance method "qux" at 0x40, in a method list whose count says 0xffffffff,
// listed by a zerofill __objc_catlist whose header claims `catlist_size` bytes (LLVM checks
// zerofill sizes against the segment's vmsize only, not the file). Layout: header | LC_UUID |
// LC_SEGMENT_64 "__DATA" (vmaddr 0, the whole file) + 1 section | "Extras" | "qux" |
// category_t | method_list_t with one classic entry | the catlist's one pointer, last in the file.
std::string machOWithHostileObjcCounts(uint64_t catlist_size) {
  auto put = [](std::string& out, size_t offset, auto value) {
    if (out.size() < offset + sizeof(value)) out.resize(offset + sizeof(value));
    memcpy(out.data() + offset, &value, sizeof(value));
  };
  std::string macho = minimalMachO(2);
  constexpr size_t kSegment = 56, kSegmentSize = 72 + 80;
  constexpr size_t kName = kSegment + kSegmentSize, kSelector = kName + 8;
  constexpr size_t kCategory = kSelector + 8, kList = kCategory + 48, kCatlist = kList + 8 + 24;
  constexpr size_t kFileSize = kCatlist + 8;
  macho.resize(kFileSize, '\0');
  put(macho, 12, uint32_t{2});                  // MH_EXECUTE (a dylib needs LC_ID_DYLIB)
  put(macho, 20, uint32_t{24 + kSegmentSize});  // sizeofcmds
  put(macho, kSegment, uint32_t{0x19});         // LC_SEGMENT_64
  put(macho, kSegment + 4, uint32_t{kSegmentSize});
  memcpy(macho.data() + kSegment + 8, "__DATA", 6);
  put(macho, kSegment + 24, uint64_t{0});          // vmaddr
  put(macho, kSegment + 32, uint64_t{1} << 44);    // vmsize: room for the claimed section
  put(macho, kSegment + 40, uint64_t{0});          // fileoff
  put(macho, kSegment + 48, uint64_t{kFileSize});  // filesize
  put(macho, kSegment + 64, uint32_t{1});          // nsects
  size_t section = kSegment + 72;
  memcpy(macho.data() + section, "__objc_catlist", 14);
  memcpy(macho.data() + section + 16, "__DATA", 6);
  put(macho, section + 32, uint64_t{kCatlist});  // addr
  put(macho, section + 40, catlist_size);        // size
  put(macho, section + 48, uint32_t{kCatlist});  // offset
  put(macho, section + 52, uint32_t{3});         // align 2^3
  put(macho, section + 64, uint32_t{1});         // flags: S_ZEROFILL
  memcpy(macho.data() + kName, "Extras", 6);
  memcpy(macho.data() + kSelector, "qux", 3);
  put(macho, kCategory, uint64_t{kName});       // category_t.name
  put(macho, kCategory + 16, uint64_t{kList});  // instanceMethods
  put(macho, kList, uint32_t{24});              // entsize, classic entries
  put(macho, kList + 4, uint32_t{0xffffffff});  // count
  put(macho, kList + 8, uint64_t{kSelector});   // entry 0: SEL
  put(macho, kList + 24, uint64_t{0x40});       // entry 0: imp
  put(macho, kCatlist, uint64_t{kCategory});
  return macho;
}

// Fuzz regression (libFuzzer timeout, 2026-11-21): counts from section headers and method lists
// were trusted, so reading the Objective-C tier of an 83 KB file spun for minutes.
TEST(NativeFuzz, ObjcCountsBeyondTheFileEndWhereTheBytesEnd) {
  std::string hostile = machOWithHostileObjcCounts(uint64_t{1} << 40);
  auto file = native::NativeFile::fromBytes(hostile);
  ASSERT_TRUE(file) << file.error().describe();
  ASSERT_EQ((*file)->slices().size(), 1u);
  std::vector<native::SymbolEntry> methods = native::readObjcMethods((*file)->slices()[0]);
  ASSERT_EQ(methods.size(), 1u);
  EXPECT_EQ(methods[0].address, 0x40u);
  EXPECT_EQ(methods[0].name, "-[?(Extras) qux]");
  fuzzNativeInput(reinterpret_cast<const uint8_t*>(hostile.data()), hostile.size());
}

std::string regressionFile(const std::string& name) {
  std::ifstream in(std::string(RESTACK_SOURCE_DIR) + "/tests/native/fuzz_regressions/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(NativeFuzz, EveryCheckedInRegressionInputSurvives) {
  size_t files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(RESTACK_SOURCE_DIR) + "/tests/native/fuzz_regressions")) {
    std::string bytes = regressionFile(entry.path().filename().string());
    // fuzz_native's inputs (one file) and fuzz_dwp's (a library and its package: dwp_fuzz_entry.h).
    if (entry.path().extension() == ".so") {
      ASSERT_FALSE(bytes.empty()) << entry.path();
      fuzzNativeInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } else if (entry.path().extension() == ".dwpair") {
      ASSERT_TRUE(splitDwpPair(bytes)) << entry.path();
      fuzzDwpInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } else {
      continue;
    }
    ++files;
  }
  EXPECT_GE(files, 2u);
  std::string compressed = regressionFile("compressed-section-claims-104gb.so");
  auto file = native::NativeFile::fromBytes(compressed);
  ASSERT_TRUE(file) << file.error().describe();
  auto walked =
      native::walkDwarf((*file)->slices()[0], {}, [](const native::CompileUnitFunctions&) { return Status::ok(); });
  ASSERT_FALSE(walked);
  EXPECT_NE(walked.error().message().find("claims"), std::string::npos);
}

// Fuzz regression (libFuzzer + ASan, 2026-11-21): two units naming one line table were walked on
// two threads; the first to finish freed the table while the other still read it.
TEST(NativeFuzz, UnitsSharingALineTableAreWalkedOnOneThread) {
  std::string bytes = regressionFile("two-units-one-line-table.so");
  auto file = native::NativeFile::fromBytes(bytes);
  ASSERT_TRUE(file) << file.error().describe();
  const native::ImageSlice& slice = (*file)->slices()[0];
  auto context = llvm::DWARFContext::create(*slice.object);
  std::vector<llvm::DWARFUnit*> units;
  for (const auto& unit : context->compile_units()) units.push_back(unit.get());
  EXPECT_FALSE(native::unitsAreIndependent(*context, units));
  auto walk = [&slice](unsigned threads) {
    native::DwarfWalkOptions options;
    options.threads = threads;
    std::ostringstream out;
    auto status = native::walkDwarf(slice, options, [&](const native::CompileUnitFunctions& unit) {
      out << unit.unit_offset << ":" << unit.functions.size() << ";";
      for (const auto& f : unit.functions) out << f.begin << "-" << f.end << "/" << f.lines.size() << ",";
      return Status::ok();
    });
    EXPECT_TRUE(status);
    return out.str();
  };
  std::string sequential = walk(1);
  EXPECT_NE(sequential.find(';'), sequential.rfind(';')) << "expected two units: " << sequential;
  for (int round = 0; round < 20; ++round) EXPECT_EQ(walk(4), sequential);
}

// A fuzz_dwp input's library and package written out as libfuzz.so and libfuzz.so.dwp and
// uploaded as that folder, as the fuzz entry does.
Expected<IngestReport> uploadDwpPair(SymbolStore& store, std::string_view input) {
  auto pair = splitDwpPair(input);
  if (!pair) return Error(ErrorCode::kInvalidArgument, "not a dwpair: " + std::to_string(input.size()) + " bytes");
  TempDir dir;
  writeFile(dir.file("libfuzz.so"), std::string(pair->library));
  writeFile(dir.file("libfuzz.so.dwp"), std::string(pair->package));
  return uploadPath(store, dir.path());
}

// Fuzz regression (fuzz_dwp, 2026-11-26): the library's second line table is DWARF 5 and its
// file entry format declares {DW_LNCT_path DW_FORM_line_strp, DW_LNCT_directory_index
// DW_FORM_udata, DW_LNCT_MD5 form 0}; LLVM 19 reached llvm_unreachable reading form 0 and the
// process died (SEGV; llvm-dwarfdump-19 --debug-line dies the same way). The library alone
// crashed too: the line table is the library's, read for its skeleton unit.
TEST(NativeFuzz, LineTableDeclaringAFormLlvmCannotReadIsNotParsed) {
  const std::string input = regressionFile("line-table-unknown-form.dwpair");
  TestStore store;
  auto report = uploadDwpPair(*store.store, input);
  ASSERT_TRUE(report) << report.error().describe();
  EXPECT_EQ(report->ids.size(), 1u);
  EXPECT_GT(report->records, 0u);
  size_t told = 0;
  for (const std::string& warning : report->warnings) {
    told += warning.find("line table at 0x79 declares form 0x0 for its file entries") != std::string::npos &&
            warning.find("its lines are not read") != std::string::npos;
  }
  EXPECT_EQ(told, 1u) << ::testing::PrintToString(report->warnings);
  auto pair = splitDwpPair(input);
  ASSERT_TRUE(pair);
  fuzzNativeInput(reinterpret_cast<const uint8_t*>(pair->library.data()), pair->library.size());
  fuzzDwpInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

// A DWARF 5 line table (DWARF32) of `directories` then `files` (each: the entry format count,
// its (content type, form) pairs as ULEB128, the entry count, the entries), no line program.
std::string lineTableV5(const std::string& directories, const std::string& files) {
  std::string after_length = {5, 0, 8, 0, 0, 0, 0, 0};  // version, address size, selector, header_length
  after_length += std::string{1, 1, 1, static_cast<char>(0xfb), 14, 13};
  after_length += std::string{0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};  // standard_opcode_lengths
  after_length += directories + files;
  const uint32_t header_length = static_cast<uint32_t>(after_length.size() - 8);
  memcpy(after_length.data() + 4, &header_length, 4);
  const uint32_t unit_length = static_cast<uint32_t>(after_length.size());
  std::string table(4, '\0');
  memcpy(table.data(), &unit_length, 4);
  return table + after_length;
}

std::string uleb(uint64_t value) {
  std::string out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    out.push_back(static_cast<char>(byte | (value ? 0x80 : 0)));
  } while (value);
  return out;
}

TEST(NativeDwarf, LineTableHeadersLlvmCannotReadAreTold) {
  using namespace llvm::dwarf;
  // As clang-19 writes them: directories {path line_strp}, files {path line_strp, directory_index
  // udata, MD5 data16}.
  const std::string directories =
      std::string{1} + uleb(DW_LNCT_path) + uleb(DW_FORM_line_strp) + uleb(1) + std::string(4, '\0');
  const std::string md5(16, '\x5a');
  auto files = [&](uint64_t md5_form) {
    return std::string{3} + uleb(DW_LNCT_path) + uleb(DW_FORM_line_strp) + uleb(DW_LNCT_directory_index) +
           uleb(DW_FORM_udata) + uleb(DW_LNCT_MD5) + uleb(md5_form) + uleb(1) + std::string(4, '\0') + '\0' + md5;
  };
  auto check = [](const std::string& table, uint64_t offset = 0) {
    return native::checkLineTableHeader(llvm::StringRef(table.data(), table.size()), offset, true);
  };
  const std::string clang = lineTableV5(directories, files(DW_FORM_data16));
  EXPECT_TRUE(check(clang));
  // A second table after the first: the offset is the unit's DW_AT_stmt_list.
  Status second = check(clang + lineTableV5(directories, files(0)), clang.size());
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().message(), "line table at 0x" + llvm::utohexstr(clang.size(), /*LowerCase=*/true) +
                                          " declares form 0x0 for its file entries, which is no form of line "
                                          "table entries");
  EXPECT_TRUE(check(clang + lineTableV5(directories, files(0)), 0));
  // The form taken from each entry (DW_FORM_indirect), and a path of no bytes.
  EXPECT_FALSE(check(lineTableV5(directories, files(DW_FORM_indirect))));
  const std::string flag_paths = std::string{1} + uleb(DW_LNCT_path) + uleb(DW_FORM_flag_present) + uleb(1ull << 62);
  Status flags = check(lineTableV5(flag_paths, files(DW_FORM_data16)));
  ASSERT_FALSE(flags);
  EXPECT_NE(flags.error().message().find("form 0x19 for its directory entries"), std::string::npos);
  // A directory entry whose block length takes the offset back to where the entry began: LLVM
  // would read it 2^62 times.
  const uint64_t back = 0 - uint64_t{2 + 10};  // the path "a\0" and the ten bytes of this ULEB128
  const std::string looping = std::string{2} + uleb(DW_LNCT_path) + uleb(DW_FORM_string) + uleb(DW_LNCT_size) +
                              uleb(DW_FORM_block) + uleb(1ull << 62) + std::string("a\0", 2) + uleb(back);
  Status loop = check(lineTableV5(looping, files(DW_FORM_data16)));
  ASSERT_FALSE(loop);
  EXPECT_NE(loop.error().message().find("directory entry 0 of 4611686018427387904 ends where it begins"),
            std::string::npos)
      << loop.error().message();
  // A directory index, time or size that is no unsigned constant: LLVM would read a value never
  // set. Their constant forms pass.
  auto file_with = [&](uint64_t type, uint64_t form, const std::string& value) {
    return std::string{2} + uleb(DW_LNCT_path) + uleb(DW_FORM_string) + uleb(type) + uleb(form) + uleb(1) +
           std::string("a.c\0", 4) + value;
  };
  for (const auto& [type, name] :
       std::vector<std::pair<uint64_t, std::string>>{{DW_LNCT_directory_index, "DW_LNCT_directory_index"},
                                                     {DW_LNCT_timestamp, "DW_LNCT_timestamp"},
                                                     {DW_LNCT_size, "DW_LNCT_size"}}) {
    Status text = check(lineTableV5(directories, file_with(type, DW_FORM_string, std::string("7\0", 2))));
    ASSERT_FALSE(text) << type;
    EXPECT_NE(text.error().message().find("declares form 0x8 for its file entries' " + name +
                                          ", which is no unsigned constant"),
              std::string::npos)
        << text.error().message();
    EXPECT_FALSE(check(lineTableV5(directories, file_with(type, DW_FORM_sdata, uleb(1)))));
    EXPECT_FALSE(check(lineTableV5(directories, file_with(type, DW_FORM_block1, std::string{1, 7}))));
    EXPECT_TRUE(check(lineTableV5(directories, file_with(type, DW_FORM_data4, std::string(4, '\0')))));
    EXPECT_TRUE(check(lineTableV5(directories, file_with(type, DW_FORM_udata, uleb(1)))));
  }
  // What LLVM refuses on its own stays with LLVM: a cut header, another version, an offset
  // past the section.
  EXPECT_TRUE(check(clang.substr(0, 30)));
  std::string version4 = clang;
  version4[4] = 4;
  EXPECT_TRUE(check(version4));
  EXPECT_TRUE(check(clang, clang.size() + 8));
}

// Fuzz regression (fuzz_dwp, 2026-11-26): in the package's split unit, the form of a
// subprogram's DW_AT_high_pc became DW_FORM_block4, whose "length" (the next values' bytes) took
// the offset 425 MB past the 142-byte .debug_info.dwo; LLVM then read the next ULEB128 value
// there (SEGV; llvm-dwarfdump-19 --debug-info crashes the same way). The split unit is not read,
// its skeleton still gives the library's lines.
TEST(NativeFuzz, SplitUnitWhoseValuesRunPastTheSectionIsNotExtracted) {
  const std::string input = regressionFile("split-unit-block-past-section.dwpair");
  TestStore store;
  auto report = uploadDwpPair(*store.store, input);
  ASSERT_TRUE(report) << report.error().describe();
  size_t told = 0;
  for (const std::string& warning : report->warnings) {
    told += warning.starts_with(
                "libfuzz.so.dwp: unit at 0x0: DIE at 0x84: attribute 2 (DW_FORM_exprloc) would be read at "
                "0x195f9dc8, past the end of the section (0x8e bytes); its functions keep symbol-table names")
                ? 1
                : 0;
  }
  EXPECT_EQ(told, 1u) << ::testing::PrintToString(report->warnings);
  DwpFuzzOutcome outcome = fuzzDwpInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  EXPECT_TRUE(outcome.ingested);
  EXPECT_GT(outcome.restored, 0u);
  EXPECT_EQ(outcome.restored_with_inlines, 0u);
}

// A DWARF 5 compile unit (in memory, through LLVM's section map) whose unit DIE names "a" and has
// one child: a subprogram of {DW_AT_location DW_FORM_block, DW_AT_name DW_FORM_udata} whose block
// length is `block_length`, then a null entry. The context reads the sections where they are.
struct InMemoryDwarf {
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> sections;
  std::unique_ptr<llvm::DWARFContext> context;
  llvm::DWARFUnit& unit() { return *context->getUnitAtIndex(0); }
};
std::unique_ptr<InMemoryDwarf> unitWithBlock(uint64_t block_length) {
  using namespace llvm::dwarf;
  const std::string abbrev = std::string{1} + uleb(DW_TAG_compile_unit) + '\1' + uleb(DW_AT_name) +
                             uleb(DW_FORM_string) + std::string(2, '\0') + '\2' + uleb(DW_TAG_subprogram) + '\0' +
                             uleb(DW_AT_location) + uleb(DW_FORM_block) + uleb(DW_AT_name) + uleb(DW_FORM_udata) +
                             std::string(3, '\0');
  std::string info = std::string{5, 0, DW_UT_compile, 8, 0, 0, 0, 0} + '\1' + std::string("a\0", 2) + '\2' +
                     uleb(block_length) + '\7' + '\0';
  const uint32_t length = static_cast<uint32_t>(info.size());
  info.insert(0, std::string(reinterpret_cast<const char*>(&length), 4));
  auto dwarf = std::make_unique<InMemoryDwarf>();
  dwarf->sections["debug_abbrev"] = llvm::MemoryBuffer::getMemBufferCopy(abbrev);
  dwarf->sections["debug_info"] = llvm::MemoryBuffer::getMemBufferCopy(info);
  dwarf->context = llvm::DWARFContext::create(dwarf->sections, 8, true);
  return dwarf;
}

TEST(NativeDwarf, DieValuesLlvmWouldReadPastTheSectionOrAgainAreTold) {
  // The block fits: the unit is read as it is.
  auto fits = unitWithBlock(1);
  ASSERT_EQ(fits->context->getNumCompileUnits(), 1u);
  EXPECT_TRUE(native::checkUnitDies(fits->unit(), false));
  // The block runs 4 KiB past the section: DW_AT_name's ULEB128 would be read there.
  auto past = unitWithBlock(4096);
  Status told = native::checkUnitDies(past->unit(), false);
  ASSERT_FALSE(told);
  EXPECT_EQ(told.error().message(),
            "unit at 0x0: DIE at 0xf: attribute 2 (DW_FORM_udata) would be read at 0x1012, past the end of the "
            "section (0x14 bytes)");
  // Only the unit DIE (what LLVM extracts first): it is whole.
  EXPECT_TRUE(native::checkUnitDies(past->unit(), true));
  // The block takes the offset back before the DIE (0xf): its ten-byte length at 0x10 ends at
  // 0x1a, 0x1a + 2^64 - 0xc = 0xe, whose byte ("\0" of "a") is the name. LLVM would read the same
  // DIE again, and again.
  auto again = unitWithBlock(0 - uint64_t{0xc});
  Status looped = native::checkUnitDies(again->unit(), false);
  ASSERT_FALSE(looped);
  EXPECT_EQ(looped.error().message(),
            "unit at 0x0: DIE at 0xf: its values end at 0xf, where it begins or before (a block length of nearly "
            "2^64 bytes)");
}

TEST(NativeFuzz, DeterministicRunOverSeedsAndMutations) {
  std::vector<std::string> seeds = {minimalElf(),
                                    minimalMachO(1),
                                    minimalMachO(0xffffffff),
                                    fatHeader(1),
                                    fatHeader(0x7fffffff),
                                    elfWithCompressedDebugInfo(0x1a00000001),
                                    elfWithCompressedDebugInfo(64),
                                    machOWithHostileObjcCounts(uint64_t{1} << 40),
                                    encodeFunction(workedExample()),
                                    encodeImage(ImageRecord{}),
                                    encodeStringBlock({"x", "y"})};
  uint64_t state = 0x2545F4914F6CDD1Dull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  size_t runs = 0;
  for (const std::string& seed : seeds) {
    native_test::fuzzNativeInput(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
    for (int round = 0; round < 400; ++round) {
      std::string input = seed;
      int edits = 1 + next() % 8;
      for (int e = 0; e < edits; ++e) {
        uint64_t r = next();
        switch (r % 4) {
          case 0:
            if (!input.empty()) input[r % input.size()] = static_cast<char>(r >> 40);
            break;
          case 1:
            input.resize(input.empty() ? 0 : (r >> 8) % (input.size() + 1));
            break;
          case 2:
            input.append(std::string(1 + (r >> 8) % 64, static_cast<char>(r >> 48)));
            break;
          default:
            if (input.size() >= 4) {
              uint32_t huge = 0xffffff00u | static_cast<uint32_t>(r >> 56);
              memcpy(input.data() + (r >> 16) % (input.size() - 3), &huge, 4);
            }
        }
      }
      native_test::fuzzNativeInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
      ++runs;
    }
  }
  EXPECT_EQ(runs, seeds.size() * 400);
}

}  // namespace
}  // namespace restack::native_test
