// JavaScript stack frame lines: V8 (Chrome, node, Hermes), Firefox, Safari/JSC, and the frames of
// Hermes crash reports ((SegmentID, FunctionID, ByteCodeOffset) JSON objects; see stack_line.h).
#include "formats/stack/js_line.h"
#include "formats/stack/text_scan.h"

namespace restack::stack {
namespace {

// "url:line:column" split from the right; nullopt unless it ends with both numbers (the url may
// be empty).
struct LineAndColumn {
  std::string_view url;
  uint32_t line = 0;
  uint32_t column = 0;
};
std::optional<LineAndColumn> splitLineAndColumn(std::string_view location) {
  const size_t last = location.rfind(':');
  if (last == std::string_view::npos || last == 0) return std::nullopt;
  auto column = scan::parseU32(location.substr(last + 1));
  const size_t previous = location.rfind(':', last - 1);
  if (!column || previous == std::string_view::npos) return std::nullopt;
  auto line = scan::parseU32(location.substr(previous + 1, last - previous - 1));
  if (!line) return std::nullopt;
  return LineAndColumn{location.substr(0, previous), *line, *column};
}

// Splits "url:line:col" (or "url:line", unless `column_required`) from the right.
bool splitLocation(std::string_view location, JsFrameLine& frame, bool column_required = false) {
  if (auto position = splitLineAndColumn(location)) {
    frame.line = position->line;
    frame.column = position->column;
    frame.url = std::string(position->url);
    return !frame.url.empty();
  }
  if (column_required) return false;
  // Safari sometimes prints no column.
  const size_t last = location.rfind(':');
  if (last == std::string_view::npos || last == 0) return false;
  auto line = scan::parseU32(location.substr(last + 1));
  if (!line) return false;
  frame.line = *line;
  frame.url = std::string(location.substr(0, last));
  return true;
}

// V8's frame of a Promise combinator waiting on one of its elements: "at async Promise.all (index 0)".
bool isPromiseElement(std::string_view location) {
  return location.starts_with("index ") && scan::parseU32(location.substr(6)).has_value();
}

// JavaScriptCore's names for code outside any function: a script's, a module's, eval'd code's.
bool isTopLevelCode(std::string_view function) {
  return function == "global code" || function == "module code" || function == "eval code";
}

// What SpiderMonkey writes before '*' on the first frame after an async boundary ("async",
// "promise callback", "setTimeout handler", "EventListener.handleEvent"): words, spaces, dots.
bool isAsyncCause(std::string_view cause) {
  if (cause.empty()) return false;
  for (char c : cause) {
    if (!(scan::isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ' ' || c == '.' || c == '_'))
      return false;
  }
  return true;
}

// SpiderMonkey's name of a getter or setter: "get size", "set size".
bool isAccessorName(std::string_view name) {
  if (!name.starts_with("get ") && !name.starts_with("set ")) return false;
  name.remove_prefix(4);
  return !name.empty() && name.find(' ') == std::string_view::npos;
}

// An absolute file path as node prints a script's location: "/srv/app.js", "C:\app\main.js".
// Command-line engines print one as it is, spaces and parentheses included (browsers print URLs,
// which have neither).
bool isFilePath(std::string_view location) {
  if (location.starts_with('/')) return true;
  const bool drive =
      location.size() > 2 && ((location[0] >= 'A' && location[0] <= 'Z') || (location[0] >= 'a' && location[0] <= 'z'));
  return drive && location[1] == ':' && (location[2] == '\\' || location[2] == '/');
}

// The rest of a SpiderMonkey eval location after its script: " line <n> > eval" (or
// "> Function") once or more, then ":<line>:<column>".
bool isEvalChain(std::string_view rest) {
  if (!rest.starts_with(" line ")) return false;
  while (rest.starts_with(" line ")) {
    rest.remove_prefix(6);
    const size_t arrow = rest.find(" > ");
    if (arrow == std::string_view::npos || !scan::parseU32(rest.substr(0, arrow))) return false;
    rest.remove_prefix(arrow + 3);
    if (rest.starts_with("eval")) {
      rest.remove_prefix(4);
    } else if (rest.starts_with("Function")) {
      rest.remove_prefix(8);
    } else {
      return false;
    }
  }
  // ":<line>:<column>", the position inside the generated code.
  if (!rest.starts_with(':')) return false;
  rest.remove_prefix(1);
  const size_t colon = rest.find(':');
  return colon != std::string_view::npos && scan::parseU32(rest.substr(0, colon)) &&
         scan::parseU32(rest.substr(colon + 1));
}

// SpiderMonkey's location of code made from a string at run time, by eval or `new Function`:
// "<script> line <n> > eval:<line>:<column>" ("Function" for `new Function`), with a further
// " line <n> > eval" for each eval nested in such code ("app.js line 2 > eval line 1 > eval:1:5").
// The script is a URL, or a file path that may hold spaces (and " line " itself): the chain
// starts at the first " line " after which the rest reads as one.
bool isSpiderMonkeyEvalLocation(std::string_view location) {
  for (size_t link = location.find(" line "); link != std::string_view::npos;
       link = location.find(" line ", link + 1)) {
    const std::string_view script = location.substr(0, link);
    if (script.empty() || (script.find(' ') != std::string_view::npos && !isFilePath(script))) return false;
    if (isEvalChain(location.substr(link))) return true;
  }
  return false;
}

// A function name JavaScriptCore prints for code that has no URL ("fn@", eval'd or built from a
// string): identifier bytes and dots only, so that no other text ending in '@' reads as a frame.
bool isPlainName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(scan::isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '.' ||
          static_cast<unsigned char>(c) >= 0x80))
      return false;
  }
  return true;
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
  const bool parenthesized = text.ends_with(')');
  if (parenthesized) {
    size_t open = text.find(" (");
    if (open == std::string_view::npos) return std::nullopt;
    frame.function = std::string(text.substr(0, open));
    location = text.substr(open + 2, text.size() - open - 3);
  }
  if (location.starts_with("eval at ")) {
    // "eval at fn (url:l:c), <anonymous>:l:c": the code came from eval; keep the caller's site.
    // Eval'd code that evals again nests the sites: "eval at g (eval at f (url:l:c)), …"; the
    // last "eval at" names the first eval's call, the only site in a script file. That site ends
    // at the first ')' after its ":line:column" (a file path may hold parentheses of its own).
    frame.is_eval = true;
    const size_t open = location.find(" (", location.rfind("eval at "));
    if (open == std::string_view::npos) return std::nullopt;
    std::string_view site = location.substr(open + 2);
    size_t close = site.find(')');
    while (close != std::string_view::npos && !splitLineAndColumn(site.substr(0, close))) {
      close = site.find(')', close + 1);
    }
    if (close == std::string_view::npos) return std::nullopt;
    location = site.substr(0, close);
  }
  if (location.starts_with("address at ")) {
    frame.hermes_bytecode = true;
    frame.style = JsStyle::kHermes;
    location.remove_prefix(11);
  }
  if (!frame.function.empty() && (location == "<anonymous>" || location == "native" || isPromiseElement(location))) {
    frame.builtin = true;
    frame.url = std::string(location);
    return frame;
  }
  // node and Electron print a script's file path as it is, spaces included
  // (`at f (C:\Program Files\App\main.js:1:2)`, and `at /opt/My App/main.js:1:2` for an
  // anonymous function): the location ends at ":line:column". Elsewhere a space ends the frame:
  // browsers percent-encode URLs, so "at the time 12:30:45" is text that only begins like a frame.
  if (location.find(' ') != std::string_view::npos && !parenthesized && !isFilePath(location)) return std::nullopt;
  if (location.starts_with(' ')) return std::nullopt;
  // V8 prints a line and a column; "at a.b.c (SourceFile:12)" is a Java frame as Play Console
  // prints it (java_line.cc).
  if (!splitLocation(location, frame, /*column_required=*/true)) return std::nullopt;
  return frame;
}

