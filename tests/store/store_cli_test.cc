// `restack store list|show|delete` on a store holding real symbol files built here: native
// libraries compiled with clang-19, a ProGuard mapping and a source map for two apps, frames
// restored through the worker's restorer (which notes the symbols it used), then the real
// `restack` binary.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "symbolstore/usage.h"
#include "tests/support/run_command.h"
#include "worker/pipeline/event_processor.h"

namespace restack {
namespace {

using test_support::runCommand;
using test_support::shellQuote;

struct Library {
  std::string path;
  std::string build_id;
  uint64_t address = 0;  // inside the library's function
};

std::string hex(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

// Compiles a one-function shared library named `name` whose function is `function`.
Library buildLibrary(const std::string& dir, const std::string& name, const std::string& function) {
  Library library;
  const std::string source = dir + "/" + name + ".c";
  EXPECT_TRUE(test_support::writeTextFile(
      source, "__attribute__((noinline)) int " + function + "(volatile int* p) { return *p + 1; }\n"));
  library.path = dir + "/" + name;
  auto built = runCommand(
      "clang-19 --target=aarch64-linux-android24 -g -O1 -fPIC -ffreestanding -nostdlibinc "
      "-shared -nostdlib -fuse-ld=lld -Wl,--build-id " +
      shellQuote(source) + " -o " + shellQuote(library.path));
  EXPECT_EQ(built.exit_code, 0) << built.output;
  auto notes = runCommand("llvm-readelf-19 -n " + shellQuote(library.path));
  const size_t at = notes.output.find("Build ID: ");
  EXPECT_NE(at, std::string::npos) << notes.output;
  if (at != std::string::npos) std::istringstream(notes.output.substr(at + 10)) >> library.build_id;
  auto nm = runCommand("llvm-nm-19 " + shellQuote(library.path));
  std::istringstream lines(nm.output);
  std::string address, type, symbol;
  while (lines >> address >> type >> symbol) {
    if (symbol == function) library.address = std::stoull(address, nullptr, 16) + 4;
  }
  EXPECT_NE(library.address, 0u) << nm.output;
  return library;
}

struct Restack {
  int status = -1;
  std::string output;
};

Restack restack(const std::string& arguments) {
  auto ran = runCommand(shellQuote(RESTACK_BINARY) + " " + arguments);
  return {ran.exit_code, ran.output};
}

class StoreCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("restack-store-cli-");
    ASSERT_TRUE(dir) << dir.error().message();
    dir_.emplace(std::move(*dir));
    store_path_ = dir_->path() + "/store";
    one_ = buildLibrary(dir_->path(), "libone.so", "crash_in_one");
    two_ = buildLibrary(dir_->path(), "libtwo.so", "crash_in_two");
    common_ = buildLibrary(dir_->path(), "libcommon.so", "crash_in_common");
    ASSERT_FALSE(HasFailure());

    auto store = openStore();
    ASSERT_TRUE(store) << store.error().message();
    // libcommon serves both builds; com.one uploads it last, so its image names com.one:1.
    ingest(**store, "com.two", "2", common_.path, "libcommon.so");
    ingest(**store, "com.one", "1", one_.path, "libone.so");
    ingest(**store, "com.one", "1", common_.path, "libcommon.so");
    ingest(**store, "com.one", "1", "", "mapping.txt",
           "# compiler: R8\n# pg_map_id: one111\norg.one.Main -> a:\n    1:1:void run():10:10 -> a\n");
    ingest(**store, "com.two", "2", two_.path, "libtwo.so");
    ingest(**store, "com.two", "2", "", "app.min.js.map",
           R"({"version":3,"file":"app.min.js","sources":["app.js"],"sourcesContent":["function boom() {}\n"],)"
           R"("names":["boom"],"mappings":"AAAA,IAAIA"})");
  }

  Expected<std::unique_ptr<SymbolStore>> openStore() {
    StoreOptions options;
    options.path = store_path_;
    options.block_cache_bytes = 8u << 20;
    return SymbolStore::open(options);
  }

