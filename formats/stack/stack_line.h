// Raw stack lines: detection and parsing of the five stack kinds (docs/design.md §1).
//
// One line of a raw stack becomes one `StackLine`. Detection looks only at the line itself, so
// an Android stack can mix Java and native lines. Worked examples:
//
//   "MDAP_testDemo9  0x00000001079b59d3 0x1079b3000 + 10707 [8c17697f-2e84-39e5-b491-fcf5169106ff]"
//     -> kNative, module "MDAP_testDemo9", address 10707 (offset from the image's __TEXT),
//        debug_id "8c17697f2e8439e5b491fcf5169106ff"
//   "3   MyApp   0x0000000104a1c3e4 0x104a14000 + 33764"            (Apple crash report)
//     -> kNative, frame_index 3, module "MyApp", address 33764, no debug id (the report's
//        "Binary Images" section names it: formats/crash_report/crash_report.h adds it)
//   "pc 0x0000000000010d78 libapmDemo.so [arm64-v8a::ba78e30f9664d0150fba525ab5981b19]"
//     -> kNative, address 0x10d78, module "libapmDemo.so", abi "arm64-v8a", debug_id "ba78…"
//   "#00 pc 000000000004a6c8  /system/lib64/libc.so (abort+164) (BuildId: 1f2e…)" (tombstone)
//     -> kNative, frame_index 0, address 0x4a6c8, symbol_hint "abort+164", debug_id "1f2e…"
//   "\tat tg.a.e(MethodRecorder.kt:1)"          -> kJavaFrame
//   "Caused by: a.b.c: boom"                    -> kJavaException
//   "\t... 12 more"                             -> kJavaMore
//   "    at n.capture (https://h/static/js/207.e017fea1.chunk.js:2:3768321)" -> kJsFrame (V8)
//   "capture@https://h/app.js:1:200"             -> kJsFrame (Firefox/Safari/JSC)
//   "    at fn (address at index.android.bundle:1:9876)" -> kJsFrame (Hermes bytecode)
//   {"CJSModuleOffset":0,"FunctionID":12,"ByteCodeOffset":34,"SourceURL":"index.android.bundle"}
//     -> kJsFrame (Hermes crash report frame): hermes_function_offset, segment_id 0,
//        function_id 12, bytecode_offset 34, url "index.android.bundle" (see JsFrameLine)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace restack::stack {

enum class LineKind {
  kNative,         // iOS image frame or Android native frame (address-mapped)
  kJavaFrame,      // "at pkg.Class.method(File.java:12)"
  kJavaException,  // "Exception in thread …", "Caused by: …", "Suppressed: …", "a.b.C: msg"
  kJavaMore,       // "... N more"
  kJsFrame,        // V8, Firefox/Safari/JSC, Hermes
  kBlank,          // empty or whitespace only
  kUnknown,        // not a frame Restack recognises (kept, reported as unparsed)
};

const char* lineKindName(LineKind kind);

struct NativeFrameLine {
  std::optional<uint32_t> frame_index;  // "#03" or Apple's leading frame number
  std::string module;                   // image or library name (basename for paths)
  std::string module_path;              // as printed, when a path was given
  std::string debug_id;                 // lowercase hex without dashes; empty when not printed
  std::string abi;                      // Android ABI ("arm64-v8a") when printed
  uint64_t address = 0;                 // address relative to the image: iOS offset, Android pc
  std::optional<uint64_t> runtime_address;
  std::optional<uint64_t> load_address;
  std::string symbol_hint;  // a symbol the device already printed ("abort+164")
};

struct JavaFrameLine {
  std::string class_name;  // "tg.a" (possibly obfuscated)
  std::string method;      // "e"
  std::string file;        // "MethodRecorder.kt", "SourceFile", "Unknown Source", "Native Method"
  std::optional<uint32_t> line;
  std::string module_prefix;  // Java 9+ module/loader prefix before the class ("app//", "java.base@17/")
};

struct JavaExceptionLine {
  std::string prefix;      // "", "Caused by: ", "Suppressed: ", "Exception in thread \"main\" "
  std::string class_name;  // "a.b.c"
  std::string message;     // text after ": " (may be empty); `has_message` tells ": " was present
  bool has_message = false;
};

struct JavaMoreLine {
  uint32_t count = 0;
};

enum class JsStyle { kV8, kFirefox, kHermes };

struct JsFrameLine {
  JsStyle style = JsStyle::kV8;
  std::string function;  // may be empty ("at url:line:col", "@url:line:col")
  std::string url;       // as printed
  uint32_t line = 0;     // 1-based as printed
  uint32_t column = 0;   // 1-based as printed (Hermes bytecode: the bytecode offset)
  bool is_async = false;
  bool is_constructor = false;   // "at new Foo (…)"
  bool hermes_bytecode = false;  // "(address at …)": column is a bytecode offset
  bool is_eval = false;          // "at eval (eval at fn (url:l:c), <anonymous>:l:c)"
  // Engine code with no script position: "at Array.map (<anonymous>)", "at fn (native)",
  // Hermes {"NativeCode":true}. `url` holds what was printed; there is nothing to restore.
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

struct StackLine {
  LineKind kind = LineKind::kUnknown;
  std::string raw;     // the line as received, without the line terminator
  std::string indent;  // leading whitespace, kept so restored text lines up the same way
  std::variant<std::monostate, NativeFrameLine, JavaFrameLine, JavaExceptionLine, JavaMoreLine, JsFrameLine> data;

  const NativeFrameLine* native() const { return std::get_if<NativeFrameLine>(&data); }
  const JavaFrameLine* javaFrame() const { return std::get_if<JavaFrameLine>(&data); }
  const JavaExceptionLine* javaException() const { return std::get_if<JavaExceptionLine>(&data); }
  const JavaMoreLine* javaMore() const { return std::get_if<JavaMoreLine>(&data); }
  const JsFrameLine* jsFrame() const { return std::get_if<JsFrameLine>(&data); }
};

// Parses one line. Never fails: unrecognised lines come back as kUnknown with `raw` set.
StackLine parseStackLine(std::string_view line);

// Splits a raw stack on "\n" (also "\r\n") and parses every line; a trailing empty line is dropped.
std::vector<StackLine> parseStack(std::string_view stack);

// Normalises a printed debug id (UUID with dashes, upper case, Breakpad style) to lowercase hex
// without separators. Returns "" when `text` is not hex.
std::string normalizeDebugId(std::string_view text);

// Per-kind parsers, exposed for tests and fuzzing. Each returns std::nullopt when the line is
// not of its kind.
std::optional<NativeFrameLine> parseNativeLine(std::string_view trimmed);
std::optional<JavaFrameLine> parseJavaFrameLine(std::string_view trimmed);
std::optional<JavaExceptionLine> parseJavaExceptionLine(std::string_view trimmed);
std::optional<JavaMoreLine> parseJavaMoreLine(std::string_view trimmed);
std::optional<JsFrameLine> parseJsFrameLine(std::string_view trimmed);

}  // namespace restack::stack
