// The symbol-demand aggregation (worker/kafka/symbol_demand.h) without Kafka: real events restored
// by the pipeline against a store that lacks their symbols (a native .so built at test time, a
// ProGuard mapping, a source map), counted, bounded, taken back on abort, published, replayed and
// closed when the symbols are uploaded.
#include "worker/kafka/symbol_demand.h"

#include <gtest/gtest.h>

#include <optional>

#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "tests/worker/worker_fixtures.h"
#include "worker/pipeline/event_processor.h"

namespace restack::worker_test {
namespace {

using worker::DemandOutput;
using worker::DemandRecord;
using worker::SymbolDemand;

constexpr const char* kBundle = "main.3f9a1c2b.js";

std::string javaEvent(const std::string& id, const std::string& build) {
  return R"({"event_id":")" + id + R"(","kind":"crash","platform":"android","app":"shop","build_id":")" + build +
         R"json(","threads":[{"name":"main","crashed":true,"stack":"java.lang.IllegalStateException\n\tat a.a(SourceFile:1)\n\tat a.b(SourceFile:2)\n\tat a.c(SourceFile:3)"}]})json";
}

std::string webEvent(const std::string& id, const std::string& build) {
  return R"({"event_id":")" + id + R"(","kind":"error","platform":"web","app":"shop","build_id":")" + build +
         R"json(","threads":[{"name":"main","stack":"TypeError: x is undefined\n    at f (https://cdn.example.com/static/js/)json" +
         kBundle + R"json(:1:10)"}]})json";
}

UploadMeta uploadMeta(std::optional<SymbolKind> kind, const std::string& build, const std::string& name = "") {
  UploadMeta meta;
  meta.kind = kind;
  meta.app = "shop";
  meta.build_id = build;
  meta.name = name;
  return meta;
}

UploadContent fileContent(const std::string& path) {
  UploadContent content;
  content.path = path;
  return content;
}

UploadContent bytesContent(std::string_view bytes, const std::string& name) {
  UploadContent content;
  content.bytes = bytes;
  content.display_name = name;
  return content;
}

class SymbolDemandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("symbol-demand-test-");
    ASSERT_TRUE(dir);
    dir_.emplace(std::move(*dir));
    StoreOptions options;
    options.path = dir_->path();
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
    symbolizer_ = std::make_unique<Symbolizer>(*store_, SymbolizerOptions{});
    processor_ = std::make_unique<pipeline::EventProcessor>(*symbolizer_, pipeline::ProcessorOptions{});
  }

  // What the restored event misses, as the worker reads it.
  std::vector<DemandRecord> missed(const std::string& build, const std::string& event, int64_t seen_ms) {
    auto result = processor_->process("shop:" + build, event);
    EXPECT_TRUE(result) << result.error().message();
    if (!result) return {};
    EXPECT_FALSE(result->dead_letter) << result->error;
    EXPECT_FALSE(result->records.empty());
    if (result->records.empty()) return {};
    auto demand = worker::demandOfRestoredEvent(result->records[0].value, seen_ms);
    EXPECT_TRUE(demand) << demand.error().message();
    if (!demand) return {};
    // The result's own list of missing frames gives the same records without reading the JSON back.
    const std::vector<DemandRecord> direct = worker::demandOfMissingFrames(*result, seen_ms);
    EXPECT_EQ(direct.size(), demand->size());
    for (size_t i = 0; i < direct.size() && i < demand->size(); ++i) {
      EXPECT_EQ(worker::encodeDemandRecord(direct[i]), worker::encodeDemandRecord((*demand)[i]));
    }
    return *demand;
  }

  std::vector<DemandRecord> nativeMissed(const std::string& build, int64_t seen_ms) {
    return missed(build, nativeCrashEvent("n-" + std::to_string(seen_ms), "shop", build, nativeLibrary()), seen_ms);
  }

  IngestReport ingest(const UploadMeta& meta, const UploadContent& content) {
    auto report = ingestUpload(*store_, meta, content, IngestOptions{});
    EXPECT_TRUE(report) << report.error().message();
    if (!report) return IngestReport{};
    // As the worker does: the native reader remembers "no symbols" for a while.
    for (const std::string& id : report->ids) symbolizer_->forgetId(id);
    return *report;
  }

  std::optional<TempDir> dir_;
  std::unique_ptr<SymbolStore> store_;
  std::unique_ptr<Symbolizer> symbolizer_;
  std::unique_ptr<pipeline::EventProcessor> processor_;
};

