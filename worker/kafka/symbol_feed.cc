#include "worker/kafka/symbol_feed.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <optional>

#include "symbolstore/ingest.h"
#include "worker/kafka/clients.h"
#include "worker/kafka/deferred_uploads.h"
#include "worker/kafka/fetch_pool.h"
#include "worker/kafka/upload_fetch.h"
#include "worker/kafka/upload_message.h"
#include "worker/pipeline/output_record.h"

namespace restack::worker {
namespace {

using Clock = std::chrono::steady_clock;
using PartitionKey = std::pair<std::string, int32_t>;  // topic, partition

// How long the DLQ copy of a refused upload may take to be acknowledged. The DLQ producer's
// message.timeout.ms (below, unless kafka.properties sets one) ends every delivery before this.
constexpr auto kDlqAckWait = std::chrono::seconds(90);
constexpr const char* kDlqMessageTimeoutMs = "60000";
// How often a long catch-up logs where each partition stands.
constexpr auto kProgressLogInterval = std::chrono::seconds(5);
// How often the loop logs that an ingest is still under way.
constexpr auto kLongIngestLogInterval = std::chrono::seconds(60);

int64_t wallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One upload, read from a symbols topic or from the deferred uploads in the store.
struct UploadSource {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  Headers headers;
  std::string_view value;
};

UploadSource sourceOf(RdKafka::Message& message) {
  UploadSource source;
  source.topic = message.topic_name();
  source.partition = message.partition();
  source.offset = message.offset();
  if (const RdKafka::Headers* raw = message.headers()) {
    for (const auto& header : raw->get_all()) {
      source.headers.emplace_back(header.key(),
                                  std::string(static_cast<const char*>(header.value()), header.value_size()));
    }
  }
  if (message.key()) source.key = *message.key();
  source.value = std::string_view(static_cast<const char*>(message.payload()), message.len());
  return source;
}

std::string where(const UploadSource& source) {
  return source.topic + "/" + std::to_string(source.partition) + ":" + std::to_string(source.offset);
}

// Location uploads whose result has not been taken yet at most, per fetch thread: beyond that the
// symbols topics are not read further until downloads finish (memory stays bounded whatever a
// producer sends).
constexpr size_t kOutstandingFetchesPerThread = 8;

// The result of one attempt at an upload. `worker_fault`: the store cannot be written, which is
// the worker's problem and not the upload's (neither refused nor deferred; the worker stops).
struct Attempt {
  Status status;
  bool worker_fault = false;
};

// What an ingest beside the loop ends with: the attempt, and for an applied upload what it
// applied (the loop reports it: metrics, readers' caches, logs).
struct IngestOutcome {
  Attempt attempt;
  std::optional<UploadMeta> meta;
  IngestReport report;
  std::string label;  // the upload's file name, or its key
};

// One upload to ingest, shared by the loop and the ingest's thread: `source` views the bytes of
// `message` (read from a topic; its offset is recorded when the ingest ends) or of `upload` (kept
// in the store; settled when the ingest ends).
struct IngestJob {
  UploadSource source;
  std::unique_ptr<RdKafka::Message> message;
  std::optional<DeferredUpload> upload;
  std::optional<Expected<FetchedUpload>> fetched;  // the download of an upload by location
  PartitionKey from;
  // Catch-ups of `from` wait for it (for uploads.fetch_wait_ms once its ingest starts): uploads read
  // from a topic, and downloads that arrived in time; not retries.
  bool awaited = false;
};

// Runs on the ingest's own thread: touches neither the metrics nor the readers, which belong to
// the loop. Nothing thrown gets out; the upload is then refused.
IngestOutcome ingestJob(const IngestJob& job, const SymbolFeed::IngestFunction& ingest, SymbolStore& store,
                        const IngestOptions& options, bool shared) noexcept {
  IngestOutcome outcome;
  try {
    auto upload = decodeUploadMessage(job.source.key, job.source.headers, shared);
    if (!upload) {
      outcome.attempt = {upload.error()};
      return outcome;
    }
    outcome.label = upload->file_name.empty() ? job.source.key : upload->file_name;
    UploadContent content;
    content.display_name = upload->file_name;
    if (!upload->location.empty()) {
      if (!job.fetched) {
        outcome.attempt = {Error(ErrorCode::kInternal, "an upload by location reached ingest unfetched")};
        return outcome;
      }
      if (!*job.fetched) {
        outcome.attempt = {job.fetched->error()};
        return outcome;
      }
      content.path = (*job.fetched)->path;
    } else {
      content.bytes = job.source.value;
    }
    IngestOptions labelled = options;
    labelled.progress = [label = outcome.label, last = Clock::now()](uint64_t done, uint64_t total,
                                                                     std::string_view stage) mutable {
      if (Clock::now() - last < std::chrono::seconds(5)) return;
      last = Clock::now();
      spdlog::info("ingesting {}: {} {}/{}", label, stage, done, total);
    };
    auto report = ingest(store, upload->meta, content, labelled);
    if (!report) {
      // An I/O error is the worker's problem (a full disk, a store that cannot be written), not
      // the upload's. Content from the message: the worker stops and the upload is applied again
      // after the restart. Content fetched from a location: the upload is deferred and fetched
      // again later, so that a location this worker cannot read does not crash-loop it.
      if (report.error().code() == ErrorCode::kIo) {
        outcome.attempt = content.path.empty() ? Attempt{report.error(), true}
                                               : Attempt{Error(ErrorCode::kUnavailable, report.error().message())};
      } else {
        outcome.attempt = {report.error()};
      }
      return outcome;
    }
    outcome.meta = upload->meta;
    outcome.report = std::move(*report);
  } catch (...) {
    // The exception's text may quote the upload's content; the DLQ record and the log do not.
    outcome.meta.reset();
    outcome.attempt = {Error(ErrorCode::kInternal,
                             "processing the upload threw an exception (a defect in restack; the upload's content "
                             "is in this DLQ record)")};
  }
  return outcome;
}

}  // namespace

struct SymbolFeed::Impl : public RdKafka::DeliveryReportCb {
  config::Config config;
  SymbolStore& store;
  Metrics& metrics;
  RetrySchedule schedule;
  IngestedCallback on_ingested;
  IngestFunction ingest;
  std::unique_ptr<DeferredUploads> deferred;
  // Set when the feed stops: downloads in progress end (UploadPolicy::cancel), and so does the
  // ingest in progress (IngestOptions::stop).
  std::atomic<bool> stopping{false};
  std::unique_ptr<FetchPool> pool;
  // Downloads handed to the pool, by the id they were submitted under (where() of the upload).
  struct InFlight {
    DeferredUpload upload;
    PartitionKey from;
    Clock::time_point wait_until;  // catch-ups of `from` wait for it until then
  };
  std::map<std::string, InFlight> in_flight;
  // Downloads that finished, in that order, waiting for the ingest thread.
  std::deque<std::shared_ptr<IngestJob>> downloaded;
  // The one upload being ingested beside the loop (lookups read the store as it was before it
  // began: SymbolStore::pinLookups), and its result to come.
  struct Ingesting {
    std::shared_ptr<IngestJob> job;
    std::future<IngestOutcome> outcome;
    Clock::time_point started;
    Clock::time_point reported;  // last "still ingesting" log line
  };
  std::optional<Ingesting> ingesting;
  // An upload carried in its message, read while another ingest ran: it is ingested next, and the
  // symbols topics are not read further meanwhile (its offset must be recorded first).
  std::shared_ptr<IngestJob> held;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  // The symbols topics looked up at start, so that an assignment starts reading at once instead of
  // waiting for their lookup (worker/kafka/clients.h, learnTopicLeaders). Destroyed before `consumer`.
  std::vector<std::unique_ptr<RdKafka::Topic>> consumer_topics;
  // Delivery reports of DLQ copies in flight, by the id passed as the message's opaque. Declared
  // before the producer, which may report while it is destroyed.
  std::map<uintptr_t, std::optional<RdKafka::ErrorCode>> deliveries;
  uintptr_t next_delivery = 1;
  std::unique_ptr<RdKafka::Producer> dlq;
  // The DLQ topic looked up at start, so that the first refused upload does not wait for the
  // lookup while the loop waits for its copy (worker/kafka/clients.h, learnTopicLeaders). After
  // `dlq`, so destroyed before it.
  std::vector<std::unique_ptr<RdKafka::Topic>> dlq_topic;
  std::set<PartitionKey> assigned;
  std::set<PartitionKey> at_end;  // partitions whose last event was "end of partition"

