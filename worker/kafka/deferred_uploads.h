// Symbol uploads whose fetch (or ingest) failed for a passing reason (ErrorCode::kUnavailable:
// network, HTTP 5xx, timeout, an expired or not yet visible presigned URL), kept in the symbol
// store to be retried with exponential backoff while their symbols partition moves on. Uploads
// referenced by location are kept here from the moment they are read, with 0 attempts, while their
// first download runs beside the worker loop (worker/kafka/fetch_pool.h): the partition moves past
// them at once, and a restart during the download fetches them again instead of losing them.
//
// Where they live: under the prefix "deferred\0" of the store's generic `meta` column family
// (symbolstore/store.h), next to the applied offsets they belong with. A deferred upload and the
// applied offset that moves past it are written in ONE write batch, so the upload is never in
// neither place (lost) nor in both (applied twice by the partition and by a retry). A separate
// column family was not added: the store's families are per record layout plus `meta`, and a
// worker-specific family per worker feature does not scale; `meta` already holds the per-store
// bookkeeping of the worker (applied offsets, upload records).
//
//   key    "deferred" 0x00 <topic> 0x00 <partition u32 BE> <offset u64 BE>
//   value  u8 version=1 | i64 LE first_failed_ms | i64 LE next_attempt_ms | u32 LE attempts |
//          u8 last error code | str last error | str key | u32 LE n headers + n × (str name, str value)
//          | str value            (str = u32 LE length + bytes; the value is empty for uploads
//                                  referenced by restack.location)
// Example: "restack.symbols" partition 3 offset 17, key "shop:1.0", one failed attempt ->
//   key "deferred\0restack.symbols\0" 00 00 00 03 00 00 00 00 00 00 00 11
//   value 01 | <ms> | <ms> | 01 00 00 00 | <code> | <message> | 08 00 00 00 "shop:1.0" | …
// Times are wall-clock milliseconds since the epoch: they must mean the same after a restart.
// A deferred upload is retried whether or not this pod still owns its partition: this store's
// applied offset has moved past it, so it would be missing here if the partition came back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "formats/common/status.h"
#include "symbolstore/store.h"
#include "worker/kafka/upload_message.h"

namespace restack::worker {

struct DeferredUpload {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  Headers headers;
  std::string value;            // empty for uploads referenced by restack.location
  int64_t first_failed_ms = 0;  // 0 while no attempt has failed
  int64_t next_attempt_ms = 0;
  uint32_t attempts = 0;  // failed attempts so far; 0: read, its first download not finished
  ErrorCode last_code = ErrorCode::kUnavailable;
  std::string last_error;
};

// Exponential backoff: initial × 2^(attempts-1), at most `max_backoff_ms`.
struct RetrySchedule {
  int64_t initial_backoff_ms = 5000;
  int64_t max_backoff_ms = 300000;
  int64_t deadline_ms = 86400000;  // counted from the first failure
  // When the attempt after `attempts` failed ones is due, given the last failure at `now_ms`:
  // never later than the deadline, so the last attempt happens there.
  int64_t nextAttemptMs(const DeferredUpload& upload, int64_t now_ms) const;
  bool pastDeadline(const DeferredUpload& upload, int64_t now_ms) const {
    return now_ms - upload.first_failed_ms >= deadline_ms;
  }
};

std::string encodeDeferredUpload(const DeferredUpload& upload);
Expected<DeferredUpload> decodeDeferredUpload(std::string_view key, std::string_view value);

class DeferredUploads {
 public:
  // Reads the schedule of the deferred uploads already in the store (they survive restarts).
  static Expected<std::unique_ptr<DeferredUploads>> open(SymbolStore& store);

  // Adds `upload` to `batch` (the caller adds the applied offset moving past it and writes the
  // batch); call scheduled() once the batch is written.
  void put(rocksdb::WriteBatch& batch, const DeferredUpload& upload) const;
  void scheduled(const DeferredUpload& upload);
  // Writes the new state of `upload` after a failed retry.
  Status update(const DeferredUpload& upload);
  // Removes `upload` (applied or given up).
  Status remove(const DeferredUpload& upload);
  // `upload` is being fetched: nextDue() skips it until update() or remove() (in memory only;
  // after a restart it is due again).
  void fetching(const DeferredUpload& upload);

  // The deferred upload due first if it is due at `now_ms`, read from the store. A record that
  // cannot be read is logged and dropped from the schedule (left in the store).
  Expected<std::optional<DeferredUpload>> nextDue(int64_t now_ms);
  // Uploads that failed at least once (not those whose first download is still under way).
  size_t count() const;
  // First failure of the oldest deferred upload (wall-clock ms), 0 when there is none.
  int64_t oldestFirstFailedMs() const;

 private:
  explicit DeferredUploads(SymbolStore& store) : store_(store) {}
  struct Entry {
    int64_t next_attempt_ms = 0;
    int64_t first_failed_ms = 0;
    uint32_t attempts = 0;
  };
  SymbolStore& store_;
  std::map<std::string, Entry> entries_;             // store key -> schedule
  std::set<std::pair<int64_t, std::string>> queue_;  // (next attempt ms, store key)
};

}  // namespace restack::worker
