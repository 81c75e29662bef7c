// Ingest + lookup on maps built by the test (so every expected answer follows from how the map
// was made): chunking, sections, scoping by app/build, Hermes offsets, context lines, caching
// under a tiny bound, threads, corrupt records.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <thread>

#include "formats/stack/js_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/sourcemap/sourcemap_cache.h"
#include "symbolstore/sourcemap/sourcemap_records.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"
#include "tests/sourcemap/vlq_encoder.h"

namespace restack {
namespace {

namespace fs = std::filesystem;
using sourcemap::test::TestSegment;

UploadMeta uploadMeta(const std::string& app, const std::string& build, const std::string& name) {
  UploadMeta meta;
  meta.kind = SymbolKind::kSourcemap;
  meta.app = app;
  meta.build_id = build;
  meta.name = name;
  return meta;
}

EventScope eventScope(const std::string& app, const std::string& build, const std::string& platform) {
  EventScope scope;
  scope.app = app;
  scope.build_id = build;
  scope.platform = platform;
  return scope;
}

class SourcemapStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("restack-sm-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    StoreOptions options;
    options.path = dir_.string();
    options.block_cache_bytes = 8u << 20;
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  IngestReport ingest(const std::string& json, UploadMeta meta, const std::string& display = "") {
    meta.kind = SymbolKind::kSourcemap;
    UploadContent content;
    content.bytes = json;
    content.display_name = display;
    auto report = ingestSourcemap(*store_, meta, content, IngestOptions());
    EXPECT_TRUE(report) << report.error().message();
    return report ? *report : IngestReport();
  }
  static stack::JsFrameLine frame(const std::string& url, uint32_t line, uint32_t column,
                                  const std::string& function = "") {
    stack::JsFrameLine out;
    out.url = url;
    out.line = line;
    out.column = column;
    out.function = function;
    return out;
  }
  fs::path dir_;
  std::unique_ptr<SymbolStore> store_;
};

// A map whose segment k on generated line l sits at column 7k and maps to source k % 3, original
// line 2l + k, column k, name k % 5 (every 4th segment has no name).
std::string syntheticMap(int lines, int segments_per_line) {
  std::vector<std::vector<TestSegment>> encoded(lines);
  for (int l = 0; l < lines; ++l) {
    for (int k = 0; k < segments_per_line; ++k) {
      encoded[l].push_back({7 * k, k % 3, 2 * l + k, k, k % 4 == 0 ? -1 : k % 5});
    }
  }
  std::string content;
  for (int i = 0; i < 200; ++i) content += "line " + std::to_string(i + 1) + "\\n";
  return R"({"version":3,"file":"bundle.min.js","sources":["s0.js","s1.js","s2.js"],)"
         R"("sourcesContent":[")" +
         content +
         R"(",null,null],"ignoreList":[2],)"
         R"("names":["n0","n1","n2","n3","n4"],"mappings":")" +
         sourcemap::test::encodeMappings(encoded) + "\"}";
}

TEST_F(SourcemapStoreTest, EveryPositionOfAMultiChunkMapResolves) {
  const int kLines = 3, kSegments = 700;  // 700 segments per line: three chunks per line
  auto report = ingest(syntheticMap(kLines, kSegments), uploadMeta("shop", "1.0", ""));
  EXPECT_GT(report.records, 9u);
  EXPECT_EQ(report.ids.at(0), "bundle.min.js");
  SourcemapResolver resolver(*store_, {});
  EventScope scope = eventScope("shop", "1.0", "web");
  std::mt19937 random(7);
  for (int i = 0; i < 3000; ++i) {
    const uint32_t line = random() % kLines;
    const uint32_t column = random() % (7 * kSegments + 20);
    auto result = resolver.lookup(scope, frame("https://cdn.example/js/bundle.min.js?x=1", line + 1, column + 1));
    ASSERT_TRUE(result) << result.error().message();
    const uint32_t k = std::min<uint32_t>(column / 7, kSegments - 1);
    ASSERT_EQ(result->status, FrameStatus::kSymbolicated);
    ASSERT_FALSE(result->frames.empty());
    const SymbolizedFrame& out = result->frames[0];
    ASSERT_EQ(out.file, "s" + std::to_string(k % 3) + ".js") << line << ":" << column;
    ASSERT_EQ(out.line, 2 * line + k + 1);
    ASSERT_EQ(out.column, k + 1);
    ASSERT_EQ(out.module, "bundle.min.js");
    if (k % 3 == 2) {
      ASSERT_EQ(out.in_app, std::optional<bool>(false));
    } else {
      ASSERT_FALSE(out.in_app.has_value());
    }
    if (k % 3 == 0 && out.line <= 200) {
      // sourcesContent lines read "line N": two above and below the frame's line.
      ASSERT_FALSE(out.context_lines.empty());
      const uint32_t offset = out.line - out.context_first_line;
      ASSERT_EQ(out.context_lines.at(offset), "line " + std::to_string(out.line));
      ASSERT_LE(out.context_lines.size(), 5u);
    }
  }
}

