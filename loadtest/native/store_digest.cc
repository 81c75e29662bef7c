// Prints, for every column family of a symbol store, its record count, key + value bytes and a
// 64-bit FNV-1a digest of all its key/value pairs in key order: two ingests stored the same bytes
// when the lines are equal. Used to check that ingest changes keep the stored records identical
// (docs/benchmarks.md, "Large symbol files").
// Usage: native_store_digest STORE_DIR
#include <rocksdb/iterator.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string_view>

#include "symbolstore/native/native_records.h"
#include "symbolstore/store.h"

namespace {

struct Digest {
  uint64_t hash = 0xcbf29ce484222325ull;
  void add(std::string_view bytes) {
    uint64_t size = bytes.size();
    for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>(size >> (8 * i)));
    for (char c : bytes) mix(static_cast<unsigned char>(c));
  }
  void mix(unsigned char c) { hash = (hash ^ c) * 0x100000001b3ull; }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s STORE_DIR\n", argv[0]);
    return 2;
  }
  restack::StoreOptions options;
  options.path = argv[1];
  options.read_only = true;
  auto store = restack::SymbolStore::open(options);
  if (!store) {
    fprintf(stderr, "%s\n", store.error().describe().c_str());
    return 1;
  }
  for (rocksdb::ColumnFamilyHandle* family : (*store)->families()) {
    std::unique_ptr<rocksdb::Iterator> it((*store)->db().NewIterator(rocksdb::ReadOptions(), family));
    Digest digest;
    uint64_t records = 0, bytes = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      digest.add(it->key().ToStringView());
      digest.add(it->value().ToStringView());
      ++records;
      bytes += it->key().size() + it->value().size();
    }
    if (!it->status().ok()) {
      fprintf(stderr, "%s\n", it->status().ToString().c_str());
      return 1;
    }
    printf("%s records=%llu bytes=%llu fnv1a64=%016llx\n", family->GetName().c_str(),
           static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes),
           static_cast<unsigned long long>(digest.hash));
  }
  return 0;
}
