#include "formats/sourcemap/url.h"

namespace restack::sourcemap {

std::string minifiedFileName(std::string_view url) {
  // Strip fragment and query first: a query may itself contain '/'.
  if (const size_t hash = url.find('#'); hash != std::string_view::npos) url = url.substr(0, hash);
  if (const size_t query = url.find('?'); query != std::string_view::npos) url = url.substr(0, query);
  if (const size_t slash = url.find_last_of("/\\"); slash != std::string_view::npos) {
    url = url.substr(slash + 1);
  }
  return std::string(url);
}

std::string servedFileName(std::string_view map_file_field, std::string_view upload_name) {
  std::string name = minifiedFileName(map_file_field);
  if (!name.empty()) return name;
  name = minifiedFileName(upload_name);
  constexpr std::string_view kMapSuffix = ".map";
  if (name.size() > kMapSuffix.size() &&
      std::string_view(name).substr(name.size() - kMapSuffix.size()) == kMapSuffix) {
    name.resize(name.size() - kMapSuffix.size());
  }
  return name;
}

}  // namespace restack::sourcemap
