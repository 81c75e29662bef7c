#include "worker/kafka/scratch.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <system_error>

namespace restack::worker {

namespace fs = std::filesystem;

std::string scratchDirFor(const config::Config& config) {
  std::error_code error;
  fs::path store = fs::absolute(config.store.path, error);
  if (error) store = config.store.path;
  // FNV-1a, 64 bits: stable across builds and platforms, unlike std::hash.
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : store.lexically_normal().string()) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char name[40];
  std::snprintf(name, sizeof name, "restack-scratch-%016llx", static_cast<unsigned long long>(hash));
  fs::path base = fs::temp_directory_path(error);
  if (error) base = "/tmp";
  return (base / name).string();
}

Expected<uint64_t> resetScratchDir(const std::string& dir) {
  std::error_code error;
  uint64_t removed = 0;
  if (fs::exists(dir, error)) {
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      std::error_code entry_error;
      fs::remove_all(entry.path(), entry_error);
      if (entry_error) {
        return ioError("cannot empty the scratch folder " + dir + ": " + entry.path().string() + ": " +
                       entry_error.message());
      }
      ++removed;
    }
    if (error) return ioError("cannot list the scratch folder " + dir + ": " + error.message());
  }
  fs::create_directories(dir, error);
  if (error) return ioError("cannot create the scratch folder " + dir + ": " + error.message());
  return removed;
}

}  // namespace restack::worker
