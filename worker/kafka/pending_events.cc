#include "worker/kafka/pending_events.h"

#include <memory>

namespace restack::worker {
namespace {

constexpr uint8_t kRecordVersion = 1;  // the topic value
constexpr uint8_t kLocalVersion = 2;   // the local cache value: partition + topic value

std::string keyOf(std::string_view app, std::string_view event_id) {
  std::string key(app);
  key.push_back('\0');
  key.append(event_id);
  return key;
}

void putU32(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void putU64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

bool take(std::string_view& in, size_t n, std::string_view& out) {
  if (in.size() < n) return false;
  out = in.substr(0, n);
  in.remove_prefix(n);
  return true;
}

uint64_t readLittleEndian(std::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i-- > 0;) value = (value << 8) | static_cast<uint8_t>(bytes[i]);
  return value;
}

Expected<PendingEvent> decodeLocal(std::string_view key, std::string_view value) {
  std::string_view field;
  if (!take(value, 1, field) || static_cast<uint8_t>(field[0]) != kLocalVersion || !take(value, 4, field)) {
    return unsupported("local pending event entry of an unknown format version");
  }
  return PendingEvents::decodeRecord(key, value, static_cast<int32_t>(readLittleEndian(field)));
}

std::unique_ptr<rocksdb::Iterator> iterate(SymbolStore& store) {
  return std::unique_ptr<rocksdb::Iterator>(
      store.db().NewIterator(rocksdb::ReadOptions(), store.family(kPendingFamily)));
}

}  // namespace

std::string PendingEvent::key() const {
  return keyOf(app, event_id);
}

std::string PendingEvents::encodeRecord(const PendingEvent& event) {
  std::string value;
  value.push_back(static_cast<char>(kRecordVersion));
  putU64(value, static_cast<uint64_t>(event.enqueued_ms));
  putU32(value, static_cast<uint32_t>(event.input_key.size()));
  value += event.input_key;
  putU32(value, static_cast<uint32_t>(event.provisional_fingerprint.size()));
  value += event.provisional_fingerprint;
  value += event.value;
  return value;
}

Expected<PendingEvent> PendingEvents::decodeRecord(std::string_view key, std::string_view value, int32_t partition) {
  PendingEvent event;
  event.partition = partition;
  size_t zero = key.find('\0');
  if (zero == std::string_view::npos) return malformed("pending-event key without a separator");
  event.app = std::string(key.substr(0, zero));
  event.event_id = std::string(key.substr(zero + 1));
  std::string_view field;
  if (!take(value, 1, field) || static_cast<uint8_t>(field[0]) != kRecordVersion) {
    return unsupported("pending event record of an unknown format version");
  }
  if (!take(value, 8, field)) return malformed("truncated pending event record");
  event.enqueued_ms = static_cast<int64_t>(readLittleEndian(field));
  for (std::string* target : {&event.input_key, &event.provisional_fingerprint}) {
    if (!take(value, 4, field)) return malformed("truncated pending event record");
    size_t length = readLittleEndian(field);
    if (!take(value, length, field)) return malformed("truncated pending event record");
    *target = std::string(field);
  }
  event.value = std::string(value);
  return event;
}

uint64_t PendingEvents::sizeOf(const PendingEvent& event) {
  return event.app.size() + event.event_id.size() + event.input_key.size() + event.provisional_fingerprint.size() +
         event.value.size() + 26;
}

PendingEvents::PendingEvents(SymbolStore& store, const PendingOptions& options) : store_(store), options_(options) {
  (void)recount();
}

Status PendingEvents::recount() {
  count_ = 0;
  bytes_ = 0;
  auto it = iterate(store_);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++count_;
    bytes_ += it->key().size() + it->value().size();
  }
  if (!it->status().ok()) return ioError("reading pending events: " + it->status().ToString());
  return Status::ok();
}

bool PendingEvents::admits(uint64_t bytes, uint64_t planned_events, uint64_t planned_bytes) const {
  return count_ + planned_events + 1 <= options_.max_events && bytes_ + planned_bytes + bytes <= options_.max_bytes;
}

