// computeFingerprint (algorithm "v2", described in fingerprint.h).
#include "grouping/fingerprint.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "formats/common/decimal.h"
#include "grouping/annotate.h"
#include "grouping/exception_text.h"
#include "grouping/normalize.h"
#include "grouping/sha256.h"

namespace restack::grouping {
namespace {

constexpr size_t kTitleMessageChars = 120;

bool isMainThread(const GroupingThread& thread) {
  return thread.main || thread.name == "main" || thread.name == "com.apple.main-thread" || thread.name == "Thread 0";
}

// Index of the thread whose stack identifies the problem, or npos with no threads.
size_t pickThread(const GroupingInput& input) {
  if (input.threads.empty()) return std::string::npos;
  auto find = [&input](auto predicate) -> size_t {
    for (size_t i = 0; i < input.threads.size(); ++i) {
      if (predicate(input.threads[i])) return i;
    }
    return std::string::npos;
  };
  size_t crashed = find([](const GroupingThread& t) { return t.crashed; });
  size_t main = find(isMainThread);
  if (input.kind == "anr") return main != std::string::npos ? main : crashed != std::string::npos ? crashed : 0;
  return crashed != std::string::npos ? crashed : main != std::string::npos ? main : 0;
}

std::string firstLine(std::string_view message, size_t max_chars) {
  size_t newline = message.find_first_of("\r\n");
  std::string line(message.substr(0, newline));
  if (line.size() > max_chars) {
    line.resize(max_chars);
    while (!line.empty() && (static_cast<unsigned char>(line.back()) & 0xC0) == 0x80) line.pop_back();
    if (!line.empty() && static_cast<unsigned char>(line.back()) >= 0xC0) line.pop_back();
    line += "…";
  }
  return line;
}

// At most `max_bytes` of `text`, never inside a UTF-8 sequence.
std::string cutUtf8(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

const FingerprintRule* matchForcedRule(const GroupingInput& input, const AppRules* rules, std::string_view type,
                                       std::string_view message) {
  if (rules == nullptr) return nullptr;
  for (const FingerprintRule& rule : rules->fingerprints) {
    if (!rule.kind.empty() && rule.kind != input.kind) continue;
    if (!rule.platform.empty() && rule.platform != input.platform) continue;
    if (!rule.exception_type.empty() && !globMatch(rule.exception_type, type)) continue;
    if (!rule.message.empty() && !globMatch(rule.message, message)) continue;
    return &rule;
  }
  return nullptr;
}

// Which frames of one annotated stack make the fingerprint, and what quality that gives.
struct FrameSelection {
  std::vector<size_t> used;  // frame indices, innermost first
  FingerprintSource source = FingerprintSource::kTypeOnly;
  bool may_change = false;  // a frame missing symbols could still change the selection
};

FrameSelection selectFrames(const AnnotatedStack& stack, const std::vector<GroupingFrame>& frames,
                            const GroupingOptions& options, bool thrown) {
  FrameSelection selection;
  const auto& decisions = stack.decisions;
  for (size_t i = 0; i < decisions.size() && selection.used.size() < options.in_app_frames; ++i) {
    if (candidate(decisions[i]) && decisions[i].in_app) selection.used.push_back(i);
  }
  size_t limit = options.in_app_frames;
  if (!selection.used.empty()) {
    selection.source = FingerprintSource::kInAppFrames;
    // Lambdas, anonymous functions and entry points say where the app handed control over, not
    // what went wrong: different errors thrown inside the same library code would share them.
    // Then the frames below them, down to the one that threw, tell the problems apart.
    const bool distinctive = std::any_of(selection.used.begin(), selection.used.end(), [&](size_t index) {
      return isDistinctiveName(decisions[index].normalized, *frames[index].kind);
    });
    if (thrown && !distinctive && selection.used.front() > 0) {
      std::vector<size_t> below;
      for (size_t i = 0; i < selection.used.front() && below.size() < options.fallback_frames; ++i) {
        // A browser extension's hook sits on top of whatever it wraps, on some users' machines only.
        if (candidate(decisions[i]) && decisions[i].in_app_reason != "browser extension") below.push_back(i);
      }
      if (!below.empty()) {
        selection.used.insert(selection.used.begin(), below.begin(), below.end());
        selection.source = FingerprintSource::kThrowerFrames;
      }
    }
  } else {
    limit = options.fallback_frames;
    for (size_t i = 0; i < decisions.size() && selection.used.size() < limit; ++i) {
      if (candidate(decisions[i])) selection.used.push_back(i);
    }
    if (!selection.used.empty()) selection.source = FingerprintSource::kAllFrames;
  }
  // A missing frame matters if it sits above the last frame used, or if fewer frames than
  // wanted were found (it could fill the gap), or if no in-app frame was found at all.
  const size_t last_used = selection.used.empty() ? decisions.size() : selection.used.back();
  const bool from_in_app =
      selection.source == FingerprintSource::kInAppFrames || selection.source == FingerprintSource::kThrowerFrames;
  size_t in_app_used = 0;
  for (size_t index : selection.used) in_app_used += decisions[index].in_app ? 1 : 0;
  const size_t found = from_in_app ? in_app_used : selection.used.size();
  for (size_t i = 0; i < frames.size() && i < decisions.size(); ++i) {
    if (frames[i].state != FrameState::kMissingSymbols) continue;
    if (i < last_used || found < limit || !from_in_app) {
      selection.may_change = true;
      break;
    }
  }
  return selection;
}

// The exception the event is about when it states none itself: the first of its chain.
const GroupingException* thrownException(const GroupingInput& input) {
  for (const GroupingException& exception : input.exceptions) {
    if (exception.relation.empty()) return &exception;
  }
  return input.exceptions.empty() ? nullptr : &input.exceptions.front();
}

void collectRules(const AnnotatedStack& stack, size_t through, std::set<std::string>& out) {
  for (size_t i = 0; i < stack.decisions.size() && i <= through; ++i) {
    const FrameDecision& decision = stack.decisions[i];
    const FrameNotes& notes = stack.notes[i];
    if (!notes.app_rule.empty()) out.insert(notes.app_rule);
    if (decision.used) {
      for (const char* step : notes.steps) out.insert(step);
    } else if (decision.ignored && !decision.normalized.empty() && decision.ignore_reason.rfind("rule ", 0) != 0) {
      out.insert("ignore: " + decision.ignore_reason);
    }
  }
}

std::string percent(double share) {
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%.0f%%", share * 100.0);
  return buffer;
}

}  // namespace

std::string hashComponents(const std::vector<std::string>& components) {
  // The digest's input, "<size>:<component>" for each, gathered in one buffer per thread and
  // hashed in one call.
  constexpr size_t kKeptMessageBytes = 64 * 1024;  // what a thread keeps of it between events
  thread_local std::string message;
  message.clear();
  for (const std::string& component : components) {
    appendDecimal(message, component.size());
    message += ':';
    message += component;
  }
  std::string hash = toHex(sha256(message), 16);
  if (message.capacity() > kKeptMessageBytes) message = std::string();
  return hash;
}

std::string fingerprintKey(const GroupingInput& input, const Fingerprint& fingerprint) {
  return input.app + ":" + fingerprint.hash;
}

Fingerprint computeFingerprint(const GroupingInput& input, const GroupingConfig& config) {
  const GroupingOptions& options = config.options;
  const AppRules* rules = config.rulesFor(input.app);
  Fingerprint fp;

  // 1. Annotate every stack (the worker records in_app on every output frame).
  std::vector<AnnotatedStack> threads, samples, causes;
  for (const auto& thread : input.threads) {
    threads.push_back(annotateStack(thread.frames, input.platform, rules, options));
  }
  const bool lag = input.kind == "lag" && !input.samples.empty();
  for (const auto& sample : input.samples) {
    samples.push_back(annotateStack(sample.frames, input.platform, rules, options));
  }
  for (const auto& cause : input.causes) {
    causes.push_back(annotateStack(cause.frames, input.platform, rules, options));
  }

  // 2. Choose the stack, and with it the exception the problem is about.
  std::string type = input.exception_type;
  std::string message = input.exception_message;
  if (const GroupingException* thrown = thrownException(input); thrown != nullptr && type.empty()) {
    // printStackTrace() output, a V8 error.stack, a crash report: the trace text names it.
    type = thrown->type;
    if (message.empty()) message = thrown->message;
  }
  fp.exception_type = type;  // the thrown exception, also when a cause's stack is chosen below
  AnnotatedStack* stack = nullptr;
  const std::vector<GroupingFrame>* stack_frames = nullptr;
  size_t thread_index = pickThread(input);
  if (thread_index != std::string::npos) {
    stack = &threads[thread_index];
    stack_frames = &input.threads[thread_index].frames;
    fp.stack = "thread " + std::to_string(thread_index);
    if (!input.threads[thread_index].name.empty()) fp.stack += " (" + input.threads[thread_index].name + ")";
  }
  size_t chosen_cause = std::string::npos;
  for (size_t c = causes.size(); c-- > 0 && !lag;) {
    const auto& decisions = causes[c].decisions;
    bool has_app_frame = std::any_of(decisions.begin(), decisions.end(),
                                     [](const FrameDecision& d) { return candidate(d) && d.in_app; });
    if (!has_app_frame) continue;
    stack = &causes[c];
    stack_frames = &input.causes[c].frames;
    type = input.causes[c].type;
    message = input.causes[c].message;
    fp.stack = "cause " + std::to_string(c);
    chosen_cause = c;
    break;
  }

  const std::string family = input.kind == "anr" ? "anr" : input.kind == "lag" ? "lag" : "exception";
  const std::string normalized_type = normalizeExceptionType(nativeReasonKey(type));
  const std::string masked_message = maskMessage(message, options.message_max_chars);
  std::set<std::string> rules_applied;
  // The platform is hashed: the same function name on iOS and Android is different code.
  fp.components = {fp.algorithm, input.platform, family};
  if (family == "exception") fp.components.push_back(normalized_type);

  // 3. Frames: lag hot path, or the chosen stack's top frames.
  bool may_change = false;
  if (lag) {
    LagChoice choice = chooseLagStack(samples, options);
    fp.stack = "samples";
    fp.lag_share = choice.share;
    fp.lag_samples = choice.samples;
    fp.frames_used = choice.names;
    if (!choice.names.empty()) {
      fp.source = choice.in_app ? FingerprintSource::kInAppFrames : FingerprintSource::kAllFrames;
    }
    for (size_t s = 0; s < samples.size(); ++s) {
      size_t deepest = 0;
      for (size_t index : choice.used_frames[s]) {
        samples[s].decisions[index].used = true;
        deepest = std::max(deepest, index);
      }
      if (!choice.used_frames[s].empty()) collectRules(samples[s], deepest, rules_applied);
      may_change = may_change || samples[s].any_missing_symbols;
    }
  } else if (stack != nullptr) {
    // Only an exception has a thrower; what an ANR's main thread waits in says nothing stable.
    FrameSelection selection = selectFrames(*stack, *stack_frames, options, family == "exception");
    fp.source = selection.source;
    may_change = selection.may_change;
    for (size_t index : selection.used) {
      stack->decisions[index].used = true;
      fp.frames_used.push_back(stack->decisions[index].normalized);
    }
    collectRules(*stack, selection.used.empty() ? stack->decisions.size() : selection.used.back(), rules_applied);
    // A deeper cause that misses symbols may turn out to hold the app frames once restored.
    for (size_t c = chosen_cause == std::string::npos ? 0 : chosen_cause + 1; c < causes.size(); ++c) {
      may_change = may_change || causes[c].any_missing_symbols;
    }
  }
  if (!fp.frames_used.empty()) {
    fp.culprit = fp.frames_used.front();
  } else if (!masked_message.empty()) {
    fp.source = FingerprintSource::kMessage;
  }
  if (fp.source == FingerprintSource::kThrowerFrames) rules_applied.insert("fallback: frames to the thrower");
  if (fp.source == FingerprintSource::kAllFrames) rules_applied.insert("fallback: all frames");
  if (fp.source == FingerprintSource::kMessage) rules_applied.insert("fallback: message");
  if (fp.source == FingerprintSource::kTypeOnly) rules_applied.insert("fallback: type only");

  fp.components.push_back(fingerprintSourceName(fp.source));
  if (fp.source == FingerprintSource::kMessage) {
    fp.components.push_back(masked_message);
  } else {
    fp.components.insert(fp.components.end(), fp.frames_used.begin(), fp.frames_used.end());
  }
  const bool frame_based = fp.source == FingerprintSource::kInAppFrames ||
                           fp.source == FingerprintSource::kThrowerFrames || fp.source == FingerprintSource::kAllFrames;
  fp.quality = !may_change ? Quality::kComplete : frame_based ? Quality::kPartial : Quality::kProvisional;

  // 4. Titles people read: numbers and ids masked, so one issue keeps one title.
  // The masked line the message fallback uses, cut for the title (masking twice cost ~5 % of an
  // ANR's grouping time).
  const std::string first_line = cutUtf8(masked_message, kTitleMessageChars);
  fp.exceptions = input.exceptions;
  if (family == "lag") {
    fp.title = fp.culprit.empty() ? "Lag"
                                  : "Lag in " + fp.culprit + " (" + percent(fp.lag_share) + " of " +
                                        std::to_string(fp.lag_samples) + " samples)";
  } else if (family == "anr") {
    fp.title = !fp.culprit.empty() ? "ANR in " + fp.culprit : "ANR" + (first_line.empty() ? "" : ": " + first_line);
  } else {
    fp.title = type.empty() ? (first_line.empty() ? std::string("Unknown error") : first_line)
                            : (first_line.empty() ? type : type + ": " + first_line);
  }

  // 5. An app rule may force the group, whatever the frames said.
  if (const FingerprintRule* rule =
          matchForcedRule(input, rules, type, firstLine(message, options.message_max_chars))) {
    fp.source = FingerprintSource::kForced;
    fp.components = {fp.algorithm, "forced", rule->fingerprint};
    fp.quality = Quality::kComplete;
    if (!rule->title.empty()) fp.title = rule->title;
    rules_applied.insert("fingerprint: rule " + rule->origin);
  }

  fp.hash = hashComponents(fp.components);
  fp.rules_applied.assign(rules_applied.begin(), rules_applied.end());
  if (!input.provisional_fingerprint.empty() && input.provisional_fingerprint != fp.hash) {
    fp.replaces = input.provisional_fingerprint;
  }
  for (auto& stack_annotation : threads) fp.thread_frames.push_back(std::move(stack_annotation.decisions));
  for (auto& stack_annotation : samples) fp.sample_frames.push_back(std::move(stack_annotation.decisions));
  for (auto& stack_annotation : causes) fp.cause_frames.push_back(std::move(stack_annotation.decisions));
  return fp;
}

const char* frameStateName(FrameState state) {
  switch (state) {
    case FrameState::kRestored:
      return "restored";
    case FrameState::kMissingSymbols:
      return "missing_symbols";
    case FrameState::kSystemSymbolsMissing:
      return "system_symbols_missing";
    case FrameState::kNotFound:
      return "not_found";
    case FrameState::kUnparsed:
      break;
  }
  return "unparsed";
}

const char* qualityName(Quality quality) {
  switch (quality) {
    case Quality::kComplete:
      return "complete";
    case Quality::kPartial:
      return "partial";
    case Quality::kProvisional:
      break;
  }
  return "provisional";
}

const char* fingerprintSourceName(FingerprintSource source) {
  switch (source) {
    case FingerprintSource::kForced:
      return "forced";
    case FingerprintSource::kInAppFrames:
      return "in_app";
    case FingerprintSource::kThrowerFrames:
      return "thrower";
    case FingerprintSource::kAllFrames:
      return "all";
    case FingerprintSource::kMessage:
      return "message";
    case FingerprintSource::kTypeOnly:
      break;
  }
  return "type";
}

}  // namespace restack::grouping
