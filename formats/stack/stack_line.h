// Raw stack lines: detection and parsing (docs/design.md §1, §10).
//
// One line of a raw stack becomes one `StackLine`. Detection looks only at the line itself, so
// an Android stack can mix Java and native lines. Each line syntax lives in its own files
// (native_line.h, java_line.h, js_line.h) and registers in one list, lineSyntaxes()
// (line_syntaxes.cc); parseStackLine tries them in that list's order. Worked examples (the
// syntax's name, then what its payload holds; the kind's header gives the payload type and
// its accessor, e.g. stack::asNative(line)):
//
//   "MDAP_testDemo9  0x00000001079b59d3 0x1079b3000 + 10707 [8c17697f-2e84-39e5-b491-fcf5169106ff]"
//     -> "native", module "MDAP_testDemo9", address 10707 (offset from the image's __TEXT),
//        debug_id "8c17697f2e8439e5b491fcf5169106ff"
//   "3   MyApp   0x0000000104a1c3e4 0x104a14000 + 33764"            (Apple crash report)
//     -> "native", frame_index 3, module "MyApp", address 33764, no debug id (the report's
//        "Binary Images" section names it: formats/crash_report/crash_report.h adds it)
//   "2   UIKitCore   0x00000001a2b3c4d5 -[UIApplication _run] + 888"  (device-symbolicated, no
//     binary images) -> "native", frame_index 2, module "UIKitCore", runtime_address 0x1a2b3c4d5,
//        image_offset_unknown, symbol_hint "-[UIApplication _run] + 888"
//   "pc 0x0000000000010d78 libapmDemo.so [arm64-v8a::ba78e30f9664d0150fba525ab5981b19]"
//     -> "native", address 0x10d78, module "libapmDemo.so", abi "arm64-v8a", debug_id "ba78…"
//   "#00 pc 000000000004a6c8  /system/lib64/libc.so (abort+164) (BuildId: 1f2e…)" (tombstone)
//     -> "native", frame_index 0, address 0x4a6c8, symbol_hint "abort+164", debug_id "1f2e…"
//   "\tat tg.a.e(MethodRecorder.kt:1)"          -> "java_frame"
//   "Caused by: a.b.c: boom"                    -> "java_exception"
//   "\t... 12 more"                             -> "java_more"
//   "  - waiting on <0x0c2d3e4f> (a java.lang.Object)" -> "thread_note" (no frame; thread_note_line.h)
//   "    at n.capture (https://h/static/js/207.e017fea1.chunk.js:2:3768321)" -> "js_frame" (V8)
//   "capture@https://h/app.js:1:200"             -> "js_frame" (Firefox/Safari/JSC)
//   "inner@https://h/app.js line 2 > eval:1:26"  -> "js_frame" (Firefox, eval'd: no position)
//   "    at fn (address at index.android.bundle:1:9876)" -> "js_frame" (Hermes bytecode)
//   {"CJSModuleOffset":0,"FunctionID":12,"ByteCodeOffset":34,"SourceURL":"index.android.bundle"}
//     -> "js_frame" (Hermes crash report frame): hermes_function_offset, segment_id 0,
//        function_id 12, bytecode_offset 34, url "index.android.bundle" (see JsFrameLine)
//   "" or whitespace only -> "blank";  anything no syntax reads -> "unknown"
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace restack::stack {

// Room for a syntax's payload inside the line itself, so that parsing a line allocates nothing
// beyond the payload's own strings. The largest payload (NativeFrameLine) fits; a bigger one is
// kept on the heap by LineSyntaxOf, which costs one allocation per line of that syntax.
struct LinePayload {
  static constexpr size_t kInlineBytes = 208;
  static constexpr size_t kAlign = 8;
  alignas(kAlign) unsigned char bytes[kInlineBytes];
};

struct StackLine;

// One syntax of raw lines. The two built-in ones, kBlankLine and kUnknownLine, read nothing and
// carry no payload; every other syntax is a LineSyntaxOf<Payload> defined in its kind's file
// and listed in lineSyntaxes().
class LineSyntax {
 public:
  constexpr LineSyntax(std::string_view name, bool is_frame) : name_(name), is_frame_(is_frame) {}
  constexpr virtual ~LineSyntax() = default;
  LineSyntax(const LineSyntax&) = delete;
  LineSyntax& operator=(const LineSyntax&) = delete;

  // "native", "java_frame", "js_frame", …; "blank" and "unknown" for the built-in ones.
  std::string_view name() const { return name_; }
  // Whether a line of this syntax is one raw frame (not a header, "... N more", blank or unknown).
  bool isFrame() const { return is_frame_; }

  // Reads a trimmed, non-empty line: on success sets `line.syntax` to this and stores the
  // payload in `line.payload` (which holds none on entry), and returns true.
  virtual bool parse(std::string_view trimmed, StackLine& line) const { return false; }

  // The payload's lifetime, for StackLine's copy, move and destructor.
  virtual void destroyPayload(LinePayload& payload) const noexcept {}
  virtual void copyPayload(const LinePayload& from, LinePayload& to) const {}
  virtual void movePayload(LinePayload& from, LinePayload& to) const noexcept {}

 private:
  std::string_view name_;
  bool is_frame_;
};

extern const LineSyntax kBlankLine;    // empty or whitespace only
extern const LineSyntax kUnknownLine;  // not a line Restack recognises (kept, reported as unparsed)

struct StackLine {
  const LineSyntax* syntax = &kUnknownLine;  // never null
  std::string raw;                           // the line as received, without the line terminator
  std::string indent;                        // leading whitespace, kept so restored text lines up the same way
  LinePayload payload;                       // what `syntax` read; typed access through the kind's accessor

  StackLine() = default;
  StackLine(const StackLine& other) : syntax(other.syntax), raw(other.raw), indent(other.indent) {
    syntax->copyPayload(other.payload, payload);
  }
  StackLine(StackLine&& other) noexcept
      : syntax(other.syntax), raw(std::move(other.raw)), indent(std::move(other.indent)) {
    syntax->movePayload(other.payload, payload);
  }
  StackLine& operator=(const StackLine& other) {
    if (this != &other) *this = StackLine(other);
    return *this;
  }
  StackLine& operator=(StackLine&& other) noexcept {
    if (this == &other) return *this;
    syntax->destroyPayload(payload);
    syntax = other.syntax;
    raw = std::move(other.raw);
    indent = std::move(other.indent);
    syntax->movePayload(other.payload, payload);
    return *this;
  }
  ~StackLine() { syntax->destroyPayload(payload); }

  std::string_view kindName() const { return syntax->name(); }
  bool isBlank() const { return syntax == &kBlankLine; }
  bool isUnknown() const { return syntax == &kUnknownLine; }
  bool isFrame() const { return syntax->isFrame(); }
};

// A syntax whose payload is a `Payload`, read by `read` (which returns nullopt when the line is
// not of this syntax). Define one per syntax in its kind's .cc file as a constinit object and
// give it a typed accessor in the kind's header:
//   constinit const LineSyntaxOf<JsFrameLine> kJsFrameLine("js_frame", true, parseJsFrameLine);
//   inline const JsFrameLine* asJsFrame(const StackLine& line) { return kJsFrameLine.payloadOf(line); }
// A reader may instead fill a default-constructed payload in place (ReadInto, returning false when
// the line is not of this syntax, and the payload is discarded): it is not moved twice (out of
// the reader's optional, into the line), which shows for the many-stringed payloads of the most
// common frame lines (java_line.cc, native_line.cc).
template <class Payload>
class LineSyntaxOf final : public LineSyntax {
  static constexpr bool kInline = sizeof(Payload) <= LinePayload::kInlineBytes &&
                                  alignof(Payload) <= LinePayload::kAlign &&
                                  std::is_nothrow_move_constructible_v<Payload>;

 public:
  using Reader = std::optional<Payload> (*)(std::string_view trimmed);
  using ReadInto = bool (*)(std::string_view trimmed, Payload& out);
  constexpr LineSyntaxOf(std::string_view name, bool is_frame, Reader read) : LineSyntax(name, is_frame), read_(read) {}
  constexpr LineSyntaxOf(std::string_view name, bool is_frame, ReadInto read_into)
      : LineSyntax(name, is_frame), read_into_(read_into) {}

  // The line's payload if the line is of this syntax, else nullptr.
  const Payload* payloadOf(const StackLine& line) const {
    return line.syntax == this ? get(const_cast<LinePayload&>(line.payload)) : nullptr;
  }

  bool parse(std::string_view trimmed, StackLine& line) const override {
    if (read_into_ != nullptr) {
      if constexpr (kInline) {
        Payload* payload = new (line.payload.bytes) Payload();
        if (!read_into_(trimmed, *payload)) {
          payload->~Payload();
          return false;
        }
      } else {
        auto payload = std::make_unique<Payload>();
        if (!read_into_(trimmed, *payload)) return false;
        new (line.payload.bytes) Payload*(payload.release());
      }
      line.syntax = this;
      return true;
    }
    std::optional<Payload> value = read_(trimmed);
    if (!value) return false;
    if constexpr (kInline) {
      new (line.payload.bytes) Payload(std::move(*value));
    } else {
      new (line.payload.bytes) Payload*(new Payload(std::move(*value)));
    }
    line.syntax = this;
    return true;
  }
  void destroyPayload(LinePayload& payload) const noexcept override {
    if constexpr (kInline) {
      get(payload)->~Payload();
    } else {
      delete get(payload);
    }
  }
  void copyPayload(const LinePayload& from, LinePayload& to) const override {
    const Payload& source = *get(const_cast<LinePayload&>(from));
    if constexpr (kInline) {
      new (to.bytes) Payload(source);
    } else {
      new (to.bytes) Payload*(new Payload(source));
    }
  }
  void movePayload(LinePayload& from, LinePayload& to) const noexcept override {
    if constexpr (kInline) {
      new (to.bytes) Payload(std::move(*get(from)));
    } else {
      new (to.bytes) Payload*(std::exchange(*std::launder(reinterpret_cast<Payload**>(from.bytes)), nullptr));
    }
  }

 private:
  static Payload* get(LinePayload& payload) {
    if constexpr (kInline) {
      return std::launder(reinterpret_cast<Payload*>(payload.bytes));
    } else {
      return *std::launder(reinterpret_cast<Payload**>(payload.bytes));
    }
  }

  Reader read_ = nullptr;
  ReadInto read_into_ = nullptr;
};

// The registered syntaxes, in the order parseStackLine tries them (line_syntaxes.cc).
std::span<const LineSyntax* const> lineSyntaxes();

// Parses one line. Never fails: unrecognised lines come back as kUnknownLine with `raw` set.
StackLine parseStackLine(std::string_view line);

// Splits a raw stack on "\n" (also "\r\n") and parses every line; a trailing empty line is dropped.
std::vector<StackLine> parseStack(std::string_view stack);

// Normalises a printed debug id (UUID with dashes, upper case, Breakpad style) to lowercase hex
// without separators. Returns "" when `text` is not hex.
std::string normalizeDebugId(std::string_view text);

}  // namespace restack::stack
