// Hostile uploads: `restack run` as a real child process against a real Apache Kafka broker,
// fed, on both symbols topics and between well-formed uploads and events, every kind of upload a
// hostile or broken producer can send:
//   - bad percent escapes; file:// paths outside the roots, `..` and symlink escapes,
//     /etc/passwd, the worker's own store folder;
//   - URLs to loopback hosts that are not allowed (a test HTTP server counts every request);
//     redirect chains to a disallowed host and redirect loops; a server that trickles bytes;
//     5xx answers, then a success;
//   - truncated gzip; gzip, zstd and zip bombs; a zip holding `a` and then `a/b`; zip path
//     traversal;
//   - events whose restored output exceeds limits.max_output_bytes, and events of 100,000
//     frames.
// It then asserts that the worker kept running, that every well-formed event around the hostile
// messages was restored, that each refusal is on the DLQ with its reason and counted on
// /metrics, that no byte of a local file or of an internal response appears in any output,
// header or log line, that the 5xx-then-success upload ends applied and the events waiting for it
// are restored, and that the worker's peak RSS stayed under its budget.
//
// Every connection stays on loopback: the HTTP server listens on 127.0.0.1 only, and the worker
// may contact only the name "localhost" and the network 127.0.0.1/32.
#include <gtest/gtest.h>
#include <simdjson.h>
#include <zip.h>
#include <zlib.h>
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "formats/common/mapped_file.h"
#include "formats/common/temp_dir.h"
#include "tests/support/kafka_broker.h"
#include "tests/support/kafka_records.h"
#include "tests/support/test_http_server.h"
#include "tests/worker/worker_fixtures.h"
#include "tests/worker/worker_process.h"

namespace restack::worker_test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testkafka::KafkaBroker;
using testkafka::KafkaRecord;

// Strings that must never leave the files and servers that hold them.
constexpr const char* kLocalCanary = "CANARY-LOCAL-FILE-5c1e0a";
constexpr const char* kInternalCanary = "CANARY-INTERNAL-RESPONSE-93b7d2";
constexpr const char* kErrorBodyCanary = "CANARY-ERROR-BODY-4f0e61";

constexpr uint64_t kMaxUploadBytes = 64ull << 20;   // limits.max_upload_bytes of the worker under test
constexpr uint64_t kMaxOutputBytes = 200000;        // limits.max_output_bytes of the worker under test
constexpr uint64_t kRssBudgetBytes = 768ull << 20;  // caches + block cache below, plus working room

// --- compressed payloads, generated without holding the inflated bytes ------------------------

std::string gzipOfZeros(uint64_t size) {
  z_stream stream{};
  deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
  std::string zeros(1 << 20, '\0'), out;
  std::vector<char> buffer(1 << 16);
  for (uint64_t done = 0; done < size;) {
    const uint64_t n = std::min<uint64_t>(zeros.size(), size - done);
    done += n;
    stream.next_in = reinterpret_cast<Bytef*>(zeros.data());
    stream.avail_in = static_cast<uInt>(n);
    const int flush = done == size ? Z_FINISH : Z_NO_FLUSH;
    do {
      stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
      stream.avail_out = static_cast<uInt>(buffer.size());
      deflate(&stream, flush);
      out.append(buffer.data(), buffer.size() - stream.avail_out);
    } while (stream.avail_out == 0);
  }
  deflateEnd(&stream);
  return out;
}

std::string zstdOfZeros(uint64_t size) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 19);
  std::string zeros(1 << 20, '\0'), out;
  std::vector<char> buffer(ZSTD_CStreamOutSize());
  for (uint64_t done = 0; done < size;) {
    const uint64_t n = std::min<uint64_t>(zeros.size(), size - done);
    done += n;
    ZSTD_inBuffer in{zeros.data(), n, 0};
    const ZSTD_EndDirective mode = done == size ? ZSTD_e_end : ZSTD_e_continue;
    size_t remaining = 0;
    do {
      ZSTD_outBuffer output{buffer.data(), buffer.size(), 0};
      remaining = ZSTD_compressStream2(context, &output, &in, mode);
      out.append(buffer.data(), output.pos);
    } while (mode == ZSTD_e_end ? remaining != 0 : in.pos < in.size);
  }
  ZSTD_freeCCtx(context);
  return out;
}