  Impl(const config::Config& c, SymbolStore& s, Metrics& m) : config(c), store(s), metrics(m) {
    schedule.initial_backoff_ms = static_cast<int64_t>(c.uploads.retry_initial_backoff_ms);
    schedule.max_backoff_ms = static_cast<int64_t>(c.uploads.retry_max_backoff_ms);
    schedule.deadline_ms = static_cast<int64_t>(c.uploads.retry_deadline_s) * 1000;
  }

  void dr_cb(RdKafka::Message& message) override {
    auto found = deliveries.find(reinterpret_cast<uintptr_t>(message.msg_opaque()));
    if (found != deliveries.end()) found->second = message.err();
  }

  Status reassign() {
    std::vector<RdKafka::TopicPartition*> list;
    for (const auto& [topic, partition] : assigned) {
      auto applied = store.appliedOffset(topic, partition);
      if (!applied) {
        for (auto* p : list) delete p;
        return applied.error();
      }
      int64_t start = applied->value_or(RdKafka::Topic::OFFSET_BEGINNING);
      // An upload read and not recorded yet (ingesting or held) is not read twice.
      for (const IngestJob* job : {ingesting ? ingesting->job.get() : nullptr, held.get()}) {
        if (job && job->message && job->from == PartitionKey{topic, partition}) {
          start = std::max(start, job->source.offset + 1);
        }
      }
      list.push_back(RdKafka::TopicPartition::create(topic, partition, start));
    }
    RdKafka::ErrorCode code = consumer->assign(list);
    for (auto* p : list) delete p;
    if (code != RdKafka::ERR_NO_ERROR) return ioError("cannot assign symbols partitions: " + errorText(code));
    at_end.clear();
    return Status::ok();
  }