std::optional<JsFrameLine> parseFirefox(std::string_view text) {
  size_t at = text.find('@');
  if (at == std::string_view::npos) return std::nullopt;
  JsFrameLine frame;
  frame.style = JsStyle::kFirefox;
  // The function as printed, an async cause included ("promise callback*run"): the restored
  // text and grouping read it as before; only the checks below look past the cause.
  std::string_view name = text.substr(0, at);
  if (size_t star = name.rfind('*'); star != std::string_view::npos && isAsyncCause(name.substr(0, star))) {
    frame.is_async = true;
    name.remove_prefix(star + 1);
  }
  frame.function = std::string(text.substr(0, at));
  std::string_view location = text.substr(at + 1);
  if (location == "[native code]") {  // JavaScriptCore's engine code ("forEach@[native code]")
    frame.builtin = true;
    frame.url = std::string(location);
    return frame;
  }
  // Spaces and parentheses mean this is not a frame, but in JavaScriptCore's "global code@…"
  // (likewise "module code", "eval code") and in SpiderMonkey's accessors ("get size@…").
  if (name.find(' ') != std::string_view::npos && !isTopLevelCode(name) && !isAccessorName(name)) return std::nullopt;
  if (isSpiderMonkeyEvalLocation(location)) {
    // The position is inside code made at run time, which no source map covers, and the call
    // that made it is given by its line alone: no script position, like JavaScriptCore's
    // "eval code@" below. The raw line, printed as it came, still names the script.
    frame.is_eval = true;
    return frame;
  }
  if (location.empty()) {
    // JavaScriptCore prints code that has no URL (eval'd, or from a string) as "eval code@" or
    // "fn@": a frame with no script position (line 0), nothing to look up.
    if (!isTopLevelCode(name) && !isPlainName(name)) return std::nullopt;
    return frame;
  }
  // A space ends the frame, but in a file path as the command-line shells print it
  // (`jsc` and SpiderMonkey's: "f@/opt/My App/main.js:1:2"): the location ends at ":line:column".
  if (location.find(' ') != std::string_view::npos && !isFilePath(location)) return std::nullopt;
  // Java's "Object@1a2b" or e-mail-like text has no ":line" suffix and is rejected here.
  if (!splitLocation(location, frame)) return std::nullopt;
  return frame;
}

