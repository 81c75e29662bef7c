// The symbol store: one RocksDB database, one column family per layer that keeps records in it.
//
// Layout (schema version 1, recorded under meta key "schema_version"):
//
//   column family   key                                         value
//   ------------    ------------------------------------------  ---------------------------------
//   meta            "schema_version"                            u32 little endian
//   meta            "applied\x00<topic>\x00<partition u32 BE>"  next offset to apply, i64 LE
//   meta            "deferred\x00<topic>\x00<partition><offset>"  an upload waiting to be retried, owned by
//                                                               worker/kafka/deferred_uploads.h
//   <other>         owned by the layer that declares it (a StoreFamily constant next to the
//                   records' layout): native (symbolstore/native/native_records.h), proguard
//                   (symbolstore/proguard/proguard_records.h), sourcemap
//                   (symbolstore/sourcemap/sourcemap_records.h), and the worker's own
//                   (worker/kafka/); docs/design.md §11 lists them
//
// The store owns only `meta`. It opens every family that is declared (StoreFamily) and every
// family it finds on disk, so a store written by a build that declared more families still opens.
//
// Every value a family stores starts with a one-byte format version so that a reader can refuse
// (or migrate) records it does not understand instead of misreading them.
//
// RocksDB is the durable source of truth; readers keep hot records decoded in memory in front of
// it (a point read costs ~4 µs, too slow for per-frame targets).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "formats/common/status.h"

namespace restack {

// A column family, declared by the layer that owns its records. Declaring one registers it: every
// store opened afterwards in the process opens it, creating it when missing. Declare families as
// inline constants in the header that documents their records, so that they are registered
// before main() in every program that uses them:
//   inline const StoreFamily kNativeFamily{"native"};
// The name is the on-disk name and never changes (docs/design.md §11). Declaring a name twice
// names the same family.
class StoreFamily {
 public:
  explicit StoreFamily(const char* name);
  StoreFamily(const StoreFamily&) = delete;
  StoreFamily& operator=(const StoreFamily&) = delete;
  const char* name() const { return name_; }
  size_t index() const { return index_; }  // position among the registered families

 private:
  const char* name_;
  size_t index_;
};

// The names of the registered families, in registration order.
std::vector<std::string> registeredStoreFamilies();

// The store's own family: the schema version, how far each input partition was applied, and the
// worker's small per-store bookkeeping (layout above).
inline const StoreFamily kMetaFamily{"meta"};

inline constexpr uint32_t kStoreSchemaVersion = 1;

// Options for opening a store. Defaults suit one worker on a small machine.
struct StoreOptions {
  // Directory of the RocksDB database; created when missing.
  std::string path;
  // Shared LRU block cache for all column families. Default 256 MiB.
  size_t block_cache_bytes = 256u << 20;
  // Memtable size per column family before a flush. Default 64 MiB.
  size_t write_buffer_bytes = 64u << 20;
  // Open without writing (restack symbolicate --store on a live worker's copy). Default false.
  bool read_only = false;
  // Fsync the WAL on every write batch. Default false: uploads can be replayed from Kafka.
  bool sync_writes = false;
  // Read every block of every file once after opening and compare its checksum (RocksDB's
  // VerifyChecksum; about a second per GB). Default false.
  bool verify_checksums = false;
  // When opening or verifying reports corruption, move the folder aside to
  // "<path>.corrupt-<unix seconds>" and start an empty store instead of failing: the worker
  // rebuilds it from Kafka. Default false (tools must not discard data).
  bool rebuild_if_corrupt = false;
  // Receives RocksDB's own messages (warnings and errors). Default nullptr: they are written to
  // standard error. Never a LOG file in the store's folder: RocksDB 7.8 (Debian 12) aborts the
  // process on an assertion (file/writable_file_writer.h) when a write to its LOG file fails, as
  // on a full disk, and it logs again; the worker passes its own log (worker/logging/log.h).
  std::shared_ptr<rocksdb::Logger> info_log;
  // The environment (file system, threads) RocksDB runs on. Default nullptr: the process's
  // (rocksdb::Env::Default()); tests pass one whose files fail on demand.
  std::shared_ptr<rocksdb::Env> env;
};

class SymbolStore {
 public:
  static Expected<std::unique_ptr<SymbolStore>> open(const StoreOptions& options);
  ~SymbolStore();
  SymbolStore(const SymbolStore&) = delete;
  SymbolStore& operator=(const SymbolStore&) = delete;

  rocksdb::DB& db() { return *db_; }
  // The handle of a registered family. In a read-only store without that family on disk: RocksDB's
  // default family, which Restack never writes, so that reads find nothing.
  rocksdb::ColumnFamilyHandle* family(const StoreFamily& family) const;
  // Every open family (registered or found on disk), `meta` included.
  std::vector<rocksdb::ColumnFamilyHandle*> families() const;
  const StoreOptions& options() const { return options_; }
  // Where a corrupt store was moved (rebuild_if_corrupt) and why; empty when it was not.
  const std::string& movedAside() const { return moved_aside_; }
  const std::string& corruption() const { return corruption_; }

  // Applies a batch atomically. Errors name the store path.
  Status write(rocksdb::WriteBatch& batch);
  // Point read; std::nullopt when the key is absent.
  Expected<std::optional<std::string>> get(const StoreFamily& family, std::string_view key) const;

  // Lookups: the reads that answer frames (the resolvers, symbolstore/*/..._resolver.cc). They see
  // every write, except while an upload is being ingested beside them (worker/kafka/symbol_feed.h):
  // then they see the store as it was when that ingest began, so that no frame is answered from
  // half an upload (a first ingest writes an image over many batches; a re-ingest deletes its
  // records before writing them again). pinLookups() takes that view, unpinLookups() lets lookups
  // see everything written since. Call both only while no lookup runs (the worker calls them from
  // its loop, between restores), and drop what readers cached after unpinning.
  void pinLookups();
  void unpinLookups();
  // ReadOptions for a lookup's iterator.
  rocksdb::ReadOptions lookupReadOptions() const;
  // Point read of a lookup; std::nullopt when the key is absent.
  Expected<std::optional<std::string>> lookup(const StoreFamily& family, std::string_view key) const;

  // How far partition `partition` of `topic` was applied: the next offset to read, or
  // std::nullopt when nothing was applied yet.
  Expected<std::optional<int64_t>> appliedOffset(std::string_view topic, int32_t partition) const;
  // Adds "applied up to `next_offset`" to `batch`, so that the records of an upload and the
  // progress marker land together.
  void recordAppliedOffset(rocksdb::WriteBatch& batch, std::string_view topic, int32_t partition,
                           int64_t next_offset) const;

 private:
  SymbolStore() = default;
  // `corrupt` is set when the error is RocksDB reporting corruption.
  static Expected<std::unique_ptr<SymbolStore>> openOnce(const StoreOptions& options, bool& corrupt);
  StoreOptions options_;
  std::string moved_aside_;
  std::string corruption_;
  std::unique_ptr<rocksdb::DB> db_;
  // The snapshot lookups read while pinned; nullptr when they read the latest data.
  std::atomic<const rocksdb::Snapshot*> lookup_view_{nullptr};
  // By StoreFamily::index(); nullptr for families registered after the store opened.
  std::vector<rocksdb::ColumnFamilyHandle*> families_;
  // Families found on disk that no layer of this program declares: opened (RocksDB requires it),
  // never used.
  std::vector<rocksdb::ColumnFamilyHandle*> undeclared_;
};

}  // namespace restack