  void publishDeferred() {
    metrics.uploads_deferred = deferred->count();
    metrics.uploads_deferred_oldest_ms = deferred->oldestFirstFailedMs();
  }

  // Copies a refused upload to the DLQ and waits for the acknowledgement. `attempts` > 0 adds
  // the number of attempts made (deferred uploads).
  Status refuse(const UploadSource& source, const Error& error, uint32_t attempts) {
    RdKafka::Headers* headers = RdKafka::Headers::create();
    // The upload's own headers (restack.location, restack.kind …) make the copy replayable; the
    // outcome headers of an earlier refusal (a replayed copy) are replaced.
    // They are copied within a budget, so that the copy fits a Kafka message whatever the
    // producer sent (limits.max_output_bytes leaves 16 KiB for key and headers).
    constexpr size_t kCopiedHeaderBytes = 8192;
    size_t copied = 0, left_out = 0;
    for (const auto& [name, value] : source.headers) {
      if (name.starts_with("restack.error") || name.starts_with("restack.source.") || name == "restack.attempts" ||
          name == "restack.truncated" || name == "restack.key.truncated") {
        continue;
      }
      if (copied + name.size() + value.size() > kCopiedHeaderBytes) {
        ++left_out;
        continue;
      }
      copied += name.size() + value.size();
      headers->add(name, value);
    }
    if (left_out > 0) headers->add("restack.headers.truncated", std::to_string(left_out) + " header(s) left out");
    // A refused upload may be far larger than a Kafka message (a bomb, a symbol file over a
    // limit): the pipeline's DLQ record keeps the first limits.max_output_bytes, bounds the key
    // and the reason, and says what it cut, as for events. A copy the broker refuses would stop
    // the worker on every restart.
    const pipeline::OutputRecord copy =
        pipeline::deadLetterRecord(source.key, source.value, error, config.limits.max_output_bytes);
    for (const auto& [name, value] : copy.headers) headers->add(name, value);
    headers->add("restack.source.topic", source.topic);
    headers->add("restack.source.partition", std::to_string(source.partition));
    headers->add("restack.source.offset", std::to_string(source.offset));
    if (attempts > 0) headers->add("restack.attempts", std::to_string(attempts));
    const uintptr_t id = next_delivery++;
    deliveries[id] = std::nullopt;
    RdKafka::ErrorCode code =
        dlq->produce(config.kafka.topics.dlq, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
                     const_cast<char*>(copy.value.data()), copy.value.size(), copy.key.data(), copy.key.size(), 0,
                     headers, reinterpret_cast<void*>(id));
    std::optional<RdKafka::ErrorCode> delivered;
    if (code != RdKafka::ERR_NO_ERROR) {
      delete headers;  // not handed over to the producer
      delivered = code;
    } else {
      const auto until = Clock::now() + kDlqAckWait;
      while (!deliveries[id] && Clock::now() < until) dlq->poll(50);
      delivered = deliveries[id];
    }
    deliveries.erase(id);
    if (!delivered || *delivered != RdKafka::ERR_NO_ERROR) {
      ++metrics.upload_dlq_write_failures;
      return ioError("the DLQ copy of the refused upload at " + where(source) + " was not written to " +
                     config.kafka.topics.dlq + " (" +
                     (delivered ? errorText(*delivered) : std::string("no acknowledgement in time")) +
                     "); the upload is tried again");
    }
    metrics.countRefusal(error.code());
    spdlog::error("symbol upload at {} refused ({}): {}", where(source), errorCodeName(error.code()), error.message());
    return Status::ok();
  }

