// Per-frame annotation shared by the fingerprint and lag code (internal to grouping/).
#pragma once

#include <string>
#include <vector>

#include "grouping/model.h"
#include "grouping/rules.h"

namespace restack::grouping {

// What annotation learnt about one frame beyond its FrameDecision, for rules_applied.
struct FrameNotes {
  std::vector<const char*> steps;  // normalization steps that changed the name
  std::string app_rule;            // "in_app: rule x.yaml:3" / "ignore: rule x.yaml:9"
};

struct AnnotatedStack {
  std::vector<FrameDecision> decisions;
  std::vector<FrameNotes> notes;
  bool any_missing_symbols = false;
};

AnnotatedStack annotateStack(const std::vector<GroupingFrame>& frames, std::string_view platform, const AppRules* rules,
                             const GroupingOptions& options);

// A frame that can take part in a fingerprint: has a name and is not ignored.
inline bool candidate(const FrameDecision& decision) {
  return !decision.ignored && !decision.normalized.empty();
}

}  // namespace restack::grouping

namespace restack::grouping {

// The hot path of a lag event's samples (fingerprint.h describes the rule).
struct LagChoice {
  std::vector<std::string> names;  // innermost first, at most options.in_app_frames
  bool in_app = false;             // the names are in-app frames (else: all frames)
  double share = 0;
  uint32_t samples = 0;  // samples considered
  // For every sample, the frame indices that contributed (to mark FrameDecision::used).
  std::vector<std::vector<size_t>> used_frames;
};

LagChoice chooseLagStack(const std::vector<AnnotatedStack>& samples, const GroupingOptions& options);

}  // namespace restack::grouping
