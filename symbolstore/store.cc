#include "symbolstore/store.h"

#include <rocksdb/cache.h>
#include <rocksdb/options.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace restack {
namespace {

constexpr std::string_view kSchemaVersionKey = "schema_version";

std::string appliedKey(std::string_view topic, int32_t partition) {
  std::string key = "applied";
  key.push_back('\0');
  key.append(topic);
  key.push_back('\0');
  const auto p = static_cast<uint32_t>(partition);
  for (int shift = 24; shift >= 0; shift -= 8) key.push_back(static_cast<char>((p >> shift) & 0xff));
  return key;
}

std::string encodeU32(uint32_t value) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return out;
}

std::string encodeI64(int64_t value) {
  std::string out(8, '\0');
  const auto u = static_cast<uint64_t>(value);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((u >> (8 * i)) & 0xff);
  return out;
}

int64_t decodeI64(std::string_view bytes) {
  uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | static_cast<uint8_t>(bytes[i]);
  return static_cast<int64_t>(u);
}

}  // namespace

namespace {

// Names of the registered families, by StoreFamily::index(). Filled while static objects are
// initialised (the declarations), read when stores open.
std::vector<const char*>& familyRegistry() {
  static std::vector<const char*> names;
  return names;
}

}  // namespace

StoreFamily::StoreFamily(const char* name) : name_(name) {
  std::vector<const char*>& names = familyRegistry();
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::strcmp(names[i], name) == 0) {
      index_ = i;
      return;
    }
  }
  index_ = names.size();
  names.push_back(name);
}

std::vector<std::string> registeredStoreFamilies() {
  return {familyRegistry().begin(), familyRegistry().end()};
}

Expected<std::unique_ptr<SymbolStore>> SymbolStore::open(const StoreOptions& options) {
  bool corrupt = false;
  auto store = openOnce(options, corrupt);
  if (store || !corrupt || !options.rebuild_if_corrupt || options.read_only) {
    return store;
  }
  // Everything in the store can be rebuilt from Kafka (the symbols topics from their start, the
  // worker's families from its own topics), so a corrupt store is kept for a post-mortem and
  // replaced instead of failing every restart.
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string aside = options.path + ".corrupt-" + std::to_string(seconds);
  std::error_code error;
  std::filesystem::rename(options.path, aside, error);
  if (error) {
    return ioError("symbol store at " + options.path + " is corrupt (" + store.error().message() +
                   ") and could not be moved aside to " + aside + ": " + error.message());
  }
  auto fresh = openOnce(options, corrupt);
  if (!fresh) return fresh.error();
  (*fresh)->moved_aside_ = aside;
  (*fresh)->corruption_ = store.error().message();
  return fresh;
}

namespace {

// RocksDB's messages on standard error, one line each (StoreOptions::info_log's default).
class StderrLogger : public rocksdb::Logger {
 public:
  explicit StderrLogger(rocksdb::InfoLogLevel level) : rocksdb::Logger(level) {}
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list arguments) override {
    char line[1024];
    std::vsnprintf(line, sizeof(line), format, arguments);
    std::fprintf(stderr, "rocksdb: %s\n", line);
  }
};

}  // namespace

