// The minified file uploaded beside a map without sourcesContent (sourcemap_minified.h): its
// function scopes, named through the map's `names`, name the restored frames. The map is built
// by the test, so every expected name is the `names` entry the test put at a token.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "formats/sourcemap/function_map.h"
#include "formats/sourcemap/function_scanner.h"
#include "formats/sourcemap/scopes.h"
#include "formats/sourcemap/source_map.h"
#include "formats/stack/js_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/sourcemap/sourcemap_minified.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"
#include "tests/archive/archive_fixtures.h"
#include "tests/sourcemap/vlq_encoder.h"
#include "tests/support/mutate.h"

namespace restack {
namespace {

// The function `functions` says encloses the first occurrence of `text` in `source`.
const std::string* enclosingAt(const std::string& source, const sourcemap::FunctionMap& functions,
                               std::string_view text) {
  const size_t offset = source.find(text);
  const uint32_t line = static_cast<uint32_t>(std::count(source.begin(), source.begin() + offset, '\n')) + 1;
  const size_t line_start = source.rfind('\n', offset) == std::string::npos ? 0 : source.rfind('\n', offset) + 1;
  return functions.enclosing(line, static_cast<uint32_t>(offset - line_start));
}

namespace fs = std::filesystem;
using sourcemap::test::TestSegment;

// One line of minified code: `a` is the original `explode`, `b` `handlers`, `c` `onClick`,
// `d` `Widget`, `e` `render`, `f` `later` (an arrow assigned to a variable).
constexpr std::string_view kMinified =
    "function a(n){throw new Error(n)}var b={c:function(){a(1)}};class d{e(){b.c()}}"
    "var f=()=>{d.x()};f();";

// Named tokens: (token text, which occurrence, original name).
struct NamedToken {
  std::string_view token;
  int occurrence;
  std::string_view name;
};
constexpr NamedToken kNamed[] = {{"a", 0, "explode"}, {"b", 0, "handlers"}, {"c", 0, "onClick"},
                                 {"d", 0, "Widget"},  {"e", 0, "render"},   {"f", 0, "later"}};
// Unnamed segments where the frames point (the calls and the throw).
constexpr std::string_view kCallSites[] = {"throw", "a(1)", "b.c()", "d.x()", "var b"};

uint32_t columnOf(std::string_view token, int occurrence = 0) {
  size_t at = 0;
  for (int i = 0;; ++i) {
    // Whole identifiers only: "a" must not match inside "var".
    for (at = kMinified.find(token, at);; at = kMinified.find(token, at + 1)) {
      const bool word =
          token.size() > 1 || ((at == 0 || !std::isalnum(static_cast<unsigned char>(kMinified[at - 1]))) &&
                               !std::isalnum(static_cast<unsigned char>(kMinified[at + 1])));
      if (word) break;
    }
    if (i == occurrence) return static_cast<uint32_t>(at);
    ++at;
  }
}

std::string mapJson(bool with_names) {
  std::vector<TestSegment> line;
  std::string names;
  int64_t name_index = 0;
  for (const NamedToken& named : kNamed) {
    line.push_back({columnOf(named.token, named.occurrence), 0, name_index, 0, with_names ? name_index : -1});
    names += std::string(names.empty() ? "" : ",") + "\"" + std::string(named.name) + "\"";
    ++name_index;
  }
  int64_t original_line = 10;
  for (std::string_view site : kCallSites) line.push_back({columnOf(site), 0, original_line++, 4, -1});
  std::sort(line.begin(), line.end(), [](const TestSegment& x, const TestSegment& y) { return x.column < y.column; });
  return R"({"version":3,"file":"app.min.js","sources":["src/app.js"],"names":[)" + names + R"(],"mappings":")" +
         sourcemap::test::encodeMappings({line}) + "\"}";
}

class MinifiedSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("restack-smmin-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    StoreOptions options;
    options.path = dir_.string();
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  IngestReport upload(std::string_view bytes, const std::string& display = "") {
    UploadMeta meta;
    meta.kind = SymbolKind::kSourcemap;
    meta.app = "shop";
    meta.build_id = "7";
    meta.name = "app.min.js";
    UploadContent content;
    content.bytes = bytes;
    content.display_name = display;
    auto report = ingestSourcemap(*store_, meta, content, IngestOptions());
    EXPECT_TRUE(report) << report.error().message();
    return report ? *report : IngestReport();
  }
  // The function restored for a frame printed at `site` (1-based column, as V8 prints).
  std::string restoredAt(SourcemapResolver& resolver, std::string_view site) {
    stack::JsFrameLine frame;
    frame.url = "https://cdn.example/app.min.js";
    frame.line = 1;
    frame.column = columnOf(site) + 1;
    frame.function = "minified";
    EventScope scope;
    scope.app = "shop";
    scope.platform = "javascript";
    auto result = resolver.lookup(scope, frame);
    EXPECT_TRUE(result) << result.error().message();
    if (!result || result->frames.empty()) return "(none)";
    return result->frames[0].function;
  }
  void expectOriginalNames(SourcemapResolver& resolver) {
    EXPECT_EQ(restoredAt(resolver, "throw"), "explode");
    EXPECT_EQ(restoredAt(resolver, "a(1)"), "onClick");
    EXPECT_EQ(restoredAt(resolver, "b.c()"), "Widget.render");
    EXPECT_EQ(restoredAt(resolver, "d.x()"), "later");
    EXPECT_EQ(restoredAt(resolver, "var b"), "<global>");
  }
  fs::path dir_;
  std::unique_ptr<SymbolStore> store_;
};

TEST_F(MinifiedSourceTest, RecognisesMinifiedFilesAndNotMaps) {
  EXPECT_TRUE(looksLikeMinifiedSource(kMinified));
  EXPECT_TRUE(looksLikeMinifiedSource("!function(e){}();"));
  EXPECT_TRUE(looksLikeMinifiedSource("\"use strict\";var a=1"));
  EXPECT_TRUE(looksLikeMinifiedSource("(()=>{})();\n//# sourceMappingURL=app.js.map"));
  EXPECT_FALSE(looksLikeMinifiedSource(mapJson(true)));
  EXPECT_FALSE(looksLikeMinifiedSource("  {\"version\":3}"));
  EXPECT_FALSE(looksLikeMinifiedSource("com.example.Foo -> a:\n    void bar() -> b\n"));
  EXPECT_FALSE(
      looksLikeMinifiedSource(std::string_view("\x7f"
                                               "ELF\0\0",
                                               6)));
}

TEST_F(MinifiedSourceTest, MapThenMinifiedFileGivesOriginalNames) {
  upload(mapJson(true), "app.min.js.map");
  {
    // Without the minified file the printed (minified) name is kept.
    SourcemapResolver resolver(*store_, {});
    EXPECT_EQ(restoredAt(resolver, "throw"), "minified");
    const IngestReport report = upload(kMinified, "app.min.js");
    EXPECT_EQ(report.ids, std::vector<std::string>{"app.min.js"});
    // The same resolver sees the names at once (the ingest generation drops its map states).
    expectOriginalNames(resolver);
  }
}

TEST_F(MinifiedSourceTest, MinifiedFileThenMapGivesOriginalNames) {
  const IngestReport early = upload(kMinified, "app.min.js");
  ASSERT_EQ(early.warnings.size(), 1u);  // no map yet
  upload(mapJson(true), "app.min.js.map");
  SourcemapResolver resolver(*store_, {});
  expectOriginalNames(resolver);
}

TEST_F(MinifiedSourceTest, MapWithoutNamesKeepsTheMinifiedFilesOwnNames) {
  // A map whose `names` is empty: the scopes are still known, spelled as the minified file has them.
  upload(mapJson(false), "app.min.js.map");
  upload(kMinified, "app.min.js");
  SourcemapResolver resolver(*store_, {});
  EXPECT_EQ(restoredAt(resolver, "throw"), "a");
  EXPECT_EQ(restoredAt(resolver, "b.c()"), "d.e");
}

TEST_F(MinifiedSourceTest, ZipOfMapAndMinifiedFile) {
  const std::string map = mapJson(true);
  const std::string zip = archive_test::makeZip({archive_test::deflatedEntry("dist/app.min.js.map", map),
                                                 archive_test::deflatedEntry("dist/app.min.js", kMinified)});
  UploadMeta meta;
  meta.kind = SymbolKind::kSourcemap;
  meta.app = "shop";
  meta.name = "app.min.js";
  UploadContent content;
  content.bytes = zip;
  auto report = ingestJavaScriptUpload(*store_, meta, content, IngestOptions());
  ASSERT_TRUE(report.has_value());
  ASSERT_TRUE(*report) << report->error().message();
  EXPECT_EQ((*report)->ids, (std::vector<std::string>{"app.min.js", "app.min.js"}));
  SourcemapResolver resolver(*store_, {});
  expectOriginalNames(resolver);

  // Not this module's uploads: another kind, and a bare map.
  meta.kind = SymbolKind::kElf;
  EXPECT_FALSE(ingestJavaScriptUpload(*store_, meta, content, IngestOptions()).has_value());
  meta.kind.reset();
  content.bytes = map;
  EXPECT_FALSE(ingestJavaScriptUpload(*store_, meta, content, IngestOptions()).has_value());
  // Hermes bytecode beside its map: the map is ingested, the bytecode is not scanned.
  const std::string bytecode("\xc6\x1f\xbc\x03\xc1\x03\x19\x1f\0\0\0\0", 12);
  const std::string hermes_zip = archive_test::makeZip({archive_test::deflatedEntry("index.android.bundle.map", map),
                                                        archive_test::deflatedEntry("index.android.bundle", bytecode)});
  meta.kind = SymbolKind::kSourcemap;
  meta.name = "index.android.bundle";
  content.bytes = hermes_zip;
  auto hermes = ingestJavaScriptUpload(*store_, meta, content, IngestOptions());
  ASSERT_TRUE(hermes.has_value());
  ASSERT_TRUE(*hermes) << hermes->error().message();
  EXPECT_EQ((*hermes)->ids, std::vector<std::string>{"index.android.bundle"});
  ASSERT_EQ((*hermes)->warnings.size(), 1u);
  EXPECT_NE((*hermes)->warnings[0].find("not JavaScript"), std::string::npos);
  meta.kind.reset();
  meta.name = "app.min.js";
  // A bare minified file without a kind is recognised.
  content.bytes = kMinified;
  auto bare = ingestJavaScriptUpload(*store_, meta, content, IngestOptions());
  ASSERT_TRUE(bare.has_value());
  EXPECT_TRUE(*bare);
}

// What terser leaves in webpack and rollup production builds (tests/grouping_e2e/js_corpus_test.cc
// prints the real ones): functions inlined at their only call as "function(n){…}(x)", the map
// naming each call's '(' by the callee the original called there; webpack's module concatenation
// naming `go` of src/router.js `router_go`; rollup recording a namespace call as "f0.entry0".
TEST_F(MinifiedSourceTest, InlinedFunctionsAndConcatenatedModulesGetTheirOriginalNames) {
  const std::string minified =
      "function r(r,t){switch(r){case 0:return function(n){return 2*function(n){return(n>-1?null:{}).value}(n+1)}(t)}}"
      "r(0,1);";
  auto column = [&](std::string_view text) { return static_cast<uint32_t>(minified.find(text)); };
  // (column, source, original line, original column, name)
  std::vector<TestSegment> line = {
      {0, 0, 20, 7, -1},                              // function r: src/router.js
      {column("r(r,t)"), 0, 20, 16, 0},               // router_go
      {column("function(n){return 2"), 1, 8, 0, -1},  // entry0's body, feature0.js
      {column("function(n){return(n"), 1, 5, 0, -1},  // step0's body
      {column(".value"), 1, 6, 9, -1},                // the throw
      {column("(n+1)"), 1, 9, 9, 1},                  // the call of step0
      {column("(t)"), 0, 22, 19, 2},                  // the call of f0.entry0 in the router
      {column("r(0,1)"), 0, 30, 0, -1},               // top level
  };
  const std::string map =
      R"({"version":3,"file":"app.min.js","sources":["webpack:///./src/router.js","webpack:///./src/features/feature0.js"],)"
      R"("names":["router_go","step0","f0.entry0"],"mappings":")" +
      sourcemap::test::encodeMappings({line}) + R"("})";
  upload(map, "app.min.js.map");
  upload(minified, "app.min.js");
  SourcemapResolver resolver(*store_, {});
  auto restored = [&](std::string_view site) {
    stack::JsFrameLine frame;
    frame.url = "https://cdn.example/app.min.js";
    frame.line = 1;
    frame.column = column(site) + 1;
    frame.function = "minified";
    EventScope scope;
    scope.app = "shop";
    scope.platform = "javascript";
    auto result = resolver.lookup(scope, frame);
    EXPECT_TRUE(result) << result.error().message();
    return result && !result->frames.empty() ? result->frames[0].function : std::string("(none)");
  };
  EXPECT_EQ(restored(".value"), "step0");
  EXPECT_EQ(restored("(n+1)"), "entry0");
  EXPECT_EQ(restored("(t)"), "go");

  // Scanning original source (no renamer), an IIFE stays anonymous, as V8 prints it; with one,
  // a wrapped arrow IIFE takes the name at its call too.
  const std::string iife = "(n=>{f(n)})(1);";
  EXPECT_EQ(*sourcemap::inferFunctionMap(iife).enclosing(1, 5), "<anonymous>");
  const sourcemap::FunctionMap named =
      sourcemap::inferFunctionMap(iife, [&](uint32_t, uint32_t at, std::string_view text) {
        return at == iife.find("(1)") ? std::string("later") : std::string(text);
      });
  EXPECT_EQ(*named.enclosing(1, 5), "later");
}

