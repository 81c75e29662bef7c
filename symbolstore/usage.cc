#include "symbolstore/usage.h"

#include <chrono>
#include <functional>

#include "symbolstore/record_codec.h"

namespace restack {
namespace {

const records::RecordType kUsageTime{"usage", "time", 1, kUsageRecordVersion,
                                     "re-ingest the symbols, or delete the record: the next upload or use "
                                     "writes it again"};

}  // namespace

namespace usage {

void appendBuildSet(std::string& out, std::string_view family, std::string_view app, std::string_view build) {
  out.push_back('b');
  out.append(family);
  out.push_back('\0');
  out.append(app);
  out.push_back('\0');
  out.append(build);
}

std::string buildSet(std::string_view family, std::string_view app, std::string_view build) {
  std::string set;
  set.reserve(3 + family.size() + app.size() + build.size());
  appendBuildSet(set, family, app, build);
  return set;
}

std::string imageSet(std::string_view debug_id_hex) {
  return "d" + std::string(debug_id_hex);
}

void appendIdSet(std::string& out, std::string_view family, std::string_view id) {
  out.push_back('i');
  out.append(family);
  out.push_back('\0');
  out.append(id);
}

std::string idSet(std::string_view family, std::string_view id) {
  std::string set;
  set.reserve(2 + family.size() + id.size());
  appendIdSet(set, family, id);
  return set;
}

std::string normalizeDebugId(std::string_view printed) {
  std::string out;
  out.reserve(printed.size());
  for (char c : printed) {
    if (c == '-') continue;
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
    out.push_back(c);
  }
  return out;
}

std::string uploadedKey(std::string_view set) {
  return "U" + std::string(set);
}

std::string lastUsedKey(std::string_view set) {
  return "L" + std::string(set);
}

std::string encodeTime(int64_t unix_minutes) {
  records::RecordWriter writer(kUsageRecordVersion);
  writer.varint(static_cast<uint64_t>(unix_minutes < 0 ? 0 : unix_minutes));
  return writer.take();
}

Expected<int64_t> decodeTime(std::string_view value, std::string_view key) {
  records::RecordReader reader(kUsageTime, value, key);
  reader.version();
  const uint64_t minutes = reader.varint();
  if (reader.ok() && minutes > static_cast<uint64_t>(INT64_MAX)) reader.fail("time out of range");
  RESTACK_RETURN_IF_ERROR(reader.finish());
  return static_cast<int64_t>(minutes);
}

int64_t nowMinutes() {
  return std::chrono::duration_cast<std::chrono::minutes>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void recordUpload(const SymbolStore& store, rocksdb::WriteBatch& batch, std::string_view set, int64_t unix_minutes) {
  batch.Put(store.family(kUsageFamily), uploadedKey(set), encodeTime(unix_minutes));
}

}  // namespace usage

UsageTracker::Shard& UsageTracker::shardOf(std::string_view set) const {
  return shards_[std::hash<std::string_view>{}(set) % shards_.size()];
}

void UsageTracker::note(std::string_view set, int64_t unix_minutes) {
  // A thread's frames mostly come from one build in a row: the set it noted last, in the same
  // minute, skips the shard's lock and lookup. The tracker's id (not its address, which a later
  // tracker may reuse) tells whose set it was.
  struct LastNote {
    uint64_t tracker = 0;
    int64_t minute = 0;
    std::string set;
  };
  thread_local LastNote last;
  if (last.tracker == id_ && last.minute == unix_minutes && last.set == set) return;
  last.tracker = id_;
  last.minute = unix_minutes;
  last.set.assign(set);
  Shard& shard = shardOf(set);
  std::lock_guard lock(shard.mutex);
  auto found = shard.sets.find(set);
  if (found == shard.sets.end()) {
    shard.sets.emplace(std::string(set), Entry{unix_minutes, 0});
  } else if (found->second.noted < unix_minutes) {
    found->second.noted = unix_minutes;
  }
}

int64_t UsageTracker::lastNoted(std::string_view set) const {
  Shard& shard = shardOf(set);
  std::lock_guard lock(shard.mutex);
  auto found = shard.sets.find(set);
  return found == shard.sets.end() ? 0 : found->second.noted;
}

Expected<size_t> UsageTracker::flush(SymbolStore& store) {
  // Collected shard by shard, written outside the locks: note() never waits for RocksDB.
  std::vector<std::pair<std::string, int64_t>> due;
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mutex);
    for (auto& [set, entry] : shard.sets) {
      if (entry.noted > entry.flushed) due.emplace_back(set, entry.noted);
    }
  }
  if (due.empty()) return size_t{0};
  rocksdb::WriteBatch batch;
  for (const auto& [set, minute] : due) {
    batch.Put(store.family(kUsageFamily), usage::lastUsedKey(set), usage::encodeTime(minute));
  }
  RESTACK_RETURN_IF_ERROR(store.write(batch));
  for (const auto& [set, minute] : due) {
    Shard& shard = shardOf(set);
    std::lock_guard lock(shard.mutex);
    auto found = shard.sets.find(set);
    if (found != shard.sets.end() && found->second.flushed < minute) found->second.flushed = minute;
  }
  return due.size();
}

}  // namespace restack