  void ingest(SymbolStore& store, const std::string& app, const std::string& build, const std::string& path,
              const std::string& name, const std::string& bytes = {}) {
    UploadMeta meta;
    meta.app = app;
    meta.build_id = build;
    if (name.ends_with(".map")) meta.name = "app.min.js";
    UploadContent content;
    content.path = path;
    content.bytes = bytes;
    content.display_name = name;
    auto report = ingestUpload(store, meta, content, IngestOptions{});
    ASSERT_TRUE(report) << name << ": " << report.error().message();
  }

  // A native event of app:build whose frames name `library` by debug id (or only by module
  // name when `by_name`), with a Java frame.
  static std::string event(const std::string& app, const std::string& build, const Library& library,
                           const std::string& module, bool by_name) {
    const std::string id = by_name ? std::string() : " [arm64-v8a::" + library.build_id + "]";
    return R"({"event_id":"e1","kind":"crash","platform":"android","app":")" + app + R"(","build_id":")" + build +
           R"(","threads":[{"name":"main","crashed":true,"stack":"pc )" + hex(library.address) + " " + module + id +
           R"json(\njava.lang.IllegalStateException\n\tat a.a(SourceFile:1)"}]})json";
  }

  // Restores `events` through the worker's restorer and writes the noted uses, as the worker
  // does once a minute; returns the restored frames' statuses.
  std::vector<std::string> restore(const std::vector<std::string>& events) {
    auto store = openStore();
    EXPECT_TRUE(store) << store.error().message();
    if (!store) return {};
    Symbolizer symbolizer(**store, SymbolizerOptions{});
    pipeline::EventProcessor processor(symbolizer, pipeline::ProcessorOptions{});
    std::vector<std::string> statuses;
    simdjson::dom::parser parser;
    for (const std::string& text : events) {
      auto result = processor.process("key", text);
      EXPECT_TRUE(result) << result.error().message();
      if (!result || result->records.empty()) continue;
      EXPECT_FALSE(result->dead_letter) << result->error;
      simdjson::dom::element root;
      if (parser.parse(result->records[0].value).get(root)) continue;
      for (auto frame : root["threads"].at(0)["frames"].get_array()) {
        std::string_view function;
        if (frame["function"].get(function)) function = "";
        statuses.push_back(std::string(std::string_view(frame["status"])) + " " + std::string(function));
      }
    }
    auto flushed = symbolizer.usage().flush(**store);
    EXPECT_TRUE(flushed) << flushed.error().message();
    return statuses;
  }

  std::string storeFlag() const { return "--store " + shellQuote(store_path_); }

  std::optional<TempDir> dir_;
  std::string store_path_;
  Library one_, two_, common_;
};

// The row of `list` output whose columns contain every one of `words`.
std::string rowWith(const std::string& output, std::initializer_list<std::string_view> words) {
  for (const std::string& line : test_support::outputLines(output)) {
    bool all = true;
    for (std::string_view word : words) all = all && line.find(word) != std::string::npos;
    if (all) return line;
  }
  return {};
}

