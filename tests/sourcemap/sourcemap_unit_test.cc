// Parsers of formats/sourcemap: VLQ, mappings, documents, function maps, URL names, fuzzing.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "formats/sourcemap/function_map.h"
#include "formats/sourcemap/function_scanner.h"
#include "formats/sourcemap/fuzz/fuzz_entry.h"
#include "formats/sourcemap/inline_map.h"
#include "formats/sourcemap/mappings.h"
#include "formats/sourcemap/source_map.h"
#include "formats/sourcemap/url.h"
#include "formats/sourcemap/vlq.h"
#include "tests/sourcemap/vlq_encoder.h"

namespace restack::sourcemap {
namespace {

std::vector<Mapping> decodeAll(std::string_view mappings, uint32_t sources, uint32_t names, Status* status = nullptr) {
  std::vector<Mapping> out;
  MappingLimits limits;
  limits.source_count = sources;
  limits.name_count = names;
  Status result = decodeMappings(mappings, limits, [&](const Mapping& m) { out.push_back(m); });
  if (status) *status = result;
  return out;
}

// A map inlined as a data: URL in the script's last sourceMappingURL comment (inline_map.h).
TEST(InlineSourceMap, DecodesTheLastDataUrlCommentAndNothingElse) {
  const std::string json = R"({"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA"})";
  const std::string base64 = "eyJ2ZXJzaW9uIjozLCJzb3VyY2VzIjpbImEuanMiXSwibmFtZXMiOltdLCJtYXBwaW5ncyI6IkFBQUEifQ==";
  const std::string code = "function a(){throw new Error}a();\n";
  for (const std::string& comment : {"//# sourceMappingURL=data:application/json;charset=utf-8;base64," + base64 + "\n",
                                     "//# sourceMappingURL=data:application/json;base64," + base64 + "  \r\n",
                                     "//@ sourceMappingURL=data:application/json;base64," + base64}) {
    const std::string script = code + comment;
    auto map = sourcemap::inlineSourceMap(script, 1 << 20);
    ASSERT_TRUE(map && *map) << comment;
    EXPECT_EQ((*map)->json, json);
    EXPECT_EQ((*map)->comment_begin, code.size());
    EXPECT_TRUE(sourcemap::parseSourceMap((*map)->json)) << "the decoded text is the map";
  }
  // No comment, a comment naming a file, or an earlier data: URL followed by a file name.
  EXPECT_FALSE(sourcemap::inlineSourceMap(code, 1 << 20));
  EXPECT_FALSE(sourcemap::inlineSourceMap(code + "//# sourceMappingURL=app.min.js.map\n", 1 << 20));
  EXPECT_FALSE(sourcemap::inlineSourceMap(
      code + "//# sourceMappingURL=data:application/json;base64," + base64 + "\n//# sourceMappingURL=app.js.map",
      1 << 20));
  // Data URLs it cannot use say why.
  auto percent = sourcemap::inlineSourceMap(code + "//# sourceMappingURL=data:application/json,%7B%7D", 1 << 20);
  ASSERT_TRUE(percent);
  ASSERT_FALSE(*percent);
  EXPECT_EQ(percent->error().code(), ErrorCode::kUnsupported);
  auto corrupt = sourcemap::inlineSourceMap(code + "//# sourceMappingURL=data:application/json;base64,e*y!J", 1 << 20);
  ASSERT_TRUE(corrupt);
  EXPECT_FALSE(*corrupt);
  auto no_comma = sourcemap::inlineSourceMap(code + "//# sourceMappingURL=data:application/json;base64", 1 << 20);
  ASSERT_TRUE(no_comma);
  EXPECT_FALSE(*no_comma);
  auto too_large = sourcemap::inlineSourceMap(code + "//# sourceMappingURL=data:application/json;base64," + base64, 16);
  ASSERT_TRUE(too_large);
  ASSERT_FALSE(*too_large);
  EXPECT_EQ(too_large->error().code(), ErrorCode::kTooLarge);
}

TEST(Vlq, RoundTripsEncoderValues) {
  // The encoder in the test follows the spec's bit layout; every value must decode back.
  for (int64_t value : {0LL, 1LL, -1LL, 15LL, 16LL, -16LL, 1000LL, -123456LL, 2147483647LL, -2147483647LL}) {
    const std::string text = test::encodeVlq(value);
    size_t pos = 0;
    int64_t decoded = 0;
    ASSERT_EQ(decodeVlq(text, &pos, &decoded), VlqResult::kOk) << text;
    EXPECT_EQ(decoded, value) << text;
    EXPECT_EQ(pos, text.size());
  }
}

TEST(Vlq, RejectsBadDigitsTruncationAndOverflow) {
  size_t pos = 0;
  int64_t value = 0;
  EXPECT_EQ(decodeVlq("!", &pos, &value), VlqResult::kInvalidDigit);
  pos = 0;
  EXPECT_EQ(decodeVlq("g", &pos, &value), VlqResult::kTruncated);  // continuation bit, then end
  pos = 0;
  EXPECT_EQ(decodeVlq("gggggggggB", &pos, &value), VlqResult::kOverflow);
}

TEST(Mappings, DecodesRelativeFieldsAcrossLines) {
  // Built with the encoder: line 0: (0 -> s0 0:0), (4 -> s0 0:4 name 0); line 1: (2 -> s1 3:1).
  const std::string mappings = test::encodeMappings({{{0, 0, 0, 0, -1}, {4, 0, 0, 4, 0}}, {{2, 1, 3, 1, -1}}});
  Status status;
  auto all = decodeAll(mappings, 2, 1, &status);
  ASSERT_TRUE(status.isOk()) << status.error().message();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].generated_column, 4u);
  EXPECT_EQ(all[1].name, 0);
  EXPECT_EQ(all[2].generated_line, 1u);
  EXPECT_EQ(all[2].generated_column, 2u);
  EXPECT_EQ(all[2].source, 1);
  EXPECT_EQ(all[2].original_line, 3u);
  EXPECT_EQ(all[2].original_column, 1u);
}

