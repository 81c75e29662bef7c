#include "worker/kafka/worker.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "grouping/rules.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/pending_events.h"
#include "worker/kafka/symbol_feed.h"
#include "worker/pipeline/event_processor.h"

namespace restack::worker {
namespace {

using Clock = std::chrono::steady_clock;

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t steadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

// At most `kLines` log lines per `kWindow`, then one line saying how many were left out: a flood
// of bad events must not flood the log (the DLQ and /metrics still count every one).
class LogLimiter {
 public:
  bool allow() {
    const auto now = Clock::now();
    if (now - window_start_ > kWindow) {
      if (suppressed_ > 0)
        spdlog::warn("{} more DLQ records in the last {} s were not logged", suppressed_, kWindow.count());
      window_start_ = now;
      lines_ = 0;
      suppressed_ = 0;
    }
    if (lines_ < kLines) {
      ++lines_;
      return true;
    }
    ++suppressed_;
    return false;
  }

 private:
  static constexpr int kLines = 20;
  static constexpr std::chrono::seconds kWindow{10};
  Clock::time_point window_start_{};
  int lines_ = 0;
  uint64_t suppressed_ = 0;
};

struct BatchEvent {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
};

}  // namespace

struct Worker::Impl : public RdKafka::RebalanceCb, public RdKafka::DeliveryReportCb {
  config::Config config;
  Metrics& metrics;
  std::unique_ptr<SymbolStore> store;
  std::unique_ptr<Symbolizer> symbolizer;
  std::unique_ptr<pipeline::EventProcessor> processor;
  std::unique_ptr<RdKafka::KafkaConsumer> events;
  std::unique_ptr<RdKafka::Producer> producer;
  std::unique_ptr<SymbolFeed> symbols;
  std::vector<BatchEvent> batch;
  std::map<int32_t, int64_t> uncommitted;  // events partition -> next offset, outputs acknowledged
  std::unique_ptr<PendingEvents> pending;
  std::set<std::string> recheck_apps;  // apps with new uploads whose pending events may restore now
  bool recheck_all = false;
  LogLimiter dlq_log;
  std::atomic<uint64_t> delivery_failures{0};
  std::string last_delivery_error;
  Status fatal;  // set from inside callbacks, checked by the loop

  Impl(const config::Config& c, Metrics& m) : config(c), metrics(m) {}

  // --- delivery reports -------------------------------------------------------------------
  void dr_cb(RdKafka::Message& message) override {
    if (message.err() != RdKafka::ERR_NO_ERROR) {
      ++delivery_failures;
      last_delivery_error = message.topic_name() + ": " + message.errstr();
    }
  }

  // --- rebalances -------------------------------------------------------------------------
  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode code,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    ++metrics.rebalances;
    const bool cooperative = consumer->rebalance_protocol() == "COOPERATIVE";
    std::vector<int32_t> ids;
    for (auto* partition : partitions) ids.push_back(partition->partition());
    if (code == RdKafka::ERR__ASSIGN_PARTITIONS) {
      spdlog::info("assigned {} events partition(s): {}", ids.size(), fmt::join(ids, ","));
      // Symbols first: the uploads of these partitions must be in the store before their events.
      Status caught_up = symbols->addPartitions(ids);
      if (!caught_up && fatal.isOk()) fatal = caught_up;
      RdKafka::Error* error = cooperative ? consumer->incremental_assign(partitions) : nullptr;
      if (!cooperative) consumer->assign(partitions);
      if (error) {
        spdlog::error("incremental_assign failed: {}", error->str());
        delete error;
      }
      metrics.assigned_partitions += ids.size();
    } else {
      const bool lost = consumer->assignment_lost();
      spdlog::info("{} {} events partition(s): {}", lost ? "lost" : "revoked", ids.size(), fmt::join(ids, ","));
      if (!lost) {
        Status flushed = processBatch();
        if (!flushed && fatal.isOk()) fatal = flushed;
        commitRevoked(ids);
      } else {
        // Another worker owns them now and reads them from the last commit.
        batch.clear();
        for (int32_t partition : ids) uncommitted.erase(partition);
      }
      symbols->removePartitions(ids);
      if (cooperative) {
        if (RdKafka::Error* error = consumer->incremental_unassign(partitions)) {
          spdlog::error("incremental_unassign failed: {}", error->str());
          delete error;
        }
      } else {
        consumer->unassign();
      }
      metrics.assigned_partitions -= std::min<uint64_t>(metrics.assigned_partitions, ids.size());
    }
  }

