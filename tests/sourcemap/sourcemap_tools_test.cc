// End to end on real bundles made at test time (fixtures/make_cases.js): esbuild, terser, index
// maps (inline and "url" sections), a Metro-shaped map with Metro's own function maps, a Metro
// RAM-bundle map (frames in "seg-1.js", "5.js", "seg-2_7.js" routed through x_facebook_segments
// and x_facebook_offsets), Hermes bytecode maps from hermesc (frames as printed, and as Hermes
// crash-report (SegmentID, FunctionID, ByteCodeOffset) objects) and a composed Metro+Hermes map. Each bundled frame,
// restored by Restack, must land on the file, line and column of the same frame in the original run, and agree with
// `source-map` (positions) and metro-symbolicate (positions, function names, ignore list). Needs the npm tools from
// scripts/setup.sh.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "formats/sourcemap/function_map.h"
#include "formats/stack/js_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"

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

struct Reference {
  bool present = false;
  std::string file, name;
  uint64_t line = 0, column = 0;
  bool ignored = false;
};

Reference readReference(simdjson::dom::element value) {
  Reference out;
  if (value.is_null()) return out;
  out.present = true;
  out.file = std::string(value["file"].get_string().value());
  out.line = value["line"].get_uint64().value();
  out.column = value["column"].get_uint64().value();
  std::string_view text;
  if (!value["name"].get_string().get(text)) out.name = std::string(text);
  if (!value["func"].get_string().get(text)) out.name = std::string(text);
  bool ignored = false;
  if (!value["ignored"].get_bool().get(ignored)) out.ignored = ignored;
  return out;
}

std::string canonicalPath(const fs::path& path) {
  std::error_code error;
  fs::path result = fs::weakly_canonical(path, error);
  return error ? path.lexically_normal().string() : result.string();
}

class SourcemapToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {".bin/esbuild", "hermes-engine-cli/linux64-bin/hermes",
                             "hermes-engine-cli/linux64-bin/hbcdump", "metro-symbolicate", "source-map"}) {
      ASSERT_TRUE(fs::exists(kNodeModules / tool))
          << (kNodeModules / tool).string() << " is missing: run scripts/setup.sh (scripts/setup.d/sourcemap.sh)";
    }
    work_ = fs::temp_directory_path() / ("restack-sm-tools-" + std::to_string(::getpid()));
    fs::remove_all(work_);
    fs::create_directories(work_);
    const std::string command =
        "node " + (fs::path(RESTACK_SOURCE_DIR) / "tests/sourcemap/fixtures/make_cases.js").string() + " " +
        work_.string() + " " + kNodeModules.string() + " 2>" + (work_ / "make.log").string();
    ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << std::ifstream(work_ / "make.log").rdbuf();
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
  fs::path work_;
  std::unique_ptr<SymbolStore> store_;
};