Expected<std::unique_ptr<SymbolStore>> SymbolStore::openOnce(const StoreOptions& options, bool& corrupt) {
  if (options.path.empty()) return invalidArgument("symbol store path is empty");
  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes);

  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  // Index and filter blocks live outside the small shared cache: a shared cache holding them
  // thrashes under point reads.
  table.cache_index_and_filter_blocks = false;
  table.format_version = 5;

  rocksdb::ColumnFamilyOptions family_options;
  family_options.write_buffer_size = options.write_buffer_bytes;
  family_options.compression = rocksdb::kLZ4Compression;
  family_options.bottommost_compression = rocksdb::kZSTD;
  family_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  rocksdb::DBOptions db_options;
  db_options.create_if_missing = !options.read_only;
  db_options.create_missing_column_families = !options.read_only;
  db_options.max_background_jobs = 2;
  db_options.info_log_level = rocksdb::WARN_LEVEL;
  // No LOG file in the store's folder (StoreOptions::info_log says why).
  db_options.info_log = options.info_log ? options.info_log : std::make_shared<StderrLogger>(db_options.info_log_level);
  // Refuse to run on damaged files (the worker moves a corrupt store aside and rebuilds it).
  db_options.paranoid_checks = true;
  if (options.env) db_options.env = options.env.get();

  // RocksDB opens a database only with all of its families named: the declared ones, and any a
  // build with more layers created. A store that does not exist yet lists none.
  const std::vector<const char*>& declared = familyRegistry();
  if (!options.read_only && !options.env) {
    // Made here, so that RocksDB does not log an error for a store it is about to create.
    std::error_code ignored;
    std::filesystem::create_directories(options.path, ignored);
  }
  std::vector<std::string> on_disk;
  if (!rocksdb::DB::ListColumnFamilies(db_options, options.path, &on_disk).ok()) on_disk.clear();
  auto isOnDisk = [&](std::string_view name) {
    return std::find(on_disk.begin(), on_disk.end(), name) != on_disk.end();
  };
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  std::vector<size_t> slots;  // descriptor i -> declared index, or SIZE_MAX when undeclared
  descriptors.emplace_back(rocksdb::kDefaultColumnFamilyName, family_options);
  slots.push_back(SIZE_MAX);
  for (size_t i = 0; i < declared.size(); ++i) {
    // A read-only open cannot create a family; one that is missing reads as empty (family()).
    if (options.read_only && !isOnDisk(declared[i])) continue;
    descriptors.emplace_back(declared[i], family_options);
    slots.push_back(i);
  }
  for (const std::string& name : on_disk) {
    if (name == rocksdb::kDefaultColumnFamilyName) continue;
    if (std::find_if(declared.begin(), declared.end(), [&](const char* d) { return name == d; }) != declared.end()) {
      continue;
    }
    descriptors.emplace_back(name, family_options);
    slots.push_back(SIZE_MAX);
  }

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = options.read_only
                               ? rocksdb::DB::OpenForReadOnly(db_options, options.path, descriptors, &handles, &raw)
                               : rocksdb::DB::Open(db_options, options.path, descriptors, &handles, &raw);
  if (!status.ok()) {
    const std::string text = "cannot open symbol store at " + options.path + ": " + status.ToString();
    corrupt = status.IsCorruption();
    return ioError(text);
  }
  std::unique_ptr<SymbolStore> store(new SymbolStore());
  store->options_ = options;
  store->db_.reset(raw);
  // handles[0] is the default family, which Restack does not use; RocksDB owns it.
  raw->DestroyColumnFamilyHandle(handles[0]);
  store->families_.assign(declared.size(), nullptr);
  for (size_t i = 1; i < handles.size(); ++i) {
    if (slots[i] == SIZE_MAX) {
      store->undeclared_.push_back(handles[i]);
    } else {
      store->families_[slots[i]] = handles[i];
    }
  }
  if (options.verify_checksums) {
    rocksdb::Status verified = raw->VerifyChecksum();
    if (!verified.ok()) {
      const std::string text = "symbol store at " + options.path + " failed its checksum check: " + verified.ToString();
      corrupt = verified.IsCorruption();
      return ioError(text);
    }
  }

  auto version = store->get(kMetaFamily, kSchemaVersionKey);
  if (!version) return version.error();
  if (!version->has_value()) {
    if (!options.read_only) {
      rocksdb::WriteBatch batch;
      batch.Put(store->family(kMetaFamily), std::string(kSchemaVersionKey), encodeU32(kStoreSchemaVersion));
      RESTACK_RETURN_IF_ERROR(store->write(batch));
    }
  } else {
    const std::string& bytes = **version;
    uint32_t found = 0;
    if (bytes.size() == 4) {
      for (int i = 3; i >= 0; --i) found = (found << 8) | static_cast<uint8_t>(bytes[i]);
    }
    if (found != kStoreSchemaVersion) {
      return unsupported("symbol store at " + options.path + " has schema version " + std::to_string(found) +
                         "; this restack reads version " + std::to_string(kStoreSchemaVersion) +
                         ". Rebuild it by replaying restack.symbols into an empty directory.");
    }
  }
  return store;
}

