#include "worker/kafka/symbol_feed.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <map>

#include "symbolstore/ingest.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/upload_fetch.h"
#include "worker/kafka/upload_message.h"

namespace restack::worker {
namespace {

using Clock = std::chrono::steady_clock;
using PartitionKey = std::pair<std::string, int32_t>;  // topic, partition

// How long a catch-up may wait for the brokers before the worker gives up (and restarts).
constexpr auto kCatchUpTimeout = std::chrono::minutes(5);

}  // namespace

struct SymbolFeed::Impl {
  config::Config config;
  SymbolStore& store;
  RdKafka::Producer& dlq_producer;
  Metrics& metrics;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::set<PartitionKey> assigned;
  std::set<PartitionKey> at_end;  // partitions whose last event was "end of partition"
  IngestedCallback on_ingested;

  Impl(const config::Config& c, SymbolStore& s, RdKafka::Producer& p, Metrics& m)
      : config(c), store(s), dlq_producer(p), metrics(m) {}

  Status reassign() {
    std::vector<RdKafka::TopicPartition*> list;
    for (const auto& [topic, partition] : assigned) {
      auto applied = store.appliedOffset(topic, partition);
      if (!applied) return applied.error();
      int64_t start = applied->value_or(RdKafka::Topic::OFFSET_BEGINNING);
      list.push_back(RdKafka::TopicPartition::create(topic, partition, start));
    }
    RdKafka::ErrorCode code = consumer->assign(list);
    for (auto* p : list) delete p;
    if (code != RdKafka::ERR_NO_ERROR) return ioError("cannot assign symbols partitions: " + errorText(code));
    at_end.clear();
    return Status::ok();
  }

  void reject(const RdKafka::Message& message, const Error& error) {
    ++metrics.uploads_rejected;
    spdlog::error("symbol upload at {}/{}:{} rejected: {}", message.topic_name(), message.partition(), message.offset(),
                  error.message());
    RdKafka::Headers* headers = RdKafka::Headers::create();
    headers->add("restack.error", error.message());
    headers->add("restack.error.code", errorCodeName(error.code()));
    headers->add("restack.source.topic", message.topic_name());
    headers->add("restack.source.partition", std::to_string(message.partition()));
    headers->add("restack.source.offset", std::to_string(message.offset()));
    const std::string key = message.key() ? *message.key() : std::string();
    RdKafka::ErrorCode code = dlq_producer.produce(config.kafka.topics.dlq, RdKafka::Topic::PARTITION_UA,
                                                   RdKafka::Producer::RK_MSG_COPY, const_cast<void*>(message.payload()),
                                                   message.len(), key.data(), key.size(), 0, headers, nullptr);
    if (code != RdKafka::ERR_NO_ERROR) {
      delete headers;
      spdlog::error("could not copy the rejected upload to the DLQ: {}", errorText(code));
    }
  }