// lookupStack answers every frame of a stack as lookup() does, frame by frame: warm and cold
// frames, two bundles in one stack, a bundle without a map, node built-ins, frames without a
// position, divot columns, more frames than one warm group.
TEST_F(SourcemapStoreTest, StacksAnswerAsFrameByFrame) {
  ingest(syntheticMap(3, 700), uploadMeta("shop", "1.0", ""));
  ingest(syntheticMap(2, 40), uploadMeta("shop", "1.0", "other.js"));
  const EventScope scope = eventScope("shop", "1.0", "web");
  std::mt19937 random(11);
  std::vector<stack::JsFrameLine> lines;
  for (int i = 0; i < 70; ++i) {
    const uint32_t pick = random() % 10;
    const uint32_t line = 1 + random() % 3, column = 1 + random() % 5000;
    stack::JsFrameLine js = pick < 5   ? frame("https://cdn.example/js/bundle.min.js", line, column, "f")
                            : pick < 7 ? frame("https://cdn.example/js/other.js", line, column % 300, "g")
                            : pick < 8 ? frame("https://cdn.example/js/unknown.js", line, column)
                            : pick < 9 ? frame("node:internal/timers", line, column)
                                       : frame("https://cdn.example/js/bundle.min.js", 0, 0);
    if (random() % 4 == 0) js.style = stack::JsStyle::kFirefox;
    lines.push_back(js);
  }
  std::vector<JsFrameQuery> queries;
  for (const auto& js : lines) {
    queries.push_back({&js, js.style == stack::JsStyle::kFirefox ? JsColumns::kDivot : JsColumns::kCallStart});
  }
  SourcemapResolver by_frame(*store_, {});
  SourcemapResolver by_stack(*store_, {});
  for (int pass = 0; pass < 2; ++pass) {  // the first pass is cold, the second warm
    std::vector<FrameLookup> answers;
    ASSERT_TRUE(by_stack.lookupStack(scope, queries, answers).isOk());
    ASSERT_EQ(answers.size(), lines.size());
    for (size_t i = 0; i < lines.size(); ++i) {
      auto expected = by_frame.lookup(scope, lines[i], queries[i].columns);
      ASSERT_TRUE(expected);
      const FrameLookup& got = answers[i];
      ASSERT_EQ(got.status, expected->status) << i;
      EXPECT_EQ(got.reason, expected->reason) << i;
      EXPECT_EQ(got.tier, expected->tier) << i;
      EXPECT_EQ(got.note, expected->note) << i;
      EXPECT_EQ(got.missing_id, expected->missing_id) << i;
      ASSERT_EQ(got.frames.size(), expected->frames.size()) << i;
      for (size_t f = 0; f < got.frames.size(); ++f) {
        const SymbolizedFrame& a = got.frames[f];
        const SymbolizedFrame& b = expected->frames[f];
        EXPECT_EQ(a.file, b.file) << i;
        EXPECT_EQ(a.function, b.function) << i;
        EXPECT_EQ(a.line, b.line) << i;
        EXPECT_EQ(a.column, b.column) << i;
        EXPECT_EQ(a.module, b.module) << i;
        EXPECT_EQ(a.in_app, b.in_app) << i;
        EXPECT_EQ(a.context_first_line, b.context_first_line) << i;
        ASSERT_EQ(a.context_lines.size(), b.context_lines.size()) << i;
        for (size_t c = 0; c < a.context_lines.size(); ++c) EXPECT_EQ(a.context_lines[c], b.context_lines[c]) << i;
      }
    }
  }
}

TEST_F(SourcemapStoreTest, MissingMapsUnmappedPositionsAndScopes) {
  ingest(syntheticMap(1, 10), uploadMeta("shop", "1.0", "index.android.bundle"));
  SourcemapResolver resolver(*store_, {});
  // Another app, and an unknown file, are missing symbols named by the file.
  auto other = resolver.lookup(eventScope("other", "", "web"), frame("https://h/bundle.min.js", 1, 1));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, FrameStatus::kMissingSymbols);
  EXPECT_EQ(other->missing_id, "bundle.min.js");
  EXPECT_EQ(other->reason, FrameReason::kMissingSymbols);
  EXPECT_EQ(other->missing_id_kind, MissingIdKind::kBundle);
  // React Native scopes by build: build 2.0 has no map although 1.0 does.
  auto rn_old = resolver.lookup(eventScope("shop", "1.0", "react_native"), frame("index.android.bundle", 1, 8));
  ASSERT_TRUE(rn_old);
  EXPECT_EQ(rn_old->status, FrameStatus::kSymbolicated);
  auto rn_new = resolver.lookup(eventScope("shop", "2.0", "react_native"), frame("index.android.bundle", 1, 8));
  ASSERT_TRUE(rn_new);
  EXPECT_EQ(rn_new->status, FrameStatus::kMissingSymbols);
  // Line 2 has no mappings: not found.
  auto unmapped = resolver.lookup(eventScope("shop", "", "web"), frame("index.android.bundle", 2, 1));
  ASSERT_TRUE(unmapped);
  EXPECT_EQ(unmapped->status, FrameStatus::kNotFound);
  EXPECT_EQ(unmapped->reason, FrameReason::kPositionNotMapped);
  // A position that resolves is fully restored.
  EXPECT_EQ(rn_old->reason, FrameReason::kNone);
  // Node's built-in modules never have a map: not found, not missing ("listOnTimeout
  // (node:internal/timers:581:17)"), even when a map of the same file name exists.
  ingest(syntheticMap(1, 10), uploadMeta("shop", "", "timers"));
  auto builtin = resolver.lookup(eventScope("shop", "", "web"), frame("node:internal/timers", 1, 1));
  ASSERT_TRUE(builtin);
  EXPECT_EQ(builtin->status, FrameStatus::kNotFound);
  EXPECT_EQ(builtin->note, "node built-in module");
  EXPECT_EQ(builtin->reason, FrameReason::kRuntimeCode);
  // Nor do Hermes's own JavaScript ("at anonymous (address at InternalBytecode.js:1:9016)"), a
  // browser extension's scripts and code made at run time.
  for (const char* url :
       {"InternalBytecode.js", "/InternalBytecode/InternalBytecode.js",
        "chrome-extension://abcdefghijklmnop/content.js", "moz-extension://1234-5678/inject.js",
        "safari-web-extension://A1B2/script.js", "blob:https://h/1234-abcd", "data:text/javascript,x"}) {
    auto hermes = resolver.lookup(eventScope("shop", "1.0", "react_native"), frame(url, 1, 9016));
    ASSERT_TRUE(hermes);
    EXPECT_EQ(hermes->status, FrameStatus::kNotFound) << url;
    EXPECT_EQ(hermes->reason, FrameReason::kRuntimeCode) << url;
  }
}