TEST_F(StoreCommandTest, ListShowsEveryBuildWithSizesAndTheLastUseOfTheUsedOneOnly) {
  const auto statuses = restore({event("com.one", "1", one_, "libone.so", false)});
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0], "symbolicated crash_in_one");
  EXPECT_EQ(statuses[1], "symbolicated org.one.Main.run");

  const Restack listed = restack("store list " + storeFlag());
  ASSERT_EQ(listed.status, 0) << listed.output;
  const auto lines = test_support::outputLines(listed.output);
  EXPECT_EQ(listed.output.find("a running worker has"), std::string::npos) << "no worker here: " << listed.output;
  ASSERT_GE(lines.size(), 6u) << listed.output;
  EXPECT_EQ(lines[0].rfind("APP", 0), 0u) << listed.output;
  const std::string one = rowWith(listed.output, {"com.one", one_.build_id, "libone.so"});
  const std::string mapping = rowWith(listed.output, {"com.one", "proguard", "one111"});
  const std::string two = rowWith(listed.output, {"com.two", two_.build_id, "libtwo.so"});
  const std::string map = rowWith(listed.output, {"com.two", "sourcemap", "app.min.js"});
  for (const std::string* row : {&one, &mapping, &two, &map}) {
    ASSERT_FALSE(row->empty()) << listed.output;
    EXPECT_EQ(row->find(" 0 B "), std::string::npos) << *row;
    EXPECT_NE(row->find("20"), std::string::npos) << "no upload time: " << *row;  // "2026-…"
  }
  EXPECT_FALSE(one.ends_with("never")) << one;
  EXPECT_FALSE(mapping.ends_with("never")) << mapping;
  EXPECT_TRUE(two.ends_with("never")) << two;
  EXPECT_TRUE(map.ends_with("never")) << map;
  // Columns are aligned: every row starts its BUILD column where the header does.
  const size_t build_column = lines[0].find("BUILD");
  EXPECT_EQ(one.substr(build_column, 2), "1 ") << listed.output;

  const Restack json = restack("store list --json --app com.two " + storeFlag());
  ASSERT_EQ(json.status, 0) << json.output;
  simdjson::dom::parser parser;
  size_t rows = 0;
  for (const std::string& line : test_support::outputLines(json.output)) {
    simdjson::dom::element row;
    ASSERT_FALSE(parser.parse(line).get(row)) << line;
    EXPECT_EQ(std::string_view(row["app"]), "com.two") << line;
    EXPECT_GT(uint64_t(row["bytes"]), 0u) << line;
    EXPECT_TRUE(row["last_used"].is_null()) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 2u) << json.output;  // libtwo and the map: libcommon's image names its last uploader
}

TEST_F(StoreCommandTest, ShowGivesTheDetailsOfAnIdentifierOrABuild) {
  const Restack image = restack("store show " + one_.build_id + " " + storeFlag());
  ASSERT_EQ(image.status, 0) << image.output;
  EXPECT_NE(image.output.find("com.one:1"), std::string::npos) << image.output;
  EXPECT_NE(image.output.find("function"), std::string::npos) << image.output;
  EXPECT_NE(image.output.find("of version 1"), std::string::npos) << image.output;
  EXPECT_NE(image.output.find("tiers dwarf symbols"), std::string::npos) << image.output;
  EXPECT_NE(image.output.find("functions from 0x"), std::string::npos) << image.output;
  EXPECT_NE(image.output.find("last used   never"), std::string::npos) << image.output;

  const Restack build = restack("store show com.two:2 " + storeFlag());
  ASSERT_EQ(build.status, 0) << build.output;
  EXPECT_NE(build.output.find(two_.build_id), std::string::npos) << build.output;
  EXPECT_NE(build.output.find("mapping chunk"), std::string::npos) << build.output;

  // --config takes the folder from store.path of a worker's configuration.
  std::ifstream example(RESTACK_SOURCE_DIR "/config/restack.example.yaml");
  std::stringstream text;
  text << example.rdbuf();
  std::string config = text.str();
  const size_t path_at = config.find("/var/lib/restack/store");
  ASSERT_NE(path_at, std::string::npos);
  config.replace(path_at, std::strlen("/var/lib/restack/store"), store_path_);
  ASSERT_TRUE(test_support::writeTextFile(dir_->path() + "/restack.yaml", config));
  const Restack configured = restack("store show com.two:2 --config " + shellQuote(dir_->path() + "/restack.yaml"));
  EXPECT_EQ(configured.status, 0) << configured.output;
  EXPECT_EQ(configured.output, build.output);

  const Restack unknown = restack("store show nothing:here " + storeFlag());
  EXPECT_EQ(unknown.status, 1) << unknown.output;
  EXPECT_NE(unknown.output.find("restack store list"), std::string::npos) << unknown.output;
}