  Status apply(RdKafka::Message& message) {
    const bool shared = message.topic_name() == config.kafka.topics.symbols_shared;
    Headers headers;
    if (const RdKafka::Headers* raw = message.headers()) {
      for (const auto& header : raw->get_all()) {
        headers.emplace_back(header.key(), std::string(static_cast<const char*>(header.value()), header.value_size()));
      }
    }
    const std::string key = message.key() ? *message.key() : std::string();
    auto upload = decodeUploadMessage(key, headers, shared);
    Status outcome;
    if (!upload) {
      reject(message, upload.error());
    } else {
      UploadContent content;
      content.display_name = upload->file_name;
      std::optional<FetchedUpload> fetched;
      if (!upload->location.empty()) {
        auto got = fetchUpload(upload->location, uploadPolicyFrom(config), config.limits.max_upload_bytes);
        if (!got) {
          reject(message, got.error());
        } else {
          fetched.emplace(std::move(*got));
          content.path = fetched->path;
        }
      } else {
        content.bytes = std::string_view(static_cast<const char*>(message.payload()), message.len());
      }
      if (upload->location.empty() || fetched) {
        IngestOptions options;
        options.max_input_bytes = config.limits.max_upload_bytes;
        const std::string label = upload->file_name.empty() ? key : upload->file_name;
        options.progress = [this, label, last = Clock::now()](uint64_t done, uint64_t total,
                                                              std::string_view stage) mutable {
          // A long ingest is progress, not a stalled loop.
          metrics.last_loop_ms =
              std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
          if (Clock::now() - last < std::chrono::seconds(5)) return;
          last = Clock::now();
          spdlog::info("ingesting {}: {} {}/{}", label, stage, done, total);
        };
        auto report = ingestUpload(store, upload->meta, content, options);
        if (!report) {
          // A store that cannot be written is the worker's problem, not the upload's.
          if (report.error().code() == ErrorCode::kIo && content.path.empty()) return report.error();
          reject(message, report.error());
        } else {
          ++metrics.uploads_ingested;
          if (on_ingested) on_ingested(upload->meta, *report);
          spdlog::info("ingested {} upload for {}:{} ({} records, ids: {})", symbolKindName(report->kind),
                       upload->meta.app, upload->meta.build_id, report->records, fmt::join(report->ids, ","));
          for (const auto& warning : report->warnings) spdlog::warn("{}: {}", label, warning);
        }
      }
    }
    rocksdb::WriteBatch progress;
    store.recordAppliedOffset(progress, message.topic_name(), message.partition(), message.offset() + 1);
    return store.write(progress);
  }

  // Consumes until `done()` or the timeout; returns the number of uploads applied.
  template <typename Done>
  Expected<size_t> consumeUntil(Done&& done, std::chrono::milliseconds poll, Clock::time_point deadline) {
    size_t applied = 0;
    while (!done()) {
      if (Clock::now() > deadline) {
        return ioError("symbols topics could not be read to their end within " +
                       std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kCatchUpTimeout).count()) +
                       " s; are the brokers reachable?");
      }
      std::unique_ptr<RdKafka::Message> message(consumer->consume(static_cast<int>(poll.count())));
      if (message->err() == RdKafka::ERR__TIMED_OUT) {
        if (poll.count() == 0) break;
        continue;
      }
      PartitionKey where{message->topic_name(), message->partition()};
      if (message->err() == RdKafka::ERR__PARTITION_EOF) {
        at_end.insert(where);
        continue;
      }
      if (message->err() != RdKafka::ERR_NO_ERROR) {
        spdlog::warn("symbols consumer: {}", message->errstr());
        continue;
      }
      at_end.erase(where);
      RESTACK_RETURN_IF_ERROR(apply(*message));
      ++applied;
    }
    return applied;
  }

  Status catchUp() {
    auto applied = consumeUntil(
        [&] {
          for (const auto& p : assigned) {
            if (!at_end.count(p)) return false;
          }
          return true;
        },
        std::chrono::milliseconds(100), Clock::now() + kCatchUpTimeout);
    return applied.status();
  }
};