TEST(FunctionScannerV8Names, AccessorsPrototypeAndRenamedTokens) {
  const std::string source =
      "class K { get c() { return 1; } static s() {} m() {} }\n"
      "A.prototype.pm = function () {};\n"
      "var o = { set v(x) {}, get: function () {} };\n";
  const sourcemap::FunctionMap functions = sourcemap::inferFunctionMap(source);
  std::vector<size_t> line_starts = {0};
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') line_starts.push_back(i + 1);
  }
  // The function enclosing the first `text` on `line`.
  auto at = [&](uint32_t line, std::string_view text) {
    const size_t start = line_starts[line - 1];
    const std::string* name = functions.enclosing(line, static_cast<uint32_t>(source.find(text, start) - start));
    return name ? *name : std::string("(none)");
  };
  EXPECT_EQ(at(1, "return 1"), "get c");
  EXPECT_EQ(at(1, "{} m"), "K.s");
  EXPECT_EQ(at(1, "{} }"), "K.m");
  EXPECT_EQ(at(2, "{};"), "A.pm");
  EXPECT_EQ(at(3, "{}, get"), "set v");
  EXPECT_EQ(at(3, "{} }"), "get");
  // Renamed through a callback, as for a minified file.
  const sourcemap::FunctionMap renamed =
      sourcemap::inferFunctionMap("function a(){}", [](uint32_t, uint32_t column, std::string_view text) {
        return column == 9 ? std::string("original") : std::string(text);
      });
  EXPECT_EQ(*renamed.enclosing(1, 13), "original");
  // An object the map records no source for (terser's "e.validateInternal=function(…)") is left
  // out of the assignment target's name; elsewhere such a token is spelled as written.
  const auto synthesized_e = [](uint32_t, uint32_t, std::string_view text) {
    return text == "e" ? std::string() : std::string(text);
  };
  const sourcemap::FunctionMap exported = sourcemap::inferFunctionMap(
      "e.validateInternal=function(t){return t},e=function(){return 1};function e(){return 2}", synthesized_e);
  EXPECT_EQ(*exported.enclosing(1, 31), "validateInternal");
  EXPECT_EQ(*exported.enclosing(1, 54), "e");
  // A declaration whose name the map records no source for is a function the bundler wrote
  // around a module (rollup's commonjs "function requireMain () {…}", minified): it holds that
  // module's top-level code, "<global>" as the original run shows it.
  EXPECT_EQ(*exported.enclosing(1, 77), "<global>");
  // So does a function invoked where it is written by a call the bundler wrote ("" at the call),
  // while a call the map names nothing at ("(" back) leaves it anonymous.
  const std::string wrapped = "var w=function(){f()}(),v=function(){g()}();";
  const sourcemap::FunctionMap calls =
      sourcemap::inferFunctionMap(wrapped, [&](uint32_t, uint32_t at, std::string_view text) {
        return at == wrapped.find("(),v") ? std::string() : std::string(text);
      });
  EXPECT_EQ(*calls.enclosing(1, wrapped.find("f()")), "<global>");
  EXPECT_EQ(*calls.enclosing(1, wrapped.find("g()")), "<anonymous>");
}

}  // namespace
}  // namespace restack