TEST_F(SourcemapStoreTest, IndexMapSectionsInlineAndByUrl) {
  // Section 0 inline at (0,0); section 1 at line 1 column 10 points at an upload "part.js".
  const std::string inner = sourcemap::test::encodeMappings({{{0, 0, 4, 0, -1}}, {{0, 0, 5, 2, -1}}});
  const std::string part = sourcemap::test::encodeMappings({{{0, 0, 40, 3, -1}, {6, 0, 41, 0, -1}}});
  ingest(R"({"version":3,"file":"part.js","sources":["p.js"],"names":[],"mappings":")" + part + "\"}",
         uploadMeta("shop", "", ""));
  ingest(R"({"version":3,"file":"all.js","sections":[
      {"offset":{"line":0,"column":0},"map":{"version":3,"sources":["i.js"],"names":[],"mappings":")" +
             inner + R"("}},
      {"offset":{"line":1,"column":10},"url":"part.js.map"}]})",
         uploadMeta("shop", "", ""));
  SourcemapResolver resolver(*store_, {});
  const EventScope scope = eventScope("shop", "", "web");
  auto first = resolver.lookup(scope, frame("all.js", 2, 5));  // line 1 col 4: inline section
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(first->frames[0].file, "i.js");
  EXPECT_EQ(first->frames[0].line, 6u);
  auto second = resolver.lookup(scope, frame("all.js", 2, 17));  // col 16 -> part col 6
  ASSERT_TRUE(second);
  ASSERT_EQ(second->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(second->frames[0].file, "p.js");
  EXPECT_EQ(second->frames[0].line, 42u);
  EXPECT_EQ(second->frames[0].module, "all.js");
}

TEST_F(SourcemapStoreTest, HermesBytecodeColumnsAndFunctionOffsets) {
  // Generated columns are virtual bytecode offsets; function 1 starts at 90.
  const std::string mappings = sourcemap::test::encodeMappings({{{0, 0, 0, 0, -1}, {95, 0, 7, 2, -1}}});
  ingest(R"({"version":3,"sources":["app.js"],"names":[],"mappings":")" + mappings +
             R"(","x_hermes_function_offsets":{"0":[0,90]},
             "x_facebook_sources":[[{"names":["<global>","handler"],"mappings":"AAA,ECO"}]]})",
         uploadMeta("shop", "7", "index.android.bundle"));
  SourcemapResolver resolver(*store_, {});
  const EventScope scope = eventScope("shop", "7", "react_native");
  stack::JsFrameLine hermes = frame("index.android.bundle", 1, 95);
  hermes.hermes_bytecode = true;
  auto printed = resolver.lookup(scope, hermes);
  ASSERT_TRUE(printed);
  ASSERT_EQ(printed->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(printed->frames[0].line, 8u);
  EXPECT_EQ(printed->frames[0].column, 3u);
  EXPECT_EQ(printed->frames[0].function, "handler");  // function map: line 8 col 2 starts "handler"
  EXPECT_EQ(printed->tier, "function_map");
  auto triple = resolver.lookupBytecode(scope, "index.android.bundle", 0, 1, 5);  // 90 + 5
  ASSERT_TRUE(triple);
  ASSERT_EQ(triple->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(triple->frames[0].line, 8u);
  auto unknown_function = resolver.lookupBytecode(scope, "index.android.bundle", 0, 9, 0);
  ASSERT_TRUE(unknown_function);
  EXPECT_EQ(unknown_function->status, FrameStatus::kNotFound);
}

// JavaScriptCore prints a call's divot (after the callee): with JsColumns::kDivot the restored
// column moves past the segment's start by the generated distance, or by the original name's
// length where the segment renames an identifier. Call-start columns keep the segment start.
TEST_F(SourcemapStoreTest, DivotColumnsMovePastTheSegmentStart) {
  // Generated "a(x);new Error(m)": `a` (col 0) renamed from "fail" at 3:4; `new` (col 5) at 9:8,
  // `Error` (col 9) unnamed at 9:12.
  const std::string mappings =
      sourcemap::test::encodeMappings({{{0, 0, 2, 4, 0}, {5, 0, 8, 8, -1}, {9, 0, 8, 12, -1}}});
  ingest(R"({"version":3,"sources":["app.js"],"names":["fail"],"mappings":")" + mappings + "\"}",
         uploadMeta("shop", "", "app.js"));
  SourcemapResolver resolver(*store_, {});
  auto column = [&](uint32_t printed, JsColumns columns) {
    stack::JsFrameLine line = frame("https://h/app.js", 1, printed);
    line.style = stack::JsStyle::kFirefox;
    auto found = resolver.lookup(eventScope("shop", "", "web"), line, columns);
    EXPECT_TRUE(found && found->status == FrameStatus::kSymbolicated);
    return found && !found->frames.empty() ? found->frames[0].column : 0u;
  };
  for (int pass = 0; pass < 2; ++pass) {  // the first pass is cold, the second warm
    // `a(` divot at generated column 1 (printed 2): "fail(" -> original column 4 + 4.
    EXPECT_EQ(column(2, JsColumns::kDivot), 9u);
    // `Error(` divot at generated column 14 (printed 15): 5 past the unnamed segment at 12.
    EXPECT_EQ(column(15, JsColumns::kDivot), 18u);
    // At a segment's start nothing moves.
    EXPECT_EQ(column(6, JsColumns::kDivot), 9u);
    EXPECT_EQ(column(15, JsColumns::kCallStart), 13u);
    EXPECT_EQ(column(2, JsColumns::kCallStart), 5u);
  }
}

