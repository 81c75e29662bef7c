#include "worker/kafka/worker.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "grouping/rules.h"
#include "symbolstore/ingest.h"
#include "symbolstore/symbolizer.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/pending_events.h"
#include "worker/kafka/restore_threads.h"
#include "worker/kafka/scratch.h"
#include "worker/kafka/symbol_demand.h"
#include "worker/kafka/symbol_feed.h"
#include "worker/logging/log.h"
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

// A re-check slice and an expiry scan look at this many pending events per loop turn, so a turn
// stays short however many events wait.
constexpr size_t kRecheckSlice = 500;
constexpr size_t kExpirySlice = 2000;
constexpr int64_t kExpiryIntervalMs = 60 * 1000;
// How long a revoke waits for librdkafka to acknowledge the stop of the removed partitions.
constexpr int kStopSettleMs = 250;
// How long an assignment waits for the committed offsets of its partitions, one call at most
// kCommittedCallMs. Longer than the transaction timeout (60 s): a transaction left open by the
// previous owner keeps them unstable until the broker aborts it.
constexpr auto kCommittedOffsetsTimeout = std::chrono::minutes(3);
constexpr int kCommittedCallMs = 10000;
// While the previous batch commits, the next one fills and the commit is looked at this often.
constexpr int64_t kCommitPollMs = 2;
// A long pending replay says where it stands this often.
constexpr auto kReplayLogInterval = std::chrono::seconds(10);

// A DLQ record for an event whose restoration threw: a bug, but one event must not stop the
// worker (the event is kept, bytes unchanged, with the reason).
pipeline::ProcessResult internalFailure(std::string_view key, std::string_view value, const std::string& what) {
  pipeline::ProcessResult result;
  result.dead_letter = true;
  result.error = "internal error while restoring the event: " + what;
  pipeline::OutputRecord dlq;
  dlq.kind = pipeline::OutputKind::kDeadLetter;
  dlq.key = std::string(key);
  dlq.value = std::string(value);
  dlq.headers = {{"restack.error", result.error}, {"restack.error.code", errorCodeName(ErrorCode::kInternal)}};
  result.records.push_back(std::move(dlq));
  return result;
}

Expected<pipeline::ProcessResult> guardedProcess(pipeline::EventProcessor& processor, std::string_view key,
                                                 std::string_view value, std::string_view previous_fingerprint = {}) {
  try {
    return processor.process(key, value, previous_fingerprint);
  } catch (const std::exception& error) {
    return internalFailure(key, value, error.what());
  } catch (...) {
    return internalFailure(key, value, "unknown exception");
  }
}

// What a loop turn changes in the local pending cache, applied once its records are committed
// (exactly_once) or acknowledged (at_least_once).
struct Staged {
  std::vector<PendingEvent> kept;
  std::set<std::string> removed;  // keys
  uint64_t kept_bytes = 0;
  uint64_t restored_later = 0;
  uint64_t expired = 0;
};

// Counters of a batch, added to the metrics once it is committed.
struct BatchCounts {
  uint64_t dead_lettered = 0, published = 0, pending_symbols = 0, frames_total = 0, frames_symbolicated = 0;
  std::array<uint64_t, kPlatforms.size()> by_platform{};
  std::vector<ErrorCode> dead_letter_codes;
  pipeline::FrameTally frames_by_kind{};
};

struct BatchEvent {
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;  // the record's Kafka timestamp; -1 when the broker gave none
  std::string key;
  std::string value;
};

}  // namespace

struct Worker::Impl : public RdKafka::RebalanceCb, public RdKafka::DeliveryReportCb {
  config::Config config;
  Metrics& metrics;
  Hooks hooks;
  bool exactly_once = true;
  RestoreThreads restore_threads;  // worker.threads of them, for the worker's life
  std::unique_ptr<SymbolStore> store;
  std::unique_ptr<Symbolizer> symbolizer;
  std::unique_ptr<pipeline::EventProcessor> processor;
  std::unique_ptr<RdKafka::KafkaConsumer> events;
  // The producer of the publication being built or in flight; transactional in exactly_once mode.
  std::unique_ptr<RdKafka::Producer> producer;
  // exactly_once: the producer of the next publication. Batches are committed by two
  // transactional producers in turn: the coordinator still writes a commit's markers after it
  // acknowledged the commit, and answers CONCURRENT_TRANSACTIONS to the next transaction of the same
  // transactional.id until it is done, which librdkafka retries 20 ms later. Taking turns, a
  // producer's next transaction begins a whole publication after its last commit
  // (docs/benchmarks.md, "Exactly-once: restoring ahead, two producers in turn").
  std::unique_ptr<RdKafka::Producer> next_producer;
  // Both producers' handles on the topics they write (lookUpTopics); declared after the
  // producers, so destroyed before them.
  std::vector<std::unique_ptr<RdKafka::Topic>> output_topics;
  std::unique_ptr<RdKafka::KafkaConsumer> pending_reader;              // replays pending partitions, no group
  std::vector<std::unique_ptr<RdKafka::Topic>> pending_reader_topics;  // lookUpTopics; destroyed first
  std::unique_ptr<SymbolFeed> symbols;
  std::vector<BatchEvent> batch;
  // The results of batch[0, restored_ahead.size()), restored while the previous publication was
  // still committing (restoreAhead); the rest are restored when the batch is cut.
  std::vector<Expected<pipeline::ProcessResult>> restored_ahead;
  Clock::time_point usage_flush_due = Clock::now() + std::chrono::minutes(1);
  Clock::time_point last_publication_start{};  // worker.min_commit_interval_ms counts from here
  std::set<int32_t> owned;                     // events partitions assigned to this worker
  int64_t gauges_updated_ms = 0;               // steady ms of the last updateGauges()
  std::map<int32_t, int64_t> uncommitted;      // at_least_once: partition -> next offset, outputs acknowledged
  // exactly_once: owned partition -> the next offset committed for it (read at assignment, then
  // each commit's); a transaction without events sends these again (see publish).
  std::map<int32_t, int64_t> committed_next;
  std::unique_ptr<PendingEvents> pending;
  // The symbol-demand feed (worker/kafka/symbol_demand.h); null when its topic does not exist.
  std::unique_ptr<SymbolDemand> demand;
  bool flush_demand_now = false;  // a revoke publishes what changed before the partitions go
  // Apps whose pending events are re-checked ("" = every app), each with the key the next slice
  // starts after: a re-check walks all of an app's pending events, a slice per loop turn.
  std::map<std::string, std::string> recheck;
  int64_t next_expiry_ms = 0;
  LogLimiter dlq_log;
  std::atomic<uint64_t> delivery_failures{0};
  // Delivery reports run on whichever thread polls a producer: the publication's thread for the
  // producer in use, the loop's for the other one.
  std::mutex delivery_error_mutex;
  std::string last_delivery_error;  // under delivery_error_mutex
  Status fatal;                     // set from inside callbacks, checked by the loop

  // The publication in flight: a batch's outputs produced, its commit (exactly_once) or its
  // acknowledgements (at_least_once) awaited on `outcome` while the next batch restores.
  struct Publication {
    bool open = false;
    std::vector<BatchEvent> batch;  // its events, for the end-to-end latencies
    // The batch's restored results; `outputs` points into them: the records the publication's
    // thread produces, while the loop's thread restores the next batch. The
    // producer reads them in place: each record in its queues holds a reference (produce).
    std::shared_ptr<std::vector<Expected<pipeline::ProcessResult>>> results;
    std::vector<const pipeline::OutputRecord*> outputs;
    Staged staged;
    BatchCounts counts;
    std::map<int32_t, int64_t> next_offsets;
    std::map<std::string, std::string> recheck_before;
    uint64_t demand_published = 0;
    std::future<std::string> outcome;  // what failed, "" when committed
  };
  // Last: destroyed first, so a commit still running ends before the clients it uses go.
  Publication in_flight;