// A zip built with libzip from (name, content) entries; content may be large zeros via `zeros`.
struct ZipEntry {
  std::string name;
  std::string content;
  uint64_t zeros = 0;  // when non-zero: this many zero bytes instead of `content`
};

std::string zipOf(const std::vector<ZipEntry>& entries, const std::string& scratch) {
  const std::string path = scratch + "/archive.zip";
  fs::remove(path);
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  EXPECT_NE(archive, nullptr);
  if (!archive) return {};
  std::vector<std::string> keep;  // libzip reads the buffers at zip_close
  keep.reserve(entries.size());
  for (const ZipEntry& entry : entries) {
    keep.push_back(entry.zeros ? std::string(entry.zeros, '\0') : entry.content);
    zip_source_t* source = zip_source_buffer(archive, keep.back().data(), keep.back().size(), 0);
    EXPECT_GE(zip_file_add(archive, entry.name.c_str(), source, ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE), 0)
        << entry.name << ": " << zip_strerror(archive);
  }
  EXPECT_EQ(zip_close(archive), 0);
  auto bytes = readFile(path);
  return bytes ? *bytes : std::string();
}

// --- the fixture --------------------------------------------------------------------------------

KafkaBroker* sharedBroker(std::string& error) {
  static std::unique_ptr<KafkaBroker> broker;
  static std::string start_error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    auto started = KafkaBroker::start();
    if (started)
      broker = std::move(*started);
    else
      start_error = started.error().message();
  }
  error = start_error;
  return broker.get();
}

std::string hexAddress(uint64_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

// An Android native crash event with `frames` frames in its crashed thread.
std::string bigNativeEvent(const std::string& id, const std::string& app, const std::string& build,
                           const NativeLibrary& library, size_t frames) {
  const std::string module = " libcrash.so [arm64-v8a::" + library.build_id + "]";
  std::string stack;
  stack.reserve(frames * (module.size() + 24));
  for (size_t i = 0; i < frames; ++i) {
    if (i) stack += "\\n";
    stack += "pc " + hexAddress(i % 2 ? library.caller_return : library.crash_address) + module;
  }
  return R"({"event_id":")" + id + R"(","kind":"crash","platform":"android","app":")" + app + R"(","build_id":")" +
         build + R"(","exception":{"type":"SIGSEGV","message":"deep recursion"},)" +
         R"("threads":[{"name":"main","crashed":true,"stack":")" + stack + R"("}]})";
}