TEST_F(SymbolDemandTest, ARestoredEventNamesEveryMissingFileOnceWithItsFrames) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  auto native = nativeMissed("1.0", 1000);
  ASSERT_EQ(native.size(), 1u);
  EXPECT_EQ(native[0].app, "shop");
  EXPECT_EQ(native[0].build_id, "1.0");
  EXPECT_EQ(native[0].platform, "android");
  EXPECT_EQ(native[0].kind, "native");
  EXPECT_EQ(native[0].identifier, library.build_id);
  EXPECT_EQ(native[0].module, "libcrash.so");
  EXPECT_EQ(native[0].events, 1u);
  EXPECT_EQ(native[0].frames, 2u) << "both frames of the crashed thread need libcrash.so";
  EXPECT_EQ(native[0].first_seen_ms, 1000);
  EXPECT_EQ(native[0].last_seen_ms, 1000);
  EXPECT_EQ(native[0].key(), "shop:1.0:native:" + library.build_id);

  auto java = missed("2.0", javaEvent("j1", "2.0"), 2000);
  ASSERT_EQ(java.size(), 1u);
  EXPECT_EQ(java[0].kind, "java");
  EXPECT_EQ(java[0].identifier, "shop:2.0") << "no mapping for the build: the build names it";
  EXPECT_EQ(java[0].frames, 3u);

  auto web = missed("2.0", webEvent("w1", "2.0"), 3000);
  ASSERT_EQ(web.size(), 1u);
  EXPECT_EQ(web[0].kind, "js");
  EXPECT_EQ(web[0].platform, "web");
  EXPECT_TRUE(web[0].identifier.ends_with(kBundle)) << web[0].identifier;
  EXPECT_EQ(web[0].module, kBundle);
  EXPECT_EQ(web[0].frames, 1u);

  // A restored event with every frame restored misses nothing.
  ingest(uploadMeta(std::nullopt, "1.0"), fileContent(library.path));
  EXPECT_TRUE(nativeMissed("1.0", 4000).empty());
}

TEST_F(SymbolDemandTest, EventsOfOneFileAddUpUnderOneKeyWithFirstAndLastSeen) {
  SymbolDemand demand({.max_keys = 100, .flush_interval_ms = 1000});
  demand.begin();
  demand.observe(3, nativeMissed("1.0", 5000));
  demand.observe(3, nativeMissed("1.0", 4000));  // an older event read later
  demand.observe(3, nativeMissed("1.0", 9000));
  demand.observe(1, nativeMissed("2.0", 6000));  // another build: another key
  demand.observe(3, missed("1.0", javaEvent("j", "1.0"), 7000));
  demand.commit();
  ASSERT_EQ(demand.size(), 3u);
  const DemandRecord* native = demand.find("shop:1.0:native:" + nativeLibrary().build_id);
  ASSERT_NE(native, nullptr);
  EXPECT_EQ(native->events, 3u);
  EXPECT_EQ(native->frames, 6u);
  EXPECT_EQ(native->first_seen_ms, 4000);
  EXPECT_EQ(native->last_seen_ms, 9000);
  const DemandRecord* other = demand.find("shop:2.0:native:" + nativeLibrary().build_id);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->events, 1u);
  ASSERT_NE(demand.find("shop:1.0:java:shop:1.0"), nullptr);
}

