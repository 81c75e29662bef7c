// The Restack worker: consumes raw events, restores them, publishes the results, and commits an
// input offset only after every output it produced was acknowledged.
//
// Ownership follows the events topic's consumer group: owning events partition p brings symbols
// partition p (co-partitioned by "<app>:<build_id>") and every worker reads the whole shared
// symbols topic. Symbol uploads are applied to the local store before events are restored:
//   1. on assignment, the new symbols partitions are replayed up to their end before the events
//      partitions are consumed, from the committed offsets the worker reads itself (retrying while
//      the group coordinator moves; librdkafka 2.0.2's own single query can leave a partition
//      never fetched);
//   2. each loop turn first applies whatever uploads were fetched;
//   3. when a batch has events whose symbols are missing, the worker checks the symbols
//      partitions' high watermarks, applies any upload it had not read yet, and restores those
//      events again before publishing.
// The store remembers, per symbols partition, the next offset to apply, so a restart or a moved
// partition replays only what is missing.
//
// Delivery (kafka.delivery, docs/operations.md "Delivery guarantees"):
//   exactly_once   each loop turn is one Kafka transaction: the batch's outputs, the pending-state
//                  records (worker/kafka/pending_events.h), the later restorations and the batch's
//                  input offsets (sent to the transaction with the consumer's group metadata, so a
//                  zombie of an old generation is fenced) commit together or not at all. An
//                  abortable error aborts, rewinds the consumer to the committed offsets and
//                  processes the batch again; a fatal one (fenced) stops the worker.
//   at_least_once  outputs are flushed and acknowledged, then offsets are committed. A crash
//                  between the two republishes that batch's outputs after the restart (same keys
//                  and content, so consumers can de-duplicate on event_id).
// Events waiting for symbols live in the compacted pending topic, co-partitioned with the events:
// on assignment of events partition p, pending partition p is replayed into the local store
// before p's events are consumed; on revocation p's local entries are dropped.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "config/config.h"
#include "formats/common/status.h"
#include "worker/kafka/metrics.h"
#include "worker/kafka/symbol_feed.h"

namespace restack::worker {

class Worker {
 public:
  // Test hooks; production passes none.
  struct Hooks {
    // Asked before each transaction commits (exactly_once), on the publication's thread once the
    // batch's outputs are produced; true aborts it as if the broker had answered with an abortable
    // error.
    std::function<bool()> abort_transaction;
    // Ingests a symbol upload in place of ingestUpload (symbolstore/ingest.h), on the feed's ingest
    // thread (worker/kafka/symbol_feed.h): tests slow it down. Empty: ingestUpload.
    SymbolFeed::IngestFunction ingest;
  };
  static Expected<std::unique_ptr<Worker>> create(const config::Config& config, Metrics& metrics, Hooks hooks = {});
  ~Worker();
  // Runs until `stop` becomes true (SIGTERM), then finishes the batch in flight, commits and
  // leaves the group. Returns an error when the worker cannot go on (store or Kafka failure that
  // outlived the retries); nothing uncommitted is lost in that case either.
  Status run(const std::atomic<bool>& stop);

 private:
  struct Impl;
  explicit Worker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace restack::worker