Status PendingEvents::put(const PendingEvent& event) {
  const std::string key = event.key();
  auto existing = store_.get(kPendingFamily, key);
  if (!existing) return existing.error();
  std::string value;
  value.push_back(static_cast<char>(kLocalVersion));
  putU32(value, static_cast<uint32_t>(event.partition));
  value += encodeRecord(event);
  rocksdb::WriteBatch batch;
  batch.Put(store_.family(kPendingFamily), key, value);
  RESTACK_RETURN_IF_ERROR(store_.write(batch));
  if (existing->has_value()) {
    bytes_ -= std::min<uint64_t>(bytes_, key.size() + (*existing)->size());
  } else {
    ++count_;
  }
  bytes_ += key.size() + value.size();
  return Status::ok();
}

Status PendingEvents::remove(std::string_view key) {
  auto existing = store_.get(kPendingFamily, key);
  if (!existing) return existing.error();
  if (!existing->has_value()) return Status::ok();
  rocksdb::WriteBatch batch;
  batch.Delete(store_.family(kPendingFamily), rocksdb::Slice(key.data(), key.size()));
  RESTACK_RETURN_IF_ERROR(store_.write(batch));
  if (count_ > 0) --count_;
  bytes_ -= std::min<uint64_t>(bytes_, key.size() + (*existing)->size());
  return Status::ok();
}

Expected<uint64_t> PendingEvents::dropPartition(int32_t partition) {
  rocksdb::WriteBatch batch;
  uint64_t dropped = 0;
  auto it = iterate(store_);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const rocksdb::Slice value = it->value();
    std::string_view bytes(value.data(), value.size());
    const bool unknown_format = bytes.size() < 5 || static_cast<uint8_t>(bytes[0]) != kLocalVersion;
    if (unknown_format || static_cast<int32_t>(readLittleEndian(bytes.substr(1, 4))) == partition) {
      batch.Delete(store_.family(kPendingFamily), it->key());
      ++dropped;
    }
  }
  if (!it->status().ok()) return ioError("reading pending events: " + it->status().ToString());
  if (dropped == 0) return dropped;
  RESTACK_RETURN_IF_ERROR(store_.write(batch));
  RESTACK_RETURN_IF_ERROR(recount());
  return dropped;
}

Status PendingEvents::clear() {
  rocksdb::WriteBatch batch;
  auto it = iterate(store_);
  for (it->SeekToFirst(); it->Valid(); it->Next()) batch.Delete(store_.family(kPendingFamily), it->key());
  if (!it->status().ok()) return ioError("reading pending events: " + it->status().ToString());
  RESTACK_RETURN_IF_ERROR(store_.write(batch));
  return recount();
}

Expected<std::vector<PendingEvent>> PendingEvents::list(std::string_view app, std::string_view after,
                                                        size_t limit) const {
  std::vector<PendingEvent> events;
  auto it = iterate(store_);
  const std::string prefix = app.empty() ? std::string() : keyOf(app, "");
  if (after.empty()) {
    it->Seek(prefix);
  } else {
    it->Seek(rocksdb::Slice(after.data(), after.size()));
    if (it->Valid() && it->key() == rocksdb::Slice(after.data(), after.size())) it->Next();
  }
  for (; it->Valid() && events.size() < limit; it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (!key.starts_with(prefix)) break;
    auto event = decodeLocal(key, std::string_view(it->value().data(), it->value().size()));
    if (!event) return event.error();
    events.push_back(std::move(*event));
  }
  if (!it->status().ok()) return ioError("reading pending events: " + it->status().ToString());
  return events;
}

Expected<std::vector<PendingEvent>> PendingEvents::enqueuedBefore(int64_t cutoff_ms, size_t limit) const {
  std::vector<PendingEvent> events;
  auto it = iterate(store_);
  for (it->SeekToFirst(); it->Valid() && events.size() < limit; it->Next()) {
    std::string_view value(it->value().data(), it->value().size());
    // u8 local version | u32 partition | u8 record version | u64 enqueued_ms
    if (value.size() < 14) continue;
    if (static_cast<int64_t>(readLittleEndian(value.substr(6, 8))) >= cutoff_ms) continue;
    auto event = decodeLocal(std::string_view(it->key().data(), it->key().size()), value);
    if (!event) return event.error();
    events.push_back(std::move(*event));
  }
  if (!it->status().ok()) return ioError("reading pending events: " + it->status().ToString());
  return events;
}

}  // namespace restack::worker
