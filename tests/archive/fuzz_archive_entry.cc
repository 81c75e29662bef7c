#include "tests/archive/fuzz_entry.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/archive.h"
#include "formats/common/temp_dir.h"

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

}  // namespace restack::archive_test