TEST(Mappings, SortsUnorderedSegmentsOfALine) {
  const std::string mappings = test::encodeMappings({{{10, 0, 1, 0, -1}, {2, 0, 0, 0, -1}}});
  auto all = decodeAll(mappings, 1, 0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].generated_column, 2u);
  EXPECT_EQ(all[1].generated_column, 10u);
}

TEST(Mappings, MalformedInputsGiveClearErrors) {
  struct Case {
    std::string mappings;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"AAAA,C!AA", "invalid base64 digit"},
      {"AAAA,AAg", "cut off"},
      {"ACAA", "source index 1 outside the 1 entries"},
      {"AAAAC", "name index 1 outside the 0 entries"},
      {"AA", "2 fields"},
      {"D", "generated column out of range"},
      {"AADA", "original line out of range"},
      {"AAAAAAA", "more than 5 fields"},
  };
  for (const Case& c : cases) {
    Status status;
    decodeAll(c.mappings, 1, 0, &status);
    ASSERT_FALSE(status.isOk()) << c.mappings;
    EXPECT_NE(status.error().message().find(c.expected), std::string::npos)
        << c.mappings << ": " << status.error().message();
    EXPECT_NE(status.error().message().find("generated line 1"), std::string::npos) << c.mappings;
  }
}

TEST(SourceMapDocument, ParsesFieldsAndExtensions) {
  const std::string json = R"({"version":3,"file":"out/app.min.js","sourceRoot":"webpack://app/",
    "sources":["a.js","lib/b.js","https://cdn/x.js"],"sourcesContent":["let a;",null],
    "names":["a"],"mappings":"AAAA","ignoreList":[1],"x_google_ignoreList":[2],
    "debugId":"85314830-023F-4CF1-A267-535F4E37BB17",
    "x_facebook_sources":[[{"names":["<global>","a"],"mappings":"AAA,EC"}],null],
    "x_hermes_function_offsets":{"0":[0,90,140]}})";
  auto doc = parseSourceMap(json);
  ASSERT_TRUE(doc) << doc.error().message();
  EXPECT_EQ(doc->file, "out/app.min.js");
  EXPECT_EQ(doc->resolvedSource(0), "webpack://app/a.js");
  EXPECT_EQ(doc->resolvedSource(2), "https://cdn/x.js");
  EXPECT_EQ(doc->ignored, (std::vector<bool>{false, true, true}));
  EXPECT_EQ(doc->debug_id, "85314830023f4cf1a267535f4e37bb17");
  ASSERT_TRUE(doc->sources_content[0]);
  EXPECT_FALSE(doc->sources_content[1]);
  EXPECT_FALSE(doc->sources_content[2]);
  ASSERT_TRUE(doc->function_maps[0]);
  EXPECT_EQ(doc->function_maps[0]->names[1], "a");
  EXPECT_EQ(doc->hermes_function_offsets.at(0), (std::vector<uint32_t>{0, 90, 140}));
}