  // Reports an ingest that ended, on the loop: the readers drop what they cached about its ids.
  void reportIngested(const IngestOutcome& outcome) noexcept {
    if (!outcome.meta) return;
    try {
      ++metrics.uploads_ingested;
      if (on_ingested) on_ingested(*outcome.meta, outcome.report);
      spdlog::info("ingested {} upload for {}:{} ({} records, ids: {})", symbolKindName(outcome.report.kind),
                   outcome.meta->app, outcome.meta->build_id, outcome.report.records,
                   fmt::join(outcome.report.ids, ","));
      for (const auto& warning : outcome.report.warnings) spdlog::warn("{}: {}", outcome.label, warning);
    } catch (...) {
      spdlog::error("reporting the ingest of {} threw an exception", outcome.label);
    }
  }

  static UploadSource asSource(const DeferredUpload& upload) {
    UploadSource source;
    source.topic = upload.topic;
    source.partition = upload.partition;
    source.offset = upload.offset;
    source.key = upload.key;
    source.headers = upload.headers;
    source.value = upload.value;
    return source;
  }

  static DeferredUpload asDeferred(const UploadSource& source) {
    DeferredUpload upload;
    upload.topic = source.topic;
    upload.partition = source.partition;
    upload.offset = source.offset;
    upload.key = source.key;
    upload.headers = source.headers;
    upload.value = std::string(source.value);
    return upload;
  }

  // The location to download for `source`: none when the upload carries its content, or when it
  // cannot be read at all (then it is refused without a download).
  std::optional<std::string> locationOf(const UploadSource& source) const {
    auto upload = decodeUploadMessage(source.key, source.headers, source.topic == config.kafka.topics.symbols_shared);
    if (!upload || upload->location.empty()) return std::nullopt;
    return upload->location;
  }

  // Hands the download of `upload` (kept in the store) to the pool.
  void startFetch(const DeferredUpload& upload, const std::string& location, Clock::time_point wait_until) {
    const std::string id = where(asSource(upload));
    deferred->fetching(upload);
    in_flight[id] = InFlight{upload, PartitionKey{upload.topic, upload.partition}, wait_until};
    metrics.uploads_fetching = in_flight.size();
    pool->submit(id, location);
  }

  // The symbols topics are not read further while as many downloads wait as the pool may hold, or
  // while an upload carried in its message waits for its ingest (its offset is recorded first).
  bool readingHeld() const {
    return in_flight.size() + downloaded.size() >= kOutstandingFetchesPerThread * pool->threads() || held ||
           (ingesting && ingesting->job->message);
  }

  // True while an upload read from a partition `relevant` accepts is still to be waited for: its
  // download until uploads.fetch_wait_ms after it was read, its ingest until fetch_wait_ms after
  // that began. The uploads queued for the ingest thread are waited for while the ingest under way
  // keeps to that bound: a backlog is waited for one upload after the other, as when uploads were
  // ingested on the loop, and one long ingest (and what queues behind it) for fetch_wait_ms.
  template <typename Relevant>
  bool awaitingUpload(Relevant&& relevant) const {
    const auto now = Clock::now();
    for (const auto& [id, fetch] : in_flight) {
      if (fetch.wait_until > now && relevant(fetch.from)) return true;
    }
    if (ingesting) {
      if (now - ingesting->started >= std::chrono::milliseconds(config.uploads.fetch_wait_ms)) return false;
      if (ingesting->job->awaited && relevant(ingesting->job->from)) return true;
    }
    if (held && relevant(held->from)) return true;
    for (const auto& job : downloaded) {
      if (job->awaited && relevant(job->from)) return true;
    }
    return false;
  }

  // Starts ingesting `job` on a thread of its own. Until it ends, lookups read the store as it
  // is now: they never see half of the upload.
  void startIngest(std::shared_ptr<IngestJob> job) {
    store.pinLookups();
    IngestOptions options = ingestOptionsFrom(config);
    options.stop = &stopping;
    const bool shared = job->source.topic == config.kafka.topics.symbols_shared;
    std::future<IngestOutcome> outcome =
        std::async(std::launch::async, [job, options, shared, ingest = ingest, &store = store] {
          return ingestJob(*job, ingest, store, options, shared);
        });
    ingesting = Ingesting{std::move(job), std::move(outcome), Clock::now(), Clock::now()};
    metrics.uploads_ingesting = 1;
  }

  // Starts the next ingest if none runs: the upload held back from the topic, else the download
  // that finished first.
  void startNextIngest() {
    if (ingesting) return;
    if (held) {
      startIngest(std::move(held));
      held.reset();
    } else if (!downloaded.empty()) {
      std::shared_ptr<IngestJob> job = std::move(downloaded.front());
      downloaded.pop_front();
      startIngest(std::move(job));
    }
  }