TEST_F(StoreCommandTest, DeleteWithoutYesIsADryRunAndYesDeletesOneBuildOnly) {
  const Restack before = restack("store list --json " + storeFlag());
  ASSERT_EQ(before.status, 0) << before.output;

  const Restack dry = restack("store delete --app com.one --build 1 " + storeFlag());
  ASSERT_EQ(dry.status, 0) << dry.output;
  EXPECT_NE(dry.output.find("would delete"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("dry run"), std::string::npos) << dry.output;
  // libcommon's image is in com.two's module index too: kept, and the message says how to force.
  EXPECT_NE(dry.output.find("kept"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("--debug-id " + common_.build_id), std::string::npos) << dry.output;
  EXPECT_EQ(restack("store list --json " + storeFlag()).output, before.output);

  const Restack deleted = restack("store delete --app com.one --build 1 --yes " + storeFlag());
  ASSERT_EQ(deleted.status, 0) << deleted.output;
  EXPECT_NE(deleted.output.find("compacted"), std::string::npos) << deleted.output;

  const Restack after = restack("store list " + storeFlag());
  ASSERT_EQ(after.status, 0) << after.output;
  EXPECT_EQ(after.output.find(one_.build_id), std::string::npos) << after.output;
  EXPECT_EQ(after.output.find("one111"), std::string::npos) << after.output;
  EXPECT_NE(after.output.find(two_.build_id), std::string::npos) << after.output;
  EXPECT_NE(after.output.find(common_.build_id), std::string::npos) << after.output;

  // The other build still restores, by debug id and by module name (its module index), and so
  // does the kept image it shares; com.one's frames now miss their symbols.
  const auto statuses =
      restore({event("com.two", "2", two_, "libtwo.so", true), event("com.two", "2", common_, "libcommon.so", true),
               event("com.one", "1", one_, "libone.so", false)});
  ASSERT_EQ(statuses.size(), 6u);
  EXPECT_EQ(statuses[0], "symbolicated crash_in_two");
  EXPECT_EQ(statuses[2], "symbolicated crash_in_common");
  EXPECT_EQ(statuses[4].rfind("missing_symbols", 0), 0u) << statuses[4];
  EXPECT_EQ(statuses[5].rfind("missing_symbols", 0), 0u) << statuses[5];

  // Named explicitly, the shared image goes too, and com.two's index forgets it.
  const Restack forced = restack("store delete --debug-id " + common_.build_id + " --yes " + storeFlag());
  ASSERT_EQ(forced.status, 0) << forced.output;
  EXPECT_NE(forced.output.find("without " + common_.build_id), std::string::npos) << forced.output;
  const auto gone = restore({event("com.two", "2", common_, "libcommon.so", true)});
  ASSERT_FALSE(gone.empty());
  EXPECT_EQ(gone[0].rfind("missing_symbols", 0), 0u) << gone[0];
}

TEST_F(StoreCommandTest, AStoreInUseRefusesDeleteAndStillLists) {
  auto worker = openStore();  // holds RocksDB's lock, as a running worker does
  ASSERT_TRUE(worker) << worker.error().message();
  const Restack deleted = restack("store delete --app com.one --build 1 --yes " + storeFlag());
  EXPECT_EQ(deleted.status, 1) << deleted.output;
  EXPECT_NE(deleted.output.find("in use by a running worker"), std::string::npos) << deleted.output;
  EXPECT_NE(deleted.output.find("not supported yet"), std::string::npos) << deleted.output;

  const Restack listed = restack("store list " + storeFlag());
  EXPECT_EQ(listed.status, 0) << listed.output;
  EXPECT_NE(listed.output.find(one_.build_id), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("a running worker has"), std::string::npos) << listed.output;
  const Restack shown = restack("store show com.one:1 " + storeFlag());
  EXPECT_EQ(shown.status, 0) << shown.output;
}

TEST_F(StoreCommandTest, UsageErrorsExitTwo) {
  EXPECT_EQ(restack("store delete --app com.one " + storeFlag()).status, 2);
  EXPECT_EQ(restack("store delete " + storeFlag()).status, 2);
  EXPECT_EQ(restack("store list").status, 2);
  EXPECT_EQ(restack("store").status, 2);
  const Restack missing = restack("store list --store " + shellQuote(dir_->path() + "/nowhere"));
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_NE(missing.output.find("no symbol store"), std::string::npos) << missing.output;
  std::error_code error;
  EXPECT_FALSE(std::filesystem::exists(dir_->path() + "/nowhere", error)) << "list must not create a store";
}

TEST(StoreCommand, EverySubcommandHasHelp) {
  for (const auto& [subcommand, flag] : {std::pair{"list", "--json"}, std::pair{"show", "target"},
                                         std::pair{"delete", "--yes"}, std::pair{"delete", "--debug-id"}}) {
    const Restack help = restack(std::string("store ") + subcommand + " --help");
    EXPECT_EQ(help.status, 0) << help.output;
    EXPECT_NE(help.output.find(flag), std::string::npos) << subcommand << ": " << help.output;
  }
  const Restack top = restack("--help");
  EXPECT_NE(top.output.find("store"), std::string::npos) << top.output;
}

// ---- the tracker and its record

TEST(UsageTracker, WritesEachSetAtMostOnceAMinute) {
  auto dir = TempDir::create("restack-usage-");
  ASSERT_TRUE(dir);
  StoreOptions options;
  options.path = dir->path();
  options.block_cache_bytes = 8u << 20;
  auto store = SymbolStore::open(options);
  ASSERT_TRUE(store) << store.error().message();
  UsageTracker tracker;
  const std::string set = usage::buildSet("proguard", "com.example", "45");
  for (int frame = 0; frame < 1000; ++frame) tracker.note(set, 29924460);
  tracker.note(usage::imageSet("ab12"), 29924461);
  auto written = tracker.flush(**store);
  ASSERT_TRUE(written) << written.error().message();
  EXPECT_EQ(*written, 2u);
  tracker.note(set, 29924460);  // the same minute again: nothing new to write
  EXPECT_EQ(*tracker.flush(**store), 0u);
  tracker.note(set, 29924462);
  EXPECT_EQ(*tracker.flush(**store), 1u);
  auto stored = (*store)->get(kUsageFamily, usage::lastUsedKey(set));
  ASSERT_TRUE(stored && stored->has_value());
  EXPECT_EQ(*usage::decodeTime(**stored), 29924462);
  EXPECT_EQ(tracker.lastNoted(usage::imageSet("ab12")), 29924461);
  EXPECT_EQ(tracker.lastNoted(usage::imageSet("cd34")), 0);
}

TEST(UsageRecord, MatchesTheWorkedExampleAndRefusesUnknownVersions) {
  // symbolstore/usage.h, "Worked example".
  EXPECT_EQ(usage::lastUsedKey(usage::buildSet("proguard", "com.example", "45")),
            std::string("Lbproguard\0com.example\00045", 25));
  EXPECT_EQ(usage::encodeTime(29924460), std::string("\x01\xec\xb8\xa2\x0e"));
  EXPECT_EQ(*usage::decodeTime(std::string("\x01\xec\xb8\xa2\x0e")), 29924460);
  auto unknown = usage::decodeTime(std::string("\x02\x01"), "Lx");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), ErrorCode::kMalformedInput);
  EXPECT_NE(unknown.error().message().find("version 2"), std::string::npos) << unknown.error().message();
  EXPECT_FALSE(usage::decodeTime(std::string("\x01\xec", 2)));
  EXPECT_EQ(usage::normalizeDebugId("8A1E-00FF"), "8a1e00ff");
  EXPECT_EQ(usage::normalizeDebugId("xyz"), "");
}

}  // namespace
}  // namespace restack