namespace restack {
namespace {

TEST(FunctionScannerV8Names, MetroNamesSpelledAsTheEnginePrintsThem) {
  EXPECT_EQ(sourcemap::v8FunctionName("Shape#describe"), "Shape.describe");
  EXPECT_EQ(sourcemap::v8FunctionName("Shape#constructor"), "Shape");
  EXPECT_EQ(sourcemap::v8FunctionName("Shape.create"), "Shape.create");  // static: unchanged
  EXPECT_EQ(sourcemap::v8FunctionName("Shape#get__area"), "get area");
  EXPECT_EQ(sourcemap::v8FunctionName("set__size"), "set size");
  EXPECT_EQ(sourcemap::v8FunctionName("<global>"), "<global>");
  EXPECT_EQ(sourcemap::v8FunctionName("list.map$argument_0"), "list.map$argument_0");
  EXPECT_EQ(sourcemap::v8FunctionName("#private"), "#private");
}

TEST(FunctionScannerV8Names, TypeScriptReturnTypesAndTypeParameters) {
  const std::string source =
      "class Tokenizer {\n"
      "  raise(at: Position, details = {}): ParseError<T> { return 1; }\n"
      "  isLookahead?(): boolean { return 2; }\n"
      "  parse<T extends Node>(x: T): x is Node { return 3; }\n"
      "}\n"
      "const f = (a: number): Array<string> => { return 4; };\n"
      "switch (k) { case (a): { go(); } }\n"
      "export class TraceMap implements SourceMap, a.Other {\n"
      "  declare version: SourceMapV3['version'];\n"
      "  private declare _encoded: string | undefined;\n"
      "  constructor(map: SourceMapInput, mapUrl?: string | null) { return 5; }\n"
      "}\n"
      "class Sub extends Base implements Named { name() { return 6; } }\n"
      "class he{constructor(t,o){let i=typeof t==\"string\";let d=i?JSON.parse(t):t,{version:f}=d;return 7}}\n";
  const sourcemap::FunctionMap functions = sourcemap::inferFunctionMap(source);
  auto at = [&](std::string_view text) {
    const std::string* name = enclosingAt(source, functions, text);
    return name ? *name : std::string("(none)");
  };
  EXPECT_EQ(at("return 1"), "Tokenizer.raise");
  EXPECT_EQ(at("return 2"), "Tokenizer.isLookahead");
  EXPECT_EQ(at("return 3"), "Tokenizer.parse");
  EXPECT_EQ(at("return 4"), "f");
  EXPECT_EQ(at("go()"), "<global>");      // a case block, not a function
  EXPECT_EQ(at("return 5"), "TraceMap");  // a constructor is named by its class ("new TraceMap")
  EXPECT_EQ(at("return 6"), "Sub.name");
  // Minified: "cond?f(t):t,{…}" is no method "f" with a return type.
  EXPECT_EQ(at("version:f"), "he");
  EXPECT_EQ(at("return 7"), "he");
}

}  // namespace
}  // namespace restack

