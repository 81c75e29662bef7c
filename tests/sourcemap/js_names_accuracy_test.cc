// Function names of restored JavaScript frames against node's stack of the original, unbundled
// run (docs/accuracy.md, "JavaScript and React Native"). fixtures/make_names_corpus.js bundles
// fixtures/names_app (real npm packages throwing from their own code) with esbuild --minify,
// with esbuild + terser, with webpack 5 in production mode and with rollup 4 (Vite's production
// builds: node-resolve, json and commonjs plugins) minified by its terser plugin or by esbuild
// over its output, runs the programs and pairs their frames. Each build is uploaded three ways:
// the map with sourcesContent; the map without it plus the minified file; the map without it
// alone (the printed minified names stay: the baseline). Needs the npm tools of
// scripts/setup.d/sourcemap.sh and the bundlers of scripts/setup.d/bundlers.sh.
//
// RESTACK_JS_NAMES_FRAMES=<file>: every compared frame is appended to <file> as a JSON line
// (test, build, upload, the bundled frame, Restack's function, file, line and column, the
// original run's frame), for reading the differences frame by frame.
//
// A restored name equals the original run's when it is V8's function name (CallSite
// getFunctionName: the name or the inferred one, "pp$4.raise", "get strictParse"), or the name V8
// printed without "new "/"async " and " [as m]" ("SourceChecker.parseWithAcorn"), or
// "Declaring.m" where V8 printed the receiver's class ("Parser.raise" for a method declared in
// Tokenizer: the receiver is runtime state no map records). An anonymous function equals
// "<anonymous>" (or "<global>" for module code). Measured figures and the frames that still
// differ are in docs/accuracy.md; the bounds below sit just under them.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <set>

#include "formats/stack/js_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/sourcemap/sourcemap_minified.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"
#include "symbolstore/symbolizer.h"
#include "worker/pipeline/event_processor.h"
#include "worker/pipeline/json_writer.h"

