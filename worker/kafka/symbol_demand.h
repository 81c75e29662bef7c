// The symbol-demand feed (kafka.topics.symbols_missing, docs/design.md §13): one record per app,
// build, stack kind and missing symbol file, saying since when and how often events needed it.
// A CI job or upload service reads the compacted topic (or `restack missing`) and sends the files.
//
// Ownership and counting. Events are keyed "<app>:<build_id>", so one worker owns every event of
// a build: the owner of events partition p counts what p's events miss, in memory (SymbolDemand),
// and publishes each changed record on partition p of the demand topic every
// symbols_missing.flush_interval_ms, as the cumulative state (the topic is compacted: the last
// record of a key is its state). On assignment of p the worker reads demand partition p from its
// start (replayDemandPartitions) and continues the counts; on a revoke it publishes what changed
// before p goes. When a symbol upload serves a tracked file, the record is closed with a tombstone.
//
// Delivery. A loop turn's observations and the records it publishes belong to the turn
// (begin/commit/abort): with exactly_once the records are in the turn's transaction, and an
// aborted turn takes its observations back before the batch is read again, so a replay never
// counts twice. What was counted since the last publication lives only in memory: a worker that
// dies (or loses its partitions without a revoke) loses at most one flush interval of counts
// (docs/operations.md §8).
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/ingest.h"
#include "worker/pipeline/event_processor.h"

namespace restack::worker {

// The `version` field of a demand record's JSON value. Readers refuse versions they do not know.
inline constexpr uint64_t kDemandRecordVersion = 1;

// One key's state: the value of a record on the demand topic.
struct DemandRecord {
  std::string app;
  std::string build_id;
  std::string platform;       // of the events: ios | android | web | react_native | as sent
  std::string kind;           // the frames' stack kind: native | java | js
  std::string identifier;     // the frame's missing_id: debug id, mapping id or "<app>:<build>", bundle or file name
  std::string module;         // image or file name the frames printed, when known
  int64_t first_seen_ms = 0;  // ms since the epoch, UTC: the earliest event (its Kafka timestamp)
  int64_t last_seen_ms = 0;   // the latest
  uint64_t events = 0;        // events with at least one frame needing it
  uint64_t frames = 0;        // raw frames needing it, over those events

  // "<app>:<build_id>:<kind>:<identifier>", the record's Kafka key.
  std::string key() const;
};

// The JSON value (docs/design.md §13) and back. Decoding checks the version and the fields.
std::string encodeDemandRecord(const DemandRecord& record);
Expected<DemandRecord> decodeDemandRecord(std::string_view value);

// What one restored event (the value of a restored-event record, docs/design.md §5) misses: one
// record per (kind, missing_id) over its threads and lag samples, with events = 1, frames = the
// frames with status missing_symbols, first and last seen = `seen_ms`. Frames without a
// missing_id (nothing to ask for) are left out.
Expected<std::vector<DemandRecord>> demandOfRestoredEvent(std::string_view restored_event, int64_t seen_ms);

// The same records from the result that published the event (ProcessResult::missing_frames), without
// parsing its ~26 KB of JSON back: what the worker counts for every event that misses symbols.
std::vector<DemandRecord> demandOfMissingFrames(const pipeline::ProcessResult& result, int64_t seen_ms);

// Whether the upload described by `meta` and `report` serves the file `record` misses: one of
// the ids the upload now serves (IngestReport::ids: debug ids, mapping ids and "<app>:<build>",
// bundle names) is the record's identifier (or, for JavaScript, its last path segment), and the
// upload is shared, native (debug ids are global), or for the record's app and build.
bool uploadServes(const UploadMeta& meta, const IngestReport& report, const DemandRecord& record);

// A record to publish: a value, or a tombstone (nullopt) for a demand that was met.
struct DemandOutput {
  int32_t partition = 0;
  std::string key;
  std::optional<std::string> value;
};

struct SymbolDemandOptions {
  uint64_t max_keys = 100000;         // symbols_missing.max_keys
  int64_t flush_interval_ms = 10000;  // symbols_missing.flush_interval_ms
};

// The in-memory aggregation of one worker (no Kafka here; the worker produces what flush()
// returns). Not thread-safe: the worker loop is its only user.
class SymbolDemand {
 public:
  explicit SymbolDemand(SymbolDemandOptions options) : options_(options) {}

