#include "tests/native/dwp_fuzz_entry.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <vector>

#include "formats/common/temp_dir.h"
#include "formats/native/native_object.h"
#include "formats/native/symbol_table.h"
#include "formats/stack/native_line.h"
#include "symbolstore/ingest.h"
#include "symbolstore/native/native_resolver.h"
#include "symbolstore/store.h"

namespace restack::native_test {

namespace {

constexpr const char* kLibrary = "libfuzz.so";
constexpr const char* kPackagePrefix = "libfuzz.so.dwp: ";
// Symbols looked up per input (a mutated symbol table may list thousands).
constexpr size_t kMaxLookups = 256;

void require(bool property) {
  if (!property) std::abort();
}

// One store and one upload folder for the whole run: opening RocksDB for every input would take
// most of the time. The store is emptied before each upload, so that every input meets the
// store a worker that never saw this library has.
struct FuzzPlace {
  TempDir dir;
  std::string upload;
  std::unique_ptr<SymbolStore> store;
};

FuzzPlace& place() {
  static FuzzPlace* const made = [] {
    auto dir = TempDir::create("restack-fuzz-dwp-");
    require(static_cast<bool>(dir));
    auto* built = new FuzzPlace{std::move(*dir), "", nullptr};
    built->upload = built->dir.path() + "/upload";
    require(std::filesystem::create_directory(built->upload));
    StoreOptions options;
    options.path = built->dir.path() + "/store";
    options.block_cache_bytes = 4u << 20;
    options.write_buffer_bytes = 4u << 20;
    auto store = SymbolStore::open(options);
    require(static_cast<bool>(store));
    built->store = std::move(*store);
    // Closes the store and removes the folder when the run exits. Registered after RocksDB's own
    // statics were made, so it runs before they go; a fuzzer that aborts on a finding keeps it.
    std::atexit([] {
      made->store.reset();
      delete made;
    });
    return built;
  }();
  return *made;
}

// Deletes every record of the last input. The deletions pile up in the memtable, where every
// lookup of the next inputs steps over them (most of the run's time after a few thousand
// inputs), so every 64 inputs they are compacted away.
void emptyStore(SymbolStore& store) {
  static size_t emptied = 0;
  rocksdb::WriteBatch batch;
  rocksdb::ColumnFamilyHandle* meta = store.family(kMetaFamily);
  for (rocksdb::ColumnFamilyHandle* family : store.families()) {
    if (family == meta) continue;
    std::unique_ptr<rocksdb::Iterator> it(store.db().NewIterator(rocksdb::ReadOptions(), family));
    for (it->SeekToFirst(); it->Valid(); it->Next()) require(batch.Delete(family, it->key()).ok());
    require(it->status().ok());
  }
  require(static_cast<bool>(store.write(batch)));
  if (++emptied % 64 != 0) return;
  for (rocksdb::ColumnFamilyHandle* family : store.families()) {
    if (family == meta) continue;
    require(store.db().Flush(rocksdb::FlushOptions(), family).ok());
    require(store.db().CompactRange(rocksdb::CompactRangeOptions(), family, nullptr, nullptr).ok());
  }
}

void writeBytes(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  require(static_cast<bool>(out));
}

bool printable(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
  });
}

}  // namespace

std::optional<DwpPair> splitDwpPair(std::string_view input) {
  if (input.size() < 4) return std::nullopt;
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(input[i])); };
  const uint32_t library_size = byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24;
  if (library_size > input.size() - 4) return std::nullopt;
  return DwpPair{input.substr(4, library_size), input.substr(4 + library_size)};
}

std::string makeDwpPair(std::string_view library, std::string_view package) {
  const auto size = static_cast<uint32_t>(library.size());
  std::string out = {static_cast<char>(size & 0xff), static_cast<char>(size >> 8 & 0xff),
                     static_cast<char>(size >> 16 & 0xff), static_cast<char>(size >> 24 & 0xff)};
  out.append(library);
  out.append(package);
  return out;
}

DwpFuzzOutcome fuzzDwpInput(const uint8_t* data, size_t size) {
  DwpFuzzOutcome outcome;
  auto pair = splitDwpPair(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!pair) return outcome;
  FuzzPlace& at = place();
  emptyStore(*at.store);
  const std::string library_path = at.upload + "/" + kLibrary;
  writeBytes(library_path, pair->library);
  writeBytes(library_path + ".dwp", pair->package);

  UploadMeta meta;
  meta.app = "fuzz";
  meta.build_id = "1";
  UploadContent content;
  content.path = at.upload;
  content.display_name = "upload";
  IngestOptions options;
  options.max_input_bytes = 64u << 20;
  auto report = ingestUpload(*at.store, meta, content, options);
  if (!report) {
    require(report.error().code() != ErrorCode::kInternal && !report.error().message().empty());
    return outcome;
  }
  outcome.ingested = true;
  outcome.warnings = report->warnings.size();
  std::set<std::string> package_warnings;
  for (const std::string& warning : report->warnings) {
    // ingestUpload names the file a warning is about ("libfuzz.so: libfuzz.so.dwp: …").
    const size_t prefix = warning.find(kPackagePrefix);
    if (prefix == std::string::npos) continue;
    const std::string text = warning.substr(prefix);
    require(package_warnings.insert(text).second);
    require(printable(text) && text.size() <= 403);  // formats/native/dwarf_walker.cc, WarningList
  }
  outcome.package_warnings = package_warnings.size();
  require(outcome.package_warnings <= 20);
  if (report->ids.empty()) return outcome;

  auto file = native::NativeFile::fromBytes(pair->library);
  if (!file || (*file)->slices().empty()) return outcome;
  auto symbols = native::readSymbolTable((*file)->slices().front());
  if (!symbols) return outcome;
  NativeResolverOptions resolver_options;
  resolver_options.cache_bytes = 1u << 20;
  NativeResolver resolver(*at.store, resolver_options);
  stack::NativeFrameLine frame;
  frame.module = kLibrary;
  frame.debug_id = report->ids.front();
  const EventScope scope{"fuzz", "1", "android", {}};
  for (size_t i = 0; i < symbols->size() && i < kMaxLookups; ++i) {
    const native::SymbolEntry& symbol = (*symbols)[i];
    auto lookup = resolver.lookup(scope, frame, symbol.address + symbol.size / 2);
    require(static_cast<bool>(lookup));
    ++outcome.symbols;
    if (lookup->status != FrameStatus::kSymbolicated) continue;
    ++outcome.restored;
    if (lookup->frames.size() > 1) ++outcome.restored_with_inlines;
  }
  return outcome;
}

}  // namespace restack::native_test
