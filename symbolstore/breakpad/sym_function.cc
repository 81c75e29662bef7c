#include "symbolstore/breakpad/sym_function.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "formats/native/demangle.h"

namespace restack::breakpad_store {
namespace {

using native_store::kNoString;
using native_store::StoredLine;
using native_store::StoredNode;
using native_store::StoredTile;

struct Interval {
  uint64_t begin;
  uint64_t end;
  uint32_t node;
};

// Innermost node per address: a map from interval start to node, painted over.
class Painter {
 public:
  Painter(uint64_t begin, uint64_t end) : end_(end) { starts_[begin] = 0; }

  void paint(uint64_t begin, uint64_t end, uint32_t node) {
    if (begin >= end) return;
    if (end < end_) {
      auto after = std::prev(starts_.upper_bound(end));
      starts_[end] = after->second;  // what was there resumes at `end`
    }
    starts_.erase(starts_.lower_bound(begin), starts_.lower_bound(end));
    starts_[begin] = node;
  }

  std::vector<StoredTile> tiles() const {
    std::vector<StoredTile> out;
    for (const auto& [begin, node] : starts_) {
      if (!out.empty() && out.back().node == node) continue;
      out.push_back({begin, node});
    }
    return out;
  }

 private:
  uint64_t end_;
  std::map<uint64_t, uint32_t> starts_;
};

// "#N}" at `at`: N, and the position after the brace.
std::optional<std::pair<uint64_t, size_t>> closureNumber(std::string_view name, size_t at) {
  if (at >= name.size() || name[at] != '#') return std::nullopt;
  size_t end = at + 1;
  uint64_t number = 0;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9' && end - at < 12) {
    number = number * 10 + static_cast<uint64_t>(name[end] - '0');
    ++end;
  }
  if (end == at + 1 || end >= name.size() || name[end] != '}' || number == 0) return std::nullopt;
  return std::pair(number, end + 1);
}

// LLVM numbers closures "", "0", "1", … where GNU says #1, #2, #3, ….
std::string llvmCount(uint64_t number) {
  return number == 1 ? std::string() : std::to_string(number - 2);
}

}  // namespace