TEST(SourceMapDocument, IndexMapsAndSegments) {
  const std::string json = R"({"version":3,"sections":[
     {"offset":{"line":0,"column":0},"map":{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA"}},
     {"offset":{"line":5,"column":2},"url":"b.js.map"}]})";
  auto doc = parseSourceMap(json);
  ASSERT_TRUE(doc) << doc.error().message();
  ASSERT_EQ(doc->sections.size(), 2u);
  ASSERT_TRUE(doc->sections[0].map);
  EXPECT_EQ(doc->sections[0].map->sources[0], "a.js");
  EXPECT_EQ(doc->sections[1].offset_line, 5u);
  EXPECT_EQ(doc->sections[1].url, "b.js.map");

  auto segmented = parseSourceMap(R"({"version":3,"sources":[],"names":[],"mappings":"",
    "x_facebook_segments":{"1":{"version":3,"sources":["s.js"],"names":[],"mappings":"AAAA"}}})");
  ASSERT_TRUE(segmented) << segmented.error().message();
  EXPECT_EQ(segmented->segments.at(1)->sources[0], "s.js");

  // Legacy RAM-bundle module offsets: null means "no such module".
  auto modules =
      parseSourceMap(R"({"version":3,"sources":[],"names":[],"mappings":"","x_facebook_offsets":[0,null,12]})");
  ASSERT_TRUE(modules) << modules.error().message();
  EXPECT_EQ(modules->module_offsets, (std::vector<uint32_t>{0, kNoModuleOffset, 12}));
}

TEST(SourceMapDocument, MalformedDocumentsGiveClearErrors) {
  struct Case {
    std::string json;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"{", "not valid JSON"},
      {"[]", "top level is not a JSON object"},
      {R"({"version":2,"sources":[],"mappings":""})", "\"version\" is not 3"},
      {R"({"version":3,"mappings":""})", "\"sources\" is missing"},
      {R"({"version":3,"sources":[]})", "\"mappings\" is missing"},
      {R"({"version":3,"sources":[1],"mappings":""})", "\"sources[0]\" is not a string"},
      {R"({"version":3,"sources":["a"],"mappings":"","ignoreList":[4]})", "names source 4"},
      {R"({"version":3,"sections":[{"offset":{"line":0},"map":{}}]})", "needs \"line\" and \"column\""},
      {R"({"version":3,"sections":[{"offset":{"line":3,"column":0},"url":"a"},{"offset":{"line":1,"column":0},"url":"b"}]})",
       "before the previous section"},
      {R"({"version":3,"sources":[],"mappings":"","x_hermes_function_offsets":{"x":[1]}})", "non-numeric key"},
      {R"({"version":3,"sources":[],"mappings":"","x_facebook_offsets":{"0":1}})",
       "\"x_facebook_offsets\" is not an array"},
      {R"({"version":3,"sources":[],"mappings":"","x_facebook_offsets":[0,-3]})",
       "\"x_facebook_offsets[1]\" is not a non-negative"},
  };
  for (const Case& c : cases) {
    auto doc = parseSourceMap(c.json);
    ASSERT_FALSE(doc) << c.json;
    EXPECT_EQ(doc.error().code(), ErrorCode::kMalformedInput);
    EXPECT_NE(doc.error().message().find(c.expected), std::string::npos) << c.json << " -> " << doc.error().message();
  }
}

TEST(SourceMapDocument, DeepNestingIsRefused) {
  std::string json = R"({"version":3,"sources":[],"mappings":""})";
  for (int i = 0; i < 12; ++i) json = R"({"sections":[{"offset":{"line":0,"column":0},"map":)" + json + "}]}";
  auto doc = parseSourceMap(json);
  ASSERT_FALSE(doc);
  EXPECT_NE(doc.error().message().find("nested too deeply"), std::string::npos);
}

TEST(FunctionMap, DecodesMetroEncoding) {
  // (1,0) <global>; (2,4) foo; (2,9) <global> — built with the encoder below.
  const std::string mappings = test::encodeVlq(0) + test::encodeVlq(0) + test::encodeVlq(0) + "," + test::encodeVlq(4) +
                               test::encodeVlq(1) + test::encodeVlq(1) + "," + test::encodeVlq(5) + test::encodeVlq(-1);
  auto map = decodeFunctionMap({"<global>", "foo"}, mappings);
  ASSERT_TRUE(map) << map.error().message();
  ASSERT_EQ(map->entries.size(), 3u);
  EXPECT_EQ(*map->enclosing(1, 3), "<global>");
  EXPECT_EQ(*map->enclosing(2, 6), "foo");
  EXPECT_EQ(*map->enclosing(2, 9), "<global>");
  EXPECT_FALSE(decodeFunctionMap({"a"}, "AC"));  // name index 1 of 1
  EXPECT_FALSE(decodeFunctionMap({"a"}, "A"));   // one field
}

