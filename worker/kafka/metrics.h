// Counters the worker exposes on /metrics (Prometheus text format).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "formats/common/status.h"

namespace restack::worker {

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
  std::atomic<int64_t> uploads_deferred_oldest_ms{0};  // wall-clock ms of the oldest first failure; 0 = none
  std::atomic<uint64_t> upload_dlq_write_failures{0};
  std::atomic<uint64_t> batches_committed{0};
  std::atomic<uint64_t> rebalances{0};
  std::atomic<uint64_t> assigned_partitions{0};
  std::atomic<bool> ready{false};
  std::atomic<int64_t> last_loop_ms{0};  // steady-clock ms of the last loop turn (liveness)

  void countRefusal(ErrorCode code) {
    ++uploads_rejected;
    ++uploads_refused_by_code[static_cast<size_t>(code) % uploads_refused_by_code.size()];
  }

  std::string prometheusText() const;
};

}  // namespace restack::worker