// A map that says lines only (webpack's for modules it does not transform: every segment at its
// line's column 0) is refined by where the segment's identifier stands on the source line: the
// column, and with it the function of the line the frame is in.
TEST_F(SourcemapStoreTest, LineOnlyMappingsAreRefinedByTheSegmentsIdentifier) {
  const std::string source = "function outer() { return [() => fail(\"fail\"), () => fail(2), () => other(3)]; }";
  // Generated "function o(){return[()=>f(\"fail\"),()=>f(2),()=>g(3)]}": `o` at 9, the calls at
  // 24, 38 and 47; every segment at the line's start, the calls named.
  const std::string generated = "function o(){return[()=>f(\"fail\"),()=>f(2),()=>g(3)]}";
  const std::string mappings = sourcemap::test::encodeMappings(
      {{{0, 0, 0, 0, -1}, {9, 0, 0, 0, 0}, {24, 0, 0, 0, 1}, {38, 0, 0, 0, 1}, {47, 0, 0, 0, 2}}});
  std::string escaped;
  for (const char c : source) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
  ingest(R"({"version":3,"sources":["app.js"],"sourcesContent":[")" + escaped +
             R"("],"names":["outer","fail","other"],"mappings":")" + mappings + "\"}",
         uploadMeta("shop", "", "app.min.js"));
  SourcemapResolver resolver(*store_, {});
  auto at = [&](size_t generated_column) {
    auto found = resolver.lookup(eventScope("shop", "", "web"),
                                 frame("https://h/app.min.js", 1, static_cast<uint32_t>(generated_column + 1)));
    EXPECT_TRUE(found && found->status == FrameStatus::kSymbolicated);
    return found && !found->frames.empty() ? std::make_pair(found->frames[0].column, found->frames[0].function)
                                           : std::make_pair(0u, std::string());
  };
  ASSERT_EQ(generated.substr(24, 1), "f");
  ASSERT_EQ(generated.substr(38, 1), "f");
  ASSERT_EQ(generated.substr(47, 1), "g");
  const uint32_t first_fail = static_cast<uint32_t>(source.find("fail(\"")) + 1;  // not the string "fail"
  const uint32_t second_fail = static_cast<uint32_t>(source.find("fail(2")) + 1;
  const uint32_t other = static_cast<uint32_t>(source.find("other")) + 1;
  for (int pass = 0; pass < 2; ++pass) {  // cold, then warm
    EXPECT_EQ(at(24), std::make_pair(first_fail, std::string("<anonymous>")));
    EXPECT_EQ(at(38), std::make_pair(second_fail, std::string("<anonymous>")));  // the second `fail` segment
    EXPECT_EQ(at(47), std::make_pair(other, std::string("<anonymous>")));
    EXPECT_EQ(at(9), std::make_pair(static_cast<uint32_t>(source.find("outer")) + 1, std::string("outer")));
  }
}