TEST(FunctionScanner, NamesEnclosingFunctions) {
  const std::string source =
      "function outer(a) {\n"                                    // 1
      "  const inner = (b) => {\n"                               // 2
      "    return b.map(x => x.y);\n"                            // 3
      "  };\n"                                                   // 4
      "  return inner(a);\n"                                     // 5
      "}\n"                                                      // 6
      "class Shape {\n"                                          // 7
      "  constructor(r) { this.r = r; }\n"                       // 8
      "  area() { return `${this.r * 2}` + '}'; }\n"             // 9
      "}\n"                                                      // 10
      "exports.run = function (cb) { /* { */ return cb(); };\n"  // 11
      "const re = /[}]/g; if (re) { top(); }\n";                 // 12
  FunctionMap map = inferFunctionMap(source);
  auto nameAt = [&](uint32_t line, uint32_t column) {
    const std::string* name = map.enclosing(line, column);
    return name ? *name : std::string("(none)");
  };
  EXPECT_EQ(nameAt(1, 20), "outer");
  EXPECT_EQ(nameAt(2, 25), "inner");
  EXPECT_EQ(nameAt(3, 22), "<anonymous>");  // inside x => x.y
  EXPECT_EQ(nameAt(3, 27), "inner");        // after the arrow's ')'
  EXPECT_EQ(nameAt(5, 5), "outer");
  EXPECT_EQ(nameAt(8, 20), "Shape");
  EXPECT_EQ(nameAt(9, 20), "Shape.area");
  EXPECT_EQ(nameAt(11, 40), "exports.run");
  EXPECT_EQ(nameAt(12, 30), "<global>");
}

// What node 20 prints for each (CallSite getFunctionName, or the frame it prints): names V8
// infers for functions assigned to properties, computed and private method keys, default exports.
// The bundled runs of fixtures/names_rules check the same rules against node itself.
TEST(FunctionScanner, NamesAsV8InfersThem) {
  const std::string source =
      "class Composer {\n"                                                                                   // 1
      "  constructor() { this.onError = function () { a(); }; }\n"                                           // 2
      "  ['computedKey']() { a(); }\n"                                                                       // 3
      "  [Symbol.iterator]() { a(); }\n"                                                                     // 4
      "  #check() { a(); }\n"                                                                                // 5
      "  get ['size']() { a(); }\n"                                                                          // 6
      "  [key]() { a(); }\n"                                                                                 // 7
      "}\n"                                                                                                  // 8
      "function Widget() { this.render = () => { a(); }; this['paint'] = function () { a(); }; }\n"          // 9
      "function widget() { this.draw = function () { a(); }; var self = this; self.x = () => { a(); }; }\n"  // 10
      "function Outer() { var inner = function () { a(); }; self.y = function () { a(); }; }\n"              // 11
      "export default function () { a(); }\n";                                                               // 12
  FunctionMap map = inferFunctionMap(source);
  auto nameAt = [&](uint32_t line, std::string_view marker, size_t occurrence = 0) {
    size_t at = 0;
    for (uint32_t l = 1; l < line; ++l) at = source.find('\n', at) + 1;
    size_t column = source.find(marker, at);
    for (size_t i = 0; i < occurrence; ++i) column = source.find(marker, column + 1);
    const std::string* name = map.enclosing(line, static_cast<uint32_t>(column - at));
    return name ? *name : std::string("(none)");
  };
  EXPECT_EQ(nameAt(2, "a()"), "Composer.onError");
  EXPECT_EQ(nameAt(3, "a()"), "Composer.computedKey");
  EXPECT_EQ(nameAt(4, "a()"), "[Symbol.iterator]");
  EXPECT_EQ(nameAt(5, "a()"), "#check");
  EXPECT_EQ(nameAt(6, "a()"), "get size");
  EXPECT_EQ(nameAt(7, "a()"), "Composer.<computed>");  // known only when the program runs
  EXPECT_EQ(nameAt(9, "a()"), "Widget.render");
  EXPECT_EQ(nameAt(9, "a()", 1), "Widget.paint");
  EXPECT_EQ(nameAt(10, "a()"), "draw");
  EXPECT_EQ(nameAt(10, "a()", 1), "self.x");
  EXPECT_EQ(nameAt(11, "a()"), "inner");  // a variable names its function: no prefix
  EXPECT_EQ(nameAt(11, "a()", 1), "Outer.self.y");
  EXPECT_EQ(nameAt(12, "a()"), "default");
}