// One flat JSON object of a Hermes crash callstack (see JsFrameLine). Only the shapes Hermes
// writes are accepted: string keys, values that are numbers, strings, true, false or null.
std::optional<JsFrameLine> parseHermesCrashFrame(std::string_view text) {
  if (!text.starts_with('{') || !text.ends_with('}')) return std::nullopt;
  text = scan::trim(text.substr(1, text.size() - 2));
  // Reads a JSON string at the front of `text` (escapes kept undecoded but skipped correctly).
  auto takeString = [&text](std::string_view* out) {
    if (text.empty() || text.front() != '"') return false;
    size_t end = 1;
    while (end < text.size() && text[end] != '"') end += text[end] == '\\' ? 2 : 1;
    if (end >= text.size()) return false;
    *out = text.substr(1, end - 1);
    text = scan::trimLeft(text.substr(end + 1));
    return true;
  };
  JsFrameLine frame;
  frame.style = JsStyle::kHermes;
  bool has_function = false, has_offset = false, native_code = false;
  while (!text.empty()) {
    std::string_view key, string_value;
    if (!takeString(&key) || text.empty() || text.front() != ':') return std::nullopt;
    text = scan::trimLeft(text.substr(1));
    std::optional<uint32_t> number;
    if (!text.empty() && text.front() == '"') {
      if (!takeString(&string_value)) return std::nullopt;
      number = scan::parseU32(string_value);  // some writers quote numbers ("StackFrameRegOffs")
    } else {
      size_t end = 0;
      while (end < text.size() && text[end] != ',' && !scan::isSpace(text[end])) ++end;
      const std::string_view literal = text.substr(0, end);
      text = scan::trimLeft(text.substr(end));
      if (literal == "true")
        native_code = native_code || key == "NativeCode";
      else if (literal != "false" && literal != "null" && !(number = scan::parseU32(literal)))
        return std::nullopt;
    }
    if (key == "FunctionID" || key == "ByteCodeOffset" || key == "CJSModuleOffset" || key == "SegmentID") {
      if (!number) return std::nullopt;
      if (key == "FunctionID") {
        frame.function_id = *number;
        has_function = true;
      } else if (key == "ByteCodeOffset") {
        frame.bytecode_offset = *number;
        has_offset = true;
      } else {
        frame.segment_id = *number;
      }
    } else if (key == "SourceURL") {
      frame.url = std::string(string_value);
    }
    if (!text.empty()) {
      if (text.front() != ',') return std::nullopt;
      text = scan::trimLeft(text.substr(1));
    }
  }
  if (native_code) {
    frame.url = "native";
    frame.builtin = true;
    return frame;
  }
  if (!has_function || !has_offset) return std::nullopt;
  frame.hermes_function_offset = true;
  return frame;
}

}  // namespace

std::optional<JsFrameLine> parseJsFrameLine(std::string_view trimmed) {
  if (trimmed.starts_with('{')) return parseHermesCrashFrame(trimmed);
  if (trimmed.starts_with("at ")) return parseV8(trimmed);
  return parseFirefox(trimmed);
}

// Every payload fits in the line (no allocation per line beyond its strings).
static_assert(sizeof(JsFrameLine) <= LinePayload::kInlineBytes);

constinit const LineSyntaxOf<JsFrameLine> kJsFrameLine("js_frame", true, parseJsFrameLine);

}  // namespace restack::stack
