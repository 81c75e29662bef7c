#include "formats/stack/stack_line.h"

#include <cstring>

#include "formats/stack/text_scan.h"

namespace restack::stack {

constinit const LineSyntax kBlankLine("blank", false);
constinit const LineSyntax kUnknownLine("unknown", false);

std::string normalizeDebugId(std::string_view text) {
  // Most ids arrive as they are kept (lowercase hex, no dashes; Android build ids always): one
  // pass that only checks, then a copy.
  bool plain = true;
  for (char c : text) plain &= (c >= '0' && c <= '9') | (c >= 'a' && c <= 'f');
  if (plain) return std::string(text);
  // Written in place and cut to length once: a push_back per digit checked the capacity each time.
  std::string out(text.size(), '\0');
  size_t size = 0;
  for (char c : text) {
    if (c == '-') continue;
    if (!scan::isHexDigit(c)) return {};
    out[size++] = c >= 'A' && c <= 'F' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  out.resize(size);
  return out;
}

namespace {

// Reads `line` into `result`, a default StackLine: parseStack reads each line into its place in
// the vector instead of moving a returned one there.
void parseStackLineInto(std::string_view line, StackLine& result) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // `result` is fresh: appending to its empty strings skips assign's handling of overlapping text.
  result.raw.append(line);
  size_t indent = 0;
  while (indent < line.size() && scan::isSpace(line[indent])) ++indent;
  result.indent.append(line.substr(0, indent));
  std::string_view trimmed = scan::trim(line);
  if (trimmed.empty()) {
    result.syntax = &kBlankLine;
    return;
  }
  for (const LineSyntax* syntax : lineSyntaxes()) {
    if (syntax->parse(trimmed, result)) break;
  }
}

}  // namespace

StackLine parseStackLine(std::string_view line) {
  StackLine result;
  parseStackLineInto(line, result);
  return result;
}

std::vector<StackLine> parseStack(std::string_view stack) {
  std::vector<StackLine> lines;
  // One allocation per stack instead of one per doubling, each of which moves every line. The
  // lines are counted with memchr: std::count over the bytes compiles to a loop of about five
  // instructions a byte, which cost more than parsing a native line.
  size_t count = 1;
  for (const char *at = stack.data(), *end = at + stack.size();
       (at = static_cast<const char*>(std::memchr(at, '\n', static_cast<size_t>(end - at)))) != nullptr; ++at) {
    ++count;
  }
  lines.reserve(count);
  while (!stack.empty()) {
    size_t end = stack.find('\n');
    std::string_view line = stack.substr(0, end);
    parseStackLineInto(line, lines.emplace_back());
    if (end == std::string_view::npos) break;
    stack.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace restack::stack