std::string llvmStyleName(std::string_view name) {
  std::string text = native::demangleName(name);
  if (text.find('{') == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  std::string_view rest = text;
  constexpr std::string_view kLambda = "{lambda(";
  constexpr std::string_view kUnnamed = "{unnamed type";
  while (!rest.empty()) {
    if (rest.starts_with(kLambda)) {
      // Parameters run to the matching parenthesis.
      size_t depth = 1;
      size_t i = kLambda.size();
      for (; i < rest.size() && depth > 0; ++i) {
        if (rest[i] == '(') ++depth;
        if (rest[i] == ')') --depth;
      }
      if (depth == 0) {
        if (auto number = closureNumber(rest, i)) {
          out += "'lambda" + llvmCount(number->first) + "'";
          out.append(rest.substr(kLambda.size() - 1, i - (kLambda.size() - 1)));
          rest.remove_prefix(number->second);
          continue;
        }
      }
    } else if (rest.starts_with(kUnnamed)) {
      if (auto number = closureNumber(rest, kUnnamed.size())) {
        out += "'unnamed" + llvmCount(number->first) + "'";
        rest.remove_prefix(number->second);
        continue;
      }
    }
    out += rest.front();
    rest.remove_prefix(1);
  }
  return out;
}

Expected<native_store::FunctionRecord> buildFunctionRecord(const SymFunction& function, const SymStringIds& ids,
                                                           SymFunctionIssues& issues) {
  native_store::FunctionRecord record;
  record.begin = function.begin;
  record.end = function.end;
  auto clip = [&](uint64_t address, uint64_t size, Interval& out) {
    uint64_t begin = std::max(address, function.begin);
    uint64_t end = std::min(address + size, function.end);
    if (begin != address || end != address + size) ++issues.clipped_ranges;
    out.begin = begin;
    out.end = end;
    return begin < end;
  };

  // ---- inline tree: shallowest first, so that callers get the lower indices.
  std::vector<size_t> order(function.inlines.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(function.inlines[a].depth, a) < std::pair(function.inlines[b].depth, b);
  });
  StoredNode root;
  auto root_name = ids.name(function.name);
  if (!root_name) return root_name.error();
  root.name = *root_name;
  record.nodes.push_back(root);

  Painter painter(function.begin, function.end);
  // Ranges of the nodes of the previous depth, sorted by begin, to find callers.
  std::vector<Interval> callers;
  std::vector<Interval> current;
  uint32_t current_depth = 0;
  auto findCaller = [&](uint64_t address) -> uint32_t {
    auto it = std::upper_bound(callers.begin(), callers.end(), address,
                               [](uint64_t a, const Interval& interval) { return a < interval.begin; });
    if (it == callers.begin()) return UINT32_MAX;
    --it;
    return address < it->end ? it->node : UINT32_MAX;
  };
  auto closeDepth = [&]() {
    callers = std::move(current);
    current.clear();
    std::sort(callers.begin(), callers.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  };
  for (size_t index : order) {
    const SymInline& inlined = function.inlines[index];
    if (inlined.depth != current_depth) {
      // Depth 0 callers are the FUNC itself; a jump of several levels leaves no callers.
      closeDepth();
      if (inlined.depth != current_depth + 1) callers.clear();
      current_depth = inlined.depth;
    }
    StoredNode node;
    uint32_t self = static_cast<uint32_t>(record.nodes.size());
    node.parent = 0;
    if (inlined.depth > 0) {
      uint32_t caller = inlined.ranges.empty() ? UINT32_MAX : findCaller(inlined.ranges.front().address);
      if (caller == UINT32_MAX) {
        ++issues.orphan_inlines;
      } else {
        node.parent = caller;
      }
    }
    auto name = ids.origin(inlined.origin);
    if (!name) return name.error();
    node.name = *name;
    auto call_file = ids.file(inlined.call_file);
    if (!call_file) return call_file.error();
    node.call_file = *call_file;
    node.call_line = inlined.call_line;
    record.nodes.push_back(node);
    for (const breakpad::AddressRange& range : inlined.ranges) {
      Interval interval{};
      if (!clip(range.address, range.size, interval)) continue;
      interval.node = self;
      current.push_back(interval);
      painter.paint(interval.begin, interval.end, self);
    }
  }
  record.tiles = painter.tiles();

  // ---- lines: sorted, gaps answer "no line", equal neighbours merged.
  // dump_syms writes them sorted; others may not. Equal addresses keep their file order.
  std::vector<std::pair<uint64_t, size_t>> order_by_address;
  order_by_address.reserve(function.lines.size());
  for (size_t i = 0; i < function.lines.size(); ++i) order_by_address.emplace_back(function.lines[i].address, i);
  std::sort(order_by_address.begin(), order_by_address.end());
  std::vector<breakpad::LineRecord> lines;
  lines.reserve(function.lines.size());
  for (const auto& [address, index] : order_by_address) lines.push_back(function.lines[index]);
  auto push = [&](uint64_t begin, uint32_t file, uint32_t line) {
    if (!record.lines.empty()) {
      StoredLine& last = record.lines.back();
      if (last.file == file && last.line == line) return;
      if (last.begin == begin) {  // an empty earlier span: the later one wins
        last.file = file;
        last.line = line;
        return;
      }
    }
    record.lines.push_back({begin, file, line, 0});
  };
  uint64_t position = function.begin;
  for (const breakpad::LineRecord& line : lines) {
    Interval interval{};
    if (!clip(line.address, line.size, interval)) continue;
    if (interval.end <= position) continue;  // wholly covered by an earlier record
    if (interval.begin > position) push(position, kNoString, 0);
    auto file = ids.file(line.file);
    if (!file) return file.error();
    push(std::max(interval.begin, position), *file, line.line);
    position = interval.end;
  }
  if (position < function.end && !record.lines.empty()) push(position, kNoString, 0);
  return record;
}

}  // namespace restack::breakpad_store
