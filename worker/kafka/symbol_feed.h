// The symbol side of the worker: a manually assigned consumer over restack.symbols (the
// partitions matching the worker's events partitions) and all of restack.symbols.shared, which
// applies every upload to the local store and records how far each partition was applied.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "config/config.h"
#include "formats/common/status.h"
#include "symbolstore/ingest.h"
#include "symbolstore/store.h"
#include "worker/kafka/metrics.h"

namespace restack::worker {

class SymbolFeed {
 public:
  // Called after every upload that was ingested, so readers can drop what they cached as missing.
  using IngestedCallback = std::function<void(const UploadMeta&, const IngestReport&)>;
  static Expected<std::unique_ptr<SymbolFeed>> create(const config::Config& config, SymbolStore& store,
                                                      RdKafka::Producer& dlq_producer, Metrics& metrics,
                                                      IngestedCallback on_ingested);
  ~SymbolFeed();

  // Reads all of the shared topic up to its end (every worker serves every shared image).
  Status catchUpShared();
  // Starts reading symbols partitions `partitions` from where the store left off, and applies
  // everything up to their current end before returning.
  Status addPartitions(const std::vector<int32_t>& partitions);
  void removePartitions(const std::vector<int32_t>& partitions);
  // Applies the uploads already fetched, without waiting.
  Status applyFetched();
  // Applies uploads until the given symbols partitions (and the shared topic) are applied up to
  // the high watermarks the consumer last saw. Returns how many uploads were applied.
  Expected<size_t> catchUpToHighWatermarks(const std::set<int32_t>& partitions);

 private:
  struct Impl;
  explicit SymbolFeed(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace restack::worker
