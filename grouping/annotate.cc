// Frame annotation: normalization, in-app decision, ignore decisions, recursion collapse.
#include "grouping/annotate.h"

#include "grouping/in_app.h"
#include "grouping/kinds.h"
#include "grouping/kinds/native_rules.h"
#include "grouping/normalize.h"

namespace restack::grouping {
namespace {

// A lambda or anonymous function whose enclosing function is also on the stack (a callback
// run synchronously: forEach, sort, a template algorithm) is keyed by its distance in lines
// from that frame: "a.Cart.lambda$total@+1". Two lambdas of one function differ; an edit above
// the function moves both lines alike; the compiler's lambda index is never used.
void keyLambdasByPosition(const std::vector<GroupingFrame>& frames, AnnotatedStack& stack) {
  for (size_t i = 0; i < stack.decisions.size(); ++i) {
    FrameDecision& decision = stack.decisions[i];
    if (!candidate(decision) || frames[i].line == 0) continue;
    const std::string enclosing = enclosingFunction(decision.normalized, *frames[i].kind);
    if (enclosing.empty()) continue;
    for (size_t j = i + 1; j < stack.decisions.size(); ++j) {
      if (stack.decisions[j].normalized != enclosing) continue;
      if (frames[j].line == 0 || frames[j].file != frames[i].file) break;
      const int64_t delta = int64_t(frames[i].line) - int64_t(frames[j].line);
      decision.normalized += (delta >= 0 ? "@+" : "@") + std::to_string(delta);
      stack.notes[i].steps.push_back("lambda:position-in-enclosing");
      break;
    }
  }
}

// GCC describes the call operator of a type without linkage (a lambda, a local functor) in
// DWARF by its bare name, "operator()", without the function it is defined in; inlined copies
// then restore under that name only (an out-of-line copy has a mangled name that says more).
// The restorer reads the enclosing function from DWARF's scopes (GroupingFrame::scope): the
// frame is named as that function's lambda, "shop::Cart::total::'lambda'::operator()", which is
// what GCC's mangled name at -O0 and Clang's "$_0" normalize to (rule native:lambda-scope).
// Without a scope (symbols ingested before scopes were stored), when the next app frame deeper
// on the stack is in the same file, that is the function the call operator's code was inlined
// through (a synchronous callback: std::for_each, std::sort): the frame is named as its lambda.
// Either way the position key below applies as for the other builds.
void nameBareCallOperators(const std::vector<GroupingFrame>& frames, AnnotatedStack& stack) {
  for (size_t i = 0; i < stack.decisions.size(); ++i) {
    FrameDecision& decision = stack.decisions[i];
    if (frames[i].kind != &nativeRules() || decision.normalized != "operator()") continue;
    if (!frames[i].scope.empty()) {
      const std::string enclosing = normalizeNativeName(frames[i].scope).name;
      if (!enclosing.empty()) {
        decision.normalized = enclosing + "::'lambda'::operator()";
        stack.notes[i].steps.push_back("native:lambda-scope");
        continue;
      }
    }
    if (frames[i].file.empty()) continue;
    for (size_t j = i + 1; j < stack.decisions.size(); ++j) {
      const FrameDecision& deeper = stack.decisions[j];
      if (!candidate(deeper) || !deeper.in_app) continue;
      if (frames[j].file == frames[i].file && deeper.normalized.find("::'lambda'") == std::string::npos) {
        decision.normalized = deeper.normalized + "::'lambda'::operator()";
        stack.notes[i].steps.push_back("native:bare-call-operator-in-enclosing");
      }
      break;
    }
  }
}

}  // namespace

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
    decision.normalized = std::move(name.name);
    notes.steps = std::move(name.steps);
    const std::string& normalized = decision.normalized;

    InAppDecision in_app = decideInApp(frame, normalized, platform, rules);
    decision.in_app = in_app.in_app;
    decision.in_app_reason = std::move(in_app.reason);
    if (in_app.from_app_rule) notes.app_rule = "in_app: " + decision.in_app_reason;

    // A Java or native name printed on the device is real even when symbols did not cover it;
    // a JavaScript name the source map did not cover is minified noise ("t", "e").
    const bool restored = frame.state == FrameState::kRestored ||
                          (frame.state == FrameState::kNotFound && frame.kind->unrestored_name_usable);
    if (!restored || normalized.empty()) {
      decision.ignored = true;
      decision.ignore_reason =
          frame.state == FrameState::kMissingSymbols || frame.state == FrameState::kSystemSymbolsMissing
              ? "missing symbols"
              : "no restored name";
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
        if (rule.match.matches(frame, normalized, platform)) {
          decision.ignored = true;
          decision.ignore_reason = "rule " + rule.origin;
          notes.app_rule = "ignore: rule " + rule.origin;
          break;
        }
      }
      if (decision.ignored) continue;
    }
    // Code of a C or C++ header copied into the app's image shows as a frame only when the
    // compiler chose to inline it: GCC -O2 inlines <string.h>'s C++ strchr overload above
    // libc's strchr, -O0 and Clang call libc directly. Never hashed, so the library call below
    // it (the thrower) is the same frame in every build. Likewise the Rust standard library:
    // which of its functions show (Option::expect inlined or not, the panic machinery's
    // internal names) changes with the compiler version and the optimisation level; the app
    // frame that called it is the crash site.
    if (frame.kind == &nativeRules() && !decision.in_app) {
      const LibrarySource source = librarySourceOf(frame.file);
      if (source == LibrarySource::kSystemHeader || source == LibrarySource::kRustStandardLibrary) {
        decision.ignored = true;
        decision.ignore_reason =
            source == LibrarySource::kSystemHeader ? "inlined from a system header" : "Rust standard library";
        continue;
      }
    }
    if (const char* noise = noiseReason(normalized, *frame.kind)) {
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
  nameBareCallOperators(frames, stack);
  keyLambdasByPosition(frames, stack);
  return stack;
}

}  // namespace restack::grouping