namespace restack {
namespace {

// fixtures/scopes/scopes_app.min.js.map: "scopes" written by Chrome DevTools'
// source-map-scopes-codec (fixtures/scopes/make_scopes_fixture.js says how), no sourcesContent.
constexpr std::string_view kScopesGenerated =
    "function o(n){return n.map(function(r){if(r<0)throw new Error(\"neg\");return 2*r})}function "
    "t(e){if(e<0)throw new Error(\"neg\");return 2*e}";

std::string readFixture(const std::string& relative) {
  std::ifstream in(std::string(RESTACK_SOURCE_DIR) + "/tests/sourcemap/fixtures/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Scopes, DecodesTheReferenceEncodersOutput) {
  auto doc = sourcemap::parseSourceMap(readFixture("scopes/scopes_app.min.js.map"));
  ASSERT_TRUE(doc) << doc.error().message();
  ASSERT_FALSE(doc->scopes.empty());
  auto functions = sourcemap::decodeScopesFunctionMap(doc->scopes, doc->names);
  ASSERT_TRUE(functions) << functions.error().message();
  auto at = [&](std::string_view text, size_t from = 0) {
    const std::string* name = functions->enclosing(1, static_cast<uint32_t>(kScopesGenerated.find(text, from)));
    return name ? *name : std::string("(none)");
  };
  EXPECT_EQ(at("function o"), "<global>");
  EXPECT_EQ(at("return n"), "outer");
  EXPECT_EQ(at("throw"), "helper");  // inlined into inner: the range's definition is helper
  EXPECT_EQ(at("return 2*r"), "helper");
  EXPECT_EQ(at("})}"), "inner");
  EXPECT_EQ(at("throw", kScopesGenerated.find("function t")), "helper");

  EXPECT_FALSE(sourcemap::decodeScopesFunctionMap("EC", doc->names));      // cut short
  EXPECT_FALSE(sourcemap::decodeScopesFunctionMap("ECAA", doc->names));    // never closed
  EXPECT_FALSE(sourcemap::decodeScopesFunctionMap("ECAZ,F", doc->names));  // definition of no scope
  EXPECT_FALSE(sourcemap::decodeScopesFunctionMap("F!", doc->names));      // not base64
  // Unknown tags and the items Restack does not use are skipped.
  EXPECT_TRUE(sourcemap::decodeScopesFunctionMap("gBCDE,EAA,GAB,FC", doc->names));
}

TEST_F(MinifiedSourceTest, ScopesNameFramesWithoutSourcesContent) {
  UploadMeta meta;
  meta.kind = SymbolKind::kSourcemap;
  meta.app = "shop";
  meta.name = "scopes_app.min.js";
  const std::string map = readFixture("scopes/scopes_app.min.js.map");
  UploadContent content;
  content.bytes = map;
  auto report = ingestSourcemap(*store_, meta, content, IngestOptions());
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_TRUE(report->warnings.empty());
  SourcemapResolver resolver(*store_, {});
  auto restored = [&](std::string_view text, size_t from = 0) {
    stack::JsFrameLine frame;
    frame.url = "https://cdn.example/scopes_app.min.js";
    frame.line = 1;
    frame.column = static_cast<uint32_t>(kScopesGenerated.find(text, from)) + 1;
    frame.function = "printed";
    EventScope scope;
    scope.app = "shop";
    scope.platform = "javascript";
    auto result = resolver.lookup(scope, frame);
    EXPECT_TRUE(result) << result.error().message();
    return result && !result->frames.empty() ? result->frames[0].function : std::string("(none)");
  };
  EXPECT_EQ(restored("throw"), "helper");
  EXPECT_EQ(restored("return n"), "outer");
  EXPECT_EQ(restored("throw", kScopesGenerated.find("function t")), "helper");
  // A minified file uploaded afterwards does not replace what "scopes" says.
  meta.name = "scopes_app.min.js";
  content.bytes = kScopesGenerated;
  ASSERT_TRUE(ingestSourcemap(*store_, meta, content, IngestOptions()));
  EXPECT_EQ(restored("throw"), "helper");
}

}  // namespace
}  // namespace restack

namespace restack {
namespace {

TEST(Scopes, DeterministicRunOverMutatedInput) {
  // "scopes" and minified files are uploads: mutated ones must decode or fail, never crash, and
  // every decoded function map must be in position order with names in range.
  auto doc = sourcemap::parseSourceMap(readFixture("scopes/scopes_app.min.js.map"));
  ASSERT_TRUE(doc);
  const sourcemap::TokenRenamer rename = [](uint32_t line, uint32_t column, std::string_view text) {
    return (line + column) % 3 == 0 ? std::string("renamed") : std::string(text);
  };
  std::mt19937 random(20261123);
  int decoded = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    const bool scopes = iteration % 2 == 0;
    const std::string input = test_support::mutate(
        scopes ? doc->scopes : std::string(kMinified) + std::string(kScopesGenerated), random, 6, 8);
    auto functions = scopes ? sourcemap::decodeScopesFunctionMap(input, doc->names)
                            : Expected<sourcemap::FunctionMap>(sourcemap::inferFunctionMap(input, rename));
    if (!functions) continue;
    ++decoded;
    for (size_t i = 0; i < functions->entries.size(); ++i) {
      ASSERT_LT(functions->entries[i].name, functions->names.size()) << input;
      if (i > 0 && scopes) {
        const auto& a = functions->entries[i - 1];
        const auto& b = functions->entries[i];
        ASSERT_TRUE(a.line < b.line || (a.line == b.line && a.column < b.column)) << input;
      }
    }
  }
  EXPECT_GT(decoded, 2000);  // the scans always succeed; some mutated "scopes" still decode
}

}  // namespace
}  // namespace restack