  // --- set-up -----------------------------------------------------------------------------
  Status start() {
    StoreOptions store_options;
    store_options.path = config.store.path;
    store_options.block_cache_bytes = config.store.block_cache_mb << 20;
    auto opened = SymbolStore::open(store_options);
    if (!opened) return opened.error();
    store = std::move(*opened);
    SymbolizerOptions symbolizer_options;
    symbolizer_options.native.cache_bytes = config.cache.native_mb << 20;
    symbolizer_options.proguard.cache_bytes = config.cache.proguard_mb << 20;
    symbolizer_options.sourcemap.cache_bytes = config.cache.sourcemap_mb << 20;
    symbolizer = std::make_unique<Symbolizer>(*store, symbolizer_options);
    pipeline::ProcessorOptions processor_options;
    processor_options.event.max_event_bytes = config.limits.max_event_bytes;
    processor_options.event.max_threads = config.limits.max_threads;
    processor_options.restore.max_frames_per_thread = config.limits.max_frames_per_thread;
    processor_options.max_output_bytes = config.limits.max_output_bytes;
    auto grouping_config = std::make_shared<grouping::GroupingConfig>();
    if (!config.grouping_rules.empty()) {
      Status loaded = grouping::loadRulesDirectory(config.grouping_rules, *grouping_config);
      if (!loaded) return loaded.error().withContext("grouping.rules");
      spdlog::info("grouping rules for {} app(s) from {}", grouping_config->apps.size(), config.grouping_rules);
    }
    processor_options.grouping = std::move(grouping_config);
    processor = std::make_unique<pipeline::EventProcessor>(*symbolizer, processor_options);

    auto made_producer = makeProducer(config, "restack-worker", this);
    if (!made_producer) return made_producer.error();
    producer = std::move(*made_producer);

    pending = std::make_unique<PendingEvents>(*store, PendingOptions{});
    metrics.pending_events = pending->count();
    recheck_all = pending->count() > 0;  // uploads may have been applied before a restart
    auto feed = SymbolFeed::create(config, *store, *producer, metrics,
                                   [this](const UploadMeta& meta, const IngestReport& report) {
                                     // The native reader remembers "no symbols" for a while; a new upload must show at
                                     // once.
                                     for (const std::string& id : report.ids) symbolizer->native().forget(id);
                                     // Pending events of this app (of every app, for a shared image) may restore now.
                                     if (meta.shared || meta.app.empty())
                                       recheck_all = true;
                                     else
                                       recheck_apps.insert(meta.app);
                                   });
    if (!feed) return feed.error();
    symbols = std::move(*feed);
    RESTACK_RETURN_IF_ERROR(symbols->catchUpShared());

    auto properties = commonProperties(config, "restack-worker");
    properties.insert({"group.id", config.kafka.group_id});
    properties.insert({"enable.auto.commit", "false"});
    properties.insert({"enable.auto.offset.store", "false"});
    properties.insert({"auto.offset.reset", "earliest"});
    properties.insert({"partition.assignment.strategy", config.kafka.assignment_strategy});
    properties.insert({"session.timeout.ms", std::to_string(config.kafka.session_timeout_ms)});
    properties.insert({"heartbeat.interval.ms", std::to_string(std::max(100, config.kafka.session_timeout_ms / 10))});
    // An upload of several GB can hold the loop while it is parsed.
    properties.insert({"max.poll.interval.ms", "1800000"});
    auto conf = makeConf(properties);
    if (!conf) return conf.error();
    std::string error;
    (*conf)->set("rebalance_cb", static_cast<RdKafka::RebalanceCb*>(this), error);
    events.reset(RdKafka::KafkaConsumer::create(conf->get(), error));
    if (!events) return invalidArgument("cannot create the Kafka consumer: " + error);
    RdKafka::ErrorCode code = events->subscribe({config.kafka.topics.events});
    if (code != RdKafka::ERR_NO_ERROR)
      return ioError("cannot subscribe to " + config.kafka.topics.events + ": " + errorText(code));
    metrics.ready = true;
    return Status::ok();
  }

