// Frame annotation: normalization, in-app decision, ignore decisions, recursion collapse.
#include "grouping/annotate.h"

#include "grouping/in_app.h"
#include "grouping/normalize.h"

namespace restack::grouping {

AnnotatedStack annotateStack(const std::vector<GroupingFrame>& frames, std::string_view platform, const AppRules* rules,
                             const GroupingOptions& options) {
  AnnotatedStack stack;
  stack.decisions.resize(frames.size());
  stack.notes.resize(frames.size());
  const std::string* previous_kept = nullptr;
  for (size_t i = 0; i < frames.size(); ++i) {
    const GroupingFrame& frame = frames[i];
    FrameDecision& decision = stack.decisions[i];
    FrameNotes& notes = stack.notes[i];
    if (frame.state == FrameState::kMissingSymbols) stack.any_missing_symbols = true;
    if (i >= options.max_frames_per_stack) {
      decision.ignored = true;
      decision.ignore_reason = "beyond max_frames_per_stack";
      continue;
    }
    NormalizedName name = normalizeFrame(frame);
    decision.normalized = name.name;
    notes.steps = std::move(name.steps);

    InAppDecision in_app = decideInApp(frame, name.name, platform, rules);
    decision.in_app = in_app.in_app;
    decision.in_app_reason = std::move(in_app.reason);
    if (in_app.from_app_rule) notes.app_rule = "in_app: " + decision.in_app_reason;

    // A Java or native name printed on the device is real even when symbols did not cover it;
    // a JavaScript name the source map did not cover is minified noise ("t", "e").
    const bool restored =
        frame.state == FrameState::kRestored || (frame.state == FrameState::kNotFound && frame.kind != FrameKind::kJs);
    if (!restored || name.name.empty()) {
      decision.ignored = true;
      decision.ignore_reason = frame.state == FrameState::kMissingSymbols ? "missing symbols" : "no restored name";
      decision.normalized.clear();
      continue;
    }
    if (name.drop_reason != nullptr) {
      decision.ignored = true;
      decision.ignore_reason = name.drop_reason;
      continue;
    }
    if (rules != nullptr) {
      for (const IgnoreRule& rule : rules->ignore) {
        if (rule.match.matches(frame, name.name, platform)) {
          decision.ignored = true;
          decision.ignore_reason = "rule " + rule.origin;
          notes.app_rule = "ignore: rule " + rule.origin;
          break;
        }
      }
      if (decision.ignored) continue;
    }
    if (const char* noise = noiseReason(name.name, frame.kind)) {
      decision.ignored = true;
      decision.ignore_reason = noise;
      continue;
    }
    if (previous_kept != nullptr && *previous_kept == decision.normalized) {
      decision.ignored = true;
      decision.ignore_reason = "recursion";
      continue;
    }
    previous_kept = &decision.normalized;
  }
  return stack;
}

}  // namespace restack::grouping