  Impl(const config::Config& c, Metrics& m, Hooks h)
      : config(c),
        metrics(m),
        hooks(std::move(h)),
        exactly_once(c.kafka.delivery == "exactly_once"),
        restore_threads(std::max<uint32_t>(1, c.worker.threads)) {}

  // --- delivery reports -------------------------------------------------------------------
  void dr_cb(RdKafka::Message& message) override {
    // A record produced without a copy: the producer is done with its bytes.
    delete static_cast<std::shared_ptr<const void>*>(message.msg_opaque());
    if (message.err() != RdKafka::ERR_NO_ERROR) {
      std::string error = message.topic_name() + ": " + message.errstr();
      const std::lock_guard<std::mutex> lock(delivery_error_mutex);
      last_delivery_error = std::move(error);
      ++delivery_failures;
    }
  }

  // --- rebalances -------------------------------------------------------------------------
  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode code,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    ++metrics.rebalances;
    const bool cooperative = consumer->rebalance_protocol() == "COOPERATIVE";
    std::vector<int32_t> ids;
    for (auto* partition : partitions) ids.push_back(partition->partition());
    // The batch committing in the background finishes under the assignment it was read with.
    Status finished = finishPublication();
    if (!finished && fatal.isOk()) fatal = finished;
    if (code == RdKafka::ERR__ASSIGN_PARTITIONS) {
      spdlog::info("assigned {} events partition(s): {}", ids.size(), fmt::join(ids, ","));
      // The committed offsets first: reading them waits while a transaction of the previous
      // owner that sent offsets is still open (a worker stopped in the middle of its commit), and
      // that transaction also holds pending and demand records. Replayed before it resolves, the
      // pending state would miss its tombstones, and the events it restored later would be
      // restored and published again (docs/operations.md, section 10).
      Status positioned = startAtCommittedOffsets(partitions);
      if (!positioned && fatal.isOk()) fatal = positioned;
      for (const auto* partition : partitions) {
        if (partition->offset() >= 0) committed_next[partition->partition()] = partition->offset();
      }
      // The demand counts before the symbols, so that an upload the catch-up applies closes the
      // demand it meets; symbols and pending state before the events.
      Status seeded = replayDemand(ids);
      if (!seeded && fatal.isOk()) fatal = seeded;
      Status caught_up = symbols->addPartitions(ids);
      if (!caught_up && fatal.isOk()) fatal = caught_up;
      Status replayed = replayPending(ids);
      if (!replayed && fatal.isOk()) fatal = replayed;
      RdKafka::Error* error = cooperative ? consumer->incremental_assign(partitions) : nullptr;
      if (!cooperative) consumer->assign(partitions);
      if (error) {
        spdlog::error("incremental_assign failed: {}", error->str());
        delete error;
      }
      owned.insert(ids.begin(), ids.end());
      metrics.assigned_partitions = owned.size();
    } else {
      const bool lost = consumer->assignment_lost();
      spdlog::info("{} {} events partition(s): {}", lost ? "lost" : "revoked", ids.size(), fmt::join(ids, ","));
      if (!lost) {
        // Commit (or abort) what is open before the partitions go: the next owner starts from
        // the last commit.
        flush_demand_now = demand != nullptr;
        Status flushed = processBatch(false);
        flush_demand_now = false;
        if (!flushed && fatal.isOk()) fatal = flushed;
        if (!exactly_once) commitRevoked(ids);
      } else {
        // Another worker owns them now and reads them from the last commit.
        dropBatch();
        for (int32_t partition : ids) uncommitted.erase(partition);
      }
      symbols->removePartitions(ids);
      for (int32_t partition : ids) {
        owned.erase(partition);
        committed_next.erase(partition);
        auto dropped = pending->dropPartition(partition);
        if (!dropped && fatal.isOk()) fatal = dropped.error();
        if (demand) demand->dropPartition(partition);
      }
      if (demand) metrics.symbol_demand_keys = demand->size();
      metrics.pending_events = pending->count();
      if (cooperative) {
        if (RdKafka::Error* error = consumer->incremental_unassign(partitions)) {
          spdlog::error("incremental_unassign failed: {}", error->str());
          delete error;
        }
        // librdkafka 2.0.2 (Debian 12) can stop a partition twice when the next assignment call
        // (often the empty one that follows a revoke) arrives before the fetchers of the removed
        // partitions have acknowledged their stop, and then aborts on an assertion in
        // rdkafka_assignment.c. Its own thread acknowledges those stops within milliseconds:
        // give it that time before the group goes on.
        std::this_thread::sleep_for(std::chrono::milliseconds(kStopSettleMs));
      } else {
        consumer->unassign();
      }
      metrics.assigned_partitions = owned.size();
    }
  }

  // Gives each newly assigned events partition its start offset: the group's committed offset,
  // or the partition's beginning when none is committed (auto.offset.reset=earliest). librdkafka
  // 2.0.2 would otherwise fetch the committed offsets itself, once, right after the assignment;
  // when that one request fails (NOT_COORDINATOR while the group coordinator moves to another
  // broker, e.g. during a broker shutdown) it keeps the partitions in its list of offset queries
  // for good (rdkafka_assignment.c, rd_kafka_assignment_apply_offsets ignores request-level
  // errors), so they stay assigned but are never fetched, and with that list non-empty no later
  // assignment queries offsets either: the group shows lag that never moves and those events are
  // never restored. Reading the offsets here retries until they are known.
  Status startAtCommittedOffsets(std::vector<RdKafka::TopicPartition*>& partitions) {
    if (partitions.empty()) return Status::ok();
    const auto deadline = Clock::now() + kCommittedOffsetsTimeout;
    auto next_log = Clock::now();
    while (true) {
      RdKafka::ErrorCode code = events->committed(partitions, kCommittedCallMs);
      std::string failure = code == RdKafka::ERR_NO_ERROR ? std::string() : errorText(code);
      for (const auto* partition : partitions) {
        if (failure.empty() && partition->err() != RdKafka::ERR_NO_ERROR) {
          failure = config.kafka.topics.events + "/" + std::to_string(partition->partition()) + ": " +
                    errorText(partition->err());
        }
      }
      metrics.last_loop_ms = steadyMs();
      if (failure.empty()) break;
      if (Clock::now() > deadline) {
        // Assigned without offsets, librdkafka's own query is the last chance; the worker stops
        // and its restart joins the group again.
        for (auto* partition : partitions) partition->set_offset(RdKafka::Topic::OFFSET_INVALID);
        return ioError(
            "cannot read the committed offsets of the assigned " + config.kafka.topics.events + " partitions within " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kCommittedOffsetsTimeout).count()) +
            " s (" + failure + "); is the group coordinator reachable?");
      }
      if (Clock::now() >= next_log) {
        // Unstable offsets (exactly_once: a transaction of the previous owner still open) and a
        // moving coordinator both pass; say what is awaited.
        spdlog::info("reading the committed offsets of the assigned partitions: {}; retrying", failure);
        next_log = Clock::now() + std::chrono::seconds(5);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    for (auto* partition : partitions) {
      if (partition->offset() < 0) partition->set_offset(RdKafka::Topic::OFFSET_BEGINNING);
    }
    return Status::ok();
  }

  // Reads pending partitions `partitions` from their start to their end (read_committed) into the
  // local store, replacing what the store held for them. No limit on the total time (a large
  // pending topic takes what it takes); it gives up only after pending.replay_stall_s without
  // progress: no record read and no partition end reached.
  Status replayPending(const std::vector<int32_t>& partitions) {
    if (partitions.empty()) return Status::ok();
    for (int32_t partition : partitions) {
      auto dropped = pending->dropPartition(partition);
      if (!dropped) return dropped.error();
    }
    std::vector<RdKafka::TopicPartition*> list;
    for (int32_t partition : partitions) {
      list.push_back(
          RdKafka::TopicPartition::create(config.kafka.topics.pending, partition, RdKafka::Topic::OFFSET_BEGINNING));
    }
    RdKafka::ErrorCode code = pending_reader->assign(list);
    for (auto* p : list) delete p;
    if (code != RdKafka::ERR_NO_ERROR) return ioError("cannot assign pending partitions: " + errorText(code));
    std::set<int32_t> remaining(partitions.begin(), partitions.end());
    const auto stall_limit = std::chrono::seconds(config.pending.replay_stall_s);
    auto last_progress = Clock::now(), last_log = Clock::now();
    uint64_t records = 0, live_before = pending->count();
    Status outcome;
    while (!remaining.empty() && outcome.isOk()) {
      const auto now = Clock::now();
      if (now - last_progress > stall_limit) {
        outcome = ioError("pending topic " + config.kafka.topics.pending + " made no progress for " +
                          std::to_string(config.pending.replay_stall_s) + " s (pending.replay_stall_s) after " +
                          std::to_string(records) + " record(s), partition(s) " +
                          fmt::format("{}", fmt::join(remaining, ",")) +
                          " not read to their end; are the brokers reachable?");
        break;
      }
      if (now - last_log >= kReplayLogInterval) {
        last_log = now;
        spdlog::info("replaying pending partition(s) {}: {} record(s) so far, {} not at their end yet",
                     fmt::join(partitions, ","), records, fmt::join(remaining, ","));
      }
      std::unique_ptr<RdKafka::Message> message(pending_reader->consume(500));
      metrics.last_loop_ms = steadyMs();
      switch (message->err()) {
        case RdKafka::ERR__TIMED_OUT:
          continue;
        case RdKafka::ERR__PARTITION_EOF:
          remaining.erase(message->partition());
          last_progress = Clock::now();
          continue;
        case RdKafka::ERR_NO_ERROR:
          last_progress = Clock::now();
          break;
        case RdKafka::ERR__UNKNOWN_PARTITION:
        case RdKafka::ERR__UNKNOWN_TOPIC:
        case RdKafka::ERR_UNKNOWN_TOPIC_OR_PART:
          outcome =
              invalidArgument("pending topic " + config.kafka.topics.pending + " partition " +
                              std::to_string(message->partition()) + ": " + message->errstr() +
                              " (create it compacted, with as many partitions as " + config.kafka.topics.events + ")");
          continue;
        default:
          spdlog::warn("reading {}: {}", config.kafka.topics.pending, message->errstr());
          continue;
      }
      ++records;
      const std::string key = message->key() ? *message->key() : std::string();
      if (message->payload() == nullptr) {
        outcome = pending->remove(key);
        continue;
      }
      auto event = PendingEvents::decodeRecord(
          key, std::string_view(static_cast<const char*>(message->payload()), message->len()), message->partition());
      if (!event) {
        spdlog::warn("{}/{}:{} skipped: {}", config.kafka.topics.pending, message->partition(), message->offset(),
                     event.error().message());
        continue;
      }
      outcome = pending->put(*event);
    }
    pending_reader->unassign();
    if (!outcome) return outcome;
    metrics.pending_events = pending->count();
    spdlog::info("replayed pending partition(s) {}: {} record(s), {} event(s) waiting for symbols",
                 fmt::join(partitions, ","), records, pending->count() - std::min(live_before, pending->count()));
    // Their symbols may have been applied while another worker owned them.
    if (pending->count() > live_before) recheck[""] = "";
    return Status::ok();
  }

  // Reads demand partitions `partitions` from their start into the in-memory counts, so the
  // counts of the builds they hold go on from where the previous owner published them.
  Status replayDemand(const std::vector<int32_t>& partitions) {
    if (!demand || partitions.empty()) return Status::ok();
    for (int32_t partition : partitions) demand->dropPartition(partition);
    uint64_t records = 0;
    Status read = readDemandPartitions(
        *pending_reader, config.kafka.topics.symbols_missing, partitions,
        std::chrono::seconds(config.pending.replay_stall_s),
        [&](int32_t partition, std::string_view key, std::optional<std::string_view> value) -> Status {
          ++records;
          metrics.last_loop_ms = steadyMs();
          Status seeded = demand->seed(partition, key, value);
          if (!seeded)
            spdlog::warn("{}/{} skipped: {}", config.kafka.topics.symbols_missing, partition, seeded.error().message());
          return Status::ok();
        });
    if (!read && read.error().code() == ErrorCode::kNotFound) {
      // Deleted while the worker ran: counting on from zero would overwrite the published counts.
      spdlog::error("{}; the symbol-demand feed is off until the worker restarts", read.error().message());
      demand.reset();
      metrics.symbol_demand_keys = 0;
      return Status::ok();
    }
    if (!read) return read.error().withContext("replaying the symbol-demand topic");
    metrics.symbol_demand_keys = demand->size();
    spdlog::info("replayed symbol-demand partition(s) {}: {} record(s), {} tracked", fmt::join(partitions, ","),
                 records, demand->size());
    return Status::ok();
  }

  // The demand feed is on when its topic exists with a partition per events partition; without
  // it the worker runs and says why the feed is off.
  Status startDemand(const Expected<int>& events_partitions) {
    const std::string& topic = config.kafka.topics.symbols_missing;
    auto count = demandTopicPartitions(*pending_reader, topic, std::chrono::seconds(30));
    if (!count) {
      if (count.error().code() != ErrorCode::kNotFound) return count.error();
      spdlog::warn("{}; the symbol-demand feed is off (create it compacted, with as many partitions as {})",
                   count.error().message(), config.kafka.topics.events);
      return Status::ok();
    }
    if (events_partitions && *count < *events_partitions) {
      spdlog::error(
          "symbol-demand topic {} has {} partition(s), fewer than the {} of {}; the feed is off (it must be "
          "co-partitioned with the events)",
          topic, *count, *events_partitions, config.kafka.topics.events);
      return Status::ok();
    }
    SymbolDemandOptions options;
    options.max_keys = config.symbols_missing.max_keys;
    options.flush_interval_ms = static_cast<int64_t>(config.symbols_missing.flush_interval_ms);
    demand = std::make_unique<SymbolDemand>(options);
    spdlog::info("symbol-demand feed on {}, published every {} ms", topic, options.flush_interval_ms);
    return Status::ok();
  }

  // Publishes the changed demand records in the open turn (the transaction, with exactly_once).
  Status flushDemand(uint64_t& published) {
    const uint64_t untracked = demand->untracked();
    if (untracked > metrics.symbol_demand_untracked) {
      spdlog::warn("{} sighting(s) of missing symbol files not tracked: symbols_missing.max_keys ({}) reached",
                   untracked - metrics.symbol_demand_untracked, config.symbols_missing.max_keys);
    }
    for (const DemandOutput& out : demand->flush(wallMs())) {
      RESTACK_RETURN_IF_ERROR(produce(config.kafka.topics.symbols_missing, out.partition, out.key, out.value, {}));
      ++published;
    }
    return Status::ok();
  }

  // --- set-up -----------------------------------------------------------------------------
  Status start() {
    StoreOptions store_options;
    store_options.path = config.store.path;
    store_options.block_cache_bytes = config.store.block_cache_mb << 20;
    store_options.verify_checksums = true;
    store_options.rebuild_if_corrupt = true;
    store_options.info_log = logging::makeRocksdbLogger();
    auto opened = SymbolStore::open(store_options);
    if (!opened) return opened.error();
    store = std::move(*opened);
    if (!store->movedAside().empty()) {
      spdlog::error(
          "the symbol store was corrupt ({}); it was moved to {} and an empty store is rebuilt: the symbols topics "
          "are replayed from their start and pending events from {}",
          store->corruption(), store->movedAside(), config.kafka.topics.pending);
    }
    // Downloads and unpacked uploads go here (worker/kafka/scratch.h); what a killed run left is
    // removed now that the store is this worker's.
    const std::string scratch = scratchDirFor(config);
    auto emptied = resetScratchDir(scratch);
    if (!emptied) return emptied.error();
    if (*emptied > 0) {
      spdlog::info("removed {} temporary file(s) a previous run left in {}", *emptied, scratch);
    }
    SymbolizerOptions symbolizer_options;
    symbolizer_options.await_system_symbols = config.pending.await_system_symbols;
    for (const ResolverType& type : resolverTypes()) {
      if (auto mb = config.cache.megabytesFor(type.name)) symbolizer_options.cache_bytes[type.name] = *mb << 20;
    }
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

    if (exactly_once) {
      auto made = makeTransactionalProducer(config, "restack-worker", this);
      if (!made) return made.error();
      producer = std::move(*made);
      auto other = makeTransactionalProducer(config, "restack-worker", this, 1);
      if (!other) return other.error();
      next_producer = std::move(*other);
      spdlog::info("delivery exactly_once, transactional.id {} and {}", transactionalId(config),
                   transactionalId(config, 1));
    } else {
      auto made = makeProducer(config, "restack-worker", this);
      if (!made) return made.error();
      producer = std::move(*made);
      spdlog::info("delivery at_least_once");
    }

    auto events_partitions = partitionCount(*producer, config.kafka.topics.events);
    auto pending_partitions = partitionCount(*producer, config.kafka.topics.pending);
    if (!pending_partitions) {
      return pending_partitions.error().withContext(
          "the pending topic must exist, compacted, with as many partitions as " + config.kafka.topics.events);
    }
    if (events_partitions && *pending_partitions < *events_partitions) {
      return invalidArgument("pending topic " + config.kafka.topics.pending + " has " +
                             std::to_string(*pending_partitions) + " partition(s), fewer than the " +
                             std::to_string(*events_partitions) + " of " + config.kafka.topics.events +
                             "; it must be co-partitioned with the events");
    }

    PendingOptions pending_options;
    pending_options.max_events = config.pending.max_events;
    pending_options.max_bytes = config.pending.max_bytes;
    pending_options.max_age_ms = static_cast<int64_t>(config.pending.max_age_s) * 1000;
    pending = std::make_unique<PendingEvents>(*store, pending_options);
    // The local entries are a cache of the pending topic's partitions this worker owns; it owns
    // none yet, and each is replayed when assigned.
    RESTACK_RETURN_IF_ERROR(pending->clear());
    metrics.pending_events = 0;
    next_expiry_ms = wallMs() + kExpiryIntervalMs;

    auto feed = SymbolFeed::create(
        config, *store, metrics,
        [this](const UploadMeta& meta, const IngestReport& report) {
          // The native reader remembers "no symbols" for a while; a new upload must show at
          // once.
          for (const std::string& id : report.ids) symbolizer->forgetId(id);
          // Lookups were pinned to the store as it was before this ingest (worker/kafka/symbol_feed.h):
          // what readers cached meanwhile, under the ingest's own cache counters, is older than that.
          symbolizer->storeChanged();
          // Demand this upload meets is closed by a tombstone on the next flush.
          if (demand) demand->resolve(meta, report);
          // Pending events of this app (of every app, for a shared image) may restore now;
          // a re-check in progress starts over (what it passed saw older symbols).
          if (meta.shared || meta.app.empty()) {
            recheck.clear();
            recheck[""] = "";
          } else if (!recheck.count("") || !recheck[""].empty()) {
            recheck[meta.app] = "";
          }
        },
        /*fetch=*/{}, hooks.ingest);
    if (!feed) return feed.error();
    symbols = std::move(*feed);
    RESTACK_RETURN_IF_ERROR(symbols->catchUpShared());

    auto reader_conf = makeConf(pendingReaderProperties(config));
    if (!reader_conf) return reader_conf.error();
    std::string error;
    pending_reader.reset(RdKafka::KafkaConsumer::create(reader_conf->get(), error));
    if (!pending_reader) return invalidArgument("cannot create the pending topic reader: " + error);
    RESTACK_RETURN_IF_ERROR(startDemand(events_partitions));
    lookUpTopics();

    auto properties = commonProperties(config, "restack-worker");
    properties.insert({"group.id", config.kafka.group_id});
    properties.insert({"enable.auto.commit", "false"});
    properties.insert({"enable.auto.offset.store", "false"});
    properties.insert({"auto.offset.reset", "earliest"});
    // Inputs written by transactional producers count only once committed.
    properties.insert({"isolation.level", "read_committed"});
    properties.insert({"partition.assignment.strategy", config.kafka.assignment_strategy});
    properties.insert({"session.timeout.ms", std::to_string(config.kafka.session_timeout_ms)});
    properties.insert({"heartbeat.interval.ms", std::to_string(std::max(100, config.kafka.session_timeout_ms / 10))});
    // An upload of several GB can hold the loop while it is parsed.
    properties.insert({"max.poll.interval.ms", "1800000"});
    auto conf = makeConf(properties);
    if (!conf) return conf.error();
    (*conf)->set("rebalance_cb", static_cast<RdKafka::RebalanceCb*>(this), error);
    events.reset(RdKafka::KafkaConsumer::create(conf->get(), error));
    if (!events) return invalidArgument("cannot create the Kafka consumer: " + error);
    RdKafka::ErrorCode code = events->subscribe({config.kafka.topics.events});
    if (code != RdKafka::ERR_NO_ERROR)
      return ioError("cannot subscribe to " + config.kafka.topics.events + ": " + errorText(code));
    metrics.ready = true;
    return Status::ok();
  }

  // Every client looks up the topics it uses before the first batch, so that nothing waits for a
  // topic's lookup (clients.h, learnTopicLeaders). With two producers taking turns, each meets each
  // topic for the first time on its own, and a topic written rarely (the DLQ) may be met long after
  // the start, holding that whole batch; the pending reader met its topics at every replay.
  void lookUpTopics() {
    std::vector<std::string> written = {config.kafka.topics.symbolicated, config.kafka.topics.fingerprints,
                                        config.kafka.topics.dlq, config.kafka.topics.pending};
    std::vector<std::string> replayed = {config.kafka.topics.pending};
    if (demand) {
      written.push_back(config.kafka.topics.symbols_missing);
      replayed.push_back(config.kafka.topics.symbols_missing);
    }
    for (RdKafka::Producer* each : {producer.get(), next_producer.get()}) {
      if (!each) continue;
      KnownTopics known = learnTopicLeaders(*each, written);
      for (auto& handle : known.handles) output_topics.push_back(std::move(handle));
    }
    pending_reader_topics = learnTopicLeaders(*pending_reader, replayed).handles;
  }

  // --- producing --------------------------------------------------------------------------
  // `value` nullopt produces a tombstone. With `owner`, the producer reads the value where it is
  // (no copy) and keeps `owner`, which keeps the value alive, until the record's delivery report.
  Status produce(const std::string& topic, int32_t partition, const std::string& key,
                 std::optional<std::string_view> value, const std::vector<std::pair<std::string, std::string>>& head,
                 const std::shared_ptr<const void>& owner = nullptr) {
    RdKafka::Headers* headers = RdKafka::Headers::create();
    for (const auto& [name, text] : head) headers->add(name, text);
    const bool borrowed = owner && value;
    while (true) {
      auto* kept = borrowed ? new std::shared_ptr<const void>(owner) : nullptr;
      RdKafka::ErrorCode code = producer->produce(topic, partition, borrowed ? 0 : RdKafka::Producer::RK_MSG_COPY,
                                                  value ? const_cast<char*>(value->data()) : nullptr,
                                                  value ? value->size() : 0, key.data(), key.size(), 0, headers, kept);
      if (code == RdKafka::ERR_NO_ERROR) return Status::ok();  // the producer owns `headers` and `kept` now
      delete kept;
      if (code == RdKafka::ERR__QUEUE_FULL) {
        producer->poll(100);
        continue;
      }
      delete headers;
      if (code == RdKafka::ERR_MSG_SIZE_TOO_LARGE && value && value->size() > pipeline::kRefusedOutputKeptBytes) {
        // The pipeline sizes every record under limits.max_output_bytes; one the producer still
        // refuses goes to the DLQ cut down, instead of failing this batch again on every retry.
        spdlog::error("a {}-byte record for {} exceeds the producer's message.max.bytes; sent cut down to the DLQ",
                      value->size(), topic);
        const pipeline::OutputRecord refused{pipeline::OutputKind::kDeadLetter, key, std::string(*value), head};
        return produce(config.kafka.topics.dlq, pipeline::refusedOutputDeadLetter(refused, topic));
      }
      return ioError("cannot produce to " + topic + ": " + errorText(code));
    }
  }

  Status produce(const std::string& topic, const pipeline::OutputRecord& record,
                 const std::shared_ptr<const void>& owner = nullptr) {
    return produce(topic, RdKafka::Topic::PARTITION_UA, record.key, record.value, record.headers, owner);
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

  // Restores the events `which` of the batch on the restore threads, `worker.threads` at a time.
  std::vector<Expected<pipeline::ProcessResult>> restoreAll(const std::vector<size_t>& which) {
    std::vector<Expected<pipeline::ProcessResult>> results(which.size(), Error(ErrorCode::kInternal, "not run"));
    restore_threads.run(which.size(), [&](size_t i) {
      const BatchEvent& event = batch[which[i]];
      const logging::ScopedLogContext log_context(
          {.event_id = {}, .topic = config.kafka.topics.events, .partition = event.partition, .offset = event.offset});
      const auto started = std::chrono::steady_clock::now();
      results[i] = guardedProcess(*processor, event.key, event.value);
      metrics.restore_seconds.observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    });
    return results;
  }

  // --- transactions -----------------------------------------------------------------------
  // Runs a transactional call, retrying while librdkafka says the call may be retried.
  template <typename Call>
  std::unique_ptr<RdKafka::Error> retrying(Call&& call) {
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<RdKafka::Error> error(call());
      if (!error || !error->is_retriable() || attempt >= 10) return error;
      spdlog::info("transaction call failed ({}), retrying", error->str());
      std::this_thread::sleep_for(std::chrono::milliseconds(100 * (attempt + 1)));
    }
  }

  // Moves the consumer back to the committed offsets of every owned partition, so that the
  // events of an aborted transaction are read again.
  Status rewind() {
    dropBatch();
    if (owned.empty()) return Status::ok();
    std::vector<RdKafka::TopicPartition*> positions;
    for (int32_t partition : owned) {
      positions.push_back(RdKafka::TopicPartition::create(config.kafka.topics.events, partition));
    }
    RdKafka::ErrorCode code = events->committed(positions, 30000);
    Status outcome;
    if (code != RdKafka::ERR_NO_ERROR) outcome = ioError("cannot read the committed offsets: " + errorText(code));
    for (auto* position : positions) {
      if (!outcome) break;
      // Nothing committed yet: auto.offset.reset=earliest, the start.
      if (position->offset() < 0) position->set_offset(RdKafka::Topic::OFFSET_BEGINNING);
      // Asynchronous: a blocking seek while the group rebalances (an ILLEGAL_GENERATION abort)
      // tripped an assertion in librdkafka 2.0.2's assignment code when the partition was revoked.
      RdKafka::ErrorCode sought = events->seek(*position, 0);
      if (sought != RdKafka::ERR_NO_ERROR) {
        outcome = ioError("cannot rewind " + config.kafka.topics.events + "/" + std::to_string(position->partition()) +
                          ": " + errorText(sought));
      }
    }
    for (auto* position : positions) delete position;
    return outcome;
  }

  // After a failed transactional call: a fatal error stops the worker; otherwise the transaction
  // is aborted and the batch read again.
  Status abandonTransaction(const std::string& what) {
    std::string fatal_text;
    if (producer->fatal_error(fatal_text) != RdKafka::ERR_NO_ERROR) {
      return ioError(what + "; the producer is fenced or failed for good (" + fatal_text +
                     "): stopping, nothing of the open transaction was committed");
    }
    spdlog::warn("{}; aborting the transaction and processing the batch again", what);
    // Let what was produced reach the brokers first: librdkafka 2.0.2 aborting with records still
    // queued sent EndTxn for partitions the coordinator had not registered yet, and the broker's
    // INVALID_TXN_STATE answer is fatal.
    producer->flush(30000);
    std::unique_ptr<RdKafka::Error> aborted = retrying([&] { return producer->abort_transaction(60000); });
    if (aborted) {
      return ioError(what + "; the abort failed too (" + aborted->str() +
                     "): stopping, the restart resumes from "
                     "the last commit");
    }
    return rewind();
  }

  // --- the batch --------------------------------------------------------------------------
  // A loop turn publishes in two steps so that restoring the next batch overlaps producing this
  // one and the wait for the brokers: `publish` opens the transaction (exactly_once), produces the
  // pending and demand records, and starts on its own thread the production of the batch's
  // outputs followed by the commit (exactly_once, with the batch's offsets sent to the
  // transaction) or the wait for every acknowledgement (at_least_once); `finishPublication`,
  // called once the next batch is restored, takes the outcome and brings the local state in line,
  // or aborts and rewinds. Nothing of a batch is committed before all of the previous one was.
  //
  // A synchronous turn: the batch (and with `housekeeping` a re-check slice of pending events
  // and the expiry scan) restored, published and committed before it returns.
  Status processBatch(bool housekeeping) {
    RESTACK_RETURN_IF_ERROR(finishPublication());
    RESTACK_RETURN_IF_ERROR(publish(housekeeping, restoreBatch()));
    return finishPublication();
  }

  // Restores the events of the batch not restored yet. Called while the previous publication
  // commits, whenever nothing more is waiting to be read: the restore then uses the time the
  // loop would otherwise spend waiting for the brokers, and the batch is ready to publish as soon
  // as that commit is done. Without it a slow commit delayed its next batch twice: once while it
  // ran, and again while the events that piled up during it were restored.
  void restoreAhead() {
    if (restored_ahead.size() >= batch.size()) return;
    std::vector<size_t> rest;
    for (size_t i = restored_ahead.size(); i < batch.size(); ++i) rest.push_back(i);
    std::vector<Expected<pipeline::ProcessResult>> results = restoreAll(rest);
    restored_ahead.insert(restored_ahead.end(), std::make_move_iterator(results.begin()),
                          std::make_move_iterator(results.end()));
  }

  // One result per event of the batch, restoring what restoreAhead did not.
  std::vector<Expected<pipeline::ProcessResult>> restoreBatch() {
    restoreAhead();
    return std::exchange(restored_ahead, {});
  }

  // Drops the batch read so far with whatever of it was restored ahead.
  void dropBatch() {
    batch.clear();
    restored_ahead.clear();
  }

  // Produces the outputs of `batch` (restored into `results`, one per event) and of the
  // housekeeping, then starts their commit on `in_flight.outcome`. The batch moves into
  // `in_flight`.
  Status publish(bool housekeeping, std::vector<Expected<pipeline::ProcessResult>> results) {
    const bool expiry_due = housekeeping && wallMs() >= next_expiry_ms;
    const bool rechecking = housekeeping && !recheck.empty();
    const bool demand_due = demand && ((flush_demand_now && demand->hasChanges()) || demand->flushDue(wallMs()));
    if (batch.empty() && !expiry_due && !rechecking && !demand_due) return Status::ok();
    in_flight = Publication{};
    in_flight.recheck_before = recheck;
    last_publication_start = Clock::now();
    const uint64_t failures_before = delivery_failures;

    if (exactly_once) {
      // The previous publication is settled: its producer waits for the next turn.
      if (next_producer) std::swap(producer, next_producer);
      std::unique_ptr<RdKafka::Error> begun(producer->begin_transaction());
      if (begun) return ioError("cannot begin a transaction: " + begun->str());
    }
    in_flight.open = true;
    if (demand) demand->begin();
    in_flight.results = std::make_shared<std::vector<Expected<pipeline::ProcessResult>>>(std::move(results));
    Status produced =
        produceBatch(*in_flight.results, in_flight.outputs, in_flight.staged, in_flight.counts, in_flight.next_offsets);
    if (produced && rechecking) produced = restorePendingSlice(in_flight.staged);
    if (produced && expiry_due) produced = expirePending(in_flight.staged);
    // After the batch, so that its observations are in the records.
    if (produced && demand && (demand_due || demand->flushDue(wallMs())))
      produced = flushDemand(in_flight.demand_published);
    in_flight.batch = std::move(batch);
    batch.clear();

    if (exactly_once) {
      if (!produced) return settlePublication(produced.error().message());
      // The batch's offsets, sent with the consumer's group metadata so that a zombie of an old
      // generation is fenced, then the commit: both wait for the brokers, off the loop's thread.
      // A transaction without events (pending work, demand) sends the owned partitions' committed
      // offsets again: without offsets the group's generation is never checked, and a worker that
      // lost its partitions while stopped would commit pending records their new owner also writes.
      const std::map<int32_t, int64_t>& sent = in_flight.next_offsets.empty() ? committed_next : in_flight.next_offsets;
      std::vector<std::unique_ptr<RdKafka::TopicPartition>> offsets;
      for (const auto& [partition, offset] : sent) {
        offsets.emplace_back(RdKafka::TopicPartition::create(config.kafka.topics.events, partition, offset));
      }
      std::shared_ptr<RdKafka::ConsumerGroupMetadata> group(events->groupMetadata());
      in_flight.outcome = std::async(std::launch::async, [this, offsets = std::move(offsets), group]() -> std::string {
        std::string failure = produceOutputs();
        if (!failure.empty()) return failure;
        if (hooks.abort_transaction && hooks.abort_transaction()) return "abort requested by a test hook";
        if (!offsets.empty()) {
          std::vector<RdKafka::TopicPartition*> raw;
          for (const auto& offset : offsets) raw.push_back(offset.get());
          std::unique_ptr<RdKafka::Error> sent =
              retrying([&] { return producer->send_offsets_to_transaction(raw, group.get(), 60000); });
          if (sent) return "sending the batch's offsets to the transaction failed: " + sent->str();
        }
        std::unique_ptr<RdKafka::Error> committed = retrying([&] { return producer->commit_transaction(60000); });
        return committed ? "committing the transaction failed: " + committed->str() : std::string();
      });
    } else if (!produced) {
      if (demand) demand->abort();
      in_flight = Publication{};
      return produced;
    } else {
      // Every output acknowledged before any input offset is committed.
      in_flight.outcome = std::async(std::launch::async, [this, before = failures_before]() -> std::string {
        std::string failure = produceOutputs();
        if (!failure.empty()) return failure;
        while (producer->outq_len() > 0) {
          producer->flush(1000);
          if (delivery_failures != before) break;
        }
        if (delivery_failures == before) return {};
        const std::lock_guard<std::mutex> lock(delivery_error_mutex);
        return "outputs were not acknowledged (" + last_delivery_error +
               "); offsets not committed, the batch will be read again";
      });
    }
    return Status::ok();
  }

  // On the publication's thread: produces the batch's restored events, fingerprints and DLQ
  // records, the largest part of producing a batch, while the loop's thread goes on to the next
  // batch. Returns what failed, "" when every record was handed to the producer.
  std::string produceOutputs() {
    try {
      const std::shared_ptr<const void> owner = in_flight.results;
      for (const pipeline::OutputRecord* record : in_flight.outputs) {
        Status produced = produce(topicFor(record->kind), *record, owner);
        if (!produced) return produced.error().message();
      }
    } catch (const std::exception& error) {
      return std::string("producing the batch's outputs: ") + error.what();
    }
    return {};
  }

  // Waits for the publication in flight (if any) and settles it.
  Status finishPublication() {
    if (!in_flight.open) return Status::ok();
    return settlePublication(in_flight.outcome.valid() ? in_flight.outcome.get() : std::string());
  }

  // Applies the outcome of the publication in flight (`failure`, "" when committed): committed,
  // the counters and the local pending cache follow; failed, exactly_once aborts the transaction
  // and rewinds the consumer (the batch read since is dropped and read again), at_least_once stops
  // the worker.
  Status settlePublication(const std::string& failure) {
    Publication done = std::move(in_flight);
    in_flight = Publication{};
    if (!failure.empty()) {
      // Slices of the re-check that were not committed are walked again; an app added since keeps
      // its own place.
      for (const auto& [app, after] : done.recheck_before) {
        auto [it, added] = recheck.emplace(app, after);
        if (!added && after < it->second) it->second = after;
      }
      if (demand) demand->abort();
      if (exactly_once) return abandonTransaction(failure);
      return ioError(failure);
    }
    if (exactly_once) {
      if (!done.next_offsets.empty()) ++metrics.batches_committed;
      for (const auto& [partition, offset] : done.next_offsets) {
        if (owned.count(partition)) committed_next[partition] = offset;
      }
    } else {
      for (const auto& [partition, offset] : done.next_offsets) {
        uncommitted[partition] = std::max(uncommitted[partition], offset);
      }
    }
    const int64_t acknowledged_ms = wallMs();
    for (const BatchEvent& event : done.batch) {
      if (event.timestamp_ms >= 0) metrics.end_to_end_seconds.observe((acknowledged_ms - event.timestamp_ms) / 1000.0);
    }
    if (demand) {
      demand->commit();
      metrics.symbol_demand_keys = demand->size();
      metrics.symbol_demand_records_published += done.demand_published;
      metrics.symbol_demand_untracked = demand->untracked();
    }
    // The records are durable: bring the local cache in line.
    const Staged& staged = done.staged;
    const BatchCounts& counts = done.counts;
    for (const PendingEvent& kept : staged.kept) RESTACK_RETURN_IF_ERROR(pending->put(kept));
    for (const std::string& key : staged.removed) RESTACK_RETURN_IF_ERROR(pending->remove(key));
    metrics.pending_events = pending->count();
    metrics.events_dead_lettered += counts.dead_lettered;
    for (ErrorCode code : counts.dead_letter_codes) metrics.countDeadLetter(code);
    for (size_t k = 0; k < counts.frames_by_kind.size(); ++k) metrics.frames_by_kind[k] += counts.frames_by_kind[k];
    metrics.events_published += counts.published;
    metrics.events_pending_symbols += counts.pending_symbols;
    metrics.frames_total += counts.frames_total;
    metrics.frames_symbolicated += counts.frames_symbolicated;
    metrics.events_restored_later += staged.restored_later;
    metrics.events_pending_expired += staged.expired;
    for (size_t k = 0; k < counts.by_platform.size(); ++k) metrics.events_by_platform[k] += counts.by_platform[k];
    if (!exactly_once) commitUncommitted();
    return Status::ok();
  }

  // Produces the pending records of the restored batch and lists its outputs (into `outputs`,
  // produced by the publication's thread); events that wait for symbols are restored again once
  // any upload not read yet is applied.
  Status produceBatch(std::vector<Expected<pipeline::ProcessResult>>& results,
                      std::vector<const pipeline::OutputRecord*>& outputs, Staged& staged, BatchCounts& counts,
                      std::map<int32_t, int64_t>& next_offsets) {
    if (batch.empty()) return Status::ok();
    if (results.size() != batch.size()) return Error(ErrorCode::kInternal, "restored results do not match the batch");
    try {
      // Events waiting for symbols: apply any upload not read yet, then restore them again.
      std::vector<size_t> waiting;
      std::set<int32_t> partitions;
      for (size_t i = 0; i < results.size(); ++i) {
        if (!results[i]) return results[i].error();
        if (results[i]->pending_symbols) {
          waiting.push_back(i);
          partitions.insert(batch[i].partition);
        }
      }
      if (!waiting.empty()) {
        auto applied = symbols->catchUpToHighWatermarks(partitions);
        if (!applied) return applied.error();
        if (*applied > 0) {
          auto again = restoreAll(waiting);
          for (size_t k = 0; k < waiting.size(); ++k) results[waiting[k]] = std::move(again[k]);
        }
      }

      for (size_t i = 0; i < batch.size(); ++i) {
        if (!results[i]) return results[i].error();
        pipeline::ProcessResult& result = *results[i];
        // The records are produced as they are (no copy of a ~26 KB restored event); DLQ records
        // gain the source's headers in place.
        for (auto& record : result.records) {
          if (record.kind == pipeline::OutputKind::kDeadLetter) {
            record.headers.emplace_back("restack.source.topic", config.kafka.topics.events);
            record.headers.emplace_back("restack.source.partition", std::to_string(batch[i].partition));
            record.headers.emplace_back("restack.source.offset", std::to_string(batch[i].offset));
            if (dlq_log.allow()) {
              const logging::ScopedLogContext log_context({.event_id = result.event_id,
                                                           .topic = config.kafka.topics.events,
                                                           .partition = batch[i].partition,
                                                           .offset = batch[i].offset});
              spdlog::warn("event at {}/{}:{} sent to the DLQ: {}", config.kafka.topics.events, batch[i].partition,
                           batch[i].offset, result.error);
            }
          }
          outputs.push_back(&record);
        }
        if (result.pending_symbols) RESTACK_RETURN_IF_ERROR(keepPending(batch[i], result, staged));
        if (result.pending_symbols && demand) observeDemand(batch[i], result);
        counts.dead_lettered += result.dead_letter ? 1 : 0;
        if (result.dead_letter) counts.dead_letter_codes.push_back(result.error_code);
        counts.published += result.dead_letter ? 0 : 1;
        counts.pending_symbols += result.pending_symbols ? 1 : 0;
        if (!result.dead_letter) ++counts.by_platform[platformIndex(result.platform)];
        counts.frames_total += result.frames_total;
        counts.frames_symbolicated += result.frames_symbolicated;
        for (size_t k = 0; k < counts.frames_by_kind.size(); ++k) counts.frames_by_kind[k] += result.frames_by_kind[k];
        next_offsets[batch[i].partition] = std::max(next_offsets[batch[i].partition], batch[i].offset + 1);
      }
    } catch (const std::exception& error) {
      return Error(ErrorCode::kInternal, std::string("publishing the batch: ") + error.what());
    }
    return Status::ok();
  }

  // Counts what the restored event misses into the demand feed, at the event's Kafka timestamp.
  void observeDemand(const BatchEvent& event, const pipeline::ProcessResult& result) {
    // Most events miss nothing: the restore's tally says so without reading the output back.
    uint64_t missing = 0;
    for (size_t kind = 0; kind < pipeline::kFrameTallyKinds; ++kind) {
      missing += result.frames_by_kind[kind * kFrameReasonCount + static_cast<size_t>(FrameReason::kMissingSymbols)];
    }
    if (missing == 0) return;
    demand->observe(event.partition,
                    demandOfMissingFrames(result, event.timestamp_ms >= 0 ? event.timestamp_ms : wallMs()));
  }

  // Produces the pending record of `event` to the pending partition of its events partition.
  Status keepPending(const BatchEvent& event, const pipeline::ProcessResult& result, Staged& staged) {
    PendingEvent kept;
    kept.app = result.app;
    kept.event_id = result.event_id.empty() ? std::to_string(event.partition) + ":" + std::to_string(event.offset)
                                            : result.event_id;
    kept.input_key = event.key;
    kept.provisional_fingerprint = result.fingerprint;
    kept.value = event.value;
    kept.enqueued_ms = wallMs();
    kept.partition = event.partition;
    const uint64_t size = PendingEvents::sizeOf(kept);
    if (!pending->admits(size, staged.kept.size(), staged.kept_bytes)) {
      spdlog::warn(
          "{} pending events ({} bytes) kept already (pending.max_events {}, pending.max_bytes {}); event {} will not "
          "be restored later",
          pending->count() + staged.kept.size(), pending->bytes() + staged.kept_bytes, config.pending.max_events,
          config.pending.max_bytes, kept.event_id);
      return Status::ok();
    }
    RESTACK_RETURN_IF_ERROR(
        produce(config.kafka.topics.pending, event.partition, kept.key(), PendingEvents::encodeRecord(kept), {}));
    staged.kept_bytes += size;
    staged.kept.push_back(std::move(kept));
    return Status::ok();
  }

  // Finishes a pending event: a tombstone on its pending partition, the local entry removed once
  // committed.
  Status finishPending(const PendingEvent& entry, Staged& staged) {
    if (!staged.removed.insert(entry.key()).second) return Status::ok();
    if (entry.partition < 0) return Status::ok();
    return produce(config.kafka.topics.pending, entry.partition, entry.key(), std::nullopt, {});
  }

  // Restores again up to kRecheckSlice pending events of the apps that received uploads, and
  // publishes those that are now restored: the final event and a fingerprint record that
  // replaces the provisional one.
  Status restorePendingSlice(Staged& staged) {
    size_t budget = kRecheckSlice;
    for (auto it = recheck.begin(); it != recheck.end() && budget > 0;) {
      const size_t requested = budget;
      auto entries = pending->list(it->first, it->second, requested);
      if (!entries) return entries.error();
      budget -= entries->size();
      const bool finished_app = entries->size() < requested;
      for (PendingEvent& entry : *entries) {
        if (staged.removed.count(entry.key())) continue;
        if (wallMs() - entry.enqueued_ms > pending->options().max_age_ms) {
          ++staged.expired;
          RESTACK_RETURN_IF_ERROR(finishPending(entry, staged));
          continue;
        }
        auto result = guardedProcess(*processor, entry.input_key, entry.value, entry.provisional_fingerprint);
        if (!result) return result.error();
        if (result->pending_symbols && !result->dead_letter) continue;
        try {
          for (auto& record : result->records) {
            if (record.kind == pipeline::OutputKind::kDeadLetter) {
              record.headers.emplace_back("restack.source.topic", config.kafka.topics.pending);
              record.headers.emplace_back("restack.source.partition", std::to_string(entry.partition));
              if (dlq_log.allow()) {
                const logging::ScopedLogContext log_context({.event_id = entry.event_id,
                                                             .topic = config.kafka.topics.events,
                                                             .partition = entry.partition,
                                                             .offset = -1});
                spdlog::warn("pending event {} sent to the DLQ: {}", entry.event_id, result->error);
              }
            }
            RESTACK_RETURN_IF_ERROR(produce(topicFor(record.kind), record));
          }
        } catch (const std::exception& error) {
          return Error(ErrorCode::kInternal, std::string("publishing a restored pending event: ") + error.what());
        }
        ++staged.restored_later;
        metrics.pending_wait_seconds.observe((wallMs() - entry.enqueued_ms) / 1000.0);
        RESTACK_RETURN_IF_ERROR(finishPending(entry, staged));
      }
      if (finished_app) {
        it = recheck.erase(it);
      } else {
        it->second = entries->back().key();
        ++it;
      }
    }
    return Status::ok();
  }

  // Drops pending events older than pending.max_age_s (tombstones), a slice per turn.
  Status expirePending(Staged& staged) {
    auto old = pending->enqueuedBefore(wallMs() - pending->options().max_age_ms, kExpirySlice);
    if (!old) return old.error();
    for (const PendingEvent& entry : *old) {
      if (staged.removed.count(entry.key())) continue;
      ++staged.expired;
      RESTACK_RETURN_IF_ERROR(finishPending(entry, staged));
    }
    // A full slice: more may be old, look again next turn.
    next_expiry_ms = old->size() == kExpirySlice ? 0 : wallMs() + kExpiryIntervalMs;
    return Status::ok();
  }

  // at_least_once: commits every offset whose outputs were acknowledged. A commit refused
  // during a rebalance (cooperative rebalancing keeps our partitions) is kept and retried on the
  // next loop turn or when the partitions are revoked, instead of letting the batch be restored
  // twice.
  void commitUncommitted() {
    if (uncommitted.empty()) return;
    std::vector<RdKafka::TopicPartition*> offsets;
    for (const auto& [partition, offset] : uncommitted) {
      offsets.push_back(RdKafka::TopicPartition::create(config.kafka.topics.events, partition, offset));
    }
    const RdKafka::ErrorCode request = events->commitSync(offsets);
    // librdkafka answers the request's error, and no error when only some partitions failed:
    // those carry their own and stay uncommitted.
    RdKafka::ErrorCode code = request;
    for (const auto* offset : offsets) {
      if (request == RdKafka::ERR_NO_ERROR && offset->err() == RdKafka::ERR_NO_ERROR) {
        uncommitted.erase(offset->partition());
      } else if (offset->err() != RdKafka::ERR_NO_ERROR) {
        code = offset->err();
      }
    }
    for (auto* offset : offsets) delete offset;
    if (uncommitted.empty()) {
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

  // Gauges that cost a walk over partitions or a RocksDB property read: refreshed every few
  // seconds from the loop rather than per scrape, so /metrics never touches the clients.
  void updateGauges() {
    const int64_t now = steadyMs();
    if (now - gauges_updated_ms < 5000) return;
    gauges_updated_ms = now;
    uint64_t lag = 0;
    std::vector<RdKafka::TopicPartition*> positions;
    for (int32_t partition : owned)
      positions.push_back(RdKafka::TopicPartition::create(config.kafka.topics.events, partition));
    if (!positions.empty() && events->position(positions) == RdKafka::ERR_NO_ERROR) {
      for (const RdKafka::TopicPartition* position : positions) {
        int64_t low = 0, high = 0;
        if (events->get_watermark_offsets(position->topic(), position->partition(), &low, &high) !=
                RdKafka::ERR_NO_ERROR ||
            high < 0)
          continue;
        // Before the first fetch the position is invalid: everything from the low watermark is lag.
        const int64_t at = position->offset() >= 0 ? position->offset() : low;
        if (high > at) lag += static_cast<uint64_t>(high - at);
      }
    }
    for (RdKafka::TopicPartition* position : positions) delete position;
    metrics.consumer_lag = lag;
    metrics.symbols_lag = symbols->lag();
    uint64_t sst = 0, memtables = 0;
    store->db().GetIntProperty("rocksdb.total-sst-files-size", &sst);
    store->db().GetIntProperty("rocksdb.cur-size-all-mem-tables", &memtables);
    metrics.store_bytes = sst + memtables;
    metrics.pending_bytes = pending->bytes();
  }

  Status loop(const std::atomic<bool>& stop) {
    while (!stop) {
      metrics.last_loop_ms = steadyMs();
      RESTACK_RETURN_IF_ERROR(symbols->applyFetched());
      // How long this batch may wait to fill. Waiting only pays while the previous batch commits:
      // once nothing is in flight, what arrived is restored at once (batches grow with the rate,
      // latency stays that of one restore and one commit). While a commit is out, the batch fills
      // for up to batch_linger_ms, and what arrived is restored whenever nothing more is waiting.
      // min_commit_interval_ms (0 by default) holds a batch until the previous publication
      // began that long ago, in flight or not: fewer, larger commits.
      const auto linger_end = Clock::now() + std::chrono::milliseconds(config.worker.batch_linger_ms);
      const auto interval_end =
          last_publication_start + std::chrono::milliseconds(config.worker.min_commit_interval_ms);
      const auto fill_end = std::max(linger_end, interval_end);
      while (batch.size() < config.worker.batch_size && !stop) {
        const auto now = Clock::now();
        const bool committing = in_flight.open && in_flight.outcome.valid() &&
                                in_flight.outcome.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
        int64_t remaining = 0;
        if (committing) {
          remaining =
              std::min<int64_t>(std::chrono::ceil<std::chrono::milliseconds>(fill_end - now).count(), kCommitPollMs);
        } else if (batch.empty()) {
          remaining = std::chrono::ceil<std::chrono::milliseconds>(linger_end - now).count();
        } else {
          remaining = std::chrono::ceil<std::chrono::milliseconds>(interval_end - now).count();
        }
        std::unique_ptr<RdKafka::Message> message(events->consume(static_cast<int>(std::max<int64_t>(remaining, 0))));
        if (!fatal.isOk()) return fatal;
        if (message->err() == RdKafka::ERR__TIMED_OUT && committing && Clock::now() < fill_end) {
          restoreAhead();
          continue;
        }
        if (message->err() == RdKafka::ERR__TIMED_OUT || message->err() == RdKafka::ERR__PARTITION_EOF) break;
        if (message->err() != RdKafka::ERR_NO_ERROR) {
          spdlog::warn("consumer: {}", message->errstr());
          break;
        }
        ++metrics.events_consumed;
        BatchEvent event;
        event.partition = message->partition();
        event.offset = message->offset();
        const RdKafka::MessageTimestamp timestamp = message->timestamp();
        if (timestamp.type != RdKafka::MessageTimestamp::MSG_TIMESTAMP_NOT_AVAILABLE)
          event.timestamp_ms = timestamp.timestamp;
        if (message->key()) event.key = *message->key();
        event.value.assign(static_cast<const char*>(message->payload()), message->len());
        batch.push_back(std::move(event));
      }
      // The batch was restored ahead while the previous one committed (on its publication's
      // thread), as far as it had arrived; the rest is restored now.
      std::vector<Expected<pipeline::ProcessResult>> results = restoreBatch();
      // A failed commit rewinds the consumer and drops the batch read since: it is read again.
      RESTACK_RETURN_IF_ERROR(finishPublication());
      if (batch.size() != results.size()) results.clear();
      RESTACK_RETURN_IF_ERROR(publish(true, std::move(results)));
      if (!exactly_once) commitUncommitted();
      if (!in_flight.open) producer->poll(0);
      if (next_producer) next_producer->poll(0);
      updateGauges();
      flushUsage(false);
    }
    return Status::ok();
  }

  // Writes when symbol sets were last used (symbolstore/usage.h) once a minute, and when
  // stopping. A failure is logged, never fatal: the times only inform `restack store list`.
  void flushUsage(bool now) {
    if (!now && Clock::now() < usage_flush_due) return;
    usage_flush_due = Clock::now() + std::chrono::minutes(1);
    auto written = symbolizer->usage().flush(*store);
    if (!written) spdlog::warn("cannot record when symbols were last used: {}", written.error().message());
  }
};

Worker::Worker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Worker::~Worker() {
  if (!impl_) return;
  if (impl_->events) impl_->events->close();
  // Every thread that writes into the scratch folder ends with the worker: nothing is left in it
  // after a stop (a killed run's files go at the next start).
  const std::string scratch = scratchDirFor(impl_->config);
  impl_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
}

Expected<std::unique_ptr<Worker>> Worker::create(const config::Config& config, Metrics& metrics, Hooks hooks) {
  auto impl = std::make_unique<Impl>(config, metrics, std::move(hooks));
  RESTACK_RETURN_IF_ERROR(impl->start());
  return std::unique_ptr<Worker>(new Worker(std::move(impl)));
}

Status Worker::run(const std::atomic<bool>& stop) {
  Status status = impl_->loop(stop);
  spdlog::info("stopping: finishing the batch in flight");
  Status finished = impl_->processBatch(false);
  if (status.isOk() && !finished.isOk()) status = finished;
  impl_->flushUsage(true);
  impl_->metrics.ready = false;
  // close() revokes the assignment (the rebalance callback commits) and leaves the group now,
  // instead of after session.timeout.ms.
  impl_->events->close();
  impl_->producer->flush(30000);
  if (impl_->next_producer) impl_->next_producer->flush(30000);
  impl_->events.reset();
  return status;
}

}  // namespace restack::worker
