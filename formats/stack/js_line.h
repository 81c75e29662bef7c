// JavaScript stack frame lines, the "js_frame" syntax: V8 (Chrome, node, Hermes), Firefox,
// Safari/JSC, and the frames of Hermes crash reports. Examples in stack_line.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "formats/stack/stack_line.h"

namespace restack::stack {

enum class JsStyle { kV8, kFirefox, kHermes };

struct JsFrameLine {
  JsStyle style = JsStyle::kV8;
  // May be empty ("at url:line:col", "@url:line:col"). Firefox's async cause stays in it as
  // printed ("promise callback*run"; is_async tells).
  std::string function;
  std::string url;               // as printed; empty for JavaScriptCore's "eval code@" or "fn@"
  uint32_t line = 0;             // 1-based as printed; 0 when the frame prints no position
  uint32_t column = 0;           // 1-based as printed (Hermes bytecode: the bytecode offset)
  bool is_async = false;         // V8's "at async fn (…)", SpiderMonkey's "<cause>*fn@…"
  bool is_constructor = false;   // "at new Foo (…)"
  bool hermes_bytecode = false;  // "(address at …)": column is a bytecode offset
  // Code made from a string at run time. V8: "at eval (eval at fn (url:l:c), <anonymous>:l:c)",
  // restored at the eval call (url, line, column). SpiderMonkey: "fn@url line 2 > eval:1:5" (or
  // "> Function"), which gives the call's line only: no url, line 0 (no script position).
  bool is_eval = false;
  // Engine code with no script position: "at Array.map (<anonymous>)", "at fn (native)", a
  // Promise combinator's element "at async Promise.all (index 0)", JavaScriptCore's
  // "forEach@[native code]", Hermes {"NativeCode":true}. `url` holds what was printed; there is
  // nothing to restore.
  bool builtin = false;
  // Hermes crash reports (the VM's crash callstack, one JSON object per frame, as Hermes writes
  // it) give (SegmentID, FunctionID, ByteCodeOffset) instead of a position:
  //   {"StackFrameRegOffs":"12","FunctionID":3,"ByteCodeOffset":20,"SourceURL":"x.bundle",
  //    "CJSModuleOffset":0}
  // "SegmentID" is accepted for "CJSModuleOffset" (newer Hermes); 0 when neither is printed.
  // `url` is SourceURL ("" when absent); line and column stay 0. A {"NativeCode":true} frame
  // comes back with url "native" (no script position).
  bool hermes_function_offset = false;
  uint32_t segment_id = 0;
  uint32_t function_id = 0;
  uint32_t bytecode_offset = 0;
};

// SpiderMonkey's async cause with its '*', as printed ("promise callback*"); empty for any other
// frame.
inline std::string_view asyncCause(const JsFrameLine& frame) {
  const std::string_view function = frame.function;
  if (!frame.is_async || frame.style != JsStyle::kFirefox) return {};
  return function.substr(0, function.rfind('*') + 1);
}

// The function's name without SpiderMonkey's async cause: "promise callback*run" -> "run".
inline std::string_view functionName(const JsFrameLine& frame) {
  return std::string_view(frame.function).substr(asyncCause(frame).size());
}

// Returns std::nullopt when the (trimmed) line is not a JS frame. Exposed for tests and fuzzing.
std::optional<JsFrameLine> parseJsFrameLine(std::string_view trimmed);

extern const LineSyntaxOf<JsFrameLine> kJsFrameLine;

inline const JsFrameLine* asJsFrame(const StackLine& line) {
  return kJsFrameLine.payloadOf(line);
}

}  // namespace restack::stack