  // --- the batch --------------------------------------------------------------------------
  Status produce(const std::string& topic, const pipeline::OutputRecord& record) {
    RdKafka::Headers* headers = RdKafka::Headers::create();
    for (const auto& [name, value] : record.headers) headers->add(name, value);
    while (true) {
      RdKafka::ErrorCode code = producer->produce(topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                                                  const_cast<char*>(record.value.data()), record.value.size(),
                                                  record.key.data(), record.key.size(), 0, headers, nullptr);
      if (code == RdKafka::ERR_NO_ERROR) return Status::ok();  // the producer owns `headers` now
      if (code == RdKafka::ERR__QUEUE_FULL) {
        producer->poll(100);
        continue;
      }
      delete headers;
      if (code == RdKafka::ERR_MSG_SIZE_TOO_LARGE && record.value.size() > pipeline::kRefusedOutputKeptBytes) {
        // The pipeline sizes every record under limits.max_output_bytes; one the producer still
        // refuses goes to the DLQ cut down, instead of failing this batch again on every retry.
        spdlog::error("a {}-byte record for {} exceeds the producer's message.max.bytes; sent cut down to the DLQ",
                      record.value.size(), topic);
        return produce(config.kafka.topics.dlq, pipeline::refusedOutputDeadLetter(record, topic));
      }
      return ioError("cannot produce to " + topic + ": " + errorText(code));
    }
  }

  const std::string& topicFor(pipeline::OutputKind kind) const {
    switch (kind) {
      case pipeline::OutputKind::kSymbolicated:
        return config.kafka.topics.symbolicated;
      case pipeline::OutputKind::kFingerprint:
        return config.kafka.topics.fingerprints;
      case pipeline::OutputKind::kDeadLetter:
        return config.kafka.topics.dlq;
    }
    return config.kafka.topics.dlq;
  }

  // Restores every event of the batch, `worker.threads` at a time.
  std::vector<Expected<pipeline::ProcessResult>> restoreAll(const std::vector<size_t>& which) {
    std::vector<Expected<pipeline::ProcessResult>> results(which.size(), Error(ErrorCode::kInternal, "not run"));
    const size_t threads = std::max<size_t>(1, std::min<size_t>(config.worker.threads, which.size()));
    auto work = [&](size_t first) {
      for (size_t i = first; i < which.size(); i += threads) {
        const BatchEvent& event = batch[which[i]];
        results[i] = processor->process(event.key, event.value);
      }
    };
    std::vector<std::future<void>> running;
    for (size_t t = 1; t < threads; ++t) running.push_back(std::async(std::launch::async, work, t));
    work(0);
    for (auto& f : running) f.get();
    return results;
  }