  // A loop turn starts: the changes that follow can be taken back by abort().
  void begin();
  // The turn's records were committed (exactly_once) or acknowledged (at_least_once).
  void commit();
  // The turn failed: its observations and flushed state are taken back.
  void abort();

  // Adds what one event of events partition `partition` missed (demandOfMissingFrames). A new
  // key past max_keys is not tracked and counted in untracked().
  void observe(int32_t partition, const std::vector<DemandRecord>& missed);
  // Marks every tracked record the upload serves as met (closed by a tombstone on the next
  // flush). Returns how many. Kept across an aborted turn: the upload is not applied twice.
  size_t resolve(const UploadMeta& meta, const IngestReport& report);

  // Whether a demand was met, or the interval since the last flush has passed and a count changed.
  bool flushDue(int64_t now_ms) const;
  // Whether flush() would publish anything (a revoke publishes before the partitions go).
  bool hasChanges() const { return changed_ || !to_resolve_.empty(); }
  // The cumulative records of every changed key and the tombstones of met demands; they count as
  // published (and met keys as gone) unless the turn is aborted.
  std::vector<DemandOutput> flush(int64_t now_ms);

  // Replaying partition `partition` of the demand topic: the record read for `key` (nullopt: a
  // tombstone). Replaces the key's state; a record that cannot be read is an error (the caller
  // logs and skips it).
  Status seed(int32_t partition, std::string_view key, std::optional<std::string_view> value);
  // The partition moved to another worker: forget its keys.
  void dropPartition(int32_t partition);

  size_t size() const { return entries_.size(); }
  uint64_t untracked() const { return untracked_; }
  const DemandRecord* find(const std::string& key) const;
  std::vector<DemandRecord> records() const;

 private:
  struct Entry {
    DemandRecord record;
    int32_t partition = 0;
    bool dirty = false;  // changed since its last publication
  };
  void remember(const std::string& key);  // the undo log of the open turn

  SymbolDemandOptions options_;
  std::map<std::string, Entry> entries_;
  std::set<std::string> to_resolve_;  // keys whose demand was met, tombstoned on the next flush
  std::set<std::string> resolving_;   // tombstoned in the open turn
  bool in_turn_ = false;
  std::map<std::string, std::optional<Entry>> undo_;  // key -> its state before the turn
  int64_t last_flush_ms_ = 0;
  int64_t last_flush_before_ = 0;
  bool changed_ = false;  // some entry is dirty; a flag, so that flushDue() never walks the entries
  bool changed_before_ = false;
  uint64_t untracked_ = 0;
  uint64_t untracked_before_ = 0;
};

// Reads `partitions` of `topic` from their start to their end with `reader` (a consumer with
// enable.partition.eof=true and no subscription; assigned here, unassigned when done) and hands
// every record to `apply` (value nullopt: a tombstone). Gives up after `stall` without progress
// (no record read, no partition end reached). For the worker's seeding and `restack missing`.
using DemandApply =
    std::function<Status(int32_t partition, std::string_view key, std::optional<std::string_view> value)>;
Status readDemandPartitions(RdKafka::KafkaConsumer& reader, const std::string& topic,
                            const std::vector<int32_t>& partitions, std::chrono::milliseconds stall,
                            const DemandApply& apply);

// The number of partitions of `topic` as `handle`'s metadata reports it; kNotFound when the topic
// does not exist, kUnavailable when the brokers did not answer within `timeout`.
Expected<int> demandTopicPartitions(RdKafka::Handle& handle, const std::string& topic,
                                    std::chrono::milliseconds timeout);

}  // namespace restack::worker
