#include "formats/common/temp_dir.h"

#include <cstdlib>
#include <filesystem>

namespace restack {
namespace fs = std::filesystem;

Expected<TempDir> TempDir::create(const std::string& prefix, const std::string& in) {
  std::error_code error;
  fs::path base = in.empty() ? fs::temp_directory_path(error) : fs::path(in);
  if (error) base = "/tmp";
  std::string pattern = (base / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) return ioError("cannot create a temporary folder in " + base.string());
  return TempDir(pattern);
}

TempDir::~TempDir() {
  std::error_code ignored;
  if (!path_.empty()) fs::remove_all(path_, ignored);
}

}  // namespace restack
