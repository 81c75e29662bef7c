#include "worker/pipeline/kinds/java_kind.h"

namespace restack::pipeline {
namespace {

// `module` carries a Java 9+ class-loader/module prefix ("app//", "java.base@17/") when printed.
std::string formatJava(const SymbolizedFrame& frame) {
  std::string text = "at " + frame.module + frame.function + "(";
  text += frame.file.empty() ? std::string("Unknown Source") : frame.file;
  if (frame.line != 0) text += ":" + std::to_string(frame.line);
  return text + ")";
}

std::string formatException(const stack::StackLine& line, const std::string& class_name, const std::string& message) {
  const auto* exception = line.javaException();
  std::string text = line.indent + exception->prefix + class_name;
  if (exception->has_message) text += ": " + message;
  return text;
}

class JavaKind final : public StackKind {
 public:
  std::string_view name() const override { return kProguardScopeKind; }
  bool claims(const stack::StackLine& line) const override {
    return line.kind == stack::LineKind::kJavaFrame || line.kind == stack::LineKind::kJavaException ||
           line.kind == stack::LineKind::kJavaMore;
  }
  // A Java run goes to the retracer whole: rules such as rewriteFrame depend on the exception
  // line above a frame.
  bool wholeRuns() const override { return true; }
  std::string_view eventIdField() const override { return "pg_map_id"; }

  Status restoreRun(const StackRun& run, RunOutput& out) const override {
    auto results = run.symbolizer.proguard().retrace(run.scope, run.lines);
    if (!results) return results.error();
    if (results->size() != run.lines.size()) {
      return Error(ErrorCode::kInternal, "retrace answered " + std::to_string(results->size()) + " lines for " +
                                             std::to_string(run.lines.size()));
    }
    for (size_t k = 0; k < run.lines.size(); ++k) {
      const stack::StackLine& java = run.lines[k];
      JavaLineResult& result = (*results)[k];
      if (java.kind == stack::LineKind::kJavaFrame) {
        out.frame(this, java, std::move(result.lookup));
      } else if (java.kind == stack::LineKind::kJavaException) {
        const auto* header = java.javaException();
        const std::string& type = result.exception_class.empty() ? header->class_name : result.exception_class;
        const std::string& message = result.exception_message.empty() ? header->message : result.exception_message;
        out.text(formatException(java, type, message));
        out.section(header->prefix, type, message);
      } else if (java.kind == stack::LineKind::kJavaMore && result.more_count) {
        // The elided frames restore to a different number of lines (proguard_resolver.h).
        if (*result.more_count > 0) out.text(java.indent + "... " + std::to_string(*result.more_count) + " more");
      } else {
        out.text(java.raw);
      }
    }
    return Status::ok();
  }

  void render(const stack::StackLine& line, std::span<const OutputFrame> frames,
              std::vector<std::string>& out) const override {
    for (const OutputFrame& frame : frames) out.push_back(line.indent + formatJava(frame.frame));
    // Ambiguous results, R8-style: every alternative on its own line after "<OR> ".
    for (const auto& alternative : frames.front().alternatives) {
      for (const SymbolizedFrame& frame : alternative) out.push_back(line.indent + "<OR> " + formatJava(frame));
    }
  }

  // An Android event's exception type and message name obfuscated classes.
  Status restoreEvent(Symbolizer& symbolizer, const RawEvent& event, const EventScope& scope,
                      RestoredEvent& restored) const override {
    if (!event.has_exception || event.platform != "android") return Status::ok();
    if (!event.exception_type.empty()) {
      auto name = symbolizer.proguard().deobfuscateClass(scope, event.exception_type);
      if (!name) return name.error();
      if (name->has_value()) restored.exception_type = **name;
    }
    if (!event.exception_message.empty()) {
      auto message = symbolizer.proguard().deobfuscateMessage(scope, event.exception_message);
      if (!message) return message.error();
      if (message->has_value()) restored.exception_message = **message;
    }
    return Status::ok();
  }

  grouping::FrameKind groupingKind() const override { return grouping::FrameKind::kJava; }
};

}  // namespace

const StackKind& javaKind() {
  static const JavaKind kind;
  return kind;
}

}  // namespace restack::pipeline
