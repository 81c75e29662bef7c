// Events published while some of their symbols were missing, kept so that they can be restored
// again when those symbols arrive ("restored later": the final fingerprint record then names the
// provisional one in "replaces", DESIGN.md §6).
//
// Stored in the symbol store's "pending" column family (format version 1):
//   key    <app> 0x00 <event id>
//   value  u8 version=1 | u64 LE enqueued_ms | u32 LE n + input key | u32 LE n + provisional
//          fingerprint | the raw event bytes as consumed
// Example: app "shop", event "e7", key "shop:1.0", fingerprint "9d1f…" ->
//   key "shop\0e7", value 01 | <ms> | 08 00 00 00 "shop:1.0" | 20 00 00 00 "9d1f…" | {"event_id":"e7",…}
// An upload for an app re-examines that app's pending events (a shared upload: every app's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/store.h"

namespace restack::worker {

struct PendingEvent {
  std::string app;
  std::string event_id;
  std::string input_key;
  std::string provisional_fingerprint;
  std::string value;  // the raw event
  int64_t enqueued_ms = 0;
};

struct PendingOptions {
  // Events kept at most; past this, new pending events are published but not kept. Default 100,000.
  uint64_t max_events = 100000;
  // Pending events older than this are dropped (their symbols are not coming). Default 72 h.
  int64_t max_age_ms = 72ll * 3600 * 1000;
};

class PendingEvents {
 public:
  PendingEvents(SymbolStore& store, const PendingOptions& options);
  // Keeps `event`; returns false when the limit is reached and it was not kept.
  Expected<bool> add(const PendingEvent& event);
  // Up to `limit` pending events of `app` ("" = of every app), oldest key first.
  Expected<std::vector<PendingEvent>> list(std::string_view app, size_t limit) const;
  Status remove(const PendingEvent& event);
  uint64_t count() const { return count_; }
  const PendingOptions& options() const { return options_; }

 private:
  SymbolStore& store_;
  PendingOptions options_;
  uint64_t count_ = 0;
};

}  // namespace restack::worker
