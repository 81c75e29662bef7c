#include "worker/pipeline/restored_text.h"

#include <cstdio>

namespace restack::pipeline {
namespace {

std::string basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string formatNative(const SymbolizedFrame& frame, const std::string& tier) {
  std::string text = frame.function.empty() ? std::string("???") : frame.function;
  if (tier == "symtab" && frame.symbol_offset != 0) text += " + " + std::to_string(frame.symbol_offset);
  if (!frame.module.empty()) text += " (in " + frame.module + ")";
  if (!frame.file.empty()) {
    text += " (" + basename(frame.file);
    if (frame.line != 0) text += ":" + std::to_string(frame.line);
    text += ")";
  }
  return text;
}

// `module` carries a Java 9+ class-loader/module prefix ("app//", "java.base@17/") when printed.
std::string formatJava(const SymbolizedFrame& frame) {
  std::string text = "at " + frame.module + frame.function + "(";
  text += frame.file.empty() ? std::string("Unknown Source") : frame.file;
  if (frame.line != 0) text += ":" + std::to_string(frame.line);
  return text + ")";
}

std::string formatJs(const SymbolizedFrame& frame, const stack::JsFrameLine& raw) {
  std::string location = frame.file;
  if (frame.line != 0) location += ":" + std::to_string(frame.line);
  if (frame.column != 0) location += ":" + std::to_string(frame.column);
  if (raw.style == stack::JsStyle::kFirefox) return frame.function + "@" + location;
  std::string prefix = "at ";
  if (raw.is_async) prefix += "async ";
  if (raw.is_constructor) prefix += "new ";
  if (frame.function.empty()) return prefix + location;
  return prefix + frame.function + " (" + location + ")";
}

std::string nativePrefix(const stack::NativeFrameLine& raw) {
  if (!raw.frame_index) return {};
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "#%02u ", *raw.frame_index);
  return buffer;
}

}  // namespace

std::string formatJavaException(const stack::StackLine& line, const std::string& class_name,
                                const std::string& message) {
  const auto* exception = line.javaException();
  std::string text = line.indent + exception->prefix + class_name;
  if (exception->has_message) text += ": " + message;
  return text;
}

void appendRestoredLines(const stack::StackLine& line, const std::vector<const OutputFrame*>& frames,
                         std::vector<std::string>& out) {
  bool restored = !frames.empty() && frames.front()->status == FrameStatus::kSymbolicated;
  if (!restored) {
    out.push_back(line.raw);
    return;
  }
  for (const OutputFrame* output : frames) {
    switch (line.kind) {
      case stack::LineKind::kNative:
        out.push_back(line.indent + nativePrefix(*line.native()) + formatNative(output->frame, output->tier));
        break;
      case stack::LineKind::kJavaFrame:
        out.push_back(line.indent + formatJava(output->frame));
        break;
      case stack::LineKind::kJsFrame:
        out.push_back(line.indent + formatJs(output->frame, *line.jsFrame()));
        break;
      default:
        out.push_back(line.raw);
        return;
    }
  }
  // Ambiguous results, R8-style: every alternative on its own line after "<OR> ".
  const OutputFrame* last = frames.front();  // alternatives ride on the first entry
  for (const auto& alternative : last->alternatives) {
    for (const SymbolizedFrame& frame : alternative) {
      if (line.kind == stack::LineKind::kJavaFrame)
        out.push_back(line.indent + "<OR> " + formatJava(frame));
      else if (line.kind == stack::LineKind::kJsFrame)
        out.push_back(line.indent + "<OR> " + formatJs(frame, *line.jsFrame()));
      else
        out.push_back(line.indent + "<OR> " + formatNative(frame, last->tier));
    }
  }
}

}  // namespace restack::pipeline
