// Ingest of a ProGuard / R8 mapping file: one streaming pass, one record per obfuscated class
// (layout: proguard_records.h). Records go to RocksDB in batches of a few MB as classes are
// read; the build and map-id pointers are written last, so the upload becomes visible at once
// and whole, and the previous mapping of the same build is deleted after the switch.
#include <algorithm>
#include <chrono>
#include <random>
#include <unordered_map>
#include <unordered_set>

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

bool isBlank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The obfuscated names that more than one class block maps to. ProGuard's class merging writes a
// block for every merged class under the surviving class's name; the store keeps one record per
// obfuscated name, so those blocks must be merged into one (mergeBlocks) instead of the last one
// replacing the others. A quick pass over the class lines only (unindented, not comments); the
// reader reports malformed lines in the main pass.
std::unordered_set<std::string> sharedObfuscatedNames(std::string_view bytes) {
  std::unordered_map<std::string_view, uint32_t> seen;
  std::unordered_set<std::string> shared;
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t end = bytes.find('\n', pos);
    if (end == std::string_view::npos) end = bytes.size();
    std::string_view line = bytes.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || isBlank(line.front()) || line.front() == '#') continue;
    while (!line.empty() && isBlank(line.back())) line.remove_suffix(1);
    size_t arrow = line.find(" -> ");
    if (arrow == std::string_view::npos || line.back() != ':') continue;
    std::string_view obfuscated = line.substr(arrow + 4, line.size() - arrow - 5);
    while (!obfuscated.empty() && isBlank(obfuscated.front())) obfuscated.remove_prefix(1);
    while (!obfuscated.empty() && isBlank(obfuscated.back())) obfuscated.remove_suffix(1);
    if (++seen[obfuscated] == 2) shared.emplace(obfuscated);
  }
  return shared;
}

// One record for blocks that share an obfuscated name: the first block's class, with the other
// classes' methods and fields added, each method naming its own class as holder so that frames
// restore to the class that declared them, and the other classes listed as merged names (the
// resolver picks among them for exception lines).
proguard::ClassMapping mergeBlocks(std::vector<proguard::ClassMapping>& blocks) {
  proguard::ClassMapping merged = std::move(blocks.front());
  for (size_t i = 1; i < blocks.size(); ++i) {
    proguard::ClassMapping& other = blocks[i];
    if (other.original_name == merged.original_name || std::find(merged.merged_names.begin(), merged.merged_names.end(),
                                                                 other.original_name) != merged.merged_names.end()) {
      continue;  // the same class twice: the first block wins, as before
    }
    for (proguard::MethodMapping& method : other.methods) {
      if (method.signature.holder.empty()) method.signature.holder = other.original_name;
      merged.methods.push_back(std::move(method));
    }
    for (proguard::FieldMapping& field : other.fields) merged.fields.push_back(std::move(field));
    merged.synthesized = merged.synthesized && other.synthesized;
    merged.merged_names.push_back(std::move(other.original_name));
  }
  return merged;
}

}  // namespace

Expected<IngestReport> ingestProguard(SymbolStore& store, const UploadMeta& meta, const UploadContent& content,
                                      const IngestOptions& options) {
  const std::string name =
      content.display_name.empty() ? (content.path.empty() ? "mapping" : content.path) : content.display_name;
  std::optional<MappedFile> file;
  auto read = uploadBytes(content, file);
  if (!read) return read.error();
  const std::string_view bytes = *read;
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
  auto* family = store.family(proguard::kProguardFamily);
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

  const std::unordered_set<std::string> shared = sharedObfuscatedNames(bytes.substr(reader.position()));
  std::unordered_map<std::string, std::vector<proguard::ClassMapping>> held;  // blocks of `shared` names
  proguard::ClassMapping mapping;
  while (true) {
    auto more = reader.next(mapping);
    if (!more) return abandon(more.error().withContext(name));
    if (!*more) break;
    ++classes;
    if (!mapping.source_file.empty()) {
      put(proguard::sourceFileKey(load_id, mapping.original_name), proguard::encodeSourceFile(mapping.source_file));
    }
    if (!shared.empty() && shared.contains(mapping.obfuscated_name)) {
      auto& blocks = held[mapping.obfuscated_name];
      blocks.push_back(std::move(mapping));
      mapping = proguard::ClassMapping();
      continue;
    }
    put(proguard::classKey(load_id, mapping.obfuscated_name), proguard::encodeClassRecord(mapping));
    if (batch_bytes >= kBatchBytes) {
      if (auto status = store.write(batch); !status) return abandon(status.error());
      batch.Clear();
      batch_bytes = 0;
      if (options.progress) options.progress(reader.position(), bytes.size(), "bytes");
      if (ingestStopped(options)) return abandon(ingestStoppedError());
    }
  }
  for (auto& [obfuscated, blocks] : held) {
    put(proguard::classKey(load_id, obfuscated), proguard::encodeClassRecord(mergeBlocks(blocks)));
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
    auto old = store.get(proguard::kProguardFamily, build_key);
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

// A ProGuard/R8 mapping: "#" comment lines, then "original.Class -> obfuscated:". A class name
// never starts with "{": what does is a source map's (looksLikeSourcemap), not a mapping.
bool looksLikeProguard(std::string_view head) {
  size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && head.substr(first, 3) == "\xef\xbb\xbf") first += 3;  // BOM
  if (first < head.size() && head[first] == '{') return false;
  while (!head.empty()) {
    size_t end = head.find('\n');
    std::string_view line = head.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() != '#') {
      return line.find(" -> ") != std::string_view::npos && line.back() == ':';
    }
    if (end == std::string_view::npos) break;
    head.remove_prefix(end + 1);
  }
  return false;
}

}  // namespace restack