class HostileUploads : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    broker_ = sharedBroker(error);
    ASSERT_NE(broker_, nullptr) << "the Kafka test broker did not start: " << error;
    const std::string base = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    topics_ = {base + ".events",       base + ".symbols", base + ".symbols.shared", base + ".symbolicated",
               base + ".fingerprints", base + ".dlq",     base + ".pending"};
    // Room for the 100,000-frame event on the events topic; outputs keep the broker's default.
    ASSERT_TRUE(broker_->createTopics({{topics_[0], 2, {{"max.message.bytes", "16777216"}}},
                                       {topics_[1], 2},
                                       {topics_[2], 1},
                                       {topics_[3], 2},
                                       {topics_[4], 2},
                                       {topics_[5], 2},
                                       {topics_[6], 2, {{"cleanup.policy", "compact"}}}}));
    auto dir = TempDir::create("restack-hostile-");
    ASSERT_TRUE(dir);
    dir_.emplace(std::move(*dir));
    roots_ = dir_->path() + "/uploads";
    store_ = dir_->path() + "/store";
    fs::create_directories(roots_);
    ASSERT_TRUE(http_.started());
  }

  void TearDown() override {
    if (HasFailure() && broker_ != nullptr) std::fprintf(stderr, "---- broker ----\n%s", broker_->diagnosis().c_str());
  }

  const std::string& bootstrap() const { return broker_->bootstrap(); }

  std::unique_ptr<WorkerProcess> worker(int http_port) {
    const std::string config = dir_->path() + "/restack.yaml";
    std::ofstream out(config);
    out << "kafka:\n"
        << "  brokers: \"" << bootstrap() << "\"\n"
        << "  group_id: \"" << topics_[0] << ".group\"\n"
        << "  session_timeout_ms: 6000\n"
        << "  topics:\n"
        << "    events: \"" << topics_[0] << "\"\n"
        << "    symbols: \"" << topics_[1] << "\"\n"
        << "    symbols_shared: \"" << topics_[2] << "\"\n"
        << "    symbolicated: \"" << topics_[3] << "\"\n"
        << "    fingerprints: \"" << topics_[4] << "\"\n"
        << "    dlq: \"" << topics_[5] << "\"\n"
        << "    pending: \"" << topics_[6] << "\"\n"
        << "store:\n  path: \"" << store_ << "\"\n  block_cache_mb: 32\n"
        << "cache:\n  native_mb: 32\n  proguard_mb: 32\n  sourcemap_mb: 32\n"
        << "limits:\n"
        << "  max_upload_bytes: " << kMaxUploadBytes << "\n"
        << "  max_output_bytes: " << kMaxOutputBytes << "\n"
        << "worker:\n  batch_size: 50\n  batch_linger_ms: 20\n"
        << "uploads:\n"
        << "  file_roots: \"" << roots_ << "\"\n"
        << "  http_hosts: \"localhost\"\n"
        << "  allow_plain_http: true\n"
        << "  allowed_networks: \"127.0.0.1/32\"\n"
        << "  max_redirects: 3\n"
        << "  connect_timeout_ms: 2000\n"
        << "  total_timeout_ms: 3000\n"
        << "  low_speed_bytes_per_s: 1024\n"
        << "  low_speed_time_s: 1\n"
        << "  retry_initial_backoff_ms: 300\n"
        << "  retry_max_backoff_ms: 1000\n"
        << "  retry_deadline_s: 12\n"
        << "observability:\n  http_port: " << http_port << "\n  bind_address: \"127.0.0.1\"\n  log_level: info\n";
    out.close();
    return std::make_unique<WorkerProcess>("worker", config, dir_->path() + "/worker.log");
  }

  // Produces `records`; returns them with the partition and offset each got.
  std::vector<KafkaRecord> produce(const std::string& topic, const std::vector<KafkaRecord>& records) {
    testkafka::ProduceOptions options;
    options.properties = {{"message.max.bytes", "16777216"}};
    auto sent = testkafka::produceAll(bootstrap(), topic, records, options);
    EXPECT_TRUE(sent) << sent.error().message();
    return sent ? std::move(*sent) : std::vector<KafkaRecord>{};
  }

  std::vector<KafkaRecord> readTopic(const std::string& topic) {
    testkafka::ConsumeOptions options;
    options.idle = 500ms;
    options.properties = {{"fetch.message.max.bytes", "16777216"}};
    auto records = testkafka::consumeAll(bootstrap(), topic, options);
    EXPECT_TRUE(records) << records.error().message();
    return records ? std::move(*records) : std::vector<KafkaRecord>{};
  }

  KafkaBroker* broker_ = nullptr;
  std::vector<std::string> topics_;  // events, symbols, shared, symbolicated, fingerprints, dlq, pending
  std::optional<TempDir> dir_;
  std::string roots_, store_;
  test::TestHttpServer http_;
};

// One hostile upload: where it goes (both symbols topics), and what must become of it.
struct Hostile {
  std::string name;
  KafkaRecord record;       // key and topic-specific fields are filled per topic
  std::string expect_code;  // the restack.error.code of its DLQ record
};

