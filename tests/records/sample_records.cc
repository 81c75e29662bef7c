#include "tests/records/sample_records.h"

#include "symbolstore/native/native_records.h"
#include "symbolstore/proguard/proguard_records.h"
#include "symbolstore/sourcemap/sourcemap_records.h"
#include "symbolstore/usage.h"

namespace restack::records_test {
namespace {

std::string hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out.empty() ? "-" : out;
}

void addNative(std::vector<SampleRecord>& out) {
  namespace ns = native_store;
  const std::string id = ns::hexToBytes("ba78e30f5a6c4e1d9b0c11223344556677881b190011aabb");
  ns::ImageRecord image;
  image.format = native::ObjectFormat::kElf;
  image.shared = true;
  image.has_dwarf = true;
  image.has_symbols = true;
  image.symbols_from_debug_file = true;
  image.image_base = 0x10000;
  image.functions = 300;
  image.symbols = 1234567;
  image.strings = 90;
  image.arch = "arm64";
  image.module = "libdemo.so";
  image.app = "com.example.demo";
  image.build_id = "1.2.3 (45)";
  out.push_back({"native.image.elf", ns::imageKey(id), ns::encodeImage(image)});
  ns::ImageRecord macho;
  macho.format = native::ObjectFormat::kMachO;
  macho.has_objc = true;
  macho.arch = "x86_64";
  out.push_back({"native.image.macho-empty-strings", ns::imageKey(id.substr(0, 16)), ns::encodeImage(macho)});

  // The worked example of native_records.h, then the same with a clone suffix.
  ns::FunctionRecord function;
  function.begin = 0x10d00;
  function.end = 0x10d80;
  function.nodes = {{UINT32_MAX, 0, ns::kNoString, 0, 0}, {0, 2, 1, 9, 5}};
  function.tiles = {{0x10d00, 0}, {0x10d10, 1}, {0x10d20, 0}};
  function.lines = {{0x10d00, 1, 8, 3}, {0x10d10, 1, 3, 10}, {0x10d20, 1, 10, 1}};
  out.push_back({"native.function.inlined", ns::functionKey(id, function.begin), ns::encodeFunction(function)});
  function.outer_name = 70000;
  function.clone = 3;
  function.lines.push_back({0x10d40, ns::kNoString, 0, 0});
  out.push_back({"native.function.clone", ns::functionKey(id, function.begin), ns::encodeFunction(function)});
  // Version 2: a GCC lambda's bare "operator()" (string 3) inlined into main, with its scope
  // (string 4, the enclosing function).
  ns::FunctionRecord scoped;
  scoped.begin = 0x10d00;
  scoped.end = 0x10d80;
  scoped.nodes = {{UINT32_MAX, 0, ns::kNoString, 0, 0}, {0, 3, 1, 9, 5}};
  scoped.nodes[1].scope = 4;
  scoped.tiles = {{0x10d00, 0}, {0x10d10, 1}, {0x10d20, 0}};
  scoped.lines = {{0x10d00, 1, 8, 3}, {0x10d10, 1, 3, 10}, {0x10d20, 1, 10, 1}};
  out.push_back({"native.function.scope", ns::functionKey(id, scoped.begin), ns::encodeFunction(scoped)});

  ns::SymbolChunk chunk;
  chunk.begin = 0x2000;
  chunk.next_chunk = 0x9000;
  chunk.symbols = {{0x2000, 0x10, 0, "start", ""}, {0x2010, 0, 1, "-[Cart total]", ""}, {0x8fff, 0x1000000, 0, "", ""}};
  out.push_back({"native.symbols.chunk", ns::symbolKey(id, chunk.begin), ns::encodeSymbolChunk(chunk)});
  chunk.next_chunk = 0;
  chunk.symbols.resize(1);
  out.push_back({"native.symbols.last", ns::symbolKey(id, chunk.begin), ns::encodeSymbolChunk(chunk)});
  // Version 2: ELF local symbols with their object file's name (two share one).
  chunk.next_chunk = 0x3000;
  chunk.symbols = {{0x2000, 0x40, 0, "deregister_tm_clones", "crtstuff.c"},
                   {0x2040, 0x40, 0, "register_tm_clones", "crtstuff.c"},
                   {0x2080, 0x20, 0, "parse_header", "parser.c"},
                   {0x20a0, 0x60, 0, "api_entry", ""}};
  out.push_back({"native.symbols.files", ns::symbolKey(id, chunk.begin), ns::encodeSymbolChunk(chunk)});

  std::vector<std::string> strings = {"main", "/src/a.c", "helper", "", std::string(200, 'x')};
  out.push_back({"native.strings.block", ns::stringBlockKey(id, 3), ns::encodeStringBlock(strings)});
  out.push_back({"native.module.ids", ns::moduleKey("com.example.demo", "45", "libdemo.so"),
                 ns::encodeIdList({id, id.substr(0, 16)})});
  out.push_back({"native.module.shared", ns::moduleKey("", "", "libc.so"), ns::encodeIdList({})});
  out.push_back({"native.alias", ns::aliasKey("0fe378ba6c5a1d4e"), ns::encodeAlias(id)});
}

void addProguard(std::vector<SampleRecord>& out) {
  namespace pg = proguard;
  using proguard::ClassMapping, proguard::LineRange, proguard::MethodMapping, proguard::OutlineCallsite,
      proguard::RewriteRule;
  const std::string load = "00000000deadbeef";
  out.push_back({"proguard.build-pointer", pg::buildPointerKey("com.example", "45"),
                 pg::encodeBuildPointer({load, "3d1a2c0", "SHA-256 0123abcd"})});
  out.push_back({"proguard.id-pointer", pg::idPointerKey("3d1a2c0"), pg::encodeIdPointer({load, "com.example", "45"})});
  out.push_back({"proguard.map-info", pg::mapInfoKey(load),
                 pg::encodeMapInfo({"com.example", "45", "3d1a2c0", "SHA-256 0123abcd", "2.2", "R8", 20000})});
  out.push_back({"proguard.source-file", pg::sourceFileKey(load, "com.example.Util"), pg::encodeSourceFile("Util.kt")});

  // The worked example of proguard_records.h.
  ClassMapping foo;
  foo.original_name = "com.example.Foo";
  foo.obfuscated_name = "a.b";
  MethodMapping log;
  log.obfuscated_name = "c";
  log.minified = LineRange{1, 1};
  log.original = LineRange{7, 7};
  log.signature = {"void", "com.example.Util", "log", ""};
  MethodMapping bar;
  bar.obfuscated_name = "c";
  bar.minified = LineRange{1, 1};
  bar.original = LineRange{14, 14};
  bar.signature = {"void", "", "bar", "int"};
  foo.methods = {log, bar};
  out.push_back({"proguard.class.worked-example", pg::classKey(load, foo.obfuscated_name), pg::encodeClassRecord(foo)});

  // Every optional part: synthesized class, outline, callsite, rewrite rules, fields, a method
  // without line ranges, methods out of name order.
  ClassMapping rich;
  rich.original_name = "com.example.Rich";
  rich.obfuscated_name = "a.c";
  rich.source_file = "Rich.java";
  rich.synthesized = true;
  MethodMapping outline;
  outline.obfuscated_name = "z";
  outline.minified = LineRange{1, 3};
  outline.signature = {"int", "", "outline0", "java.lang.String,int"};
  outline.synthesized = true;
  outline.outline = true;
  MethodMapping caller;
  caller.obfuscated_name = "a";
  caller.minified = LineRange{10, 20};
  caller.original = LineRange{100, 110};
  caller.signature = {"void", "", "caller", ""};
  caller.outline_callsite = OutlineCallsite{{{1, 105}, {2, 107}}, "La;z(Ljava/lang/String;I)I"};
  caller.rewrite_rules = {RewriteRule{{"Ljava/lang/NullPointerException;", "Ljava/lang/Error;"}, 2}};
  MethodMapping plain;
  plain.obfuscated_name = "b";
  plain.signature = {"java.lang.String", "", "toString", ""};
  rich.methods = {outline, caller, plain};
  rich.fields = {{"int", "count", "a", false, ""}, {"java.lang.String", "name", "b", true, ""}};
  out.push_back({"proguard.class.rich", pg::classKey(load, rich.obfuscated_name), pg::encodeClassRecord(rich)});

  ClassMapping merged = std::move(rich);
  merged.merged_names = {"com.example.Other", "com.example.Third"};
  out.push_back({"proguard.class.merged", pg::classKey(load, merged.obfuscated_name), pg::encodeClassRecord(merged)});

  ClassMapping empty;
  empty.original_name = "com.example.Empty";
  empty.obfuscated_name = "d";
  out.push_back({"proguard.class.empty", pg::classKey(load, empty.obfuscated_name), pg::encodeClassRecord(empty)});
}

void addSourcemap(std::vector<SampleRecord>& out) {
  namespace sm = sourcemap_records;
  const uint64_t map_id = 0x0123456789abcdefull;
  out.push_back({"sourcemap.pointer", sm::pointerKey("com.example", "45", "main.js"), sm::encodePointer(map_id)});
  out.push_back({"sourcemap.pointer.ram-bundle", sm::pointerKey("com.example", "45", sm::kRamBundlePointerName),
                 sm::encodePointer(UINT64_MAX)});

  sm::MapHeader plain;
  plain.file = "main.js";
  plain.debug_id = "85314830-023f-4cf1-a267-535f4e37bb17";
  plain.source_count = 3;
  out.push_back({"sourcemap.header.plain", sm::headerKey(map_id), sm::encodeHeader(plain)});
  sm::MapHeader rich;
  rich.index_map = true;
  rich.hermes = true;
  rich.ram_bundle = true;
  rich.file = "index.android.bundle";
  rich.source_count = 200;
  rich.sections = {{0, 0, 0x1111, ""}, {10, 5, std::nullopt, "vendor.js"}};
  rich.hermes_function_offsets = {{0, {0, 40, 20, 70000}}, {3, {}}};
  rich.facebook_segments = {{1, 0x2222}, {2, 0x3333}};
  rich.module_offsets = {0, sourcemap::kNoModuleOffset, 127, 128};
  out.push_back({"sourcemap.header.rich", sm::headerKey(map_id + 1), sm::encodeHeader(rich)});

  sm::SourceRecord source;
  source.path = "webpack:///src/cart.ts";
  source.ignored = true;
  source.origin = sm::FunctionMapOrigin::kInferred;
  source.line_count = 42;
  source.functions.names = {"<global>", "total", "price"};
  source.functions.entries = {{12, 2, 2}, {1, 0, 0}, {3, 4, 1}};  // written in source order
  out.push_back({"sourcemap.source", sm::sourceKey(map_id, 7), sm::encodeSource(source)});
  out.push_back({"sourcemap.source.bare", sm::sourceKey(map_id, 8), sm::encodeSource({"a.js", false, {}, 0, {}})});
  // Version 4: a function map with a name V8 infers ("tasks" for an arrow in `tasks = [() => …]`)
  // beside the same name declared ("function tasks() {}").
  sm::SourceRecord inferred;
  inferred.path = "src/queue.js";
  inferred.origin = sm::FunctionMapOrigin::kInferred;
  inferred.functions.names = {"<global>", "tasks", "tasks"};
  inferred.functions.inferred = {false, false, true};
  inferred.functions.entries = {{1, 0, 0}, {2, 8, 2}, {2, 20, 0}, {4, 0, 1}};
  out.push_back({"sourcemap.source.inferred-names", sm::sourceKey(map_id, 9), sm::encodeSource(inferred)});
  sm::GeneratedFunctions generated{sm::GeneratedFunctionsOrigin::kMinifiedFile, inferred.functions};
  out.push_back({"sourcemap.functions.inferred-names", sm::generatedFunctionsKey(map_id),
                 sm::encodeGeneratedFunctions(generated)});

  out.push_back({"sourcemap.text", sm::textKey(map_id, 7, 1), sm::encodeText({"const a = 1;", "", "  return a;"})});

  // The worked example of sourcemap_records.h, then a chunk with line changes and names.
  sm::MappingChunk example;
  example.names = {"boom"};
  example.segments = {{0, 0, 0, 0, 0, -1}, {0, 4, 0, 0, 4, 0}};
  out.push_back({"sourcemap.chunk.worked-example", sm::chunkKey(map_id, 0, 0), sm::encodeChunk(example)});
  sm::MappingChunk chunk;
  chunk.start_line = 3;
  chunk.start_column = 17;
  chunk.end_line = 9;
  chunk.end_column = 2;
  chunk.names = {"total", "price"};
  chunk.segments = {
      {3, 17, 1, 40, 3, 1}, {3, 30, -1, 0, 0, -1}, {5, 2, 0, 12, 0, -1}, {5, 9, 2, 11, 8, 0}, {8, 0, 2, 0, 0, -1}};
  out.push_back({"sourcemap.chunk.lines", sm::chunkKey(map_id, 3, 17), sm::encodeChunk(chunk)});
}

// symbolstore/usage.h: the worked example, and an image's upload time.
void addUsage(std::vector<SampleRecord>& out) {
  out.push_back({"usage.time.last-used", usage::lastUsedKey(usage::buildSet("proguard", "com.example", "45")),
                 usage::encodeTime(29924460)});
  out.push_back({"usage.time.uploaded", usage::uploadedKey(usage::imageSet("ba78e30f5a6c4e1d9b0c11223344556677881b19")),
                 usage::encodeTime(29924399)});
}

}  // namespace

std::vector<SampleRecord> sampleRecords() {
  std::vector<SampleRecord> records;
  addNative(records);
  addProguard(records);
  addSourcemap(records);
  addUsage(records);
  return records;
}

std::string goldenText(const std::vector<SampleRecord>& records) {
  std::string text;
  for (const SampleRecord& record : records) {
    text += record.name + " " + hex(record.key) + " " + hex(record.value) + "\n";
  }
  return text;
}

}  // namespace restack::records_test
