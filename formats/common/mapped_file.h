// Read-only memory mapping of a whole file, so that multi-GB symbol files are parsed without
// being copied into the heap (pages are faulted in and dropped by the kernel as needed).
#pragma once

#include <string>
#include <string_view>

#include "formats/common/status.h"

namespace restack {

class MappedFile {
 public:
  static Expected<MappedFile> open(const std::string& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  void release();
  std::string path_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Reads a whole (small) file into memory.
Expected<std::string> readFile(const std::string& path);

}  // namespace restack