namespace restack {
namespace {

TEST_F(MinifiedSourceTest, IndexMapSectionsAreNamedInTheirOwnPositions) {
  // The minified code of the test map as the second section of a bundle, after a first line and
  // 6 columns of other code on its own line: each section's scopes move to its own positions.
  const std::string prefix = "var p=1;\nvar q;";
  const std::string bundle = prefix + std::string(kMinified);
  const std::string index_map = R"({"version":3,"file":"app.min.js","sections":[)"
                                R"({"offset":{"line":1,"column":6},"map":)" +
                                mapJson(true) + "}]}";
  upload(index_map, "app.min.js.map");
  upload(bundle, "app.min.js");
  SourcemapResolver resolver(*store_, {});
  auto restored = [&](std::string_view site) {
    stack::JsFrameLine frame;
    frame.url = "https://cdn.example/app.min.js";
    frame.line = 2;
    frame.column = 6 + columnOf(site) + 1;
    EventScope scope;
    scope.app = "shop";
    scope.platform = "javascript";
    auto result = resolver.lookup(scope, frame);
    EXPECT_TRUE(result) << result.error().message();
    return result && !result->frames.empty() ? result->frames[0].function : std::string("(none)");
  };
  EXPECT_EQ(restored("throw"), "explode");
  EXPECT_EQ(restored("a(1)"), "onClick");
  EXPECT_EQ(restored("b.c()"), "Widget.render");
  EXPECT_EQ(restored("var b"), "<global>");
}

// Names V8's inferrer gives anonymous literals are marked inferred; names functions declare or
// are bound to are not, even when the same text is both.
TEST(FunctionScanner, MarksTheNamesV8InfersForAnonymousLiterals) {
  const std::string source =
      "const scenarios = [[\"a\", () => f()], [\"b\", () => { new C({}).x = 1; }]];\n"
      "const bound = () => 2;\n"
      "function scenarios2() { return 3; }\n"
      "const list = [() => 4];\n"
      "function list2() { return list; }\n"
      "const tasks = [(x) => a(x), (x) => (0, lib.generatedPositionFor)(x, { source: 1 })];\n";
  const sourcemap::FunctionMap functions = sourcemap::inferFunctionMap(source);
  auto at = [&](std::string_view text) {
    const std::string* name = enclosingAt(source, functions, text);
    EXPECT_NE(name, nullptr) << text;
    return name ? std::make_pair(*name, functions.isInferred(name)) : std::make_pair(std::string(), false);
  };
  EXPECT_EQ(at("f()"), std::make_pair(std::string("C.x"), true));
  EXPECT_EQ(at("new C"), std::make_pair(std::string("scenarios"), true));
  EXPECT_EQ(at("2;"), std::make_pair(std::string("bound"), false));
  EXPECT_EQ(at("return 3"), std::make_pair(std::string("scenarios2"), false));
  EXPECT_EQ(at("4]"), std::make_pair(std::string("list"), true));
  EXPECT_EQ(at("return list"), std::make_pair(std::string("list2"), false));
  // Names as node printed them for this source (V8 12, node 20).
  EXPECT_EQ(at("a(x)"), std::make_pair(std::string("tasks.source"), true));
  EXPECT_EQ(at("lib."), std::make_pair(std::string("tasks"), true));
  // Scanning a minified file (a renamer given), `(0, lib.f)(…)` is esbuild's and webpack's
  // spelling of an imported `f(…)`, which node names "generatedPositionFor.source" in the
  // original source `[(x) => a(x), (x) => generatedPositionFor(x, { source: 1 })]`.
  const sourcemap::FunctionMap minified =
      sourcemap::inferFunctionMap(source, [](uint32_t, uint32_t, std::string_view text) { return std::string(text); });
  const std::string* bundled = enclosingAt(source, minified, "a(x)");
  ASSERT_NE(bundled, nullptr);
  EXPECT_EQ(*bundled, "generatedPositionFor.source");
  EXPECT_TRUE(minified.isInferred(bundled));
  EXPECT_FALSE(functions.isInferred(nullptr));
}

}  // namespace
}  // namespace restack
