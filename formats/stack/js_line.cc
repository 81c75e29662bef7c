// JavaScript stack frame lines: V8 (Chrome, node, Hermes), Firefox, Safari/JSC.
#include "formats/stack/stack_line.h"
#include "formats/stack/text_scan.h"

namespace restack::stack {
namespace {

// Splits "url:line:col" (or "url:line") from the right.
bool splitLocation(std::string_view location, JsFrameLine& frame) {
  size_t last = location.rfind(':');
  if (last == std::string_view::npos) return false;
  auto tail = scan::parseU32(location.substr(last + 1));
  if (!tail) return false;
  std::string_view head = location.substr(0, last);
  size_t previous = head.rfind(':');
  if (previous != std::string_view::npos) {
    if (auto line = scan::parseU32(head.substr(previous + 1))) {
      frame.line = *line;
      frame.column = *tail;
      frame.url = std::string(head.substr(0, previous));
      return !frame.url.empty();
    }
  }
  frame.line = *tail;  // Safari sometimes prints no column
  frame.url = std::string(head);
  return !frame.url.empty();
}

std::optional<JsFrameLine> parseV8(std::string_view text) {
  JsFrameLine frame;
  frame.style = JsStyle::kV8;
  text = scan::trimLeft(text.substr(3));  // "at "
  if (text.starts_with("async ")) {
    frame.is_async = true;
    text = scan::trimLeft(text.substr(6));
  }
  if (text.starts_with("new ")) {
    frame.is_constructor = true;
    text = scan::trimLeft(text.substr(4));
  }
  std::string_view location = text;
  if (text.ends_with(')')) {
    size_t open = text.find(" (");
    if (open == std::string_view::npos) return std::nullopt;
    frame.function = std::string(text.substr(0, open));
    location = text.substr(open + 2, text.size() - open - 3);
  }
  if (location.starts_with("eval at ")) {
    // "eval at fn (url:l:c), <anonymous>:l:c": the code came from eval; keep the caller's site.
    frame.is_eval = true;
    size_t open = location.find('(');
    size_t close = location.find(')', open == std::string_view::npos ? 0 : open);
    if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
    location = location.substr(open + 1, close - open - 1);
  }
  if (location.starts_with("address at ")) {
    frame.hermes_bytecode = true;
    frame.style = JsStyle::kHermes;
    location.remove_prefix(11);
  }
  if (location.find(' ') != std::string_view::npos) return std::nullopt;
  if (!splitLocation(location, frame)) return std::nullopt;
  return frame;
}

std::optional<JsFrameLine> parseFirefox(std::string_view text) {
  size_t at = text.find('@');
  if (at == std::string_view::npos) return std::nullopt;
  JsFrameLine frame;
  frame.style = JsStyle::kFirefox;
  frame.function = std::string(text.substr(0, at));
  std::string_view location = text.substr(at + 1);
  if (location.find(' ') != std::string_view::npos) return std::nullopt;
  // Java's "Object@1a2b" or e-mail-like text has no ":line" suffix and is rejected here.
  if (!splitLocation(location, frame)) return std::nullopt;
  if (frame.function.find_first_of("() ") != std::string::npos && frame.function != "global code") {
    // Safari prints "global code@…"; other spaces/parentheses mean this is not a frame.
    if (frame.function.find(' ') != std::string::npos) return std::nullopt;
  }
  return frame;
}

}  // namespace

std::optional<JsFrameLine> parseJsFrameLine(std::string_view trimmed) {
  if (trimmed.starts_with("at ")) return parseV8(trimmed);
  return parseFirefox(trimmed);
}

}  // namespace restack::stack
