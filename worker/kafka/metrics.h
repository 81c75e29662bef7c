// Counters the worker exposes on /metrics (Prometheus text format).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "formats/common/status.h"
#include "worker/pipeline/restored_event.h"
#include "worker/pipeline/stack_kinds.h"

namespace restack::worker {

// A Prometheus histogram of durations in seconds with fixed buckets, lock-free: restoring threads
// observe into it while the status server reads it.
class Histogram {
 public:
  // Upper bounds in seconds: from 1 ms (a warm restore) to 60 s (an event waiting out a broker
  // failover).
  static constexpr std::array<double, 16> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                     0.5,   1,      2.5,   5,    10,    20,   30,  60};
  void observe(double seconds);
  // "# HELP", "# TYPE" and the _bucket/_sum/_count series of restack_<name>.
  void write(std::string& out, const char* name, const char* help) const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> buckets_{};  // the last one: +Inf only
  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> sum_us_{0};
};

// The platforms events are counted by; anything else counts as "other".
inline constexpr std::array<const char*, 5> kPlatforms = {"ios", "android", "web", "react_native", "other"};
size_t platformIndex(std::string_view platform);

struct Metrics {
  std::atomic<uint64_t> events_consumed{0};
  std::atomic<uint64_t> events_published{0};
  std::atomic<uint64_t> events_dead_lettered{0};
  std::atomic<uint64_t> events_pending_symbols{0};
  std::atomic<uint64_t> events_restored_later{0};
  std::atomic<uint64_t> events_pending_expired{0};
  std::atomic<uint64_t> pending_events{0};
  std::atomic<uint64_t> frames_total{0};
  std::atomic<uint64_t> frames_symbolicated{0};
  std::atomic<uint64_t> uploads_ingested{0};
  std::atomic<uint64_t> uploads_rejected{0};  // refused to the DLQ, all reasons
  // Upload outcomes and retries (worker/kafka/symbol_feed.h, docs/operations.md).
  std::array<std::atomic<uint64_t>, 16> uploads_refused_by_code{};  // indexed by ErrorCode
  std::atomic<uint64_t> upload_retries{0};
  std::atomic<uint64_t> uploads_given_up{0};
  std::atomic<uint64_t> uploads_deferred{0};           // gauge
  std::atomic<uint64_t> uploads_fetching{0};           // gauge: downloads under way or queued
  std::atomic<uint64_t> uploads_ingesting{0};          // gauge: 1 while an upload is ingested beside the loop
  std::atomic<int64_t> uploads_deferred_oldest_ms{0};  // wall-clock ms of the oldest first failure; 0 = none
  std::atomic<uint64_t> upload_dlq_write_failures{0};
  std::atomic<uint64_t> batches_committed{0};
  std::atomic<uint64_t> rebalances{0};
  std::atomic<uint64_t> assigned_partitions{0};
  // By platform (kPlatforms), for events that could be read.
  std::array<std::atomic<uint64_t>, kPlatforms.size()> events_by_platform{};
  // Wall time to restore one event (parse, lookups, grouping, JSON), per worker thread.
  Histogram restore_seconds;
  // From the event's Kafka timestamp to its outputs acknowledged by the brokers (and, with
  // exactly_once, its transaction committed): what a reader of the restored topic waits.
  Histogram end_to_end_seconds;
  // How long pending events waited for their symbols, observed when they are restored again.
  Histogram pending_wait_seconds;
  // Events not read yet on the assigned partitions (high watermark - position), summed.
  std::atomic<uint64_t> consumer_lag{0};
  // Symbol uploads not applied yet (the symbols consumers' lag), summed over their partitions.
  std::atomic<uint64_t> symbols_lag{0};
  // Bytes of the local store on disk (SST files) plus its memtables.
  std::atomic<uint64_t> store_bytes{0};
  std::atomic<uint64_t> pending_bytes{0};
  // The symbol-demand feed (worker/kafka/symbol_demand.h): records tracked, records and
  // tombstones published, and sightings of missing files not tracked (symbols_missing.max_keys).
  std::atomic<uint64_t> symbol_demand_keys{0};
  std::atomic<uint64_t> symbol_demand_records_published{0};
  std::atomic<uint64_t> symbol_demand_untracked{0};
  std::atomic<bool> ready{false};
  std::atomic<int64_t> last_loop_ms{0};  // steady-clock ms of the last loop turn (liveness)

  // Raw frames by kind and reason (pipeline::FrameTally's layout), exported by status
  // (restack_frames_by_kind_total) and by reason (restack_frames_not_restored_total,
  // restack_frames_partly_restored_total).
  std::array<std::atomic<uint64_t>, pipeline::kFrameTallyKinds * kFrameReasonCount> frames_by_kind{};
  // Events sent to the DLQ, by the code of their reason (restack.error.code).
  std::array<std::atomic<uint64_t>, 16> events_dead_lettered_by_code{};
  void countDeadLetter(ErrorCode code) {
    ++events_dead_lettered_by_code[static_cast<size_t>(code) % events_dead_lettered_by_code.size()];
  }

  void countRefusal(ErrorCode code) {
    ++uploads_rejected;
    ++uploads_refused_by_code[static_cast<size_t>(code) % uploads_refused_by_code.size()];
  }

  std::string prometheusText() const;
};

}  // namespace restack::worker