TEST_F(SymbolDemandTest, FlushPublishesChangedRecordsOncePerIntervalOnTheirPartition) {
  SymbolDemand demand({.max_keys = 100, .flush_interval_ms = 1000});
  demand.begin();
  demand.observe(3, nativeMissed("1.0", 5000));
  demand.observe(1, missed("2.0", webEvent("w", "2.0"), 5000));
  demand.commit();
  EXPECT_TRUE(demand.flushDue(10'000));
  demand.begin();
  std::vector<DemandOutput> out = demand.flush(10'000);
  demand.commit();
  ASSERT_EQ(out.size(), 2u);
  for (const DemandOutput& record : out) {
    ASSERT_TRUE(record.value);
    auto decoded = worker::decodeDemandRecord(*record.value);
    ASSERT_TRUE(decoded) << decoded.error().message();
    EXPECT_EQ(decoded->key(), record.key);
    EXPECT_EQ(record.partition, decoded->kind == "native" ? 3 : 1);
  }
  // Nothing changed: nothing to publish, even for a revoke.
  EXPECT_FALSE(demand.flushDue(20'000));
  EXPECT_FALSE(demand.hasChanges());
  // A change waits for the interval.
  demand.begin();
  demand.observe(3, nativeMissed("1.0", 6000));
  demand.commit();
  EXPECT_FALSE(demand.flushDue(10'500));
  EXPECT_TRUE(demand.hasChanges());
  EXPECT_TRUE(demand.flushDue(11'000));
  demand.begin();
  out = demand.flush(11'000);
  demand.commit();
  ASSERT_EQ(out.size(), 1u);
  auto decoded = worker::decodeDemandRecord(*out[0].value);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->events, 2u) << "the record is cumulative";
  EXPECT_EQ(decoded->frames, 4u);
}

TEST_F(SymbolDemandTest, AnAbortedTurnTakesItsCountsAndPublicationsBack) {
  SymbolDemand demand({.max_keys = 100, .flush_interval_ms = 0});
  demand.begin();
  demand.observe(0, nativeMissed("1.0", 5000));
  demand.flush(1);
  demand.commit();
  const std::string key = "shop:1.0:native:" + nativeLibrary().build_id;

  demand.begin();
  demand.observe(0, nativeMissed("1.0", 6000));
  demand.observe(0, missed("1.0", javaEvent("j", "1.0"), 6000));
  ASSERT_EQ(demand.flush(2).size(), 2u);
  demand.abort();  // the transaction failed: the batch will be read again
  ASSERT_EQ(demand.size(), 1u);
  EXPECT_EQ(demand.find(key)->events, 1u);
  EXPECT_FALSE(demand.flushDue(3)) << "the published state is what was committed";

  // The batch read again counts once.
  demand.begin();
  demand.observe(0, nativeMissed("1.0", 6000));
  demand.observe(0, missed("1.0", javaEvent("j", "1.0"), 6000));
  auto out = demand.flush(4);
  demand.commit();
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(demand.find(key)->events, 2u);
}

TEST_F(SymbolDemandTest, PastMaxKeysNewFilesAreCountedAsUntrackedAndKnownOnesStillCount) {
  SymbolDemand demand({.max_keys = 2, .flush_interval_ms = 0});
  demand.begin();
  demand.observe(0, nativeMissed("1.0", 1));
  demand.observe(0, nativeMissed("2.0", 1));
  demand.observe(0, nativeMissed("3.0", 1));
  demand.observe(0, missed("4.0", javaEvent("j", "4.0"), 1));
  demand.observe(0, nativeMissed("1.0", 2));
  demand.commit();
  EXPECT_EQ(demand.size(), 2u);
  EXPECT_EQ(demand.untracked(), 2u);
  EXPECT_EQ(demand.find("shop:3.0:native:" + nativeLibrary().build_id), nullptr);
  EXPECT_EQ(demand.find("shop:1.0:native:" + nativeLibrary().build_id)->events, 2u);
}

TEST_F(SymbolDemandTest, UploadsOfTheMissingFilesCloseTheirRecordsWithTombstones) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  SymbolDemand demand({.max_keys = 100, .flush_interval_ms = 60'000});
  demand.begin();
  demand.observe(0, nativeMissed("1.0", 1));
  demand.observe(0, missed("2.0", javaEvent("j", "2.0"), 1));
  demand.observe(0, missed("2.0", webEvent("w", "2.0"), 1));
  demand.observe(0, missed("3.0", javaEvent("j3", "3.0"), 1));
  demand.flush(1);
  demand.commit();
  ASSERT_EQ(demand.size(), 4u);

  // The mapping of build 2.0 meets the Java demand of 2.0, not that of 3.0.
  const UploadMeta java_meta = uploadMeta(SymbolKind::kProguard, "2.0");
  const std::string mapping = "# compiler: R8\norg.app.Main -> a:\n    1:1:void run():10:10 -> a\n";
  IngestReport java_report = ingest(java_meta, bytesContent(mapping, "mapping.txt"));
  EXPECT_EQ(demand.resolve(java_meta, java_report), 1u);
  EXPECT_TRUE(demand.flushDue(2)) << "a met demand is published at once";
  demand.begin();
  auto out = demand.flush(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, "shop:2.0:java:shop:2.0");
  EXPECT_FALSE(out[0].value) << "a tombstone";
  demand.abort();  // not committed: published again on the next flush
  EXPECT_TRUE(demand.flushDue(3));
  demand.begin();
  out = demand.flush(3);
  demand.commit();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].value);
  EXPECT_EQ(demand.find("shop:2.0:java:shop:2.0"), nullptr);
  ASSERT_NE(demand.find("shop:3.0:java:shop:3.0"), nullptr);

  // The source map of the bundle and the .so, each with its real ingest report.
  const UploadMeta map_meta = uploadMeta(SymbolKind::kSourcemap, "2.0", kBundle);
  const std::string map = std::string(R"({"version":3,"file":")") + kBundle +
                          R"(","sources":["src/a.js"],"names":["f"],"mappings":"AAAAA"})";
  IngestReport map_report = ingest(map_meta, bytesContent(map, "main.js.map"));
  EXPECT_EQ(demand.resolve(map_meta, map_report), 1u);
  const UploadMeta so_meta = uploadMeta(std::nullopt, "1.0");
  IngestReport so_report = ingest(so_meta, fileContent(library.path));
  EXPECT_EQ(demand.resolve(so_meta, so_report), 1u);
  demand.begin();
  out = demand.flush(4);
  demand.commit();
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(demand.size(), 1u);
  // The frames restore now, and the demand does not come back.
  EXPECT_TRUE(nativeMissed("1.0", 5).empty());
  EXPECT_TRUE(missed("2.0", webEvent("w2", "2.0"), 5).empty());
}

TEST_F(SymbolDemandTest, ARestartedOwnerContinuesTheCountsFromTheTopicRecords) {
  SymbolDemand before({.max_keys = 100, .flush_interval_ms = 0});
  before.begin();
  before.observe(2, nativeMissed("1.0", 100));
  before.observe(2, nativeMissed("1.0", 200));
  before.observe(2, missed("1.0", javaEvent("j", "1.0"), 150));
  auto published = before.flush(1);
  before.commit();
  ASSERT_EQ(published.size(), 2u);

  // The new owner reads the partition: records, then a tombstone for the Java key.
  SymbolDemand after({.max_keys = 100, .flush_interval_ms = 0});
  for (const DemandOutput& record : published) {
    ASSERT_TRUE(after.seed(record.partition, record.key, record.value));
  }
  ASSERT_TRUE(after.seed(2, "shop:1.0:java:shop:1.0", std::nullopt));
  EXPECT_EQ(after.size(), 1u);
  EXPECT_FALSE(after.flushDue(10)) << "seeded records are published already";
  after.begin();
  after.observe(2, nativeMissed("1.0", 50));
  auto out = after.flush(11);
  after.commit();
  ASSERT_EQ(out.size(), 1u);
  auto decoded = worker::decodeDemandRecord(*out[0].value);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->events, 3u);
  EXPECT_EQ(decoded->frames, 6u);
  EXPECT_EQ(decoded->first_seen_ms, 50);
  EXPECT_EQ(decoded->last_seen_ms, 200);

  // Records that cannot be read are refused with the reason; the state is untouched.
  std::string future = *out[0].value;
  future.replace(future.find("\"version\":1"), 11, "\"version\":9");
  auto refused = after.seed(2, out[0].key, future);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("version 9"), std::string::npos) << refused.error().message();
  EXPECT_FALSE(after.seed(2, "shop:9.9:native:x", *out[0].value)) << "a record under another key";
  EXPECT_FALSE(after.seed(2, out[0].key, "{}"));
  EXPECT_EQ(after.find(out[0].key)->events, 3u);

  // A revoked partition takes its keys along.
  after.dropPartition(2);
  EXPECT_EQ(after.size(), 0u);
}

}  // namespace
}  // namespace restack::worker_test
