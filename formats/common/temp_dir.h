// A private temporary folder, removed with everything in it when the guard goes away.
#pragma once

#include <string>

#include "formats/common/status.h"

namespace restack {

class TempDir {
 public:
  // Creates "<base>/<prefix>XXXXXX"; an empty `base` is TMPDIR (/tmp when unset).
  static Expected<TempDir> create(const std::string& prefix, const std::string& base = {});
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace restack
