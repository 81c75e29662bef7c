// Ingest of a ProGuard / R8 mapping file: one streaming pass, one record per obfuscated class
// (layout: proguard_records.h). Records go to RocksDB in batches of a few MB as classes are
// read; the build and map-id pointers are written last, so the upload becomes visible at once
// and whole, and the previous mapping of the same build is deleted after the switch.
#include <chrono>
#include <random>

#include "formats/common/mapped_file.h"
#include "formats/proguard/mapping_reader.h"
#include "symbolstore/ingest.h"
#include "symbolstore/proguard/proguard_records.h"

namespace restack {
namespace {

constexpr size_t kBatchBytes = 4u << 20;

std::string newLoadId() {
  static std::atomic<uint64_t> counter{0};
  std::random_device device;
  uint64_t value = (static_cast<uint64_t>(device()) << 32) ^ device() ^
                   static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                   (counter.fetch_add(1) * 0x9E3779B97F4A7C15ull);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) id[static_cast<size_t>(i)] = kHex[value & 0xF];
  return id;
}

std::string hashHex(std::string_view pg_map_hash) {
  size_t space = pg_map_hash.rfind(' ');
  return std::string(space == std::string_view::npos ? pg_map_hash : pg_map_hash.substr(space + 1));
}

std::string prefixEnd(std::string prefix) {
  // The smallest key greater than every key that starts with `prefix` (which ends in '\0').
  prefix.back() = '\x01';
  return prefix;
}

}  // namespace

Expected<IngestReport> ingestProguard(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                      const IngestOptions& options) {
  const std::string name =
      content.display_name.empty() ? (content.path.empty() ? "mapping" : content.path) : content.display_name;
  std::optional<MappedFile> file;
  std::string_view bytes = content.bytes;
  if (!content.path.empty()) {
    auto opened = MappedFile::open(content.path);
    if (!opened) return opened.error();
    file.emplace(std::move(*opened));
    bytes = file->bytes();
  }
  if (bytes.size() > options.max_input_bytes) {
    return tooLarge(name + " is " + std::to_string(bytes.size()) + " bytes, over the limit of " +
                    std::to_string(options.max_input_bytes));
  }
  proguard::MappingReader reader(bytes);
  if (auto status = reader.readPreamble(); !status) return status.error().withContext(name);
  const proguard::MappingHeader& header = reader.header();
  const std::string pg_map_hash_hex = hashHex(header.pg_map_hash);
  if ((meta.app.empty() && meta.build_id.empty()) && header.pg_map_id.empty() && pg_map_hash_hex.empty()) {
    return invalidArgument(name +
                           ": a mapping upload needs an app and build id (or a mapping file with a "
                           "pg_map_id header) so that events can find it");
  }

  IngestReport report;
  report.kind = SymbolKind::kProguard;
  report.input_bytes = bytes.size();
  const std::string load_id = newLoadId();
  auto* family = store.family(SymbolFamily::kProguard);
  rocksdb::WriteBatch batch;
  size_t batch_bytes = 0;
  uint64_t classes = 0;
  auto put = [&](const std::string& key, const std::string& value) {
    batch.Put(family, key, value);
    batch_bytes += key.size() + value.size();
    report.stored_bytes += key.size() + value.size();
    ++report.records;
  };
  auto abandon = [&](const Error& error) -> Error {
    // Remove what this load already wrote; nothing points at it yet.
    rocksdb::WriteBatch cleanup;
    std::string prefix = proguard::loadPrefix(load_id);
    cleanup.DeleteRange(family, prefix, prefixEnd(prefix));
    (void)store.write(cleanup);
    return error;
  };

  proguard::ClassMapping mapping;
  while (true) {
    auto more = reader.next(mapping);
    if (!more) return abandon(more.error().withContext(name));
    if (!*more) break;
    ++classes;
    put(proguard::classKey(load_id, mapping.obfuscated_name), proguard::encodeClassRecord(mapping));
    if (!mapping.source_file.empty()) {
      put(proguard::sourceFileKey(load_id, mapping.original_name), proguard::encodeSourceFile(mapping.source_file));
    }
    if (batch_bytes >= kBatchBytes) {
      if (auto status = store.write(batch); !status) return abandon(status.error());
      batch.Clear();
      batch_bytes = 0;
      if (options.progress) options.progress(reader.position(), bytes.size(), "bytes");
    }
  }
  if (classes == 0) {
    return abandon(malformed(name + ": no class mappings found ('original.Name -> obfuscated.Name:' lines); "
                                    "is this a ProGuard/R8 mapping.txt?"));
  }

  // Publish: map info, then the pointers, in the same batch as the last class records.
  proguard::MapInfo info{meta.app,           meta.build_id,   header.pg_map_id, header.pg_map_hash,
                         header.map_version, header.compiler, classes};
  put(proguard::mapInfoKey(load_id), proguard::encodeMapInfo(info));
  std::optional<proguard::BuildPointer> previous;
  const bool has_build = !meta.app.empty() || !meta.build_id.empty();
  if (has_build) {
    const std::string build_key = proguard::buildPointerKey(meta.app, meta.build_id);
    auto old = store.get(SymbolFamily::kProguard, build_key);
    if (!old) return abandon(old.error());
    if (old->has_value()) {
      auto decoded = proguard::decodeBuildPointer(**old);
      if (decoded) previous = std::move(*decoded);
    }
    put(build_key, proguard::encodeBuildPointer({load_id, header.pg_map_id, header.pg_map_hash}));
    report.ids.push_back(meta.app + ":" + meta.build_id);
  }
  for (const std::string& id : {header.pg_map_id, pg_map_hash_hex}) {
    if (id.empty()) continue;
    put(proguard::idPointerKey(id), proguard::encodeIdPointer({load_id, meta.app, meta.build_id}));
    report.ids.push_back(id);
  }
  if (previous && previous->load_id != load_id) {
    std::string prefix = proguard::loadPrefix(previous->load_id);
    batch.DeleteRange(family, prefix, prefixEnd(prefix));
    for (const std::string& old_id : {previous->pg_map_id, hashHex(previous->pg_map_hash)}) {
      if (!old_id.empty() && old_id != header.pg_map_id && old_id != pg_map_hash_hex) {
        batch.Delete(family, proguard::idPointerKey(old_id));
      }
    }
  }
  if (auto status = store.write(batch); !status) return abandon(status.error());
  proguard::proguardStoreEpoch().fetch_add(1, std::memory_order_release);
  if (options.progress) options.progress(bytes.size(), bytes.size(), "bytes");

  report.warnings = reader.warnings();
  if (reader.warningCount() > reader.warnings().size()) {
    report.warnings.push_back(std::to_string(reader.warningCount() - reader.warnings().size()) +
                              " more warnings not shown");
  }
  return report;
}

}  // namespace restack
