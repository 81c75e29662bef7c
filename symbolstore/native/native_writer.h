// The write side of the native column family (layout in native_records.h), shared by every
// source that writes native records (native_ingest.cc for ELF and Mach-O, and
// symbolstore/breakpad/breakpad_ingest.cc): the batch writer and an image's string table.
#pragma once

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <future>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/common/status.h"
#include "symbolstore/ingest.h"
#include "symbolstore/native/native_records.h"
#include "symbolstore/store.h"

namespace restack::native_store {

// Collects the Puts of one upload into the native family and writes them in bounded batches;
// counts what was stored into `report` (records, stored_bytes). A full batch is written by a
// helper thread while the next one fills (the DWARF sink runs on the ingest thread, which is the
// critical path once compile units are walked in parallel); at most one batch is in flight, so
// memory stays at two batches.
class NativeBatchWriter {
 public:
  static constexpr size_t kBatchBytes = 8u << 20;

  NativeBatchWriter(SymbolStore& store, IngestReport& report) : store_(store), report_(report) {}
  ~NativeBatchWriter() { (void)waitForWrite(); }
  NativeBatchWriter(const NativeBatchWriter&) = delete;
  NativeBatchWriter& operator=(const NativeBatchWriter&) = delete;

  Status put(std::string_view key, std::string_view value);
  Status deleteRange(const std::string& begin, const std::string& end);
  // Writes everything put so far; returns once it is in the store.
  Status flush();

 private:
  Status startWrite();
  Status waitForWrite();

  SymbolStore& store_;
  IngestReport& report_;
  // Both reserve a full batch up front; they trade places when one is handed to the helper.
  rocksdb::WriteBatch batch_{kBatchBytes + (kBatchBytes >> 3)};
  rocksdb::WriteBatch in_flight_{kBatchBytes + (kBatchBytes >> 3)};
  std::future<Status> writing_;
};

// One image's string table: each distinct string gets the next id; strings are written through
// the writer in blocks of kStringsPerBlock as they fill (stringBlockKey). Write-time transforms
// read and add strings through it (ImageStrings).
class ImageStringTable : public ImageStrings {
 public:
  ImageStringTable(NativeBatchWriter& writer, std::string id) : writer_(writer), id_(std::move(id)) {}

  Expected<uint32_t> intern(std::string_view text) override;
  std::string_view text(uint32_t id) const override { return id < by_id_.size() ? *by_id_[id] : std::string_view(); }
  // Writes the strings of the last, partly filled block.
  Status flush();
  uint32_t count() const { return next_; }

 private:
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };

  NativeBatchWriter& writer_;
  std::string id_;
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> ids_;
  std::vector<const std::string*> by_id_;
  std::vector<std::string> unwritten_;
  uint32_t next_ = 0;
};

}  // namespace restack::native_store
