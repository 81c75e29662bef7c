#include "worker/pipeline/kinds/js_kind.h"

#include <charconv>
#include <string>
#include <string_view>

#include "formats/stack/js_line.h"
#include "grouping/kinds/js_rules.h"
#include "symbolstore/sourcemap/sourcemap_records.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"

namespace restack::pipeline {
namespace {

void appendNumber(std::string& text, uint32_t value) {
  char digits[16];
  text.append(digits, static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, value).ptr - digits));
}

// `prefix` then the frame as the engine prints it ("at fn (file:line:column)", Firefox
// "fn@file:line:column"), into one string sized once.
std::string formatJs(std::string_view prefix, const SymbolizedFrame& frame, const stack::JsFrameLine& raw) {
  std::string text;
  text.reserve(prefix.size() + frame.function.size() + frame.file.size() + 40);
  text += prefix;
  auto location = [&] {
    text += frame.file;
    if (frame.line != 0) {
      text += ':';
      appendNumber(text, frame.line);
    }
    if (frame.column != 0) {
      text += ':';
      appendNumber(text, frame.column);
    }
  };
  if (raw.style == stack::JsStyle::kFirefox) {
    text += frame.function;
    text += '@';
    location();
    return text;
  }
  text += "at ";
  if (raw.is_async) text += "async ";
  if (raw.is_constructor) text += "new ";
  if (frame.function.empty()) {
    location();
    return text;
  }
  text += frame.function;
  text += " (";
  location();
  text += ')';
  return text;
}

// Engine code ("at Array.map (<anonymous>)") is already as restored as it gets: it counts as
// restored, not as a failure, and is never the app's own code.
FrameLookup builtinFrame(const stack::JsFrameLine& frame) {
  FrameLookup lookup;
  lookup.status = FrameStatus::kSymbolicated;
  lookup.tier = "builtin";
  SymbolizedFrame out;
  out.function = frame.function;
  out.file = frame.url;
  out.in_app = false;
  lookup.frames.push_back(std::move(out));
  return lookup;
}

class JsKind final : public StackKind {
 public:
  std::string_view name() const override { return "js"; }
  bool claims(const stack::StackLine& line) const override { return stack::asJsFrame(line) != nullptr; }

  Status restoreRun(const StackRun& run, RunOutput& out) const override {
    bool any_symbolicated = false;
    for (const stack::StackLine& line : run.lines) {
      const stack::JsFrameLine& js = *stack::asJsFrame(line);
      if (js.builtin) {
        out.frame(this, line, builtinFrame(js));
        continue;
      }
      auto lookup = sourcemapResolver(run.symbolizer).lookup(run.scope, js);
      if (!lookup) return lookup.error();
      any_symbolicated = any_symbolicated || lookup->status == FrameStatus::kSymbolicated;
      out.frame(this, line, std::move(*lookup));
    }
    // Once per run: every frame of it notes the same build's maps, in the same minute.
    if (any_symbolicated) run.symbolizer.noteUsed(run.scope, sourcemap_records::kSourcemapFamily);
    return Status::ok();
  }

  void render(const stack::StackLine& line, std::span<const OutputFrame> frames,
              std::vector<std::string>& out) const override {
    const stack::JsFrameLine& raw = *stack::asJsFrame(line);
    for (const OutputFrame& frame : frames) out.push_back(formatJs(line.indent, frame.frame, raw));
    for (const auto& alternative : frames.front().alternatives) {
      for (const SymbolizedFrame& frame : alternative) out.push_back(formatJs(line.indent + "<OR> ", frame, raw));
    }
  }

  const grouping::FrameKindRules& groupingKind() const override { return grouping::jsRules(); }

  // The source-map restorer prints the minified name when the map has neither a function map
  // nor sourcesContent (symbolstore/sourcemap/sourcemap_resolver.cc): such a name changes with
  // every build and bundler, so grouping gets no name and keys the frame by its original position.
  bool groupingNameUnknown(const OutputFrame& frame) const override {
    return frame.note.starts_with("function name as printed");
  }
};

}  // namespace

const StackKind& jsKind() {
  static const JsKind kind;
  return kind;
}

}  // namespace restack::pipeline
