#include "worker/pipeline/kinds/java_kind.h"

#include <algorithm>

#include "formats/common/decimal.h"
#include "formats/stack/java_line.h"
#include "grouping/kinds/java_rules.h"
#include "symbolstore/proguard/proguard_records.h"
#include "symbolstore/proguard/proguard_resolver.h"

namespace restack::pipeline {
namespace {

// `module` carries a Java 9+ class-loader/module prefix ("app//", "java.base@17/") when printed.
void appendFrameText(std::string& text, const SymbolizedFrame& frame) {
  text += frame.module;
  text += frame.function;
  text += '(';
  text += frame.file;
  if (frame.line > 0) {
    text += ':';
    appendDecimal(text, frame.line);
  }
  text += ')';
}

// The header as printed, with the class name and the names inside the message restored.
std::string exceptionText(const stack::StackLine& line, const JavaLineResult& result) {
  const auto* exception = stack::asJavaException(line);
  std::string text = line.raw;
  if (result.exception_class != exception->class_name && !result.exception_class.empty()) {
    size_t at = text.find(exception->class_name, line.indent.size() + exception->prefix.size());
    if (at != std::string::npos) text.replace(at, exception->class_name.size(), result.exception_class);
  }
  if (!result.exception_message.empty() && !exception->message.empty()) {
    size_t at = text.rfind(exception->message);
    if (at != std::string::npos) text.replace(at, exception->message.size(), result.exception_message);
  }
  return text;
}

class JavaKind final : public StackKind {
 public:
  std::string_view name() const override { return kProguardScopeKind; }
  bool claims(const stack::StackLine& line) const override {
    return stack::asJavaFrame(line) || stack::asJavaException(line) || stack::asJavaMore(line);
  }
  // A Java run goes to the retracer whole: rules such as rewriteFrame depend on the exception
  // line above a frame.
  bool wholeRuns() const override { return true; }
  std::string_view eventIdField() const override { return "pg_map_id"; }

  Status restoreRun(const StackRun& run, RunOutput& out) const override {
    auto results = proguardResolver(run.symbolizer).retrace(run.scope, run.lines);
    if (!results) return results.error();
    if (results->size() != run.lines.size()) {
      return Error(ErrorCode::kInternal, "retrace answered " + std::to_string(results->size()) + " lines for " +
                                             std::to_string(run.lines.size()));
    }
    bool any_symbolicated = false;
    for (size_t k = 0; k < run.lines.size(); ++k) {
      const stack::StackLine& java = run.lines[k];
      JavaLineResult& result = (*results)[k];
      if (stack::asJavaFrame(java)) {
        any_symbolicated = any_symbolicated || result.lookup.status == FrameStatus::kSymbolicated;
        out.frame(this, java, std::move(result.lookup));
      } else if (const auto* header = stack::asJavaException(java)) {
        const std::string& type = result.exception_class.empty() ? header->class_name : result.exception_class;
        const std::string& message = result.exception_message.empty() ? header->message : result.exception_message;
        out.text(exceptionText(java, result));
        out.section(header->prefix, type, message);
      } else if (stack::asJavaMore(java) && result.more_count) {
        // The elided frames restore to a different number of lines (proguard_resolver.h).
        if (*result.more_count > 0) out.text(java.indent + "... " + std::to_string(*result.more_count) + " more");
      } else {
        out.text(java.raw);
      }
    }
    // Once per run: every frame of it notes the same mapping, in the same minute.
    if (any_symbolicated) {
      // The event's pg_map_id picks the mapping before its build does (proguard_resolver.h).
      const std::string& map_id = run.scope.symbol_ids.get(kProguardScopeKind);
      if (map_id.empty()) {
        run.symbolizer.noteUsed(run.scope, proguard::kProguardFamily);
      } else {
        run.symbolizer.noteId(proguard::kProguardFamily, map_id);
      }
    }
    return Status::ok();
  }

  // As R8 retrace prints it (the ReTrace-agreement tests in tests/proguard check this text):
  //   "\tat a.a(SourceFile:4)"  ->  "\tat com.example.Foo.bar(Foo.java:12)"   (one line per frame
  //                                 "\tat com.example.Foo.main(Foo.java:30)"   of an inline chain)
  //   ambiguous                  ->  "\tat com.example.R8.bar(R8.java)"     (depth by depth: the
  //                                 "\t<OR> at com.example.R8.foo(R8.java)"  distinct frames of
  //                                                                          each inline level)
  //   a class not in the mapping ->  the input line unchanged
  //   "\tat app//a.a(SourceFile:4)" -> "\tat app//com.example.Foo.bar(Foo.java:12)"  (Java 9+ module
  //                                 and class-loader prefix kept)
  void render(const stack::StackLine& line, std::span<const OutputFrame> frames,
              RestoredTextWriter& out) const override {
    const OutputFrame& first = frames.front();
    if (first.note == "not in mapping") {
      out.line(line.raw);
      return;
    }
    const std::string_view at = std::string_view(line.raw).substr(line.indent.size()).starts_with("at ") ? "at " : "";
    if (first.alternatives.empty()) {  // almost every frame: one line per frame, no "<OR> "
      for (const OutputFrame& frame : frames) {
        std::string& text = out.line(line.indent);
        text += at;
        appendFrameText(text, frame.frame);
      }
      return;
    }
    // R8 prints an ambiguous answer depth by depth: the distinct innermost frames joined by
    // "<OR>", then the distinct frames one level out, and so on. Answer 0 is `frames`, the
    // others ride on the first entry.
    const size_t answers = 1 + first.alternatives.size();
    auto frameOf = [&](size_t answer, size_t depth) -> const SymbolizedFrame* {
      if (answer == 0) return depth < frames.size() ? &frames[depth].frame : nullptr;
      const auto& alternative = first.alternatives[answer - 1];
      return depth < alternative.size() ? &alternative[depth] : nullptr;
    };
    size_t depth_count = frames.size();
    for (const auto& alternative : first.alternatives) depth_count = std::max(depth_count, alternative.size());
    std::vector<std::string> printed;
    for (size_t depth = 0; depth < depth_count; ++depth) {
      printed.clear();
      for (size_t answer = 0; answer < answers; ++answer) {
        const SymbolizedFrame* frame = frameOf(answer, depth);
        if (frame == nullptr) continue;
        std::string text;
        appendFrameText(text, *frame);
        if (std::find(printed.begin(), printed.end(), text) != printed.end()) continue;
        std::string& printed_line = out.line(line.indent);
        printed_line += printed.empty() ? "" : "<OR> ";
        printed_line += at;
        printed_line += text;
        printed.push_back(std::move(text));
      }
    }
  }

  // An Android event's exception type and message name obfuscated classes.
  Status restoreEvent(Symbolizer& symbolizer, const RawEvent& event, const EventScope& scope,
                      RestoredEvent& restored) const override {
    if (!event.has_exception || event.platform != "android") return Status::ok();
    if (!event.exception_type.empty()) {
      auto name = proguardResolver(symbolizer).deobfuscateClass(scope, event.exception_type);
      if (!name) return name.error();
      if (name->has_value()) restored.exception_type = **name;
    }
    if (!event.exception_message.empty()) {
      auto message = proguardResolver(symbolizer).deobfuscateMessage(scope, event.exception_message);
      if (!message) return message.error();
      if (message->has_value()) restored.exception_message = **message;
    }
    return Status::ok();
  }

  const grouping::FrameKindRules& groupingKind() const override { return grouping::javaRules(); }
};

}  // namespace

const StackKind& javaKind() {
  static const JavaKind kind;
  return kind;
}

}  // namespace restack::pipeline
