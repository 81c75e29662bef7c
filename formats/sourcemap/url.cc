#include "formats/sourcemap/url.h"

namespace restack::sourcemap {

std::string_view minifiedFileNameView(std::string_view url) {
  // Strip fragment and query first: a query may itself contain '/'.
  if (const size_t hash = url.find('#'); hash != std::string_view::npos) url = url.substr(0, hash);
  if (const size_t query = url.find('?'); query != std::string_view::npos) url = url.substr(0, query);
  if (const size_t slash = url.find_last_of("/\\"); slash != std::string_view::npos) {
    url = url.substr(slash + 1);
  }
  return url;
}

std::string minifiedFileName(std::string_view url) {
  return std::string(minifiedFileNameView(url));
}

namespace {
// Consumes a decimal number of at most 9 digits from the front of `text`.
std::optional<uint32_t> takeNumber(std::string_view& text) {
  size_t digits = 0;
  uint32_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    if (++digits > 9) return std::nullopt;
    value = value * 10 + static_cast<uint32_t>(text[digits - 1] - '0');
  }
  if (digits == 0) return std::nullopt;
  text.remove_prefix(digits);
  return value;
}
}  // namespace

std::optional<RamBundleName> parseRamBundleName(std::string_view name) {
  constexpr std::string_view kSuffix = ".js";
  if (!name.ends_with(kSuffix)) return std::nullopt;
  name.remove_suffix(kSuffix.size());
  RamBundleName out;
  if (name.starts_with("seg-")) {
    name.remove_prefix(4);
    auto segment = takeNumber(name);
    if (!segment) return std::nullopt;
    out.segment = *segment;
    if (!name.empty()) {
      if (name.front() != '_') return std::nullopt;
      name.remove_prefix(1);
      out.module = takeNumber(name);
      if (!out.module) return std::nullopt;
    }
  } else {
    out.module = takeNumber(name);
    if (!out.module) return std::nullopt;
  }
  if (!name.empty()) return std::nullopt;
  return out;
}

std::string servedFileName(std::string_view map_file_field, std::string_view upload_name) {
  std::string name = minifiedFileName(map_file_field);
  if (!name.empty()) return name;
  name = minifiedFileName(upload_name);
  constexpr std::string_view kMapSuffix = ".map";
  if (name.size() > kMapSuffix.size() && std::string_view(name).substr(name.size() - kMapSuffix.size()) == kMapSuffix) {
    name.resize(name.size() - kMapSuffix.size());
  }
  return name;
}

}  // namespace restack::sourcemap