SymbolFeed::SymbolFeed(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SymbolFeed::~SymbolFeed() {
  if (impl_->consumer) impl_->consumer->close();
}

Expected<std::unique_ptr<SymbolFeed>> SymbolFeed::create(const config::Config& config, SymbolStore& store,
                                                         RdKafka::Producer& dlq_producer, Metrics& metrics,
                                                         IngestedCallback on_ingested) {
  auto impl = std::make_unique<Impl>(config, store, dlq_producer, metrics);
  impl->on_ingested = std::move(on_ingested);
  auto properties = commonProperties(config, "restack-symbols");
  // Positions live in the symbol store, never in Kafka: this group id is never committed to.
  properties.insert({"group.id", config.kafka.group_id + ".symbols"});
  properties.insert({"enable.auto.commit", "false"});
  properties.insert({"enable.auto.offset.store", "false"});
  properties.insert({"enable.partition.eof", "true"});
  properties.insert({"auto.offset.reset", "earliest"});
  properties.insert({"fetch.message.max.bytes", "67108864"});
  auto conf = makeConf(properties);
  if (!conf) return conf.error();
  std::string error;
  impl->consumer.reset(RdKafka::KafkaConsumer::create(conf->get(), error));
  if (!impl->consumer) return invalidArgument("cannot create the symbols consumer: " + error);
  return std::unique_ptr<SymbolFeed>(new SymbolFeed(std::move(impl)));
}

Status SymbolFeed::catchUpShared() {
  const std::string& topic = impl_->config.kafka.topics.symbols_shared;
  std::string error;
  std::unique_ptr<RdKafka::Topic> handle(RdKafka::Topic::create(impl_->consumer.get(), topic, nullptr, error));
  if (!handle) return invalidArgument("shared symbols topic " + topic + ": " + error);
  RdKafka::Metadata* raw = nullptr;
  RdKafka::ErrorCode code = impl_->consumer->metadata(false, handle.get(), &raw, 10000);
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (code != RdKafka::ERR_NO_ERROR) return ioError("cannot read metadata of " + topic + ": " + errorText(code));
  for (const auto* topic_metadata : *metadata->topics()) {
    if (topic_metadata->err() != RdKafka::ERR_NO_ERROR) {
      spdlog::warn("shared symbols topic {}: {}; shared images will not be served", topic,
                   errorText(topic_metadata->err()));
      return Status::ok();
    }
    for (const auto* partition : *topic_metadata->partitions()) impl_->assigned.insert({topic, partition->id()});
  }
  RESTACK_RETURN_IF_ERROR(impl_->reassign());
  return impl_->catchUp();
}

Status SymbolFeed::addPartitions(const std::vector<int32_t>& partitions) {
  for (int32_t p : partitions) impl_->assigned.insert({impl_->config.kafka.topics.symbols, p});
  RESTACK_RETURN_IF_ERROR(impl_->reassign());
  return impl_->catchUp();
}

void SymbolFeed::removePartitions(const std::vector<int32_t>& partitions) {
  for (int32_t p : partitions) impl_->assigned.erase({impl_->config.kafka.topics.symbols, p});
  Status status = impl_->reassign();
  if (!status) spdlog::warn("{}", status.error().message());
}

Status SymbolFeed::applyFetched() {
  return impl_->consumeUntil([] { return false; }, std::chrono::milliseconds(0), Clock::now() + kCatchUpTimeout)
      .status();
}

Expected<size_t> SymbolFeed::catchUpToHighWatermarks(const std::set<int32_t>& partitions) {
  std::map<PartitionKey, int64_t> targets;
  for (const auto& key : impl_->assigned) {
    if (key.first == impl_->config.kafka.topics.symbols && !partitions.count(key.second)) continue;
    // The watermarks of the consumer's last fetch: no broker round trip per batch. The symbols
    // consumer fetches continuously, so they trail the brokers by at most one fetch wait.
    int64_t low = 0, high = 0;
    RdKafka::ErrorCode code = impl_->consumer->get_watermark_offsets(key.first, key.second, &low, &high);
    if (code != RdKafka::ERR_NO_ERROR || high < 0) continue;
    auto applied = impl_->store.appliedOffset(key.first, key.second);
    if (!applied) return applied.error();
    if (applied->value_or(std::max<int64_t>(low, 0)) < high) targets[key] = high;
  }
  if (targets.empty()) return size_t{0};
  return impl_->consumeUntil(
      [&] {
        for (const auto& [key, high] : targets) {
          auto applied = impl_->store.appliedOffset(key.first, key.second);
          if (!applied || applied->value_or(0) < high) return false;
        }
        return true;
      },
      std::chrono::milliseconds(100), Clock::now() + std::chrono::seconds(30));
}

}  // namespace restack::worker
