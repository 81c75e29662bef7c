#include "worker/kafka/metrics.h"

namespace restack::worker {
namespace {

void counter(std::string& out, const char* name, const char* help, uint64_t value, const char* type = "counter") {
  out += std::string("# HELP restack_") + name + " " + help + "\n";
  out += std::string("# TYPE restack_") + name + " " + type + "\n";
  out += std::string("restack_") + name + " " + std::to_string(value) + "\n";
}

}  // namespace

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
  counter(out, "uploads_ingested_total", "Symbol uploads parsed into the store.", uploads_ingested);
  counter(out, "uploads_rejected_total", "Symbol uploads that could not be parsed.", uploads_rejected);
  counter(out, "batches_committed_total", "Batches whose outputs were acknowledged and offsets committed.",
          batches_committed);
  counter(out, "rebalances_total", "Consumer group rebalances seen.", rebalances);
  counter(out, "assigned_partitions", "Events partitions owned by this worker.", assigned_partitions, "gauge");
  return out;
}

}  // namespace restack::worker
