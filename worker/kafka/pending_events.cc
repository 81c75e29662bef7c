#include "worker/kafka/pending_events.h"

#include <chrono>
#include <memory>

namespace restack::worker {
namespace {

constexpr uint8_t kFormatVersion = 1;

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

Expected<PendingEvent> decode(std::string_view key, std::string_view value) {
  PendingEvent event;
  size_t zero = key.find('\0');
  if (zero == std::string_view::npos) return malformed("pending-event key without a separator");
  event.app = std::string(key.substr(0, zero));
  event.event_id = std::string(key.substr(zero + 1));
  std::string_view field;
  if (!take(value, 1, field) || static_cast<uint8_t>(field[0]) != kFormatVersion) {
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

}  // namespace

PendingEvents::PendingEvents(SymbolStore& store, const PendingOptions& options) : store_(store), options_(options) {
  std::unique_ptr<rocksdb::Iterator> it(
      store_.db().NewIterator(rocksdb::ReadOptions(), store_.family(SymbolFamily::kPending)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++count_;
}

Expected<bool> PendingEvents::add(const PendingEvent& event) {
  const std::string key = keyOf(event.app, event.event_id);
  auto existing = store_.get(SymbolFamily::kPending, key);
  if (!existing) return existing.error();
  if (!existing->has_value() && count_ >= options_.max_events) return false;
  std::string value;
  value.push_back(static_cast<char>(kFormatVersion));
  putU64(value, static_cast<uint64_t>(event.enqueued_ms));
  putU32(value, static_cast<uint32_t>(event.input_key.size()));
  value += event.input_key;
  putU32(value, static_cast<uint32_t>(event.provisional_fingerprint.size()));
  value += event.provisional_fingerprint;
  value += event.value;
  rocksdb::WriteBatch batch;
  batch.Put(store_.family(SymbolFamily::kPending), key, value);
  RESTACK_RETURN_IF_ERROR(store_.write(batch));
  if (!existing->has_value()) ++count_;
  return true;
}

Expected<std::vector<PendingEvent>> PendingEvents::list(std::string_view app, size_t limit) const {
  std::vector<PendingEvent> events;
  std::unique_ptr<rocksdb::Iterator> it(
      store_.db().NewIterator(rocksdb::ReadOptions(), store_.family(SymbolFamily::kPending)));
  const std::string prefix = app.empty() ? std::string() : keyOf(app, "");
  for (it->Seek(prefix); it->Valid() && events.size() < limit; it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (!key.starts_with(prefix)) break;
    auto event = decode(key, std::string_view(it->value().data(), it->value().size()));
    if (!event) return event.error();
    events.push_back(std::move(*event));
  }
  if (!it->status().ok()) return ioError("reading pending events: " + it->status().ToString());
  return events;
}

Status PendingEvents::remove(const PendingEvent& event) {
  rocksdb::WriteBatch batch;
  batch.Delete(store_.family(SymbolFamily::kPending), keyOf(event.app, event.event_id));
  RESTACK_RETURN_IF_ERROR(store_.write(batch));
  if (count_ > 0) --count_;
  return Status::ok();
}

}  // namespace restack::worker