TEST_F(HostileUploads, NothingAProducerSendsStopsFoolsOrExhaustsTheWorker) {
  const NativeLibrary& library = nativeLibrary();
  ASSERT_FALSE(library.path.empty());
  auto library_bytes = readFile(library.path);
  ASSERT_TRUE(library_bytes);

  // Local files a location must never reach, holding a canary.
  const std::string outside = dir_->path() + "/outside.so";
  std::ofstream(outside) << kLocalCanary << "\n";
  fs::create_symlink(outside, roots_ + "/escape.so");
  // Internal responses a location must never carry into an output.
  http_.serveBody("/internal", kInternalCanary);
  http_.serveRedirect("/redirect-out", http_.url("/internal"));  // 127.0.0.1: not an allowed host
  http_.serveRedirect("/loop-a", http_.url("localhost", "/loop-b"));
  http_.serveRedirect("/loop-b", http_.url("localhost", "/loop-a"));
  http_.serveTrickle("/trickle", 1 << 20, 64);
  // The late upload is the same library under another build id, so that only it can restore
  // the events that wait for it (symbols are found by build id, whatever the app).
  NativeLibrary late_library = library;
  std::string late_bytes = *library_bytes;
  {
    std::string id_bytes;
    for (size_t i = 0; i + 1 < library.build_id.size(); i += 2) {
      id_bytes.push_back(static_cast<char>(std::stoi(library.build_id.substr(i, 2), nullptr, 16)));
    }
    const size_t at = late_bytes.find(id_bytes);
    ASSERT_NE(at, std::string::npos) << "the build id note of libcrash.so";
    ASSERT_EQ(late_bytes.find(id_bytes, at + 1), std::string::npos) << "the build id appears once";
    late_bytes[at] = static_cast<char>(late_bytes[at] ^ 0x5a);
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(late_bytes[at]));
    late_library.build_id = hex + library.build_id.substr(2);
  }
  http_.serveSequence("/late.so", {{500, kErrorBodyCanary, {}}, {503, kErrorBodyCanary, {}}, {200, late_bytes, {}}});

  const std::string scratch = dir_->path();
  auto location = [](const std::string& url) {
    KafkaRecord record;
    record.value = std::string();
    record.headers = {{"restack.kind", std::string("elf")}, {"restack.location", url}};
    return record;
  };
  auto content = [](std::string bytes) {
    KafkaRecord record;
    record.value = std::move(bytes);
    return record;
  };
  std::string truncated_gzip = gzipOfZeros(1 << 20);
  truncated_gzip.resize(truncated_gzip.size() / 2);
  const std::vector<Hostile> hostile = {
      {"bad percent escape", location("file:///%zz"), "invalid_argument"},
      {"bad percent escape at the end", location("file://" + roots_ + "/x%4"), "invalid_argument"},
      {"/etc/passwd", location("file:///etc/passwd"), "invalid_argument"},
      {"outside the roots", location("file://" + outside), "invalid_argument"},
      {"dot-dot escape", location("file://" + roots_ + "/../outside.so"), "invalid_argument"},
      {"symlink escape", location("file://" + roots_ + "/escape.so"), "invalid_argument"},
      {"the worker's own store", location("file://" + store_ + "/CURRENT"), "invalid_argument"},
      {"loopback host not allowed", location(http_.url("/internal")), "invalid_argument"},
      {"redirect to a disallowed host", location(http_.url("localhost", "/redirect-out")), "invalid_argument"},
      {"redirect loop", location(http_.url("localhost", "/loop-a")), "invalid_argument"},
      {"trickling server", location(http_.url("localhost", "/trickle")), "unavailable"},
      {"truncated gzip", content(truncated_gzip), "malformed_input"},
      {"gzip bomb", content(gzipOfZeros(1ull << 30)), "too_large"},
      {"zstd bomb", content(zstdOfZeros(1ull << 30)), "too_large"},
      {"zip bomb", content(zipOf({{"libcrash.so", "", 256ull << 20}}, scratch)), "too_large"},
      {"zip with a then a/b", content(zipOf({{"a", "x"}, {"a/b", "y"}}, scratch)), "malformed_input"},
      {"zip path traversal", content(zipOf({{"../../evil.so", "x"}}, scratch)), "malformed_input"},
  };

  // Well-formed traffic around the hostile messages: app "good" has its symbols at once, app
  // "late" waits for the upload that answers 500, 503 and then succeeds.
  std::vector<KafkaRecord> uploads, shared_uploads, events;
  KafkaRecord good_upload;
  good_upload.key = "good:g1";
  good_upload.value = *library_bytes;
  good_upload.headers = {{"restack.kind", std::string("elf")}, {"restack.file_name", std::string("libcrash.so")}};
  uploads.push_back(good_upload);
  int good_events = 0;
  auto goodEvent = [&] {
    KafkaRecord event;
    event.key = "good:g1";
    event.value = nativeCrashEvent("good-" + std::to_string(good_events++), "good", "g1", library);
    events.push_back(event);
  };
  for (int i = 0; i < 3; ++i) {
    KafkaRecord event;
    event.key = "late:l1";
    event.value = nativeCrashEvent("late-" + std::to_string(i), "late", "l1", late_library);
    events.push_back(event);
  }
  for (const Hostile& h : hostile) {
    KafkaRecord on_symbols = h.record;
    on_symbols.key = "evil:" + std::to_string(uploads.size());
    uploads.push_back(on_symbols);
    KafkaRecord on_shared = h.record;
    on_shared.key = "0123456789abcdef0123456789abcdef";
    shared_uploads.push_back(on_shared);
    goodEvent();
  }
  KafkaRecord late_upload = location(http_.url("localhost", "/late.so"));
  late_upload.key = "late:l1";
  uploads.push_back(late_upload);
  // Events whose restored output cannot fit, and one of 100,000 frames.
  for (int i = 0; i < 2; ++i) {
    KafkaRecord event;
    event.key = "good:g1";
    event.value = bigNativeEvent("oversized-" + std::to_string(i), "good", "g1", library, 2000);
    events.push_back(event);
    goodEvent();
  }
  KafkaRecord deep;
  deep.key = "good:g1";
  deep.value = bigNativeEvent("deep", "good", "g1", library, 100000);
  events.push_back(deep);
  for (int i = 0; i < 5; ++i) goodEvent();

  produce(topics_[1], uploads);
  produce(topics_[2], shared_uploads);
  // Where each event landed, to find its DLQ record: "<partition>:<offset>" -> event id.
  std::map<std::string, std::string> event_at;
  for (const KafkaRecord& sent : produce(topics_[0], events)) {
    Json json;
    if (sent.value->size() < (1 << 20) && json.parse(sent.value)) {
      event_at[std::to_string(sent.partition) + ":" + std::to_string(sent.offset)] = stringAt(json.root["event_id"]);
    } else {
      event_at[std::to_string(sent.partition) + ":" + std::to_string(sent.offset)] = "deep";
    }
  }
  ASSERT_EQ(event_at.size(), events.size());

  const int status_port = freeLoopbackPort();
  auto process = worker(status_port);
  ASSERT_TRUE(process->start());
  const uint64_t refusals = 2 * hostile.size();
  // Every refusal on the DLQ (the trickling one after its retry deadline) and every event out.
  ASSERT_TRUE(waitUntil(
      [&] {
        auto rejected = metric(status_port, "uploads_rejected_total");
        auto restored = metric(status_port, "events_restored_later_total");
        return rejected && *rejected >= refusals && restored && *restored >= 3;
      },
      150s, 500ms))
      << "uploads rejected: " << metric(status_port, "uploads_rejected_total").value_or(0) << " of " << refusals
      << ", late events restored: " << metric(status_port, "events_restored_later_total").value_or(0);
  ASSERT_TRUE(process->running()) << "the worker stopped";
  EXPECT_EQ(httpGet(status_port, "/healthz").status, 200);
  const uint64_t peak_rss = peakRssBytes(process->pid());
  auto stopped = process->terminate();
  ASSERT_TRUE(stopped);
  EXPECT_TRUE(WIFEXITED(*stopped) && WEXITSTATUS(*stopped) == 0) << describeWaitStatus(*stopped);

  const auto restored = readTopic(topics_[3]);
  const auto fingerprints = readTopic(topics_[4]);
  const auto dead = readTopic(topics_[5]);

  // Every well-formed event is restored; the late ones end restored once their upload applied.
  std::map<std::string, std::string> final_status;
  std::set<std::string> truncated_ids;
  for (const KafkaRecord& record : restored) {
    EXPECT_LE(record.value->size(), kMaxOutputBytes);
    Json json;
    ASSERT_TRUE(json.parse(record.value));
    const std::string id = stringAt(json.root["event_id"]);
    const std::string status = stringAt(json.root["symbolication"]["status"]);
    if (final_status[id] != "complete") final_status[id] = status;
    if (record.value->find("\"truncated\"") != std::string::npos) truncated_ids.insert(id);
  }
  for (int i = 0; i < good_events; ++i) {
    EXPECT_EQ(final_status["good-" + std::to_string(i)], "complete") << "good-" << i;
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(final_status["late-" + std::to_string(i)], "complete") << "late-" << i << " waits for /late.so";
  }
  EXPECT_EQ(http_.hits("/late.so"), 3u) << "two passing failures, then the success";

  // Oversized outputs were cut down and marked, or sent to the DLQ with a reason.
  std::map<std::string, const KafkaRecord*> dead_events;  // event id -> its DLQ record
  std::map<std::string, std::vector<const KafkaRecord*>> dead_uploads_by_key;
  for (const KafkaRecord& record : dead) {
    EXPECT_LE(record.value ? record.value->size() : 0, kMaxOutputBytes + 16384);
    ASSERT_TRUE(record.header("restack.error")) << "every DLQ record carries its reason";
    ASSERT_TRUE(record.header("restack.source.topic"));
    if (*record.header("restack.source.topic") == topics_[0]) {
      dead_events[event_at[record.header("restack.source.partition").value_or("") + ":" +
                           record.header("restack.source.offset").value_or("")]] = &record;
    } else {
      dead_uploads_by_key[record.key.value_or("")].push_back(&record);
    }
  }
  EXPECT_EQ(dead_events.count(""), 0u) << "a DLQ record names an offset nothing was produced at";
  for (const std::string id : {"oversized-0", "oversized-1", "deep"}) {
    // Frames past limits.max_frames_per_thread stay raw, so such an event is at best "partial".
    const bool cut = truncated_ids.count(id) > 0 && (final_status[id] == "partial" || final_status[id] == "complete");
    const bool dead_lettered =
        dead_events.count(id) > 0 && dead_events[id]->header("restack.error.code").value_or("") == "too_large";
    EXPECT_TRUE(cut || dead_lettered) << id << " was neither cut down to fit nor dead-lettered as too large (status '"
                                      << final_status[id] << "', marked truncated: " << truncated_ids.count(id)
                                      << ", on the DLQ: " << dead_events.count(id) << ")";
  }

  // Each refusal: on the DLQ with its reason code, from the topic it came from.
  std::map<std::string, int> refused_by_topic;
  for (size_t i = 0; i < hostile.size(); ++i) {
    SCOPED_TRACE(hostile[i].name);
    const std::string symbols_key = *uploads[1 + i].key;
    ASSERT_EQ(dead_uploads_by_key[symbols_key].size(), 1u) << "DLQ records for " << symbols_key;
    const KafkaRecord& record = *dead_uploads_by_key[symbols_key].front();
    EXPECT_EQ(record.header("restack.error.code").value_or(""), hostile[i].expect_code)
        << record.header("restack.error").value_or("");
    ++refused_by_topic[*record.header("restack.source.topic")];
  }
  EXPECT_EQ(dead_uploads_by_key["0123456789abcdef0123456789abcdef"].size(), hostile.size())
      << "every hostile upload on the shared topic is refused too";
  EXPECT_EQ(http_.hits("/internal"), 0u) << "a URL the policy refuses must never be contacted";

  // No byte of a local file or internal response anywhere: outputs, headers, the log.
  auto leaks = [&](const std::string& text) {
    for (const char* canary : {kLocalCanary, kInternalCanary, kErrorBodyCanary, "root:x:0:0"}) {
      if (text.find(canary) != std::string::npos) return std::string(canary);
    }
    return std::string();
  };
  for (const auto* topic : {&restored, &fingerprints, &dead}) {
    for (const KafkaRecord& record : *topic) {
      EXPECT_EQ(leaks(record.value.value_or("")), "") << "in a record value";
      for (const auto& header : record.headers) EXPECT_EQ(leaks(header.value.value_or("")), "") << header.name;
    }
  }
  const std::string log = process->log();
  EXPECT_EQ(leaks(log), "") << "in the worker's log";
  EXPECT_NE(log.find("restack worker stopped cleanly"), std::string::npos);

  std::fprintf(stderr, "[result] %zu hostile uploads refused on each symbols topic; worker peak RSS %llu MiB\n",
               hostile.size(), static_cast<unsigned long long>(peak_rss >> 20));
  EXPECT_GT(peak_rss, 0u);
  EXPECT_LT(peak_rss, kRssBudgetBytes) << "peak RSS " << (peak_rss >> 20) << " MiB";
}

}  // namespace
}  // namespace restack::worker_test
