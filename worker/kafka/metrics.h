// Counters the worker exposes on /metrics (Prometheus text format).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

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
  std::atomic<uint64_t> uploads_rejected{0};
  std::atomic<uint64_t> batches_committed{0};
  std::atomic<uint64_t> rebalances{0};
  std::atomic<uint64_t> assigned_partitions{0};
  std::atomic<bool> ready{false};
  std::atomic<int64_t> last_loop_ms{0};  // steady-clock ms of the last loop turn (liveness)

  std::string prometheusText() const;
};

}  // namespace restack::worker