TEST_F(SourcemapStoreTest, HermesCrashFramesGoThroughLookup) {
  // (SegmentID, FunctionID, ByteCodeOffset) lines reach lookupBytecode from the normal lookup().
  const std::string mappings = sourcemap::test::encodeMappings({{{0, 0, 0, 0, -1}, {95, 0, 7, 2, -1}}});
  const std::string map = R"({"version":3,"sources":["app.js"],"names":[],"mappings":")" + mappings +
                          R"(","x_hermes_function_offsets":{"0":[0,90]}})";
  ingest(map, uploadMeta("shop", "7", "index.android.bundle"));
  SourcemapResolver resolver(*store_, {});
  const EventScope scope = eventScope("shop", "7", "react_native");
  const stack::StackLine named = stack::parseStackLine(
      R"({"CJSModuleOffset":0,"FunctionID":1,"ByteCodeOffset":5,"SourceURL":"index.android.bundle"})");
  ASSERT_EQ(named.kindName(), "js_frame");
  auto restored = resolver.lookup(scope, *stack::asJsFrame(named));
  ASSERT_TRUE(restored) << restored.error().message();
  ASSERT_EQ(restored->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(restored->frames[0].line, 8u);
  EXPECT_EQ(restored->frames[0].module, "index.android.bundle");

  // No SourceURL: the build's only map serves it; with two maps the frame says why it cannot.
  const stack::StackLine anonymous = stack::parseStackLine(R"({"FunctionID":1,"ByteCodeOffset":5})");
  auto single = resolver.lookup(scope, *stack::asJsFrame(anonymous));
  ASSERT_TRUE(single);
  ASSERT_EQ(single->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(single->frames[0].line, 8u);
  ingest(R"({"version":3,"sources":["other.js"],"names":[],"mappings":"AAAA"})",
         uploadMeta("shop", "7", "other.bundle"));
  auto ambiguous = resolver.lookup(scope, *stack::asJsFrame(anonymous));
  ASSERT_TRUE(ambiguous);
  EXPECT_EQ(ambiguous->status, FrameStatus::kNotFound);
  EXPECT_NE(ambiguous->note.find("2 source maps"), std::string::npos) << ambiguous->note;
  EXPECT_EQ(ambiguous->reason, FrameReason::kBundleUnknown);

  // A native frame of the crash callstack has no position; a segment without offsets says so.
  auto native = resolver.lookup(scope, *stack::asJsFrame(stack::parseStackLine(R"({"NativeCode":true})")));
  ASSERT_TRUE(native);
  EXPECT_EQ(native->status, FrameStatus::kNotFound);
  EXPECT_EQ(native->reason, FrameReason::kNoPosition);
  auto segment = resolver.lookup(
      scope, *stack::asJsFrame(stack::parseStackLine(
                 R"({"SegmentID":4,"FunctionID":1,"ByteCodeOffset":5,"SourceURL":"index.android.bundle"})")));
  ASSERT_TRUE(segment);
  EXPECT_EQ(segment->status, FrameStatus::kNotFound);
  EXPECT_NE(segment->note.find("segment 4"), std::string::npos) << segment->note;
  EXPECT_EQ(segment->reason, FrameReason::kPositionNotMapped);
}

TEST_F(SourcemapStoreTest, RamBundleModuleNamesRouteToSegmentsAndModuleOffsets) {
  // Segment 0: module 1 starts at generated line 3 (x_facebook_offsets), module 0 does not exist.
  // Segment 1 (x_facebook_segments): its module 2 starts at line 1.
  const std::string main_mappings = sourcemap::test::encodeMappings({{}, {}, {}, {{0, 0, 40, 0, -1}}});
  const std::string segment_mappings = sourcemap::test::encodeMappings({{{0, 0, 10, 0, -1}}, {{0, 0, 20, 0, -1}}});
  const std::string map = R"({"version":3,"file":"index.android.bundle","sources":["main.js"],"names":[],)"
                          R"("mappings":")" +
                          main_mappings +
                          R"(","x_facebook_offsets":[null,3],)"
                          R"("x_facebook_segments":{"1":{"version":3,"sources":["seg.js"],"names":[],)"
                          R"("mappings":")" +
                          segment_mappings + R"(","x_facebook_offsets":[null,null,1]}}})";
  const EventScope scope = eventScope("shop", "9", "react_native");
  {
    // Before any RAM-bundle map is uploaded, module names are missing symbols, like any name.
    SourcemapResolver resolver(*store_, {});
    auto early = resolver.lookup(scope, frame("seg-1.js", 1, 1));
    ASSERT_TRUE(early);
    EXPECT_EQ(early->status, FrameStatus::kMissingSymbols);
    EXPECT_EQ(early->missing_id, "seg-1.js");
  }
  ingest(map, uploadMeta("shop", "9", ""));
  SourcemapResolver resolver(*store_, {});
  struct Case {
    const char* url;
    uint32_t line;
    FrameStatus status;
    std::string file;
    uint32_t original_line;
  };
  for (const Case& c : std::vector<Case>{
           {"https://h/seg-1.js", 1, FrameStatus::kSymbolicated, "seg.js", 11},  // segment 1 line 0
           {"seg-1.js", 2, FrameStatus::kSymbolicated, "seg.js", 21},
           {"seg-1_2.js", 1, FrameStatus::kSymbolicated, "seg.js", 21},  // module 2 starts at line 1
           {"1.js", 1, FrameStatus::kSymbolicated, "main.js", 41},       // module 1 starts at line 3
           {"seg-0_1.js", 1, FrameStatus::kSymbolicated, "main.js", 41},
           {"0.js", 1, FrameStatus::kNotFound, "", 0},        // null offset: no module 0
           {"seg-1_5.js", 1, FrameStatus::kNotFound, "", 0},  // past the segment's offsets
           {"seg-7.js", 1, FrameStatus::kNotFound, "", 0},    // no segment 7
       }) {
    SCOPED_TRACE(c.url);
    for (int pass = 0; pass < 2; ++pass) {  // cold, then from the cached route
      auto result = resolver.lookup(scope, frame(c.url, c.line, 1));
      ASSERT_TRUE(result) << result.error().message();
      ASSERT_EQ(result->status, c.status) << result->note;
      if (c.status == FrameStatus::kSymbolicated) {
        EXPECT_EQ(result->frames[0].file, c.file);
        EXPECT_EQ(result->frames[0].line, c.original_line);
      } else {
        EXPECT_FALSE(result->note.empty());
      }
    }
  }
  // The bundle's own name still serves the whole segment 0 map, without module offsets.
  auto bundle = resolver.lookup(scope, frame("index.android.bundle", 4, 1));
  ASSERT_TRUE(bundle);
  ASSERT_EQ(bundle->status, FrameStatus::kSymbolicated);
  EXPECT_EQ(bundle->frames[0].line, 41u);
  // Another build has no RAM bundle: its module names stay missing.
  auto other = resolver.lookup(eventScope("shop", "10", "react_native"), frame("seg-1.js", 1, 1));
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, FrameStatus::kMissingSymbols);
}

