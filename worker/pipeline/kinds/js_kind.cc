#include "worker/pipeline/kinds/js_kind.h"

#include <string>
#include <string_view>
#include <vector>

#include "formats/common/decimal.h"
#include "formats/stack/js_line.h"
#include "grouping/kinds/js_rules.h"
#include "symbolstore/sourcemap/sourcemap_records.h"
#include "symbolstore/sourcemap/sourcemap_resolver.h"

namespace restack::pipeline {
namespace {

// The frame as the engine prints it ("at fn (file:line:column)", Firefox "fn@file:line:column"),
// appended to a line of restored text.
void appendJs(std::string& text, const SymbolizedFrame& frame, const stack::JsFrameLine& raw) {
  auto location = [&] {
    text += frame.file;
    if (frame.line != 0) {
      text += ':';
      appendDecimal(text, frame.line);
    }
    if (frame.column != 0) {
      text += ':';
      appendDecimal(text, frame.column);
    }
  };
  if (raw.style == stack::JsStyle::kFirefox) {
    text += stack::asyncCause(raw);
    text += frame.function;
    text += '@';
    location();
    return;
  }
  text += "at ";
  if (raw.is_async) text += "async ";
  if (raw.is_constructor) text += "new ";
  if (frame.function.empty()) {
    location();
    return;
  }
  text += frame.function;
  text += " (";
  location();
  text += ')';
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

// What the columns of a run's `fn@url:line:column` frames point at (JsColumns). React Native
// prints that form only from JavaScriptCore (Hermes prints V8's). On the web, Safari (and every
// iOS WebView: JavaScriptCore) and Firefox share it; a Safari stack is told by JavaScriptCore's
// own frames, engine code "fn@[native code]" and top-level "global code", "module code" or "eval
// code", which Firefox never prints (its engine code is "self-hosted", a nested function
// "outer/<", a frame after an async boundary "async*fn" or "promise callback*fn"). An undecided
// web stack keeps Firefox's reading, the segment's start.
JsColumns columnsOf(const StackRun& run) {
  bool javascriptcore = run.scope.platform == "react_native";
  for (const stack::StackLine& line : run.lines) {
    const stack::JsFrameLine& js = *stack::asJsFrame(line);
    if (js.style != stack::JsStyle::kFirefox) continue;
    if (js.url.starts_with("self-hosted") || js.function.find("/<") != std::string::npos || js.is_async) {
      return JsColumns::kCallStart;
    }
    if (js.url == "[native code]" || js.function == "global code" || js.function == "module code" ||
        js.function == "eval code") {
      javascriptcore = true;
    }
  }
  return javascriptcore ? JsColumns::kDivot : JsColumns::kCallStart;
}

class JsKind final : public StackKind {
 public:
  std::string_view name() const override { return "js"; }
  bool claims(const stack::StackLine& line) const override { return stack::asJsFrame(line) != nullptr; }

  Status restoreRun(const StackRun& run, RunOutput& out) const override {
    const JsColumns columns = columnsOf(run);
    // The run's frames are looked up together: the resolver overlaps their cache misses.
    std::vector<JsFrameQuery> queries;
    queries.reserve(run.lines.size());
    for (const stack::StackLine& line : run.lines) {
      const stack::JsFrameLine& js = *stack::asJsFrame(line);
      if (js.builtin) continue;
      queries.push_back({&js, js.style == stack::JsStyle::kFirefox ? columns : JsColumns::kCallStart});
    }
    std::vector<FrameLookup> lookups;
    RESTACK_RETURN_IF_ERROR(sourcemapResolver(run.symbolizer).lookupStack(run.scope, queries, lookups));
    bool any_symbolicated = false;
    size_t next = 0;
    for (const stack::StackLine& line : run.lines) {
      const stack::JsFrameLine& js = *stack::asJsFrame(line);
      if (js.builtin) {
        out.frame(this, line, builtinFrame(js));
        continue;
      }
      FrameLookup& lookup = lookups[next++];
      any_symbolicated = any_symbolicated || lookup.status == FrameStatus::kSymbolicated;
      out.frame(this, line, std::move(lookup));
    }
    // Once per run: every frame of it notes the same build's maps, in the same minute.
    if (any_symbolicated) run.symbolizer.noteUsed(run.scope, sourcemap_records::kSourcemapFamily);
    return Status::ok();
  }

  void render(const stack::StackLine& line, std::span<const OutputFrame> frames,
              RestoredTextWriter& out) const override {
    const stack::JsFrameLine& raw = *stack::asJsFrame(line);
    for (const OutputFrame& frame : frames) appendJs(out.line(line.indent), frame.frame, raw);
    for (const auto& alternative : frames.front().alternatives) {
      for (const SymbolizedFrame& frame : alternative) appendJs(out.line(line.indent) += "<OR> ", frame, raw);
    }
  }

  const grouping::FrameKindRules& groupingKind() const override { return grouping::jsRules(); }

  // The source-map restorer prints the minified name when the map has neither a function map
  // nor sourcesContent (symbolstore/sourcemap/sourcemap_resolver.cc): such a name changes with
  // every build and bundler, so grouping gets no name and keys the frame by its original position.
  // A name V8 infers for an anonymous function from the code around it (SymbolizedFrame::
  // name_inferred) is a display name, shared by unrelated callbacks and changed by edits after
  // the function: grouping keys the frame as the anonymous function it is.
  std::optional<std::string_view> groupingName(const OutputFrame& frame) const override {
    if (frame.note.starts_with("function name as printed")) return std::nullopt;
    if (frame.frame.name_inferred) return std::string_view("<anonymous>");
    return frame.frame.function;
  }
};

}  // namespace

const StackKind& jsKind() {
  static const JsKind kind;
  return kind;
}

}  // namespace restack::pipeline
