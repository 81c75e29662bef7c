#include "formats/stack/stack_line.h"

#include "formats/stack/text_scan.h"

namespace restack::stack {

const char* lineKindName(LineKind kind) {
  switch (kind) {
    case LineKind::kNative:
      return "native";
    case LineKind::kJavaFrame:
      return "java_frame";
    case LineKind::kJavaException:
      return "java_exception";
    case LineKind::kJavaMore:
      return "java_more";
    case LineKind::kJsFrame:
      return "js_frame";
    case LineKind::kBlank:
      return "blank";
    case LineKind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string normalizeDebugId(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '-') continue;
    if (!scan::isHexDigit(c)) return {};
    out.push_back(c >= 'A' && c <= 'F' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  return out;
}

StackLine parseStackLine(std::string_view line) {
  StackLine result;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  result.raw = std::string(line);
  size_t indent = 0;
  while (indent < line.size() && scan::isSpace(line[indent])) ++indent;
  result.indent = std::string(line.substr(0, indent));
  std::string_view trimmed = scan::trim(line);
  if (trimmed.empty()) {
    result.kind = LineKind::kBlank;
    return result;
  }
  // Order matters: Java frames start with "at ", like V8 frames; a V8 frame has a URL with ':'
  // line and column, which a Java frame never has inside its parentheses.
  if (auto js = parseJsFrameLine(trimmed)) {
    result.kind = LineKind::kJsFrame;
    result.data = std::move(*js);
  } else if (auto java = parseJavaFrameLine(trimmed)) {
    result.kind = LineKind::kJavaFrame;
    result.data = std::move(*java);
  } else if (auto native = parseNativeLine(trimmed)) {
    result.kind = LineKind::kNative;
    result.data = std::move(*native);
  } else if (auto more = parseJavaMoreLine(trimmed)) {
    result.kind = LineKind::kJavaMore;
    result.data = *more;
  } else if (auto exception = parseJavaExceptionLine(trimmed)) {
    result.kind = LineKind::kJavaException;
    result.data = std::move(*exception);
  }
  return result;
}

std::vector<StackLine> parseStack(std::string_view stack) {
  std::vector<StackLine> lines;
  while (!stack.empty()) {
    size_t end = stack.find('\n');
    std::string_view line = stack.substr(0, end);
    lines.push_back(parseStackLine(line));
    if (end == std::string_view::npos) break;
    stack.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace restack::stack