TEST_F(SourcemapStoreTest, TinyCacheAndThreadsStayCorrect) {
  ingest(syntheticMap(2, 600), uploadMeta("shop", "", ""));
  SourcemapResolverOptions options;
  options.cache_bytes = 4096;  // forces constant eviction
  SourcemapResolver resolver(*store_, options);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 random(t);
      for (int i = 0; i < 2000; ++i) {
        const uint32_t line = random() % 2, column = random() % 4200;
        auto result = resolver.lookup(eventScope("shop", "", "web"), frame("bundle.min.js", line + 1, column + 1));
        const uint32_t k = std::min<uint32_t>(column / 7, 599);
        if (!result || result->status != FrameStatus::kSymbolicated || result->frames[0].line != 2 * line + k + 1) {
          ++failures;
          continue;
        }
        // Context lines are shared with the cache, which these lookups keep dropping: the answer
        // must hold them alive and read right.
        const SymbolizedFrame& out = result->frames[0];
        if (k % 3 == 0 && out.line <= 200 &&
            (out.context_lines.empty() ||
             out.context_lines[out.line - out.context_first_line] != "line " + std::to_string(out.line))) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(SourcemapStoreTest, MalformedUploadsAreRefusedWithoutPartialPointers) {
  UploadMeta meta = uploadMeta("shop", "", "");
  UploadContent content;
  const std::string bad = R"({"version":3,"file":"x.js","sources":["a"],"names":[],"mappings":"AAAA;ACAA"})";
  content.bytes = bad;
  auto report = ingestSourcemap(*store_, meta, content, IngestOptions());
  ASSERT_FALSE(report);
  EXPECT_NE(report.error().message().find("source index 1"), std::string::npos) << report.error().message();
  SourcemapResolver resolver(*store_, {});
  auto result = resolver.lookup(eventScope("shop", "", ""), frame("x.js", 1, 1));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, FrameStatus::kMissingSymbols);

  const std::string unnamed = R"({"version":3,"sources":[],"names":[],"mappings":""})";
  content.bytes = unnamed;
  auto no_name = ingestSourcemap(*store_, meta, content, IngestOptions());
  ASSERT_FALSE(no_name);
  EXPECT_EQ(no_name.error().code(), ErrorCode::kInvalidArgument);

  IngestOptions small;
  small.max_input_bytes = 10;
  content.bytes = bad;
  auto too_large = ingestSourcemap(*store_, meta, content, small);
  ASSERT_FALSE(too_large);
  EXPECT_EQ(too_large.error().code(), ErrorCode::kTooLarge);
}

TEST_F(SourcemapStoreTest, CorruptRecordsLeaveTheFrameNotFoundWithWhy) {
  ingest(syntheticMap(1, 5), uploadMeta("shop", "", ""));
  // Overwrite every chunk with a future version and with garbage.
  rocksdb::WriteBatch batch;
  const uint64_t id = sourcemap_records::hashBytes(syntheticMap(1, 5));
  batch.Put(store_->family(sourcemap_records::kSourcemapFamily), sourcemap_records::chunkKey(id, 0, 0),
            std::string("\x07zz", 3));
  ASSERT_TRUE(store_->write(batch));
  SourcemapResolver resolver(*store_, {});
  auto result = resolver.lookup(eventScope("shop", "", ""), frame("bundle.min.js", 1, 1));
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(result->status, FrameStatus::kNotFound);
  EXPECT_NE(result->note.find("sourcemap mapping chunk record g"), std::string::npos) << result->note;
  EXPECT_NE(result->note.find("format version 7"), std::string::npos) << result->note;
  EXPECT_EQ(result->reason, FrameReason::kMalformedSymbols);
  for (int i = 0; i < 200; ++i) {
    std::string garbage(1 + i % 40, '\x01');
    for (size_t j = 1; j < garbage.size(); ++j) garbage[j] = static_cast<char>((i * 31 + j * 17) & 0xff);
    EXPECT_FALSE(sourcemap_records::decodeChunk(garbage, 0, 0) && i % 40 == 0 && false);
    (void)sourcemap_records::decodeHeader(garbage);
    (void)sourcemap_records::decodeSource(garbage);
    (void)sourcemap_records::decodeText(garbage);
  }
}

TEST(SourcemapRecords, WorkedExampleBytes) {
  // The example at the top of sourcemap_records.h.
  sourcemap_records::MappingChunk chunk;
  chunk.names = {"boom"};
  chunk.segments = {{0, 0, 0, 0, 0, -1}, {0, 4, 0, 0, 4, 0}};
  const std::string bytes = sourcemap_records::encodeChunk(chunk);
  const std::string expected(
      "\x03\xff\xff\xff\xff\x0f\xff\xff\xff\xff\x0f\x01\x04"
      "boom\x02\x00\x00\x01\x00\x00\x00\x00\x04\x01\x00\x08\x01",
      30);
  EXPECT_EQ(bytes, expected);
  auto decoded = sourcemap_records::decodeChunk(bytes, 0, 0);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->find(0, 9)->original_column, 4u);
  EXPECT_EQ(decoded->names[decoded->find(0, 9)->name], "boom");
  // Version 1 records (written before module offsets existed) are still read.
  std::string version1 = bytes;
  version1[0] = '\x01';
  EXPECT_TRUE(sourcemap_records::decodeChunk(version1, 0, 0));
  sourcemap_records::MapHeader header;
  header.file = "a.js";
  std::string header_v1 = sourcemap_records::encodeHeader(header);
  header_v1.pop_back();  // drop the version-2 module count
  header_v1[0] = '\x01';
  auto old_header = sourcemap_records::decodeHeader(header_v1);
  ASSERT_TRUE(old_header) << old_header.error().message();
  EXPECT_EQ(old_header->file, "a.js");
  EXPECT_TRUE(old_header->module_offsets.empty());
}