namespace restack {
namespace {

// The array `value` holds, returned by value: a range-for over `value.get_array().value()` iterates
// an array left in a temporary that is destroyed before the loop starts (C++20; AddressSanitizer's
// stack-use-after-scope).
simdjson::dom::array arrayOf(simdjson::simdjson_result<simdjson::dom::element> value) {
  return value.get_array().value();
}

namespace fs = std::filesystem;

const fs::path kNodeModules = fs::path(RESTACK_DEPS_DIR) / "node" / "node_modules";
const fs::path kBundlers = fs::path(RESTACK_DEPS_DIR) / "bundlers" / "node_modules";

// RESTACK_JS_NAMES_FRAMES (see above): one JSON line per compared frame, appended.
void recordFrame(const std::string& build, const std::string& upload, const std::string& raw,
                 const std::string& function, const SymbolizedFrame* restored, simdjson::dom::element expected) {
  static const char* const path = std::getenv("RESTACK_JS_NAMES_FRAMES");
  if (path == nullptr || *path == '\0') return;
  static std::ofstream out(path, std::ios::app);
  pipeline::JsonWriter line;
  line.beginObject();
  line.key("test");
  line.string(::testing::UnitTest::GetInstance()->current_test_info()->name());
  line.key("build");
  line.string(build);
  line.key("upload");
  line.string(upload);
  line.key("raw");
  line.string(raw);
  line.key("function");
  line.string(function);
  if (restored != nullptr) {
    line.key("file");
    line.string(restored->file.str());
    line.key("line");
    line.unsignedNumber(restored->line);
    line.key("column");
    line.unsignedNumber(restored->column);
  }
  line.key("expected");
  line.raw(simdjson::minify(expected));
  line.endObject();
  out << line.take() << "\n" << std::flush;
}

struct Expected {
  std::optional<std::string> fn;
  std::optional<std::string> type;
  std::string printed;  // "at Parser.raise (file:l:c)"
};

// The function part of a printed V8 frame, without "new " / "async " and " [as m]".
std::string printedName(const std::string& printed) {
  std::string text = printed.substr(printed.rfind("at ", 0) == 0 ? 3 : 0);
  const size_t open = text.rfind(" (");
  if (open == std::string::npos) return "";  // "at file:l:c": no name
  text = text.substr(0, open);
  for (const char* prefix : {"async ", "new "}) {
    if (text.rfind(prefix, 0) == 0) text = text.substr(std::string(prefix).size());
  }
  if (const size_t as = text.find(" [as "); as != std::string::npos) text = text.substr(0, as);
  return text;
}

bool namesEqual(const std::string& restored, const Expected& expected) {
  if (!expected.fn || expected.fn->empty()) return restored == "<anonymous>" || restored == "<global>";
  if (restored == *expected.fn || restored == printedName(expected.printed)) return true;
  const std::string suffix = "." + *expected.fn;
  return expected.type && restored.size() > suffix.size() && restored.ends_with(suffix);
}

class JsNamesAccuracyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {".bin/esbuild", ".bin/terser", "acorn", "@babel/parser", "commander"}) {
      ASSERT_TRUE(fs::exists(kNodeModules / tool))
          << (kNodeModules / tool).string() << " is missing: run scripts/setup.sh (scripts/setup.d/sourcemap.sh)";
    }
    for (const char* tool : {"webpack", "rollup", "@rollup/plugin-terser", "@rollup/plugin-commonjs",
                             "@rollup/plugin-node-resolve", "@rollup/plugin-json", "@swc/core"}) {
      ASSERT_TRUE(fs::exists(kBundlers / tool))
          << (kBundlers / tool).string() << " is missing: run scripts/setup.sh (scripts/setup.d/bundlers.sh)";
    }
    work_ = fs::temp_directory_path() / ("restack-js-names-" + std::to_string(::getpid()));
    fs::remove_all(work_);
    fs::create_directories(work_);
    StoreOptions options;
    options.path = (work_ / "store").string();
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    if (!HasFailure()) fs::remove_all(work_);
  }
  // Bundles fixtures/<program> and runs it (make_names_corpus.js): names_manifest.json.
  void makeCorpus(const std::string& program) {
    const std::string command =
        "node " + (fs::path(RESTACK_SOURCE_DIR) / "tests/sourcemap/fixtures/make_names_corpus.js").string() + " " +
        work_.string() + " " + kNodeModules.string() + " " + program + " 2>" + (work_ / "make.log").string();
    ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << std::ifstream(work_ / "make.log").rdbuf();
  }
  struct Variant {
    const char* label;
    bool with_sources;  // else the map without sourcesContent
    bool with_minified_file;
    double required;           // share of all frames whose names must be equal
    double required_recorded;  // share of the frames whose name the upload records
    // The same two for a build whose map says lines only (webpack's, `line_only_map` in the
    // manifest), where only the minified file tells functions of one line apart; negative: as above.
    double line_only_required = -1, line_only_required_recorded = -1;
    // The same two for a build that runs CommonJS modules inside functions of the bundler's
    // (rollup's commonjs plugin: `requireMain`, `wrapped_entry` in the manifest), which writes
    // export objects of its own that the map names where the source declared something else
    // (`ms` for `module.exports`: docs/accuracy.md); negative: as above.
    double wrapped_entry_required = -1, wrapped_entry_required_recorded = -1;
    // The same two for a build whose map names no renamed identifier and maps statements rather
    // than tokens (SWC's, `sparse_names`): a name the map never recorded cannot come back without
    // sourcesContent, and a frame inside code the minifier inlined maps into the inlined
    // function's text; negative: as above.
    double sparse_names_required = -1, sparse_names_required_recorded = -1;
  };
  // Uploads each build of the corpus the ways `variants` say and compares every frame's restored
  // name with the original run's; returns the table rows.
  std::string measure(const std::vector<Variant>& variants, size_t min_frames);

  void upload(const std::string& app, const std::string& path) {
    UploadMeta meta;
    meta.kind = SymbolKind::kSourcemap;
    meta.app = app;
    meta.name = "app.min.js";
    UploadContent content;
    content.path = path;
    content.display_name = fs::path(path).filename().string();
    auto report = ingestSourcemap(*store_, meta, content, IngestOptions());
    ASSERT_TRUE(report) << path << ": " << report.error().message();
  }
  fs::path work_;
  std::unique_ptr<SymbolStore> store_;
};

