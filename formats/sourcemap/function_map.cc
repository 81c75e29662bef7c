#include "formats/sourcemap/function_map.h"

#include <algorithm>
#include <tuple>

#include "formats/sourcemap/vlq.h"

namespace restack::sourcemap {

const std::string* FunctionMap::enclosing(uint32_t line, uint32_t column) const {
  // Last entry at or before the position.
  auto after = std::upper_bound(entries.begin(), entries.end(), std::make_pair(line, column),
                                [](const std::pair<uint32_t, uint32_t>& position, const FunctionMapEntry& entry) {
                                  return position.first < entry.line ||
                                         (position.first == entry.line && position.second < entry.column);
                                });
  if (after == entries.begin()) return nullptr;
  const FunctionMapEntry& entry = *(after - 1);
  return entry.name < names.size() ? &names[entry.name] : nullptr;
}

std::string v8FunctionName(std::string_view metro_name) {
  const size_t hash = metro_name.rfind('#');
  std::string_view owner, member = metro_name;
  if (hash != std::string_view::npos && hash > 0) {
    owner = metro_name.substr(0, hash);
    member = metro_name.substr(hash + 1);
  }
  for (std::string_view accessor : {"get__", "set__"}) {
    // V8 prints accessors without their class: "get size".
    if (member.starts_with(accessor)) return std::string(accessor.substr(0, 3)) + " " + std::string(member.substr(5));
  }
  if (owner.empty()) return std::string(metro_name);
  if (member == "constructor") return std::string(owner);
  return std::string(owner) + "." + std::string(member);
}

Expected<FunctionMap> decodeFunctionMap(const std::vector<std::string>& names, std::string_view mappings) {
  FunctionMap map;
  map.names = names;
  int64_t line = 1, name = 0;
  size_t pos = 0;
  while (pos <= mappings.size()) {
    int64_t column = 0;
    while (pos < mappings.size() && mappings[pos] != ';') {
      if (mappings[pos] == ',') {
        ++pos;
        continue;
      }
      int64_t fields[3] = {0, 0, 0};
      int count = 0;
      while (true) {
        int64_t value = 0;
        const VlqResult result = decodeVlq(mappings, &pos, &value);
        if (result == VlqResult::kEnd) break;
        if (result != VlqResult::kOk) {
          return malformed(std::string("function map: ") + vlqResultText(result));
        }
        if (count == 3) return malformed("function map: an entry has more than 3 fields");
        fields[count++] = value;
      }
      if (count < 2) return malformed("function map: an entry has fewer than 2 fields");
      column += fields[0];
      name += fields[1];
      line += fields[2];
      if (column < 0 || column > 0x7fffffff || line < 1 || line > 0x7fffffff) {
        return malformed("function map: position out of range");
      }
      if (name < 0 || name >= static_cast<int64_t>(names.size())) {
        return malformed("function map: name index " + std::to_string(name) + " outside the " +
                         std::to_string(names.size()) + " names");
      }
      map.entries.push_back({static_cast<uint32_t>(line), static_cast<uint32_t>(column), static_cast<uint32_t>(name)});
    }
    if (pos >= mappings.size()) break;
    ++pos;
  }
  const auto byPosition = [](const FunctionMapEntry& a, const FunctionMapEntry& b) {
    return a.line < b.line || (a.line == b.line && a.column < b.column);
  };
  if (!std::is_sorted(map.entries.begin(), map.entries.end(), byPosition)) {
    std::sort(map.entries.begin(), map.entries.end(), [](const auto& a, const auto& b) {
      return std::tie(a.line, a.column, a.name) < std::tie(b.line, b.column, b.name);
    });
  }
  return map;
}

}  // namespace restack::sourcemap