TEST_F(SourcemapToolsTest, RestoredFramesMatchOriginalRunsAndReferenceTools) {
  simdjson::dom::parser parser;
  simdjson::dom::element manifest = parser.load((work_ / "manifest.json").string()).value();
  std::map<std::string, EventScope> scopes;
  // Ingest every map first: the "url" index-map case needs the esbuild upload.
  for (simdjson::dom::element c : arrayOf(manifest["cases"])) {
    const std::string name(c["name"].get_string().value());
    const std::string platform(c["platform"].get_string().value());
    UploadMeta meta;
    meta.kind = SymbolKind::kSourcemap;
    meta.app = "demo";
    // React Native bundles share a name across builds: each case is its own build.
    meta.build_id = platform == "react_native" ? name : "1.0";
    UploadContent content;
    content.path = std::string(c["map"].get_string().value());
    content.display_name = fs::path(content.path).filename().string();
    auto report = ingestSourcemap(*store_, meta, content, IngestOptions());
    ASSERT_TRUE(report) << name << ": " << report.error().message();
    EXPECT_EQ(report->ids.at(0), std::string(c["served_name"].get_string().value())) << name;
    scopes[name] = EventScope{"demo", meta.build_id, platform, {}};
  }

  SourcemapResolver resolver(*store_, {});
  int checked = 0, function_checked = 0, function_agreed = 0, map_disagreements = 0, unmapped = 0;
  int rn_checked = 0, rn_agreed = 0;
  // V8 and Hermes name by receiver ("Object.onParse"), constructor ("new Shape") and async
  // ("async loadLater") where the source says "onParse", "Shape", "loadLater": the last dotted
  // component of the name without those prefixes.
  const auto lastName = [](std::string text) {
    for (const char* prefix : {"async ", "new "}) {
      if (text.rfind(prefix, 0) == 0) text = text.substr(std::string(prefix).size());
    }
    return text.substr(text.rfind('.') + 1);
  };
  for (simdjson::dom::element c : arrayOf(manifest["cases"])) {
    const std::string name(c["name"].get_string().value());
    const fs::path map_dir(std::string(c["map_dir"].get_string().value()));
    int scenario_index = 0;
    for (simdjson::dom::element scenario : arrayOf(c["scenarios"])) {
      simdjson::dom::array frames = scenario["frames"].get_array().value();
      // The bundled run printed exactly as many of our frames as the original run.
      ASSERT_EQ(frames.size(), scenario["expected_count"].get_uint64().value())
          << name << " scenario " << scenario_index;
      for (simdjson::dom::element frame : frames) {
        const std::string raw(frame["raw"].get_string().value());
        SCOPED_TRACE(name + ": " + raw);
        const stack::StackLine line = stack::parseStackLine(raw);
        ASSERT_EQ(line.kindName(), "js_frame");
        auto result = resolver.lookup(scopes[name], *stack::asJsFrame(line));
        ASSERT_TRUE(result) << result.error().message();
        if (frame["expected"].is_null()) {
          // The original run's frame is in code the first map leaves unmapped (esbuild's iife
          // wrapper), so composition drops it: `source-map` finds nothing there either.
          EXPECT_FALSE(readReference(frame["metro"]).present);
          EXPECT_EQ(result->status, FrameStatus::kNotFound);
          ++unmapped;
          continue;
        }
        ASSERT_EQ(result->status, FrameStatus::kSymbolicated) << result->note << result->missing_id;
        ASSERT_FALSE(result->frames.empty());
        const SymbolizedFrame& restored = result->frames[0];
        const std::string restored_file = canonicalPath(map_dir / restored.file.str());

        const Reference expected = readReference(frame["expected"]);
        const Reference source_map = readReference(frame["source_map"]);
        ASSERT_TRUE(expected.present);
        const bool map_disagrees_with_run =
            source_map.present && (source_map.line != expected.line || source_map.column != expected.column);
        if (map_disagrees_with_run) {
          // The bundler's own map does not lead back to the original run's position (terser maps
          // the frame of a resumed `await` to the statement start). Restack follows the map, as
          // `source-map` does (checked below); such frames are counted and bounded.
          ++map_disagreements;
          std::cout << "  [map disagrees with the original run] " << raw << " -> " << source_map.line << ":"
                    << source_map.column << ", original run " << expected.line << ":" << expected.column << "\n";
        } else {
          EXPECT_EQ(restored_file, expected.file);
          EXPECT_EQ(restored.line, expected.line);
          EXPECT_EQ(restored.column, expected.column);
        }
        if (c["has_sources_content"].get_bool().value()) {
          EXPECT_FALSE(restored.context_lines.empty()) << "sourcesContent was uploaded";
        }

        if (source_map.present) {  // (not computed for index maps: source-map reads them too, but async)
          EXPECT_EQ(restored_file, source_map.file);
          EXPECT_EQ(restored.line, source_map.line);
          EXPECT_EQ(restored.column, source_map.column);
        }
        const Reference metro = readReference(frame["metro"]);
        if (metro.present) {
          EXPECT_EQ(restored_file, metro.file);
          EXPECT_EQ(restored.line, metro.line);
          EXPECT_EQ(restored.column, metro.column);
          EXPECT_EQ(restored.in_app == std::optional<bool>(false), metro.ignored);
          if (result->tier == "function_map") {
            // Both read Metro's x_facebook_sources: the names must be identical, Metro's
            // "Class#method" spelled as the engine prints it (sourcemap::v8FunctionName).
            EXPECT_EQ(restored.function, sourcemap::v8FunctionName(metro.name));
          }
        }
        // Function names inferred from sourcesContent against what V8 printed in the original
        // run. V8 names by receiver ("Object.onParse", "new Shape", "async loadLater") where the
        // source says "onParse", "Shape", "loadLater"; compare the last dotted component, and
        // report (not fail on) the overall agreement, which the assertion below bounds.
        // V8's "Object.<anonymous>" (module top level; Restack says "<global>" like Metro) and
        // "eval" (Restack names the function that called eval) differ on purpose.
        if ((name == "metro" || name.starts_with("ram-")) && !expected.name.empty() &&
            expected.name.find('<') == std::string::npos && expected.name != "eval") {
          // React Native bundles run by a JavaScript engine (not Hermes), whose original run is the
          // unbundled program: names from Metro's function maps against V8's, counted separately.
          // (The Hermes cases' runs are of the intermediate bundle, whose names esbuild changed:
          // "parse2", and Hermes prints "anonymous" for assigned functions; not compared.)
          ++rn_checked;
          if (lastName(expected.name) == lastName(restored.function)) {
            ++rn_agreed;
          } else {
            std::cout << "  [name differs] " << name << ": the original run printed \"" << expected.name
                      << "\", restored \"" << restored.function << "\"\n";
          }
        }
        if (result->tier == "sourcemap" && !expected.name.empty() && expected.name.find('<') == std::string::npos &&
            expected.name != "eval" && c["platform"].get_string().value() == "web") {
          ++function_checked;
          std::string printed = expected.name;
          for (const char* prefix : {"async ", "new "}) {
            if (printed.rfind(prefix, 0) == 0) printed = printed.substr(std::string(prefix).size());
          }
          auto last = [](const std::string& text) { return text.substr(text.rfind('.') + 1); };
          if (last(printed) == last(restored.function)) {
            ++function_agreed;
          } else {
            std::cout << "  [name differs] " << name << ": V8 printed \"" << expected.name << "\", restored \""
                      << restored.function << "\"\n";
          }
        }
        ++checked;
      }
      ++scenario_index;
    }
  }
  std::cout << checked << " frames restored; inferred function names agree with V8 on " << function_agreed << "/"
            << function_checked << ", Metro function-map names with the original run on " << rn_agreed << "/"
            << rn_checked << "\n";
  EXPECT_GT(checked, 150);
  EXPECT_LE(unmapped, 2);
  EXPECT_LE(map_disagreements, 2) << "frames whose bundler map itself misses the original position";
  EXPECT_GE(function_agreed * 10, function_checked * 9) << "inferred names should match V8's for >= 90% of frames";
}

}  // namespace
}  // namespace restack
