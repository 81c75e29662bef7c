// The event pipeline without Kafka: raw event in, restored event + fingerprint record or DLQ
// record out, against a real .so ingested into a real store.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <random>

#include "formats/common/temp_dir.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "tests/worker/worker_fixtures.h"
#include "worker/pipeline/event_processor.h"

namespace restack::worker_test {
namespace {

using pipeline::OutputKind;

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::create("pipeline-test-");
    ASSERT_TRUE(dir);
    dir_.emplace(std::move(*dir));
    StoreOptions options;
    options.path = dir_->path();
    auto store = SymbolStore::open(options);
    ASSERT_TRUE(store) << store.error().message();
    store_ = std::move(*store);
    const NativeLibrary& library = nativeLibrary();
    ASSERT_FALSE(library.path.empty());
    UploadMeta meta;
    meta.app = "shop";
    meta.build_id = "1.0";
    UploadContent content;
    content.path = library.path;
    auto report = ingestUpload(*store_, meta, content, IngestOptions{});
    ASSERT_TRUE(report) << report.error().message();
    symbolizer_ = std::make_unique<Symbolizer>(*store_, SymbolizerOptions{});
    processor_ = std::make_unique<pipeline::EventProcessor>(*symbolizer_, pipeline::ProcessorOptions{});
  }

  pipeline::ProcessResult process(const std::string& event) {
    auto result = processor_->process("shop:1.0", event);
    EXPECT_TRUE(result) << result.error().message();
    return result ? std::move(*result) : pipeline::ProcessResult{};
  }

  std::optional<TempDir> dir_;
  std::unique_ptr<SymbolStore> store_;
  std::unique_ptr<Symbolizer> symbolizer_;
  std::unique_ptr<pipeline::EventProcessor> processor_;
  simdjson::dom::parser parser_;
};

TEST_F(PipelineTest, RestoresNativeFramesLikeLlvmSymbolizerAndPassesUnknownFieldsThrough) {
  const NativeLibrary& library = nativeLibrary();
  const std::string event = nativeCrashEvent("e1", "shop", "1.0", library);
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  ASSERT_EQ(result.records.size(), 2u);
  const auto& restored = result.records[0];
  EXPECT_EQ(restored.kind, OutputKind::kSymbolicated);
  ASSERT_EQ(result.records[1].kind, OutputKind::kFingerprint);
  EXPECT_EQ(restored.key, result.records[1].key);
  EXPECT_TRUE(restored.key.starts_with("shop:"));

  // Unknown fields pass through byte for byte (2.50 stays 2.50).
  EXPECT_NE(restored.value.find(R"("sdk":{"name":"apm","version":[1,2.50,null]})"), std::string::npos)
      << restored.value;

  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(restored.value).get(root), simdjson::SUCCESS) << restored.value;
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "complete");
  simdjson::dom::array frames = root["threads"].at(0)["frames"];
  ASSERT_GE(frames.size(), 2u);
  simdjson::dom::element first = frames.at(0);
  EXPECT_EQ(std::string_view(first["status"]), "symbolicated");
  EXPECT_EQ(std::string_view(first["function"]), library.expected_crash_function);
  EXPECT_EQ(std::string_view(first["tier"]), "dwarf");
  EXPECT_EQ(std::string_view(first["file"]).ends_with("crash.c"), true);
  // The second raw frame is a return address: looked up at address - 1, inside entry().
  simdjson::dom::element last = frames.at(frames.size() - 1);
  EXPECT_EQ(std::string_view(last["function"]), library.expected_caller_function);
  std::string_view restored_text = root["threads"].at(0)["restored"];
  EXPECT_NE(restored_text.find(library.expected_crash_function + " (in libcrash.so) (crash.c:"), std::string::npos)
      << restored_text;

  simdjson::dom::element record;
  ASSERT_EQ(parser_.parse(result.records[1].value).get(record), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(record["event_id"]), "e1");
  EXPECT_EQ(std::string_view(record["algorithm"]), "v1");
  EXPECT_EQ(restored.key, "shop:" + std::string(std::string_view(record["fingerprint"])));
}

TEST_F(PipelineTest, MissingSymbolsArePendingAndNamed) {
  NativeLibrary other;
  other.build_id = "00112233445566778899aabbccddeeff00112233";
  other.crash_address = 0x1000;
  other.caller_return = 0x2000;
  auto result = process(nativeCrashEvent("e2", "shop", "1.0", other));
  ASSERT_FALSE(result.dead_letter);
  EXPECT_TRUE(result.pending_symbols);
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(result.records[0].value).get(root), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "pending");
  EXPECT_EQ(std::string_view(root["threads"].at(0)["frames"].at(0)["status"]), "missing_symbols");
  std::string missing = std::string(std::string_view(root["symbolication"]["missing"].at(0)));
  EXPECT_TRUE(other.build_id.starts_with(missing) || missing.starts_with(other.build_id.substr(0, 32))) << missing;
}