SymbolStore::~SymbolStore() {
  if (!db_) return;
  unpinLookups();
  for (auto* handle : families_) {
    if (handle) db_->DestroyColumnFamilyHandle(handle);
  }
  for (auto* handle : undeclared_) db_->DestroyColumnFamilyHandle(handle);
  db_->Close().PermitUncheckedError();
}

rocksdb::ColumnFamilyHandle* SymbolStore::family(const StoreFamily& family) const {
  // Families are declared before main(), so every one has a slot; the default family stands in
  // for one a read-only store does not have.
  if (family.index() < families_.size() && families_[family.index()] != nullptr) return families_[family.index()];
  return db_->DefaultColumnFamily();
}

std::vector<rocksdb::ColumnFamilyHandle*> SymbolStore::families() const {
  std::vector<rocksdb::ColumnFamilyHandle*> all;
  for (auto* handle : families_) {
    if (handle) all.push_back(handle);
  }
  all.insert(all.end(), undeclared_.begin(), undeclared_.end());
  return all;
}

Status SymbolStore::write(rocksdb::WriteBatch& batch) {
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync_writes;
  rocksdb::Status status = db_->Write(write_options, &batch);
  if (!status.ok()) return ioError("symbol store " + options_.path + ": write failed: " + status.ToString());
  return Status::ok();
}

namespace {

Expected<std::optional<std::string>> pointRead(rocksdb::DB& db, const rocksdb::ReadOptions& options,
                                               rocksdb::ColumnFamilyHandle* family, std::string_view key,
                                               const std::string& path) {
  std::string value;
  rocksdb::Status status = db.Get(options, family, rocksdb::Slice(key.data(), key.size()), &value);
  if (status.IsNotFound()) return std::optional<std::string>();
  if (!status.ok()) return ioError("symbol store " + path + ": read failed: " + status.ToString());
  return std::optional<std::string>(std::move(value));
}

}  // namespace

Expected<std::optional<std::string>> SymbolStore::get(const StoreFamily& which, std::string_view key) const {
  return pointRead(*db_, rocksdb::ReadOptions(), family(which), key, options_.path);
}

void SymbolStore::pinLookups() {
  unpinLookups();
  lookup_view_.store(db_->GetSnapshot(), std::memory_order_release);
}

void SymbolStore::unpinLookups() {
  if (const rocksdb::Snapshot* view = lookup_view_.exchange(nullptr, std::memory_order_acq_rel)) {
    db_->ReleaseSnapshot(view);
  }
}

rocksdb::ReadOptions SymbolStore::lookupReadOptions() const {
  rocksdb::ReadOptions options;
  options.snapshot = lookup_view_.load(std::memory_order_acquire);
  return options;
}

Expected<std::optional<std::string>> SymbolStore::lookup(const StoreFamily& which, std::string_view key) const {
  return pointRead(*db_, lookupReadOptions(), family(which), key, options_.path);
}

Expected<std::optional<int64_t>> SymbolStore::appliedOffset(std::string_view topic, int32_t partition) const {
  auto value = get(kMetaFamily, appliedKey(topic, partition));
  if (!value) return value.error();
  if (!value->has_value()) return std::optional<int64_t>();
  if ((*value)->size() != 8)
    return malformed("applied-offset record is " + std::to_string((*value)->size()) + " bytes, expected 8");
  return std::optional<int64_t>(decodeI64(**value));
}

void SymbolStore::recordAppliedOffset(rocksdb::WriteBatch& batch, std::string_view topic, int32_t partition,
                                      int64_t next_offset) const {
  batch.Put(family(kMetaFamily), appliedKey(topic, partition), encodeI64(next_offset));
}

}  // namespace restack