  // Takes the outcome of the ingest that ended, if one did: lookups see its records from now on,
  // the readers drop what they cached about it, and the upload's outcome is recorded. Returns
  // whether one ended.
  Expected<bool> collectIngested() {
    if (!ingesting) return false;
    if (ingesting->outcome.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      // A parse that never ends (a defect) would otherwise only show as a gauge stuck at 1.
      const auto now = Clock::now();
      if (now - ingesting->reported >= kLongIngestLogInterval) {
        ingesting->reported = now;
        spdlog::warn("the upload at {} has been ingesting for {} s; uploads after it wait, events do not",
                     where(ingesting->job->source),
                     std::chrono::duration_cast<std::chrono::seconds>(now - ingesting->started).count());
      }
      return false;
    }
    IngestOutcome outcome = ingesting->outcome.get();
    std::shared_ptr<IngestJob> job = std::move(ingesting->job);
    ingesting.reset();
    metrics.uploads_ingesting = 0;
    store.unpinLookups();
    reportIngested(outcome);
    if (job->upload) {
      RESTACK_RETURN_IF_ERROR(settle(std::move(*job->upload), outcome.attempt));
    } else {
      Status recorded = recordRead(job->source, outcome.attempt);
      if (!recorded) {
        // Its offset was not recorded: read it again from there on the next call.
        held.reset();
        Status rewound = reassign();
        if (!rewound) spdlog::warn("{}", rewound.error().message());
        return recorded.error();
      }
    }
    return true;
  }

  // Applies one upload read from a symbols topic. An upload referenced by location is kept in the
  // store with the offset moving past it, and its download starts beside the loop. One carried in
  // its message is ingested beside the loop; its offset is recorded when that ends.
  Status apply(std::unique_ptr<RdKafka::Message> message) {
    const UploadSource source = sourceOf(*message);
    if (auto location = locationOf(source)) {
      DeferredUpload upload = asDeferred(source);
      upload.next_attempt_ms = wallMs();
      rocksdb::WriteBatch progress;
      deferred->put(progress, upload);
      store.recordAppliedOffset(progress, source.topic, source.partition, source.offset + 1);
      RESTACK_RETURN_IF_ERROR(store.write(progress));
      startFetch(upload, *location, Clock::now() + std::chrono::milliseconds(config.uploads.fetch_wait_ms));
      return Status::ok();
    }
    auto job = std::make_shared<IngestJob>();
    job->source = source;
    job->message = std::move(message);
    job->from = PartitionKey{source.topic, source.partition};
    job->awaited = true;
    if (ingesting) {
      held = std::move(job);
    } else {
      startIngest(std::move(job));
    }
    return Status::ok();
  }

  // Records the outcome of an upload read from a topic with its content, and moves its partition
  // past it: applied, deferred (kept in the store in the same write) or refused (DLQ first).
  Status recordRead(const UploadSource& source, const Attempt& attempt) {
    rocksdb::WriteBatch progress;
    std::optional<DeferredUpload> deferred_now;
    if (!attempt.status) {
      const Error& error = attempt.status.error();
      if (attempt.worker_fault) return error;
      if (error.code() == ErrorCode::kUnavailable) {
        DeferredUpload upload = asDeferred(source);
        upload.first_failed_ms = wallMs();
        upload.attempts = 1;
        upload.last_code = error.code();
        upload.last_error = error.message();
        upload.next_attempt_ms = schedule.nextAttemptMs(upload, upload.first_failed_ms);
        // In the same batch as the offset: the upload now lives in the store.
        deferred->put(progress, upload);
        deferred_now = std::move(upload);
      } else {
        RESTACK_RETURN_IF_ERROR(refuse(source, error, 0));
      }
    }
    store.recordAppliedOffset(progress, source.topic, source.partition, source.offset + 1);
    RESTACK_RETURN_IF_ERROR(store.write(progress));
    if (deferred_now) {
      deferred->scheduled(*deferred_now);
      publishDeferred();
      spdlog::warn("symbol upload at {} deferred: {}; retried in {} ms", where(source), deferred_now->last_error,
                   deferred_now->next_attempt_ms - deferred_now->first_failed_ms);
    }
    return Status::ok();
  }