// MapState::find against a scan of every cached chunk, with chunks cached in random order (as frames
// fill the cache) and starting on the same line as others, on later lines or several lines apart
// (the per-line directory of chunk starts, and the column buckets of a line with many of them, must
// follow every insertion).
TEST(SourcemapCacheTest, MapStateFindsTheChunkCoveringEachPositionWhateverTheOrderChunksAreCached) {
  using sourcemap_cache::ChunkSlot;
  using sourcemap_cache::MapState;
  using sourcemap_cache::positionKey;
  std::mt19937 random(7);
  // 60 random layouts, each cached in a random order and checked at every position after every
  // insertion (a sanitizer build runs this at -O0).
  for (int round = 0; round < 60; ++round) {
    // Contiguous chunks: each ends where the next starts, the last one is open.
    std::vector<std::pair<uint32_t, uint32_t>> starts;
    uint32_t line = random() % 3, column = random() % 50;
    // One round in twenty: a minified bundle's long lines, up to 300 chunks on few lines (column buckets).
    const bool long_lines = round % 20 == 0;
    const size_t count = 1 + random() % (long_lines ? 300 : 40);
    uint32_t max_column = 0;
    for (size_t i = 0; i < count; ++i) {
      starts.emplace_back(line, column);
      max_column = std::max(max_column, column);
      if (random() % (long_lines ? 40 : 2) == 0) {
        line += 1 + random() % 5;
        column = random() % 30;
      } else {
        column += 1 + random() % 100;
      }
    }
    std::vector<std::shared_ptr<sourcemap_cache::CachedChunk>> chunks;
    for (size_t i = 0; i < count; ++i) {
      sourcemap_records::MappingChunk chunk;
      chunk.start_line = starts[i].first;
      chunk.start_column = starts[i].second;
      if (i + 1 < count) {
        chunk.end_line = starts[i + 1].first;
        chunk.end_column = starts[i + 1].second;
      }
      sourcemap_records::Segment segment;
      segment.line = chunk.start_line;
      segment.column = chunk.start_column;
      segment.source = 0;
      chunk.segments.push_back(segment);
      chunks.push_back(std::make_shared<sourcemap_cache::CachedChunk>(chunk));
    }
    std::vector<size_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    MapState state;
    std::vector<bool> cached(count, false);
    for (size_t inserted = 0; inserted < count; ++inserted) {
      const size_t next = order[inserted];
      state.insert(chunks[next]);
      cached[next] = true;
      // Long rounds are checked every 25 insertions and after the last, on every 37th column.
      if (long_lines && inserted % 25 != 24 && inserted + 1 != count) continue;
      for (uint32_t at_line = 0; at_line < line + 3; ++at_line) {
        for (uint32_t at_column = 0; at_column < max_column + 200; at_column += long_lines ? 37 : 3) {
          const uint64_t key = positionKey(at_line, at_column);
          // The chunk of the last cached start at or before the position, if the position is before its end.
          const ChunkSlot* expected = nullptr;
          for (size_t i = count; i-- > 0;) {
            if (!cached[i] || positionKey(starts[i].first, starts[i].second) > key) continue;
            for (const ChunkSlot& slot : state.slots) {
              if (slot.chunk == chunks[i] && key < positionKey(slot.chunk->end_line, slot.chunk->end_column)) {
                expected = &slot;
              }
            }
            break;
          }
          ASSERT_EQ(state.find(at_line, at_column), expected)
              << "round " << round << ", position " << at_line << ":" << at_column;
        }
      }
    }
  }
}

