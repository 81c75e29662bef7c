#include "formats/sourcemap/scopes.h"

#include <optional>

#include "formats/sourcemap/vlq.h"

namespace restack::sourcemap {
namespace {

constexpr uint64_t kTagEmpty = 0, kTagScopeStart = 1, kTagScopeEnd = 2, kTagRangeStart = 4, kTagRangeEnd = 5;
constexpr uint64_t kScopeHasName = 1, kScopeHasKind = 2, kScopeIsStackFrame = 4;
constexpr uint64_t kRangeHasLine = 1, kRangeHasDefinition = 2;

class ItemReader {
 public:
  explicit ItemReader(std::string_view text) : text_(text) {}

  bool atItemEnd() const { return pos_ >= text_.size() || text_[pos_] == ','; }
  bool done() const { return pos_ >= text_.size(); }
  // Skips what is left of the current item and its ','.
  void nextItem() {
    while (pos_ < text_.size() && text_[pos_] != ',') ++pos_;
    if (pos_ < text_.size()) ++pos_;
  }
  Expected<uint64_t> unsignedValue() {
    uint64_t value = 0;
    for (int shift = 0;; shift += 5) {
      if (pos_ >= text_.size() || text_[pos_] == ',') return malformed("\"scopes\": a value is cut short");
      const int digit = base64DigitValue(text_[pos_++]);
      if (digit < 0) return malformed("\"scopes\": invalid base64 digit");
      if (shift > 30) return malformed("\"scopes\": a value exceeds 32 bits");
      value |= static_cast<uint64_t>(digit & 31) << shift;
      if ((digit & 32) == 0) return value;
    }
  }
  Expected<int64_t> signedValue() {
    auto raw = unsignedValue();
    if (!raw) return raw.error();
    const int64_t magnitude = static_cast<int64_t>(*raw >> 1);
    return (*raw & 1) ? -magnitude : magnitude;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

struct OriginalScope {
  std::optional<uint32_t> name;  // into `names`
  bool stack_frame = false;
};

}  // namespace

Expected<FunctionMap> decodeScopesFunctionMap(std::string_view scopes, const std::vector<std::string>& names) {
  FunctionMap map;
  map.names.emplace_back(kModuleCodeName);
  std::vector<uint32_t> name_slot(names.size(), UINT32_MAX);  // names index -> map.names index
  auto slot = [&](uint32_t index) {
    if (name_slot[index] == UINT32_MAX) {
      name_slot[index] = static_cast<uint32_t>(map.names.size());
      map.names.push_back(names[index]);
    }
    return name_slot[index];
  };
  auto add = [&](uint32_t line, uint32_t column, uint32_t name) {
    if (!map.entries.empty() && map.entries.back().line == line + 1 && map.entries.back().column == column) {
      map.entries.back().name = name;  // same position: the later item wins
    } else {
      map.entries.push_back({line + 1, column, name});
    }
  };

  std::vector<OriginalScope> original;  // every scope start, in order (what DEFINITION indexes)
  size_t open_scopes = 0;
  int64_t scope_name = 0;
  std::vector<uint32_t> ranges;  // open generated ranges: the function-map name of each
  int64_t range_line = 0, range_column = 0, definition = 0;

  ItemReader reader(scopes);
  add(0, 0, 0);
  while (!reader.done()) {
    auto tag = reader.unsignedValue();
    if (!tag) return tag.error();
    if (*tag == kTagScopeStart || *tag == kTagScopeEnd) {
      uint64_t flags = 0;
      if (*tag == kTagScopeStart) {
        auto value = reader.unsignedValue();
        if (!value) return value.error();
        flags = *value;
      }
      // The original scope's position: not needed to name generated positions.
      for (int field = 0; field < 2; ++field) {
        auto position = reader.unsignedValue();
        if (!position) return position.error();
      }
      if (*tag == kTagScopeStart) {
        OriginalScope scope;
        scope.stack_frame = flags & kScopeIsStackFrame;
        if (flags & kScopeHasName) {
          auto delta = reader.signedValue();
          if (!delta) return delta.error();
          scope_name += *delta;
          if (scope_name < 0 || scope_name >= static_cast<int64_t>(names.size())) {
            return malformed("\"scopes\": scope name index " + std::to_string(scope_name) + " outside the " +
                             std::to_string(names.size()) + " names");
          }
          scope.name = static_cast<uint32_t>(scope_name);
        }
        if (flags & kScopeHasKind) {
          auto kind = reader.signedValue();  // "Function", "Block", …: the stack-frame flag says enough
          if (!kind) return kind.error();
        }
        original.push_back(scope);
        ++open_scopes;
      } else {
        if (open_scopes == 0) return malformed("\"scopes\": an original scope ends that never started");
        --open_scopes;
      }
    } else if (*tag == kTagRangeStart) {
      auto flags = reader.unsignedValue();
      if (!flags) return flags.error();
      uint64_t line = 0;
      if (*flags & kRangeHasLine) {
        auto value = reader.unsignedValue();
        if (!value) return value.error();
        line = *value;
      }
      auto column = reader.unsignedValue();
      if (!column) return column.error();
      range_line += static_cast<int64_t>(line);
      range_column = line == 0 ? range_column + static_cast<int64_t>(*column) : static_cast<int64_t>(*column);
      uint32_t name = ranges.empty() ? 0 : ranges.back();
      if (*flags & kRangeHasDefinition) {
        auto delta = reader.signedValue();
        if (!delta) return delta.error();
        definition += *delta;
        if (definition < 0 || definition >= static_cast<int64_t>(original.size())) {
          return malformed("\"scopes\": definition " + std::to_string(definition) + " names no original scope");
        }
        const OriginalScope& scope = original[static_cast<size_t>(definition)];
        if (scope.stack_frame && scope.name) name = slot(*scope.name);
      }
      if (range_line > 0x7fffffff || range_column > 0x7fffffff) return malformed("\"scopes\": position out of range");
      ranges.push_back(name);
      add(static_cast<uint32_t>(range_line), static_cast<uint32_t>(range_column), name);
    } else if (*tag == kTagRangeEnd) {
      auto first = reader.unsignedValue();
      if (!first) return first.error();
      uint64_t line = 0, column = *first;
      if (!reader.atItemEnd()) {
        auto second = reader.unsignedValue();
        if (!second) return second.error();
        line = *first;
        column = *second;
      }
      range_line += static_cast<int64_t>(line);
      range_column = line == 0 ? range_column + static_cast<int64_t>(column) : static_cast<int64_t>(column);
      if (ranges.empty()) return malformed("\"scopes\": a generated range ends that never started");
      if (range_line > 0x7fffffff || range_column > 0x7fffffff) return malformed("\"scopes\": position out of range");
      ranges.pop_back();
      add(static_cast<uint32_t>(range_line), static_cast<uint32_t>(range_column), ranges.empty() ? 0 : ranges.back());
    } else if (*tag == kTagEmpty) {
      // sources[n] has no scope tree
    }
    // Variables, bindings, call sites, vendor extensions and unknown tags carry nothing Restack uses.
    reader.nextItem();
  }
  if (open_scopes != 0 || !ranges.empty()) return malformed("\"scopes\": a scope or range is never closed");
  return map;
}

}  // namespace restack::sourcemap