TEST(FunctionScanner, EntriesStayInSourceOrder) {
  // The arrow's entry (at its parameters) comes after the default value's function is seen.
  FunctionMap map = inferFunctionMap("const f = (a = function g() { return 1; }) => {\n  a();\n};\n");
  for (size_t i = 1; i < map.entries.size(); ++i) {
    const auto& previous = map.entries[i - 1];
    const auto& entry = map.entries[i];
    EXPECT_TRUE(previous.line < entry.line || (previous.line == entry.line && previous.column < entry.column));
  }
  EXPECT_EQ(*map.enclosing(2, 3), "f");
}

TEST(Url, FileNamesDropHostPathQueryAndFragment) {
  EXPECT_EQ(minifiedFileName("https://h.example/static/js/207.e017fea1.chunk.js?v=3#x"), "207.e017fea1.chunk.js");
  EXPECT_EQ(minifiedFileName("index.android.bundle"), "index.android.bundle");
  EXPECT_EQ(minifiedFileName("/data/user/0/app/files/index.android.bundle"), "index.android.bundle");
  EXPECT_EQ(servedFileName("", "dist/main.3f9a.js.map"), "main.3f9a.js");
  EXPECT_EQ(servedFileName("static/js/main.js", "x.map"), "main.js");
}

TEST(Url, RamBundleModuleNamesAsMetroSymbolicateReadsThem) {
  auto segment = parseRamBundleName("seg-3.js");
  ASSERT_TRUE(segment);
  EXPECT_EQ(segment->segment, 3u);
  EXPECT_FALSE(segment->module);
  auto segment_module = parseRamBundleName("seg-3_12.js");
  ASSERT_TRUE(segment_module);
  EXPECT_EQ(segment_module->segment, 3u);
  EXPECT_EQ(segment_module->module, std::optional<uint32_t>(12));
  auto module = parseRamBundleName("12.js");
  ASSERT_TRUE(module);
  EXPECT_EQ(module->segment, 0u);
  EXPECT_EQ(module->module, std::optional<uint32_t>(12));
  for (const char* name : {"seg-.js", "seg-3_.js", "seg-3x.js", "a12.js", "12.jsx", "12.bundle", "index.android.bundle",
                           "seg-3_4_5.js", "1234567890.js", ".js", ""}) {
    EXPECT_FALSE(parseRamBundleName(name)) << name;
  }
}

TEST(Fuzz, DeterministicRunOverMutatedMaps) {
  // Seeds: valid maps of each shape; mutations: byte flips, truncations, splices.
  const std::vector<std::string> seeds = {
      R"({"version":3,"sources":["a.js"],"sourcesContent":["function f(){ return () => { x(); } }"],"names":["f"],"mappings":"AAAA,SAASA;AACA"})",
      R"({"version":3,"sections":[{"offset":{"line":0,"column":0},"map":{"version":3,"sources":["a"],"names":[],"mappings":"AAAA"}}]})",
      R"({"version":3,"sources":["a"],"names":[],"mappings":"AAAA","x_facebook_sources":[[{"names":["<global>"],"mappings":"AAA"}]],"x_hermes_function_offsets":{"0":[0,4]}})",
      "class A { m() { `${`${1}`}` } } /re/ ( { [ ",
      R"({"version":3,"sources":["a"],"names":[],"mappings":";;AAAA","x_facebook_offsets":[null,2],)"
      R"("x_facebook_segments":{"1":{"version":3,"sources":["s"],"names":[],"mappings":"AAAA","x_facebook_offsets":[0]}}})",
      "seg-12_3.js",
  };
  std::mt19937 random(12345);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string input = seeds[iteration % seeds.size()];
    const int mutations = 1 + static_cast<int>(random() % 8);
    for (int m = 0; m < mutations && !input.empty(); ++m) {
      const size_t at = random() % input.size();
      switch (random() % 4) {
        case 0:
          input[at] = static_cast<char>(random() % 256);
          break;
        case 1:
          input.resize(at);
          break;
        case 2:
          input.insert(at, input.substr(random() % input.size(), random() % 16));
          break;
        default:
          input.insert(at, 1, "{}[]\",:;/`$\\A+g"[random() % 16]);
          break;
      }
    }
    fuzzSourcemapOnce(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
}

}  // namespace
}  // namespace restack::sourcemap