std::string JsNamesAccuracyTest::measure(const std::vector<Variant>& variants, size_t min_frames) {
  simdjson::dom::parser parser;
  simdjson::dom::element manifest = parser.load((work_ / "names_manifest.json").string()).value();
  SourcemapResolver resolver(*store_, {});
  std::ostringstream table;
  for (simdjson::dom::element build : arrayOf(manifest["builds"])) {
    const std::string name(build["name"].get_string().value());
    for (simdjson::dom::element unpaired : arrayOf(build["unpaired"])) {
      std::cout << "  [unpaired scenario] " << name << ": " << std::string_view(unpaired.get_string().value()) << "\n";
    }
    const std::string map(build["map"].get_string().value());
    const std::string bare(build["bare_map"].get_string().value());
    const std::string bundle(build["bundle"].get_string().value());
    // What a map without sourcesContent plus the minified file can say at all: the map's `names`
    // and the minified text. An original name in neither was dropped by the minifier and never
    // recorded; such frames are counted on their own ("not recorded").
    std::set<std::string> map_names;
    simdjson::dom::parser map_parser;
    for (simdjson::dom::element entry : arrayOf(map_parser.load(bare)["names"])) {
      map_names.emplace(entry.get_string().value());
    }
    std::ostringstream minified;
    minified << std::ifstream(bundle).rdbuf();
    const std::string minified_text = minified.str();
    for (const Variant& variant : variants) {
      SCOPED_TRACE(name + ", " + variant.label);
      const std::string app = name + "/" + variant.label;
      upload(app, variant.with_sources ? map : bare);
      if (variant.with_minified_file) upload(app, bundle);
      EventScope scope{app, "", "javascript", {}};
      int frames = 0, equal = 0, not_recorded = 0, shown = 0;
      for (simdjson::dom::element frame : arrayOf(build["frames"])) {
        const std::string raw(frame["raw"].get_string().value());
        simdjson::dom::element original = frame["expected"];
        Expected expected;
        std::string_view text;
        if (!original["fn"].get_string().get(text)) expected.fn = std::string(text);
        if (!original["type"].get_string().get(text)) expected.type = std::string(text);
        expected.printed = std::string(original["printed"].get_string().value());
        const stack::StackLine line = stack::parseStackLine(raw);
        EXPECT_EQ(line.kindName(), "js_frame") << raw;
        const stack::JsFrameLine* js = stack::asJsFrame(line);
        if (js == nullptr) continue;
        auto result = resolver.lookup(scope, *js);
        EXPECT_TRUE(result) << result.error().message();
        if (!result) continue;
        ++frames;
        const bool symbolicated = result->status == FrameStatus::kSymbolicated && !result->frames.empty();
        const std::string restored = symbolicated ? result->frames[0].function.str() : "(not restored)";
        recordFrame(name, variant.label, raw, restored, symbolicated ? &result->frames.back() : nullptr, original);
        // Every identifier of the original name ("pp$4.raise": pp$4, raise; "get size": size)
        // must be in what was uploaded.
        bool recorded = true;
        if (!variant.with_sources && expected.fn) {
          std::string parts = *expected.fn;
          for (const char* accessor : {"get ", "set "}) {
            if (parts.starts_with(accessor)) parts.erase(0, 4);
          }
          for (size_t at = 0; at <= parts.size() && recorded;) {
            const size_t dot = std::min(parts.find('.', at), parts.size());
            const std::string part = parts.substr(at, dot - at);
            recorded = part.empty() || map_names.count(part) > 0 ||
                       (variant.with_minified_file && minified_text.find(part) != std::string::npos);
            at = dot + 1;
          }
        }
        if (namesEqual(restored, expected)) {
          ++equal;
        } else if (!recorded) {
          ++not_recorded;
          if (variant.required > 0)
            std::cout << "  [name not recorded] " << name << ", " << variant.label << ": " << raw << " -> \""
                      << restored << "\"; original run " << expected.printed << "\n";
        } else if (variant.required > 0 && shown++ < 12) {
          std::cout << "  [name differs] " << name << ", " << variant.label << ": " << raw << " -> \"" << restored
                    << "\"; original run " << expected.printed << " (function name " << expected.fn.value_or("null")
                    << ")\n";
        }
      }
      EXPECT_GE(static_cast<size_t>(frames), min_frames);
      table << "| " << name << " | " << variant.label << " | " << frames << " | " << equal << " (" << std::fixed
            << std::setprecision(1) << 100.0 * equal / std::max(frames, 1) << " %) | " << not_recorded << " |\n";
      bool line_only = false, wrapped_entry = false, sparse_names = false;
      (void)build["line_only_map"].get_bool().get(line_only);
      (void)build["wrapped_entry"].get_bool().get(wrapped_entry);
      (void)build["sparse_names"].get_bool().get(sparse_names);
      double required = variant.required, required_recorded = variant.required_recorded;
      if (line_only && variant.line_only_required >= 0) required = variant.line_only_required;
      if (line_only && variant.line_only_required_recorded >= 0) {
        required_recorded = variant.line_only_required_recorded;
      }
      if (wrapped_entry && variant.wrapped_entry_required >= 0) required = variant.wrapped_entry_required;
      if (wrapped_entry && variant.wrapped_entry_required_recorded >= 0) {
        required_recorded = variant.wrapped_entry_required_recorded;
      }
      if (sparse_names && variant.sparse_names_required >= 0) required = variant.sparse_names_required;
      if (sparse_names && variant.sparse_names_required_recorded >= 0) {
        required_recorded = variant.sparse_names_required_recorded;
      }
      EXPECT_GE(equal, required * frames) << equal << " of " << frames << " names equal";
      EXPECT_GE(equal, required_recorded * (frames - not_recorded)) << not_recorded << " not recorded";
    }
  }
  return table.str();
}