  // Records the outcome of an attempt at `upload`, an upload kept in the store: applied (removed),
  // failed for a passing reason (tried again later, until the deadline), or refused (DLQ, then
  // removed).
  Status settle(DeferredUpload upload, const Attempt& attempt) {
    const UploadSource source = asSource(upload);
    if (attempt.status) {
      if (upload.attempts > 0) {
        spdlog::info("deferred symbol upload at {} applied after {} failed attempt(s)", where(source), upload.attempts);
      }
      RESTACK_RETURN_IF_ERROR(deferred->remove(upload));
      publishDeferred();
      return Status::ok();
    }
    const Error& error = attempt.status.error();
    if (attempt.worker_fault) return error;
    const int64_t now = wallMs();
    if (upload.attempts == 0) upload.first_failed_ms = now;
    upload.attempts += 1;
    upload.last_code = error.code();
    upload.last_error = error.message();
    const bool passing = error.code() == ErrorCode::kUnavailable;
    if (passing && !schedule.pastDeadline(upload, now)) {
      upload.next_attempt_ms = schedule.nextAttemptMs(upload, now);
      RESTACK_RETURN_IF_ERROR(deferred->update(upload));
      publishDeferred();
      if (upload.attempts == 1) {
        spdlog::warn("symbol upload at {} deferred: {}; retried in {} ms", where(source), error.message(),
                     upload.next_attempt_ms - now);
      } else {
        spdlog::warn("deferred symbol upload at {} failed again (attempt {}): {}; retried in {} ms", where(source),
                     upload.attempts, error.message(), upload.next_attempt_ms - now);
      }
      return Status::ok();
    }
    // A first attempt refused for good carries no attempt count, as an upload refused on reading.
    const uint32_t counted = passing || upload.attempts > 1 ? upload.attempts : 0;
    const Error reason =
        passing ? Error(error.code(), "gave up after " + std::to_string(upload.attempts) + " attempts over " +
                                          std::to_string((now - upload.first_failed_ms) / 1000) +
                                          " s (uploads.retry_deadline_s); last error: " + error.message())
                : error;
    Status refused = refuse(source, reason, counted);
    if (!refused) {
      // Still in the store: tried again (fetch, then DLQ) after the longest backoff.
      spdlog::error("{}", refused.error().message());
      upload.next_attempt_ms = now + schedule.max_backoff_ms;
      RESTACK_RETURN_IF_ERROR(deferred->update(upload));
      publishDeferred();
      return Status::ok();
    }
    if (passing) ++metrics.uploads_given_up;
    RESTACK_RETURN_IF_ERROR(deferred->remove(upload));
    publishDeferred();
    return Status::ok();
  }

  // Queues the downloads that finished for the ingest (a failed one is settled at once), takes the
  // outcome of the ingest that ended and starts the next. Returns how many ingests ended.
  Expected<size_t> collect() {
    for (FetchPool::Finished& finished : pool->takeFinished()) {
      auto found = in_flight.find(finished.id);
      if (found == in_flight.end()) continue;
      InFlight fetch = std::move(found->second);
      in_flight.erase(found);
      if (!finished.fetched) {
        RESTACK_RETURN_IF_ERROR(settle(std::move(fetch.upload), Attempt{finished.fetched.error()}));
        continue;
      }
      auto job = std::make_shared<IngestJob>();
      job->upload = std::move(fetch.upload);
      job->source = asSource(*job->upload);
      job->fetched.emplace(std::move(finished.fetched));
      job->from = fetch.from;
      job->awaited = fetch.wait_until > Clock::now();
      downloaded.push_back(std::move(job));
    }
    metrics.uploads_fetching = in_flight.size();
    auto ended = collectIngested();
    if (!ended) return ended.error();
    startNextIngest();
    return *ended ? size_t{1} : size_t{0};
  }

  // Starts the retries that are due: downloads while a fetch thread is idle (a retry never waits
  // in the queue ahead of an upload just read), and an upload carried in its message while no
  // ingest runs.
  Status retryDue() {
    while (pool->busy() < pool->threads()) {
      auto due = deferred->nextDue(wallMs());
      if (!due) return due.error();
      if (!due->has_value()) return Status::ok();
      DeferredUpload upload = std::move(**due);
      if (auto location = locationOf(asSource(upload))) {
        if (upload.attempts > 0) ++metrics.upload_retries;
        startFetch(upload, *location, Clock::now());  // nothing waits for a retry
        continue;
      }
      if (ingesting || held) return Status::ok();  // due again on the next call
      if (upload.attempts > 0) ++metrics.upload_retries;
      deferred->fetching(upload);
      auto job = std::make_shared<IngestJob>();
      job->upload = std::move(upload);
      job->source = asSource(*job->upload);
      job->from = PartitionKey{job->source.topic, job->source.partition};
      startIngest(std::move(job));
      return Status::ok();
    }
    return Status::ok();
  }

  // The high watermarks of the consumer's last fetches; true when one moved since `seen`.
  bool watermarksAdvanced(std::map<PartitionKey, int64_t>& seen) {
    bool advanced = false;
    for (const auto& key : assigned) {
      int64_t low = 0, high = 0;
      if (consumer->get_watermark_offsets(key.first, key.second, &low, &high) != RdKafka::ERR_NO_ERROR) continue;
      auto [it, inserted] = seen.emplace(key, high);
      if (!inserted && high > it->second) {
        it->second = high;
        advanced = true;
      }
    }
    return advanced;
  }

