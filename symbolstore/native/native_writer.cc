#include "symbolstore/native/native_writer.h"

namespace restack::native_store {

Status NativeBatchWriter::put(std::string_view key, std::string_view value) {
  batch_.Put(store_.family(kNativeFamily), rocksdb::Slice(key.data(), key.size()),
             rocksdb::Slice(value.data(), value.size()));
  report_.records += 1;
  report_.stored_bytes += key.size() + value.size();
  if (batch_.GetDataSize() >= kBatchBytes) return startWrite();
  return Status::ok();
}

Status NativeBatchWriter::deleteRange(const std::string& begin, const std::string& end) {
  batch_.DeleteRange(store_.family(kNativeFamily), begin, end);
  return Status::ok();
}

Status NativeBatchWriter::flush() {
  RESTACK_RETURN_IF_ERROR(startWrite());
  return waitForWrite();
}

Status NativeBatchWriter::startWrite() {
  RESTACK_RETURN_IF_ERROR(waitForWrite());
  if (batch_.Count() == 0) return Status::ok();
  // Swap rather than move: each batch keeps the capacity it grew to (one allocation per batch
  // for the whole ingest instead of a string doubled from empty up to 8 MiB for every batch).
  std::swap(in_flight_, batch_);
  writing_ = std::async(std::launch::async, [this] { return store_.write(in_flight_); });
  return Status::ok();
}

Status NativeBatchWriter::waitForWrite() {
  if (!writing_.valid()) return Status::ok();
  Status status = writing_.get();
  in_flight_.Clear();
  return status;
}

Expected<uint32_t> ImageStringTable::intern(std::string_view text) {
  auto found = ids_.find(text);  // heterogeneous: no std::string per lookup
  if (found != ids_.end()) return found->second;
  uint32_t id = next_++;
  auto added = ids_.emplace(std::string(text), id).first;
  by_id_.push_back(&added->first);  // map nodes do not move
  unwritten_.emplace_back(text);
  if (unwritten_.size() == kStringsPerBlock) RESTACK_RETURN_IF_ERROR(flush());
  return id;
}

Status ImageStringTable::flush() {
  if (unwritten_.empty()) return Status::ok();
  uint32_t block = (next_ - 1) / kStringsPerBlock;
  Status status = writer_.put(stringBlockKey(id_, block), encodeStringBlock(unwritten_));
  unwritten_.clear();
  return status;
}

}  // namespace restack::native_store