// Real npm packages throwing from their own code (fixtures/names_app).
TEST_F(JsNamesAccuracyTest, RestoredNamesEqualTheOriginalRun) {
  makeCorpus("names_app");
  if (HasFatalFailure()) return;
  // The baseline first: the minified file's names belong to the map's content (its id), so
  // once uploaded they serve every upload of the same map bytes.
  const std::string table = measure(
      {
          {"map without sourcesContent (baseline)", false, false, 0.0, 0.0},
          {"map without sourcesContent + minified file", false, true, 0.99, 0.99, 0.985, 0.99, 0.985, 0.99, 0.72, 0.94},
          {"map with sourcesContent", true, false, 0.995, 0.995},
      },
      400);
  std::cout << "| build | upload | frames | names equal | not recorded |\n|---|---|---|---|---|\n" << table;
}

// A second set of packages (fixtures/names_app2), so the figure is not fitted to one set.
TEST_F(JsNamesAccuracyTest, SecondLibrarySet) {
  makeCorpus("names_app2");
  if (HasFatalFailure()) return;
  const std::string table = measure(
      {
          {"map without sourcesContent + minified file", false, true, 0.99, 0.99, 0.94, 0.96, 0.96, 0.96, 0.85, 0.93},
          {"map with sourcesContent", true, false, 0.99, 0.99, -1, -1, -1, -1, 0.95, 0.95},
      },
      40);
  std::cout << "| build | upload | frames | names equal | not recorded |\n|---|---|---|---|---|\n" << table;
}

// Each way V8 names a function, one scenario each (fixtures/names_rules): every name must equal
// the original run's, from the minified file and from sourcesContent alike.
TEST_F(JsNamesAccuracyTest, InferenceRulesOfV8) {
  makeCorpus("names_rules");
  if (HasFatalFailure()) return;
  const std::string table = measure(
      {
          {"map without sourcesContent + minified file", false, true, 0.9, 1.0},
          {"map with sourcesContent", true, false, 1.0, 1.0},
      },
      60);
  std::cout << "| build | upload | frames | names equal | not recorded |\n|---|---|---|---|---|\n" << table;
}