  // "restack.symbols/0 at 1200 of 5000, …" for the partitions not yet at their end.
  std::string positions() {
    std::string text;
    size_t listed = 0;
    for (const auto& key : assigned) {
      if (at_end.count(key)) continue;
      if (++listed > 8) {
        text += ", …";
        break;
      }
      int64_t low = 0, high = -1;
      consumer->get_watermark_offsets(key.first, key.second, &low, &high);
      auto applied = store.appliedOffset(key.first, key.second);
      const int64_t at = applied && applied->has_value() ? **applied : 0;
      text += (text.empty() ? "" : ", ") + key.first + "/" + std::to_string(key.second) + " at " + std::to_string(at) +
              " of " + (high >= 0 ? std::to_string(high) : std::string("?"));
    }
    return text;
  }

  // Consumes until `done()`, ingesting the downloads that finish meanwhile; returns the number of
  // uploads applied. With `poll` 0 it stops when nothing is left to read; otherwise it gives up
  // only after uploads.catch_up_stall_s without progress (no upload read or fetched, no end of
  // partition, no high watermark advance, no download it waits for). While the pool holds as many
  // downloads as it may, the topics are not read further.
  template <typename Done>
  Expected<size_t> consumeUntil(Done&& done, std::chrono::milliseconds poll) {
    const auto stall_limit = std::chrono::seconds(config.uploads.catch_up_stall_s);
    size_t applied = 0;
    std::map<PartitionKey, int64_t> watermarks;
    auto last_progress = Clock::now(), last_check = Clock::now(), last_log = Clock::now();
    if (poll.count() > 0) watermarksAdvanced(watermarks);
    for (;;) {
      auto ingested = collect();
      if (!ingested) return ingested.error();
      if (*ingested > 0) {
        applied += *ingested;
        last_progress = Clock::now();
      }
      if (done()) break;
      const auto now = Clock::now();
      if (poll.count() > 0 && now - last_check >= std::chrono::seconds(1)) {
        last_check = now;
        if (watermarksAdvanced(watermarks) || awaitingUpload([](const PartitionKey&) { return true; })) {
          last_progress = now;
        }
        if (now - last_progress > stall_limit) {
          return ioError("symbols topics made no progress for " + std::to_string(config.uploads.catch_up_stall_s) +
                         " s (uploads.catch_up_stall_s): " + positions() + "; are the brokers reachable?");
        }
        if (now - last_log >= kProgressLogInterval) {
          last_log = now;
          spdlog::info("catching up symbols: {} ({} ingested so far, {} download(s) under way{})", positions(), applied,
                       in_flight.size(), ingesting ? ", one ingest under way" : "");
        }
      }
      if (readingHeld()) {
        if (poll.count() == 0) break;
        if (ingesting) {
          ingesting->outcome.wait_for(poll);
        } else {
          pool->waitForFinished(poll);
        }
        continue;
      }
      std::unique_ptr<RdKafka::Message> message(consumer->consume(static_cast<int>(poll.count())));
      if (message->err() == RdKafka::ERR__TIMED_OUT) {
        if (poll.count() == 0) break;
        continue;
      }
      PartitionKey key{message->topic_name(), message->partition()};
      if (message->err() == RdKafka::ERR__PARTITION_EOF) {
        at_end.insert(key);
        last_progress = Clock::now();
        continue;
      }
      if (message->err() != RdKafka::ERR_NO_ERROR) {
        spdlog::warn("symbols consumer: {}", message->errstr());
        continue;
      }
      at_end.erase(key);
      Status status = apply(std::move(message));
      if (!status) {
        // Its offset was not recorded: read it again from there on the next call.
        Status rewound = reassign();
        if (!rewound) spdlog::warn("{}", rewound.error().message());
        return status.error();
      }
      last_progress = Clock::now();
      // A long catch-up that progresses is not a stalled loop (liveness).
      metrics.last_loop_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(last_progress.time_since_epoch()).count();
    }
    return applied;
  }