// The names and context lines a source-map answer lends a frame (SymbolizedFrame::pin, FrameString::borrow,
// ContextLines::borrow): one reference for the frame, kept borrowed through the frame's moves (vector growth, the
// worker's OutputFrame), copied as soon as they leave their frame on their own or the frame is copied, so nothing
// outlives what keeps it alive.
TEST(SymbolizedFrameTest, BorrowedNamesAndLinesFollowTheirPinAndAreCopiedWhenTheyLeaveIt) {
  struct Cached {
    std::string path = "src/components/a-rather-long-path/widget.tsx";
    std::string function = "render";
    std::vector<std::string> lines = {"l1", "l2", "l3", "l4"};
  };
  auto cached = std::make_shared<Cached>();
  auto lend = [&cached](SymbolizedFrame& frame) {
    frame.pin = cached;
    frame.file.borrow(&cached->path);
    frame.function.borrow(&cached->function);
    frame.context_lines.borrow(&cached->lines, 1, 2);
  };
  auto expectContent = [](const SymbolizedFrame& frame) {
    EXPECT_EQ(frame.file, "src/components/a-rather-long-path/widget.tsx");
    EXPECT_EQ(frame.function, "render");
    ASSERT_EQ(frame.context_lines.size(), 2u);
    EXPECT_EQ(frame.context_lines[0], "l2");
    EXPECT_EQ(frame.context_lines[1], "l3");
  };
  auto expectBorrowed = [&cached](const SymbolizedFrame& frame) {
    EXPECT_TRUE(frame.file.borrowed());
    EXPECT_EQ(frame.file.data(), cached->path.data());
    EXPECT_TRUE(frame.function.borrowed());
    EXPECT_EQ(frame.function.data(), cached->function.data());
    EXPECT_TRUE(frame.context_lines.borrowed());
    EXPECT_EQ(&frame.context_lines[0], &cached->lines[1]);
  };
  auto expectOwned = [&cached](const SymbolizedFrame& frame) {
    EXPECT_TRUE(frame.file.owned());
    EXPECT_NE(frame.file.data(), cached->path.data());
    EXPECT_TRUE(frame.function.owned());
    EXPECT_FALSE(frame.context_lines.borrowed());
    EXPECT_NE(&frame.context_lines[0], &cached->lines[1]);
  };

  SymbolizedFrames frames;
  lend(frames.emplace_back());
  EXPECT_EQ(cached.use_count(), 2);  // one reference for the frame, whatever it borrows
  expectContent(frames[0]);
  expectBorrowed(frames[0]);

  // Moves keep the frame's borrowings (the pin moves with them); the moved-from frame lends nothing.
  frames.emplace_back();  // the inline frame moves to the heap
  expectBorrowed(frames[0]);
  SymbolizedFrame moved(std::move(frames[0]));
  expectContent(moved);
  expectBorrowed(moved);
  EXPECT_FALSE(frames[0].file.borrowed());
  EXPECT_FALSE(frames[0].context_lines.borrowed());
  EXPECT_TRUE(frames[0].context_lines.empty());
  EXPECT_EQ(cached.use_count(), 2);
  SymbolizedFrame assigned;
  lend(assigned);
  assigned = std::move(moved);
  expectBorrowed(assigned);
  EXPECT_EQ(cached.use_count(), 2);

  // A copy of the frame, or a name or the lines taken out of it on their own, are copies.
  SymbolizedFrame copy(assigned);
  expectContent(copy);
  expectOwned(copy);
  SymbolizedFrame copy_assigned;
  copy_assigned = assigned;
  expectOwned(copy_assigned);
  FrameString file(std::move(assigned.file));
  EXPECT_TRUE(file.owned());
  EXPECT_EQ(file, cached->path);
  FrameString function;
  function = std::move(assigned.function);
  EXPECT_TRUE(function.owned());
  ContextLines lines(std::move(assigned.context_lines));
  EXPECT_FALSE(lines.borrowed());
  ContextLines lines_assigned;
  lend(assigned);
  lines_assigned = assigned.context_lines;
  EXPECT_FALSE(lines_assigned.borrowed());

  // What was copied does not depend on the cached strings any more.
  assigned = SymbolizedFrame();
  cached->path.assign(100, 'x');
  cached->function = "changed";
  cached->lines.assign(4, "changed");
  cached.reset();
  cached = std::make_shared<Cached>();  // for expectOwned's comparisons
  EXPECT_EQ(copy.file, "src/components/a-rather-long-path/widget.tsx");
  EXPECT_EQ(copy.function, "render");
  EXPECT_EQ(copy.context_lines[1], "l3");
  EXPECT_EQ(copy_assigned.function, "render");
  EXPECT_EQ(file, "src/components/a-rather-long-path/widget.tsx");
  EXPECT_EQ(function, "render");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "l2");
  EXPECT_EQ(lines_assigned[1], "l3");
}

}  // namespace
}  // namespace restack
