// The symbol side of the worker: a manually assigned consumer over restack.symbols (the
// partitions matching the worker's events partitions) and all of restack.symbols.shared, which
// applies every upload to the local store and records how far each partition was applied.
//
// Every upload carried in its message ends in one of three outcomes before its partition's
// applied offset moves past it (an upload by location is kept in the store first, see below, and
// ends in one of them from there):
//   applied   its records are in the store (the ingested callback fires);
//   refused   it can never be applied (unreadable, unsupported, too large, refused location,
//             or something thrown while processing it): a copy goes to the DLQ with the reason,
//             and the offset is recorded only after the DLQ acknowledged that copy. When the DLQ
//             cannot be written the offset is not recorded, the consumer is rewound to the upload
//             and an error is returned, so it is tried again;
//   deferred  its fetch (or ingest) failed for a passing reason (ErrorCode::kUnavailable): it is
//             kept in the store (worker/kafka/deferred_uploads.h) in the same write as the offset
//             moving past it, and retried with exponential backoff (uploads.retry_*). A retry that
//             succeeds is applied like any upload; after uploads.retry_deadline_s the upload goes
//             to the DLQ with the reason and the number of attempts (header restack.attempts).
// Neither downloads nor ingests run on the caller's thread (the worker loop), so that no upload,
// however slow to fetch or large to parse, holds back the events of builds the worker already has
// symbols for:
//   - an upload referenced by location is kept in the store as it is read (deferred with no failed
//     attempt, in the write that moves its partition past it) and fetched on the threads of a
//     FetchPool (worker/kafka/fetch_pool.h, uploads.fetch_threads);
//   - uploads are ingested one at a time on a thread of their own. An upload carried in its
//     message keeps its partition's offset until its ingest ends, and the symbols topics are not
//     read further meanwhile. While an ingest runs, lookups read the store as it was before it
//     began (SymbolStore::pinLookups): a frame is answered from the old symbols or the new ones,
//     never from half an upload. The caller's next call takes the outcome, lets lookups see the
//     new records, tells the readers (the ingested callback) and records the upload's outcome.
// Catch-ups wait for an upload's download and ingest at most uploads.fetch_wait_ms after it was
// read; events that still miss its symbols then go out pending and are restored when it lands.
// Retries run from applyFetched(): downloads while a fetch thread is idle, and an upload carried
// in its message while no ingest runs.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "formats/common/status.h"
#include "symbolstore/ingest.h"
#include "symbolstore/store.h"
#include "worker/kafka/metrics.h"
#include "worker/kafka/upload_fetch.h"

namespace restack::worker {

class SymbolFeed {
 public:
  // Called after every upload that was ingested, so readers can drop what they cached as missing.
  using IngestedCallback = std::function<void(const UploadMeta&, const IngestReport&)>;
  // Brings the content of an upload referenced by restack.location onto local disk. A passing
  // failure must be ErrorCode::kUnavailable (the upload is retried); other errors refuse it.
  using FetchFunction = std::function<Expected<FetchedUpload>(const std::string& location)>;
  // Ingests one upload's content into the store, on the ingest's thread.
  using IngestFunction = std::function<Expected<IngestReport>(
      SymbolStore& store, const UploadMeta& meta, const UploadContent& content, const IngestOptions& options)>;
  // `fetch` defaults to fetchUpload (worker/kafka/upload_fetch.h) with the configured limits,
  // `ingest` to ingestUpload (symbolstore/ingest.h). Refused uploads go to the DLQ through the
  // feed's own idempotent producer, whose delivery reports tell exactly when each copy was
  // acknowledged.
  static Expected<std::unique_ptr<SymbolFeed>> create(const config::Config& config, SymbolStore& store,
                                                      Metrics& metrics, IngestedCallback on_ingested,
                                                      FetchFunction fetch = {}, IngestFunction ingest = {});
  ~SymbolFeed();

  // Reads all of the shared topic up to its end (every worker serves every shared image).
  Status catchUpShared();
  // Starts reading symbols partitions `partitions` from where the store left off, and applies
  // everything up to their current end before returning (waiting for a download or ingest at most
  // uploads.fetch_wait_ms after its upload was read).
  Status addPartitions(const std::vector<int32_t>& partitions);
  void removePartitions(const std::vector<int32_t>& partitions);
  // Takes the ingest that ended and the downloads that arrived, reads what arrived on the topics
  // (starting downloads and ingests), without waiting, then starts the retries whose time has come.
  Status applyFetched();
  // Applies uploads until the given symbols partitions (and the shared topic) are applied up to
  // the high watermarks the consumer last saw, and their downloads and ingests ended or were waited
  // for uploads.fetch_wait_ms. Returns how many ingests ended.
  Expected<size_t> catchUpToHighWatermarks(const std::set<int32_t>& partitions);
  // Uploads not applied yet over every assigned symbols partition (shared topic included): the
  // high watermarks of the consumer's last fetches minus the applied offsets. For the metrics.
  uint64_t lag() const;

  // Catch-ups give up only after uploads.catch_up_stall_s without progress (no upload read, no
  // high watermark advance); a long one logs where each partition stands every few seconds.

 private:
  struct Impl;
  explicit SymbolFeed(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace restack::worker
