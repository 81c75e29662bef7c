// When each symbol set was uploaded and last used for a lookup: the `usage` column family, and
// the in-memory tracker the resolvers' callers note lookups in (docs/design.md §11).
//
// Keys (a symbol set is named either by its build or, for native images, by its debug id):
//
//   'U' 'b' family 00 app 00 build   UsageTime: when that family's symbols of the build were last
//                                     uploaded
//   'U' 'd' <debug id hex>            UsageTime: when the native image was last uploaded
//   'L' 'b' family 00 app 00 build   UsageTime: when a frame was last restored with that family's
//                                     symbols of the build
//   'L' 'd' <debug id hex>            UsageTime: when a frame was last restored with that image
//   'L' 'i' family 00 id              UsageTime: when a frame was last restored with the symbols
//                                     an event named by id (R8's pg_map_id)
//
// `family` is the name of the column family holding the symbols (native, proguard, sourcemap);
// debug ids are lowercase hex without dashes, as `restack store list` prints them.
//
// Value (symbolstore/record_codec.h):
//   UsageTime  u8 version, varint unix minutes
//
// Version history:
//   version  date        what changed
//   1        2026-11-23  first format
//
// Worked example: the proguard mapping of com.example build 45, last used at
// 2026-11-23 21:00 UTC (unix minute 29924460):
//   key   4c 62 "proguard" 00 "com.example" 00 "45"
//   value 01 | ec b8 a2 0e
//
// Resolution is a minute: a worker writes a set's 'L' record at most once a minute, however many
// frames it restores (UsageTracker::flush). The records are a cache like the rest of the store: a
// store rebuilt from Kafka knows uploads again (their ingest writes 'U') and forgets uses.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/store.h"

namespace restack {

// The column family of upload and last-use times, owned by this layer (symbolstore/store.h).
inline const StoreFamily kUsageFamily{"usage"};

inline constexpr uint8_t kUsageRecordVersion = 1;

namespace usage {

// Which symbol set a time belongs to: a family's symbols of one build, or one native image.
std::string buildSet(std::string_view family, std::string_view app, std::string_view build);
std::string imageSet(std::string_view debug_id_hex);
// A family's symbols named by an id the event gave (R8's pg_map_id) rather than by its build.
std::string idSet(std::string_view family, std::string_view id);
// The same sets appended to `out`, for callers that note a set per frame into a reused buffer.
void appendBuildSet(std::string& out, std::string_view family, std::string_view app, std::string_view build);
void appendIdSet(std::string& out, std::string_view family, std::string_view id);
// The debug id a frame prints ("8A1E…-…", upper or lower case, with or without dashes), as
// lowercase hex; "" when it is not hex.
std::string normalizeDebugId(std::string_view printed);

std::string uploadedKey(std::string_view set);
std::string lastUsedKey(std::string_view set);

std::string encodeTime(int64_t unix_minutes);
Expected<int64_t> decodeTime(std::string_view value, std::string_view key = {});

// The current time in unix minutes.
int64_t nowMinutes();

// Adds "`set` uploaded at `unix_minutes`" to `batch`.
void recordUpload(const SymbolStore& store, rocksdb::WriteBatch& batch, std::string_view set, int64_t unix_minutes);

}  // namespace usage

// Notes which symbol sets answered frames, in memory, and writes their last-use minute into the
// `usage` family when flushed. note() is called per restored frame from any thread: it takes the
// lock of one of 16 shards picked by the set's hash (no global lock) and writes nothing; flush()
// writes only the sets whose minute advanced since the last flush, so a set is written at most
// once a minute.
class UsageTracker {
 public:
  // `set` is usage::buildSet(…) or usage::imageSet(…).
  void note(std::string_view set, int64_t unix_minutes = usage::nowMinutes());
  // Writes the last-use minutes that advanced since the last flush; returns how many were written.
  Expected<size_t> flush(SymbolStore& store);
  // The minute `set` was last noted (flushed or not); 0 when never.
  int64_t lastNoted(std::string_view set) const;

 private:
  struct Entry {
    int64_t noted = 0;
    int64_t flushed = 0;
  };
  // Finds a set by std::string_view without building a std::string per frame.
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  struct Shard {
    mutable std::mutex mutex;
    std::unordered_map<std::string, Entry, Hash, std::equal_to<>> sets;
  };
  Shard& shardOf(std::string_view set) const;
  mutable std::array<Shard, 16> shards_;
  // Unique per tracker in the process (note()'s per-thread shortcut).
  const uint64_t id_ = nextId();
  static uint64_t nextId() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace restack