  // Reads every assigned partition to its end (or as far as the download pool lets it), and waits
  // for the downloads begun meanwhile until uploads.fetch_wait_ms after each was read.
  Status catchUp() {
    auto applied = consumeUntil(
        [&] {
          if (!readingHeld()) {
            for (const auto& p : assigned) {
              if (!at_end.count(p)) return false;
            }
          }
          return !awaitingUpload([](const PartitionKey&) { return true; });
        },
        std::chrono::milliseconds(100));
    return applied.status();
  }
};

SymbolFeed::SymbolFeed(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SymbolFeed::~SymbolFeed() {
  // Downloads in progress end now; each upload is still in the store and is fetched again after
  // a restart.
  impl_->stopping = true;
  impl_->pool.reset();
  // The ingest under way ends at its next progress point (IngestOptions::stop). An upload read
  // from a topic is read again after a restart (its offset was not recorded); one kept in the store
  // is fetched again.
  if (impl_->ingesting) {
    impl_->ingesting->outcome.wait();
    impl_->ingesting.reset();
    impl_->store.unpinLookups();
  }
  if (impl_->consumer) impl_->consumer->close();
}

Expected<std::unique_ptr<SymbolFeed>> SymbolFeed::create(const config::Config& config, SymbolStore& store,
                                                         Metrics& metrics, IngestedCallback on_ingested,
                                                         FetchFunction fetch, IngestFunction ingest) {
  auto impl = std::make_unique<Impl>(config, store, metrics);
  impl->on_ingested = std::move(on_ingested);
  impl->ingest = ingest ? std::move(ingest) : IngestFunction(ingestUpload);
  if (!fetch) {
    fetch = [&c = impl->config, cancel = &impl->stopping](const std::string& location) {
      UploadPolicy policy = uploadPolicyFrom(c);
      policy.cancel = cancel;
      return fetchUpload(location, policy, c.limits.max_upload_bytes);
    };
  }
  impl->pool = std::make_unique<FetchPool>(config.uploads.fetch_threads, std::move(fetch));
  auto deferred = DeferredUploads::open(store);
  if (!deferred) return deferred.error();
  impl->deferred = std::move(*deferred);
  impl->publishDeferred();
  if (impl->deferred->count() > 0) spdlog::info("{} deferred symbol upload(s) to retry", impl->deferred->count());
  // Its own producer: its delivery reports say when each DLQ copy was acknowledged, and it
  // stays outside any transaction of the events' producer.
  config::Config dlq_config = config;
  if (!config.kafka.properties.count("delivery.timeout.ms")) {  // librdkafka's alias of message.timeout.ms
    dlq_config.kafka.properties.insert({"message.timeout.ms", kDlqMessageTimeoutMs});
  }
  auto producer = makeProducer(dlq_config, "restack-symbols-dlq", impl.get());
  if (!producer) return producer.error();
  impl->dlq = std::move(*producer);
  impl->dlq_topic = learnTopicLeaders(*impl->dlq, {config.kafka.topics.dlq}).handles;
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
  impl->consumer_topics =
      learnTopicLeaders(*impl->consumer, {config.kafka.topics.symbols, config.kafka.topics.symbols_shared}).handles;
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
  RESTACK_RETURN_IF_ERROR(impl_->consumeUntil([] { return false; }, std::chrono::milliseconds(0)));
  return impl_->retryDue();
}

Expected<size_t> SymbolFeed::catchUpToHighWatermarks(const std::set<int32_t>& partitions) {
  // The shared topic, and the symbols partitions of the events that wait.
  const auto relevant = [&](const PartitionKey& key) {
    return key.first != impl_->config.kafka.topics.symbols || partitions.count(key.second) > 0;
  };
  std::map<PartitionKey, int64_t> targets;
  for (const auto& key : impl_->assigned) {
    if (!relevant(key)) continue;
    // The watermarks of the consumer's last fetch: no broker round trip per batch. The symbols
    // consumer fetches continuously, so they trail the brokers by at most one fetch wait.
    int64_t low = 0, high = 0;
    RdKafka::ErrorCode code = impl_->consumer->get_watermark_offsets(key.first, key.second, &low, &high);
    if (code != RdKafka::ERR_NO_ERROR || high < 0) continue;
    auto applied = impl_->store.appliedOffset(key.first, key.second);
    if (!applied) return applied.error();
    if (applied->value_or(std::max<int64_t>(low, 0)) < high) targets[key] = high;
  }
  if (targets.empty() && !impl_->awaitingUpload(relevant)) return impl_->collect();
  return impl_->consumeUntil(
      [&] {
        if (!impl_->readingHeld()) {
          for (const auto& [key, high] : targets) {
            auto applied = impl_->store.appliedOffset(key.first, key.second);
            if (!applied || applied->value_or(0) < high) return false;
          }
        }
        return !impl_->awaitingUpload(relevant);
      },
      std::chrono::milliseconds(100));
}

uint64_t SymbolFeed::lag() const {
  uint64_t lag = 0;
  for (const auto& key : impl_->assigned) {
    int64_t low = 0, high = 0;
    if (impl_->consumer->get_watermark_offsets(key.first, key.second, &low, &high) != RdKafka::ERR_NO_ERROR || high < 0)
      continue;
    auto applied = impl_->store.appliedOffset(key.first, key.second);
    if (!applied) continue;
    const int64_t at = applied->value_or(std::max<int64_t>(low, 0));
    if (high > at) lag += static_cast<uint64_t>(high - at);
  }
  return lag;
}

}  // namespace restack::worker
