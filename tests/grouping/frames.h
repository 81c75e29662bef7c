// Builders for grouping inputs in tests: frames written the way the restorers output them.
#pragma once

#include <string>
#include <vector>

#include "grouping/kinds/java_rules.h"
#include "grouping/kinds/js_rules.h"
#include "grouping/kinds/native_rules.h"
#include "grouping/model.h"

namespace restack::grouping::testing {

inline GroupingFrame java(std::string function, std::string file = "SourceFile") {
  GroupingFrame frame;
  frame.kind = &javaRules();
  frame.function = std::move(function);
  frame.file = std::move(file);
  return frame;
}

inline GroupingFrame native(std::string function, std::string module, FrameState state = FrameState::kRestored) {
  GroupingFrame frame;
  frame.kind = &nativeRules();
  frame.function = std::move(function);
  frame.module = std::move(module);
  frame.state = state;
  return frame;
}

inline GroupingFrame js(std::string function, std::string file) {
  GroupingFrame frame;
  frame.kind = &jsRules();
  frame.function = std::move(function);
  frame.file = std::move(file);
  return frame;
}

inline GroupingInput crash(std::string platform, std::string type, std::string message,
                           std::vector<GroupingFrame> frames) {
  GroupingInput input;
  input.app = "shop";
  input.platform = std::move(platform);
  input.kind = "crash";
  input.exception_type = std::move(type);
  input.exception_message = std::move(message);
  GroupingThread thread;
  thread.name = "main";
  thread.crashed = true;
  thread.frames = std::move(frames);
  input.threads.push_back(std::move(thread));
  return input;
}

}  // namespace restack::grouping::testing
