// Events published while some of their symbols were missing, kept so that they can be restored
// again when those symbols arrive ("restored later": the final fingerprint record then names the
// provisional one in "replaces", docs/design.md §6).
//
// The durable state is the compacted topic kafka.topics.pending, co-partitioned with the events:
// an event read from events partition p has its pending record on pending partition p.
//   key    <app> 0x00 <event id>   (the event id names the record; the app lets a tombstone find
//                                   the local entry without a lookup, and keeps two apps' equal
//                                   event ids apart)
//   value  u8 version=1 | u64 LE enqueued_ms | u32 LE n + input key | u32 LE n + provisional
//          fingerprint | the raw event bytes as consumed
//          a tombstone (null value) once the event was restored later or expired
// Example: app "shop", event "e7", key "shop:1.0", fingerprint "9d1f…" ->
//   key "shop\0e7", value 01 | <ms> | 08 00 00 00 "shop:1.0" | 20 00 00 00 "9d1f…" | {"event_id":"e7",…}
//
// The symbol store's "pending" column family (kPendingFamily, owned by this layer) is a cache of
// the partitions this worker owns:
//   key    the same as the topic's
//   value  u8 version=2 | u32 LE events partition | the topic value above
// It is emptied at start and filled by replaying pending partition p when events partition p is
// assigned; p's entries are dropped when p is revoked. An upload for an app re-examines that app's
// pending events (a shared upload: every app's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/store.h"

namespace restack::worker {

// Declared here, not in symbolstore/: the store opens the families its layers declare
// (symbolstore/store.h). The on-disk name stays "pending".
inline const StoreFamily kPendingFamily{"pending"};

struct PendingEvent {
  std::string app;
  std::string event_id;
  std::string input_key;
  std::string provisional_fingerprint;
  std::string value;  // the raw event
  int64_t enqueued_ms = 0;
  int32_t partition = -1;  // the events partition it was read from

  std::string key() const;  // <app> 0x00 <event id>
};

struct PendingOptions {
  // Events kept at most; past this, new pending events are published but not kept. Default 100,000.
  uint64_t max_events = 100000;
  // Raw bytes kept at most (the records' sizes). Default 1 GiB.
  uint64_t max_bytes = 1ull << 30;
  // Pending events older than this are dropped (their symbols are not coming). Default 72 h.
  int64_t max_age_ms = 72ll * 3600 * 1000;
};

class PendingEvents {
 public:
  PendingEvents(SymbolStore& store, const PendingOptions& options);

  // The topic record of `event` (key PendingEvent::key()).
  static std::string encodeRecord(const PendingEvent& event);
  static Expected<PendingEvent> decodeRecord(std::string_view key, std::string_view value, int32_t partition);
  // The size an event counts against max_bytes.
  static uint64_t sizeOf(const PendingEvent& event);

  // Whether `bytes` more fit the bounds once `planned_events`/`planned_bytes` (kept by the batch
  // in flight, not yet written) are counted.
  bool admits(uint64_t bytes, uint64_t planned_events, uint64_t planned_bytes) const;

  // Local cache writes; they do not check the bounds (admits() did).
  Status put(const PendingEvent& event);
  Status remove(std::string_view key);
  // Drops every entry of events partition `partition`; returns how many.
  Expected<uint64_t> dropPartition(int32_t partition);
  // Drops every entry.
  Status clear();

  // Up to `limit` pending events of `app` ("" = of every app) whose key is greater than `after`
  // ("" = from the first), in key order: a re-check resumes where its last slice stopped.
  Expected<std::vector<PendingEvent>> list(std::string_view app, std::string_view after, size_t limit) const;
  // Up to `limit` events enqueued before `cutoff_ms`.
  Expected<std::vector<PendingEvent>> enqueuedBefore(int64_t cutoff_ms, size_t limit) const;

  uint64_t count() const { return count_; }
  uint64_t bytes() const { return bytes_; }
  const PendingOptions& options() const { return options_; }

 private:
  Status recount();
  SymbolStore& store_;
  PendingOptions options_;
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace restack::worker
