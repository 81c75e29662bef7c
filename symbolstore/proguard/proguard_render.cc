#include "symbolstore/proguard/proguard_render.h"

#include <algorithm>

namespace restack::proguard {
namespace {

std::string frameText(const SymbolizedFrame& frame) {
  std::string text = frame.module + frame.function + "(" + frame.file;
  if (frame.line > 0) text += ":" + std::to_string(frame.line);
  return text + ")";
}

}  // namespace

void renderJavaLine(const stack::StackLine& line, const JavaLineResult& result, std::vector<std::string>& out) {
  if (const auto* exception = line.javaException()) {
    std::string text = line.raw;
    if (result.exception_class != exception->class_name && !result.exception_class.empty()) {
      size_t at = text.find(exception->class_name, line.indent.size() + exception->prefix.size());
      if (at != std::string::npos) text.replace(at, exception->class_name.size(), result.exception_class);
    }
    if (!result.exception_message.empty() && !exception->message.empty()) {
      size_t at = text.rfind(exception->message);
      if (at != std::string::npos) text.replace(at, exception->message.size(), result.exception_message);
    }
    out.push_back(std::move(text));
    return;
  }
  if (line.javaMore() != nullptr && result.more_count) {
    if (*result.more_count > 0) out.push_back(line.indent + "... " + std::to_string(*result.more_count) + " more");
    return;
  }
  const auto* frame = line.javaFrame();
  const FrameLookup& lookup = result.lookup;
  if (frame == nullptr || lookup.status != FrameStatus::kSymbolicated || lookup.note == "not in mapping") {
    out.push_back(line.raw);
    return;
  }
  if (lookup.removed) return;
  std::string_view rest = std::string_view(line.raw).substr(line.indent.size());
  const std::string at = rest.starts_with("at ") ? "at " : "";
  // R8 prints an ambiguous answer depth by depth: the distinct innermost frames joined by
  // "<OR>", then the distinct frames one level out, and so on.
  std::vector<const std::vector<SymbolizedFrame>*> answers{&lookup.frames};
  for (const auto& alternative : lookup.alternatives) answers.push_back(&alternative);
  size_t depth_count = 0;
  for (const auto* answer : answers) depth_count = std::max(depth_count, answer->size());
  for (size_t depth = 0; depth < depth_count; ++depth) {
    std::vector<std::string> printed;
    for (const auto* answer : answers) {
      if (depth >= answer->size()) continue;
      std::string text = frameText((*answer)[depth]);
      if (std::find(printed.begin(), printed.end(), text) != printed.end()) continue;
      out.push_back(line.indent + (printed.empty() ? "" : "<OR> ") + at + text);
      printed.push_back(std::move(text));
    }
  }
}

std::vector<std::string> renderJavaLines(std::span<const stack::StackLine> lines,
                                         std::span<const JavaLineResult> results) {
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size() && i < results.size(); ++i) renderJavaLine(lines[i], results[i], out);
  return out;
}

}  // namespace restack::proguard