TEST_F(PipelineTest, UnrecognisedLinesAreUnparsedAndLagSamplesAreRestored) {
  const NativeLibrary& library = nativeLibrary();
  char line[128];
  std::snprintf(line, sizeof line, "pc 0x%016llx libcrash.so [arm64-v8a::%s]",
                static_cast<unsigned long long>(library.crash_address), library.build_id.c_str());
  const std::string event = std::string(R"({"event_id":"lag1","kind":"lag","platform":"android","app":"shop",)") +
                            R"("build_id":"1.0","threads":[{"name":"main","samples":[)" +
                            R"({"timestamp_ms":1,"stack":")" + line + R"(\nThread 0 Crashed:"},)" +
                            R"({"timestamp_ms":2,"stack":")" + line + R"("}]}]})";
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter) << result.error;
  simdjson::dom::element root;
  ASSERT_EQ(parser_.parse(result.records[0].value).get(root), simdjson::SUCCESS) << result.records[0].value;
  EXPECT_EQ(std::string_view(root["symbolication"]["status"]), "partial");
  simdjson::dom::array samples = root["threads"].at(0)["samples"];
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(int64_t(samples.at(0)["timestamp_ms"]), 1);
  EXPECT_EQ(std::string_view(samples.at(0)["frames"].at(0)["function"]), library.expected_crash_function);
  EXPECT_EQ(std::string_view(samples.at(0)["frames"].at(1)["status"]), "unparsed");
  EXPECT_EQ(std::string_view(samples.at(1)["frames"].at(0)["status"]), "symbolicated");
}

TEST_F(PipelineTest, UnreadableEventsGoToTheDlqWithTheirReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "not valid JSON"},
      {"[1,2]", "must be a JSON object"},
      {R"({"platform":"ios","build_id":"1","threads":[]})", "missing field 'app'"},
      {R"({"app":"a","platform":"ios","threads":[]})", "missing field 'build_id'"},
      {R"({"app":"a","build_id":"1","platform":"symbian","threads":[]})", "unknown platform"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":"x"})", "'threads' must be an array"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[{"name":"t"}]})", "neither 'stack' nor 'samples'"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[{"stack":5}]})", "must be a string"},
      {R"({"app":"a","build_id":"1","platform":"ios"})", "missing field 'threads'"},
      {R"({"app":"a","build_id":"1","platform":"ios","kind":"boom","threads":[]})", "unknown kind"},
      {R"({"app":"a","build_id":"1","platform":"ios","threads":[],"x":12e})", "not valid JSON"},
  };
  for (const auto& [event, reason] : cases) {
    auto result = process(event);
    ASSERT_TRUE(result.dead_letter) << event;
    ASSERT_EQ(result.records.size(), 1u);
    const auto& dlq = result.records[0];
    EXPECT_EQ(dlq.kind, OutputKind::kDeadLetter);
    EXPECT_EQ(dlq.value, event);  // the input bytes unchanged
    EXPECT_EQ(dlq.key, "shop:1.0");
    ASSERT_FALSE(dlq.headers.empty());
    EXPECT_EQ(dlq.headers[0].first, "restack.error");
    EXPECT_NE(dlq.headers[0].second.find(reason), std::string::npos) << event << " -> " << dlq.headers[0].second;
  }
  pipeline::ProcessorOptions small;
  small.event.max_event_bytes = 64;
  pipeline::EventProcessor bounded(*symbolizer_, small);
  auto big = bounded.process("k", nativeCrashEvent("big", "shop", "1.0", nativeLibrary()));
  ASSERT_TRUE(big);
  ASSERT_TRUE(big->dead_letter);
  EXPECT_NE(big->error.find("max_event_bytes"), std::string::npos);
}

TEST_F(PipelineTest, OutputIsValidJsonEvenForInvalidUtf8FromSymbols) {
  // Frames echo raw lines; a raw line with a control character must be escaped, not copied.
  const std::string event =
      R"J({"app":"a","build_id":"1","platform":"web","threads":[{"stack":"weird \u0001 line\n at x (y)"}]})J";
  auto result = process(event);
  ASSERT_FALSE(result.dead_letter);
  simdjson::dom::element root;
  EXPECT_EQ(parser_.parse(result.records[0].value).get(root), simdjson::SUCCESS) << result.records[0].value;
}

// Deterministic fuzzing of the whole pipeline: mutated events never crash it, and whatever comes
// out is either a DLQ record carrying the input unchanged or a restored event that is valid JSON.
TEST_F(PipelineTest, MutatedEventsNeverCrashAndAlwaysYieldValidOutput) {
  const std::string seed = nativeCrashEvent("fuzz", "shop", "1.0", nativeLibrary());
  const std::string lag =
      R"({"app":"a","build_id":"1","platform":"react_native","kind":"lag","threads":[)"
      R"J({"name":"main","samples":[{"timestamp_ms":5,"stack":"at f (address at index.android.bundle:1:9)"}]}]})J";
  std::mt19937 random(99);
  const std::string alphabet = "{}[]\":,\\ntu0123456789.-eE aAzZ\x01\xff";
  size_t restored = 0, dead = 0;
  for (int i = 0; i < 10000; ++i) {
    std::string event = (i % 2) ? seed : lag;
    int edits = 1 + random() % 4;
    for (int e = 0; e < edits && !event.empty(); ++e) {
      size_t at = random() % event.size();
      switch (random() % 3) {
        case 0:
          event[at] = alphabet[random() % alphabet.size()];
          break;
        case 1:
          event.erase(at, 1 + random() % 8);
          break;
        default:
          event.insert(at, 1, alphabet[random() % alphabet.size()]);
      }
    }
    auto result = processor_->process("k", event);
    ASSERT_TRUE(result) << result.error().message();
    if (result->dead_letter) {
      ++dead;
      EXPECT_EQ(result->records.at(0).value, event);
    } else {
      ++restored;
      simdjson::dom::element root;
      ASSERT_EQ(parser_.parse(result->records.at(0).value).get(root), simdjson::SUCCESS) << event;
      ASSERT_EQ(parser_.parse(result->records.at(1).value).get(root), simdjson::SUCCESS) << event;
    }
  }
  EXPECT_GT(restored, 0u);
  EXPECT_GT(dead, 0u);
}

}  // namespace
}  // namespace restack::worker_test
