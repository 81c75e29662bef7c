#include "tests/archive/fuzz_entry.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/archive.h"
#include "formats/common/temp_dir.h"
#include "worker/kafka/upload_message.h"

namespace restack::archive_test {
namespace {
namespace fs = std::filesystem;

uint64_t bytesUnder(const std::string& folder) {
  uint64_t total = 0;
  std::error_code error;
  for (fs::recursive_directory_iterator it(folder, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error)) {
    std::error_code ignored;
    if (it->is_symlink(ignored)) std::abort();  // extraction never makes links
    if (it->is_regular_file(ignored)) total += it->file_size(ignored);
  }
  return total;
}

bool clean(const std::string& value, size_t limit) {
  return value.size() <= limit && value.find('\0') == std::string::npos;
}

}  // namespace

int fuzzArchiveOnce(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto dir = TempDir::create("restack-fuzz-");
  if (!dir) return 0;
  UnpackLimits limits;
  limits.max_bytes = 1 << 20;
  limits.max_ratio = 50;
  limits.max_zip_entries = 64;
  (void)decompressToFile(PackedInput{"", bytes}, Compression::kGzip, dir->path() + "/gzip", limits);
  (void)decompressToFile(PackedInput{"", bytes}, Compression::kZstd, dir->path() + "/zstd", limits);
  const std::string zip_folder = dir->path() + "/zip";
  std::error_code error;
  fs::create_directory(zip_folder, error);
  if (!error) (void)extractZip(PackedInput{"", bytes}, zip_folder, limits);
  // Each of the three stops at the limit (plus the last 64 KiB chunk it refused).
  if (bytesUnder(dir->path()) > 3 * (limits.max_bytes + (1 << 17))) std::abort();
  return 0;
}

int fuzzUploadMessageOnce(const uint8_t* data, size_t size) {
  static const char* const kNames[] = {"restack.kind",      "restack.app",      "restack.build_id", "restack.name",
                                       "restack.file_name", "restack.location", "traceparent"};
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const bool shared = size > 0 && (data[0] & 1);
  std::vector<std::string> parts;
  while (true) {
    size_t end = input.find('\xff');
    parts.emplace_back(input.substr(0, end));
    if (end == std::string_view::npos) break;
    input.remove_prefix(end + 1);
  }
  worker::Headers headers;
  for (size_t i = 1; i + 1 < parts.size(); i += 2) {
    std::string name = parts[i];
    if (name.size() == 1 && static_cast<unsigned char>(name[0]) < 7) name = kNames[static_cast<size_t>(name[0])];
    headers.emplace_back(std::move(name), parts[i + 1]);
  }
  auto upload = worker::decodeUploadMessage(parts[0], headers, shared);
  if (!upload) {
    if (upload.error().message().size() > 1000) std::abort();  // errors quote values cut short
    return 0;
  }
  const UploadMeta& meta = upload->meta;
  if (!clean(meta.app, worker::kMaxUploadHeaderBytes) || !clean(meta.build_id, worker::kMaxUploadHeaderBytes) ||
      !clean(meta.name, worker::kMaxUploadHeaderBytes) || !clean(upload->file_name, worker::kMaxUploadHeaderBytes) ||
      !clean(upload->location, worker::kMaxUploadLocationBytes) || meta.shared != shared) {
    std::abort();
  }
  // What it decoded encodes and decodes to the same upload.
  auto again = worker::decodeUploadMessage(parts[0], worker::encodeUploadHeaders(*upload), shared);
  if (!again || again->meta.kind != meta.kind || again->location != upload->location ||
      again->file_name != upload->file_name || again->meta.name != meta.name) {
    std::abort();
  }
  return 0;
}

}  // namespace restack::archive_test
