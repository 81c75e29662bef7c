#include "worker/kafka/metrics.h"

#include <chrono>
#include <cstdio>
#include <tuple>

namespace restack::worker {
namespace {

void counter(std::string& out, const char* name, const char* help, uint64_t value, const char* type = "counter") {
  out += std::string("# HELP restack_") + name + " " + help + "\n";
  out += std::string("# TYPE restack_") + name + " " + type + "\n";
  out += std::string("restack_") + name + " " + std::to_string(value) + "\n";
}

}  // namespace

void Histogram::observe(double seconds) {
  if (!(seconds >= 0)) seconds = 0;  // a clock step back, or NaN
  size_t bucket = 0;
  while (bucket < kBounds.size() && seconds > kBounds[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_us_.fetch_add(static_cast<uint64_t>(seconds * 1e6), std::memory_order_relaxed);
}

void Histogram::write(std::string& out, const char* name, const char* help) const {
  const std::string metric = std::string("restack_") + name;
  out += "# HELP " + metric + " " + help + "\n";
  out += "# TYPE " + metric + " histogram\n";
  uint64_t cumulative = 0;
  char bound[32];
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    std::snprintf(bound, sizeof bound, "%g", kBounds[i]);
    out += metric + "_bucket{le=\"" + bound + "\"} " + std::to_string(cumulative) + "\n";
  }
  cumulative += buckets_[kBounds.size()].load(std::memory_order_relaxed);
  out += metric + "_bucket{le=\"+Inf\"} " + std::to_string(cumulative) + "\n";
  std::snprintf(bound, sizeof bound, "%.6f", static_cast<double>(sum_us_.load(std::memory_order_relaxed)) / 1e6);
  out += metric + "_sum " + bound + "\n";
  // _count equals the +Inf bucket, as Prometheus expects, even while observations race the read.
  out += metric + "_count " + std::to_string(cumulative) + "\n";
}

size_t platformIndex(std::string_view platform) {
  for (size_t i = 0; i + 1 < kPlatforms.size(); ++i) {
    if (platform == kPlatforms[i]) return i;
  }
  return kPlatforms.size() - 1;
}

std::string Metrics::prometheusText() const {
  std::string out;
  counter(out, "events_consumed_total", "Raw events read from the events topic.", events_consumed);
  counter(out, "events_published_total", "Restored events published.", events_published);
  counter(out, "events_dead_lettered_total", "Events sent to the DLQ because they could not be read.",
          events_dead_lettered);
  counter(out, "events_pending_symbols_total", "Events published while some of their symbols were missing.",
          events_pending_symbols);
  counter(out, "events_restored_later_total",
          "Pending events restored again after their symbols arrived (final fingerprint published).",
          events_restored_later);
  counter(out, "events_pending_expired_total", "Pending events dropped after waiting too long for symbols.",
          events_pending_expired);
  counter(out, "pending_events", "Events kept to be restored again when their symbols arrive.", pending_events,
          "gauge");
  counter(out, "frames_total", "Raw frames seen.", frames_total);
  counter(out, "frames_symbolicated_total", "Raw frames restored.", frames_symbolicated);
  // Every family and status has a line, zeros included, so that rates exist from the first scrape.
  out +=
      "# HELP restack_frames_by_kind_total Raw frames seen, by stack kind and status.\n"
      "# TYPE restack_frames_by_kind_total counter\n";
  // The reasons are FrameReason's names (docs/operations.md, "Frames not restored"): a bounded set.
  std::string not_restored =
      "# HELP restack_frames_not_restored_total Raw frames not restored, by stack kind and reason.\n"
      "# TYPE restack_frames_not_restored_total counter\n";
  std::string partly_restored =
      "# HELP restack_frames_partly_restored_total Raw frames restored with something missing (no line, several "
      "candidates, a mangled name, …), by stack kind and reason.\n"
      "# TYPE restack_frames_partly_restored_total counter\n";
  constexpr size_t kStatusCount = static_cast<size_t>(FrameStatus::kUnparsed) + 1;
  for (size_t slot = 0; slot < pipeline::kFrameTallyKinds; ++slot) {
    const std::string kind(pipeline::frameTallyKindName(slot));
    if (kind.empty()) continue;  // no kind at this registry position
    std::array<uint64_t, kStatusCount> by_status{};
    for (size_t index = 0; index < kFrameReasonCount; ++index) {
      const auto reason = static_cast<FrameReason>(index);
      const FrameStatus status = frameReasonStatus(reason);
      const uint64_t count = frames_by_kind[slot * kFrameReasonCount + index].load();
      by_status[static_cast<size_t>(status)] += count;
      if (reason == FrameReason::kNone) continue;
      std::string& family = status == FrameStatus::kSymbolicated ? partly_restored : not_restored;
      family += (status == FrameStatus::kSymbolicated ? "restack_frames_partly_restored_total{kind=\""
                                                      : "restack_frames_not_restored_total{kind=\"") +
                kind + "\",reason=\"" + frameReasonName(reason) + "\"} " + std::to_string(count) + "\n";
    }
    for (size_t status = 0; status < kStatusCount; ++status) {
      out += "restack_frames_by_kind_total{kind=\"" + kind + "\",status=\"" +
             frameStatusName(static_cast<FrameStatus>(status)) + "\"} " + std::to_string(by_status[status]) + "\n";
    }
  }
  out += not_restored;
  out += partly_restored;
  counter(out, "uploads_ingested_total", "Symbol uploads parsed into the store.", uploads_ingested);
  counter(out, "uploads_rejected_total", "Symbol uploads refused to the DLQ (all reasons).", uploads_rejected);
  static_assert(static_cast<size_t>(ErrorCode::kInternal) < std::tuple_size_v<decltype(uploads_refused_by_code)>);
  out +=
      "# HELP restack_uploads_refused_total Symbol uploads refused to the DLQ, by error code.\n"
      "# TYPE restack_uploads_refused_total counter\n";
  for (size_t code = 0; code <= static_cast<size_t>(ErrorCode::kInternal); ++code) {
    out += std::string("restack_uploads_refused_total{code=\"") + errorCodeName(static_cast<ErrorCode>(code)) + "\"} " +
           std::to_string(uploads_refused_by_code[code].load()) + "\n";
  }
  out +=
      "# HELP restack_events_dead_lettered_by_code_total Events sent to the DLQ, by the code of the reason.\n"
      "# TYPE restack_events_dead_lettered_by_code_total counter\n";
  for (size_t code = 0; code <= static_cast<size_t>(ErrorCode::kInternal); ++code) {
    out += std::string("restack_events_dead_lettered_by_code_total{code=\"") +
           errorCodeName(static_cast<ErrorCode>(code)) + "\"} " +
           std::to_string(events_dead_lettered_by_code[code].load()) + "\n";
  }
  counter(out, "upload_retries_total", "Retries of uploads whose fetch had failed for a passing reason.",
          upload_retries);
  counter(out, "uploads_given_up_total", "Deferred uploads sent to the DLQ after uploads.retry_deadline_s.",
          uploads_given_up);
  counter(out, "uploads_deferred", "Uploads kept in the store to be retried.", uploads_deferred, "gauge");
  counter(out, "uploads_fetching", "Downloads of upload locations under way or queued.", uploads_fetching, "gauge");
  counter(out, "uploads_ingesting", "1 while a symbol upload is ingested beside the worker loop, else 0.",
          uploads_ingesting, "gauge");
  const int64_t oldest = uploads_deferred_oldest_ms;
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  counter(out, "uploads_deferred_oldest_age_seconds", "Age of the oldest deferred upload (0: none).",
          oldest > 0 && now_ms > oldest ? static_cast<uint64_t>((now_ms - oldest) / 1000) : 0, "gauge");
  counter(out, "upload_dlq_write_failures_total",
          "DLQ copies of refused uploads that were not acknowledged (the upload is tried again).",
          upload_dlq_write_failures);
  counter(out, "batches_committed_total", "Batches whose outputs were acknowledged and offsets committed.",
          batches_committed);
  counter(out, "rebalances_total", "Consumer group rebalances seen.", rebalances);
  counter(out, "assigned_partitions", "Events partitions owned by this worker.", assigned_partitions, "gauge");
  out +=
      "# HELP restack_events_by_platform_total Events read and restored, by the platform they name.\n"
      "# TYPE restack_events_by_platform_total counter\n";
  for (size_t i = 0; i < kPlatforms.size(); ++i) {
    out += std::string("restack_events_by_platform_total{platform=\"") + kPlatforms[i] + "\"} " +
           std::to_string(events_by_platform[i].load()) + "\n";
  }
  restore_seconds.write(out, "restore_seconds", "Time to restore one event (lookups, grouping, output).");
  end_to_end_seconds.write(out, "end_to_end_latency_seconds",
                           "From an event's Kafka timestamp to its outputs acknowledged (transaction committed).");
  pending_wait_seconds.write(out, "pending_wait_seconds",
                             "How long pending events waited for their symbols before they were restored again.");
  counter(out, "consumer_lag", "Events not read yet on the assigned partitions (high watermark - position).",
          consumer_lag, "gauge");
  counter(out, "symbols_lag", "Symbol uploads not applied yet (the symbols consumers' lag).", symbols_lag, "gauge");
  counter(out, "store_bytes", "Bytes of the local symbol store: SST files plus memtables.", store_bytes, "gauge");
  counter(out, "pending_bytes", "Raw bytes of the events kept pending.", pending_bytes, "gauge");
  counter(out, "symbol_demand_keys", "Symbol-demand records (app, build, missing file) tracked by this worker.",
          symbol_demand_keys, "gauge");
  counter(out, "symbol_demand_records_published_total", "Symbol-demand records and tombstones (demand met) published.",
          symbol_demand_records_published);
  counter(out, "symbol_demand_untracked_total",
          "Sightings of missing symbol files not tracked because symbols_missing.max_keys was reached.",
          symbol_demand_untracked);
  return out;
}

}  // namespace restack::worker