  Status processBatch() {
    if (batch.empty()) return Status::ok();
    std::vector<size_t> all(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) all[i] = i;
    auto results = restoreAll(all);

    // Events waiting for symbols: apply any upload not read yet, then restore them again.
    std::vector<size_t> pending;
    std::set<int32_t> partitions;
    for (size_t i = 0; i < results.size(); ++i) {
      if (!results[i]) return results[i].error();
      if (results[i]->pending_symbols) {
        pending.push_back(i);
        partitions.insert(batch[i].partition);
      }
    }
    if (!pending.empty()) {
      auto applied = symbols->catchUpToHighWatermarks(partitions);
      if (!applied) return applied.error();
      if (*applied > 0) {
        auto again = restoreAll(pending);
        for (size_t k = 0; k < pending.size(); ++k) results[pending[k]] = std::move(again[k]);
      }
    }

    const uint64_t failures_before = delivery_failures;
    std::map<int32_t, int64_t> next_offsets;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (!results[i]) return results[i].error();
      const pipeline::ProcessResult& result = *results[i];
      for (const auto& record : result.records) {
        pipeline::OutputRecord out = record;
        if (record.kind == pipeline::OutputKind::kDeadLetter) {
          out.headers.emplace_back("restack.source.topic", config.kafka.topics.events);
          out.headers.emplace_back("restack.source.partition", std::to_string(batch[i].partition));
          out.headers.emplace_back("restack.source.offset", std::to_string(batch[i].offset));
          if (dlq_log.allow()) {
            spdlog::warn("event at {}/{}:{} sent to the DLQ: {}", config.kafka.topics.events, batch[i].partition,
                         batch[i].offset, result.error);
          }
        }
        RESTACK_RETURN_IF_ERROR(produce(topicFor(record.kind), out));
      }
      if (result.pending_symbols) keepPending(batch[i], result);
      metrics.events_dead_lettered += result.dead_letter ? 1 : 0;
      metrics.events_published += result.dead_letter ? 0 : 1;
      metrics.events_pending_symbols += result.pending_symbols ? 1 : 0;
      metrics.frames_total += result.frames_total;
      metrics.frames_symbolicated += result.frames_symbolicated;
      next_offsets[batch[i].partition] = std::max(next_offsets[batch[i].partition], batch[i].offset + 1);
    }
    // Every output acknowledged before any input offset is committed.
    while (producer->outq_len() > 0) {
      producer->flush(1000);
      if (delivery_failures != failures_before) break;
    }
    if (delivery_failures != failures_before) {
      return ioError("outputs were not acknowledged (" + last_delivery_error +
                     "); offsets not committed, the batch will be read again");
    }
    for (const auto& [partition, offset] : next_offsets) {
      uncommitted[partition] = std::max(uncommitted[partition], offset);
    }
    batch.clear();
    commitUncommitted();
    return Status::ok();
  }

  void keepPending(const BatchEvent& event, const pipeline::ProcessResult& result) {
    PendingEvent kept;
    kept.app = result.app;
    kept.event_id = result.event_id.empty() ? std::to_string(event.partition) + ":" + std::to_string(event.offset)
                                            : result.event_id;
    kept.input_key = event.key;
    kept.provisional_fingerprint = result.fingerprint;
    kept.value = event.value;
    kept.enqueued_ms = wallMs();
    auto added = pending->add(kept);
    if (!added) {
      spdlog::warn("cannot keep pending event {}: {}", kept.event_id, added.error().message());
    } else if (!*added) {
      spdlog::warn("{} pending events kept already; event {} will not be restored later", pending->count(),
                   kept.event_id);
    }
    metrics.pending_events = pending->count();
  }

  // Restores again the pending events of apps that received uploads, and publishes those that
  // are now restored: the final event and a fingerprint record that replaces the provisional one.
  Status restorePending() {
    if (!recheck_all && recheck_apps.empty()) return Status::ok();
    std::vector<std::string> apps(recheck_apps.begin(), recheck_apps.end());
    if (recheck_all) apps = {""};
    recheck_all = false;
    recheck_apps.clear();
    constexpr size_t kPerTurn = 1000;
    const uint64_t failures_before = delivery_failures;
    std::vector<PendingEvent> finished;
    for (const std::string& app : apps) {
      auto entries = pending->list(app, kPerTurn);
      if (!entries) return entries.error();
      if (entries->size() == kPerTurn) {  // more next turn
        if (app.empty())
          recheck_all = true;
        else
          recheck_apps.insert(app);
      }
      for (PendingEvent& entry : *entries) {
        if (wallMs() - entry.enqueued_ms > pending->options().max_age_ms) {
          ++metrics.events_pending_expired;
          finished.push_back(std::move(entry));
          continue;
        }
        auto result = processor->process(entry.input_key, entry.value, entry.provisional_fingerprint);
        if (!result) return result.error();
        if (result->pending_symbols && !result->dead_letter) continue;
        for (const auto& record : result->records) RESTACK_RETURN_IF_ERROR(produce(topicFor(record.kind), record));
        ++metrics.events_restored_later;
        finished.push_back(std::move(entry));
      }
    }
    while (producer->outq_len() > 0 && delivery_failures == failures_before) producer->flush(1000);
    if (delivery_failures != failures_before) {
      return ioError("restored pending events were not acknowledged (" + last_delivery_error + "); they stay pending");
    }
    for (const PendingEvent& entry : finished) RESTACK_RETURN_IF_ERROR(pending->remove(entry));
    metrics.pending_events = pending->count();
    return Status::ok();
  }

  // Commits every offset whose outputs were acknowledged. A commit refused during a rebalance
  // (cooperative rebalancing keeps our partitions) is kept and retried on the next loop turn or
  // when the partitions are revoked, instead of letting the batch be restored twice.
  void commitUncommitted() {
    if (uncommitted.empty()) return;
    std::vector<RdKafka::TopicPartition*> offsets;
    for (const auto& [partition, offset] : uncommitted) {
      offsets.push_back(RdKafka::TopicPartition::create(config.kafka.topics.events, partition, offset));
    }
    RdKafka::ErrorCode code = events->commitSync(offsets);
    for (auto* offset : offsets) delete offset;
    if (code == RdKafka::ERR_NO_ERROR) {
      uncommitted.clear();
      ++metrics.batches_committed;
    } else {
      spdlog::info("offset commit deferred ({}); retrying", errorText(code));
    }
  }

  // Before giving partitions up: their offsets must be committed now or never by us.
  void commitRevoked(const std::vector<int32_t>& partitions) {
    for (int attempt = 0; attempt < 5 && !uncommitted.empty(); ++attempt) {
      commitUncommitted();
      if (!uncommitted.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    for (int32_t partition : partitions) {
      if (uncommitted.erase(partition)) {
        spdlog::warn(
            "offsets of events partition {} could not be committed before it moved; its last batch "
            "will be restored again by the next owner (at-least-once)",
            partition);
      }
    }
  }

  Status loop(const std::atomic<bool>& stop) {
    while (!stop) {
      metrics.last_loop_ms = steadyMs();
      RESTACK_RETURN_IF_ERROR(symbols->applyFetched());
      RESTACK_RETURN_IF_ERROR(restorePending());
      const auto deadline = Clock::now() + std::chrono::milliseconds(config.worker.batch_linger_ms);
      while (batch.size() < config.worker.batch_size && !stop) {
        auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        std::unique_ptr<RdKafka::Message> message(events->consume(static_cast<int>(std::max<int64_t>(remaining, 0))));
        if (!fatal.isOk()) return fatal;
        if (message->err() == RdKafka::ERR__TIMED_OUT || message->err() == RdKafka::ERR__PARTITION_EOF) break;
        if (message->err() != RdKafka::ERR_NO_ERROR) {
          spdlog::warn("consumer: {}", message->errstr());
          break;
        }
        ++metrics.events_consumed;
        BatchEvent event;
        event.partition = message->partition();
        event.offset = message->offset();
        if (message->key()) event.key = *message->key();
        event.value.assign(static_cast<const char*>(message->payload()), message->len());
        batch.push_back(std::move(event));
        if (remaining <= 0) break;
      }
      RESTACK_RETURN_IF_ERROR(processBatch());
      commitUncommitted();
      producer->poll(0);
    }
    return Status::ok();
  }
};

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Worker::~Worker() {
  if (impl_ && impl_->events) impl_->events->close();
}

Expected<std::unique_ptr<Worker>> Worker::create(const config::Config& config, Metrics& metrics) {
  auto impl = std::make_unique<Impl>(config, metrics);
  RESTACK_RETURN_IF_ERROR(impl->start());
  return std::unique_ptr<Worker>(new Worker(std::move(impl)));
}

Status Worker::run(const std::atomic<bool>& stop) {
  Status status = impl_->loop(stop);
  spdlog::info("stopping: finishing the batch in flight");
  Status finished = impl_->processBatch();
  if (status.isOk() && !finished.isOk()) status = finished;
  impl_->metrics.ready = false;
  // close() revokes the assignment (the rebalance callback commits) and leaves the group now,
  // instead of after session.timeout.ms.
  impl_->events->close();
  impl_->producer->flush(30000);
  impl_->events.reset();
  return status;
}

}  // namespace restack::worker