// JavaScriptCore (Safari, React Native on JSC): the rules program and its bundles run in jsc
// (Debian's libjavascriptcoregtk-4.0-bin); every bundled frame ("fn@url:line:column") must
// restore to the line of the original JSC run's frame (columns are counted, see below). JSC prints a function's own
// `name`
// (`size`, `plain`, "" for an anonymous literal) where V8 infers one: a restored name counts as
// equal when its last part is JSC's name ("Store.load" for `load`, "set size" for `size`).
TEST_F(JsNamesAccuracyTest, JavaScriptCoreRunsRestoreToTheOriginalRun) {
  const fs::path jsc = "/usr/bin/jsc";
  ASSERT_TRUE(fs::exists(jsc)) << "jsc is missing: run scripts/setup.sh (Debian's libjavascriptcoregtk-4.0-bin)";
  const std::string command =
      "node " + (fs::path(RESTACK_SOURCE_DIR) / "tests/sourcemap/fixtures/make_names_corpus.js").string() + " " +
      work_.string() + " " + kNodeModules.string() + " names_rules " + jsc.string() + " 2>" +
      (work_ / "make.log").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << std::ifstream(work_ / "make.log").rdbuf();
  simdjson::dom::parser parser;
  simdjson::dom::element manifest = parser.load((work_ / "names_manifest.json").string()).value();
  SourcemapResolver resolver(*store_, {});
  std::ostringstream table;
  table << "| build | upload | JSC frames | lines equal | columns equal | JSC-named frames | names equal | "
           "whole stacks as Safari web events: positions equal |\n"
        << "|---|---|---|---|---|---|---|---|\n";
  for (simdjson::dom::element build : arrayOf(manifest["builds"])) {
    const std::string name(build["name"].get_string().value());
    for (simdjson::dom::element unpaired : arrayOf(build["jsc_unpaired"])) {
      std::cout << "  [unpaired scenario] " << name << ": " << std::string_view(unpaired.get_string().value()) << "\n";
    }
    const std::string map(build["map"].get_string().value());
    const std::string bare(build["bare_map"].get_string().value());
    const std::string bundle(build["bundle"].get_string().value());
    for (const bool with_sources : {false, true}) {
      const std::string label = with_sources ? "map with sourcesContent" : "map without sourcesContent + minified file";
      const std::string app = "jsc/" + name + "/" + label;
      upload(app, with_sources ? map : bare);
      if (!with_sources) upload(app, bundle);
      EventScope scope{app, "", "web", {}};
      int frames = 0, lines = 0, positions = 0, named = 0, names = 0;
      for (simdjson::dom::element frame : arrayOf(build["jsc_frames"])) {
        const std::string raw(frame["raw"].get_string().value());
        simdjson::dom::element original = frame["expected"];
        const stack::StackLine line = stack::parseStackLine(raw);
        EXPECT_EQ(line.kindName(), "js_frame") << raw;
        const stack::JsFrameLine* js = stack::asJsFrame(line);
        if (js == nullptr) continue;
        auto result = resolver.lookup(scope, *js, JsColumns::kDivot);
        EXPECT_TRUE(result) << result.error().message();
        if (!result) continue;
        ++frames;
        const bool restored = result->status == FrameStatus::kSymbolicated && !result->frames.empty();
        const SymbolizedFrame got = restored ? result->frames.back() : SymbolizedFrame{};
        recordFrame(name, label, raw, restored ? result->frames.front().function.str() : "(not restored)",
                    restored ? &got : nullptr, original);
        const std::string printed(original["printed"].get_string().value());
        const bool same_line =
            restored && got.file.ends_with("/main.js") && got.line == original["line"].get_uint64().value();
        lines += same_line;
        const bool same_column = got.column == original["column"].get_uint64().value();
        positions += same_line && same_column;
        if (same_line && !same_column) {
          std::cout << "  [column differs] " << name << ", " << label << ": " << raw << " -> " << got.line << ":"
                    << got.column << "; original JSC run " << printed << "\n";
        }
        if (!same_line) {
          std::cout << "  [position differs] " << name << ", " << label << ": " << raw << " -> " << got.file << ":"
                    << got.line << ":" << got.column << "; original JSC run " << printed << "\n";
        }
        std::string_view jsc_name;
        if (original["fn"].get_string().get(jsc_name) || jsc_name.empty()) continue;
        ++named;
        std::string function = restored ? result->frames.front().function.str() : "";
        for (const char* prefix : {"get ", "set "}) {
          if (function.starts_with(prefix)) function.erase(0, 4);
        }
        const std::string last =
            function.substr(function.rfind('.') == std::string::npos ? 0 : function.rfind('.') + 1);
        const bool equal = jsc_name == "global code" ? function == "<global>" : last == jsc_name;
        names += equal;
        if (!equal) {
          std::cout << "  [name differs] " << name << ", " << label << ": " << raw << " -> \"" << function
                    << "\"; original JSC run " << printed << "\n";
        }
      }
      EXPECT_GT(frames, 40);
      // Whole stacks as Safari web events through the pipeline: the JS kind must tell them from
      // Firefox's by JavaScriptCore's own frames ("global code", "fn@[native code]") and restore
      // every column to the divot the original JSC run printed.
      Symbolizer symbolizer(*store_, SymbolizerOptions{});
      pipeline::EventProcessor processor(symbolizer, pipeline::ProcessorOptions{});
      int stack_frames = 0, stack_positions = 0;
      for (simdjson::dom::element stack : arrayOf(build["jsc_stacks"])) {
        pipeline::JsonWriter event;
        event.beginObject();
        event.key("event_id");
        event.string("jsc");
        event.key("kind");
        event.string("error");
        event.key("platform");
        event.string("web");
        event.key("app");
        event.string(app);
        event.key("build_id");
        event.string("1");
        event.key("threads");
        event.beginArray();
        event.beginObject();
        event.key("stack");
        event.string(std::string_view(stack["stack"].get_string().value()));
        event.endObject();
        event.endArray();
        event.endObject();
        auto processed = processor.process(app + ":1", event.take());
        ASSERT_TRUE(processed) << processed.error().message();
        ASSERT_FALSE(processed->dead_letter) << processed->error;
        simdjson::dom::parser output_parser;
        simdjson::dom::element restored = output_parser.parse(processed->records.at(0).value).value();
        simdjson::dom::array expected = stack["expected"].get_array().value();
        size_t next = 0;
        for (simdjson::dom::element frame : arrayOf(restored["threads"].at(0)["frames"])) {
          std::string_view file;
          if (frame["file"].get_string().get(file) || !file.ends_with("/main.js")) continue;
          if (next >= expected.size()) break;
          ++stack_frames;
          const bool same = frame["line"].get_uint64().value() == expected.at(next)["line"].get_uint64().value() &&
                            frame["column"].get_uint64().value() == expected.at(next)["column"].get_uint64().value();
          stack_positions += same;
          if (!same) {
            std::cout << "  [stack position differs] " << name << ", " << label << ": "
                      << std::string_view(frame["raw"].get_string().value()) << " -> "
                      << frame["line"].get_uint64().value() << ":" << frame["column"].get_uint64().value()
                      << "; original JSC run " << std::string_view(expected.at(next)["printed"].get_string().value())
                      << "\n";
          }
          ++next;
        }
      }
      // A map that says lines only (webpack's) has no column for JSC's divot: only where the source
      // text tells where the segment's identifier stands on its line.
      bool line_only = false, sparse_names = false;
      (void)build["line_only_map"].get_bool().get(line_only);
      (void)build["sparse_names"].get_bool().get(sparse_names);
      EXPECT_GE(stack_frames, frames);
      if (!line_only && !sparse_names) EXPECT_EQ(stack_positions, stack_frames);
      table << "| " << name << " | " << label << " | " << frames << " | " << lines << " | " << positions << " | "
            << named << " | " << names << " | " << stack_positions << " of " << stack_frames << " |\n";
      // JSC prints the column of a call's divot (the end of the callee: `fail(` at the '('), V8
      // the start of the call; React Native frames of this form are restored to the divot too
      // (sourcemap_resolver.cc, divotOffset).
      // A map of statements without names (SWC's) gives the divot only where a segment stands
      // right before it, and maps a call folded into the previous line's expression to that line.
      if (sparse_names) {
        EXPECT_GE(lines, 0.95 * frames);
        EXPECT_GE(positions, 0.55 * frames);
      } else {
        EXPECT_EQ(lines, frames);
        if (!line_only) EXPECT_EQ(positions, frames);
      }
      // A minifier drops names no upload records (`named: function original()`): sourcesContent only.
      if (with_sources) EXPECT_EQ(names, named);
    }
  }
  std::cout << table.str();
}

}  // namespace
}  // namespace restack
