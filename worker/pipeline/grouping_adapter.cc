// Restored frames -> grouping::GroupingInput -> fingerprint; decisions copied back onto frames.
#include <algorithm>

#include "grouping/exception_text.h"
#include "grouping/fingerprint.h"
#include "grouping/record_json.h"
#include "worker/pipeline/fingerprint.h"
#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {
namespace {

grouping::FrameState stateOf(FrameStatus status) {
  switch (status) {
    case FrameStatus::kSymbolicated:
      return grouping::FrameState::kRestored;
    case FrameStatus::kMissingSymbols:
      return grouping::FrameState::kMissingSymbols;
    case FrameStatus::kNotFound:
      return grouping::FrameState::kNotFound;
    case FrameStatus::kUnparsed:
      return grouping::FrameState::kUnparsed;
  }
  return grouping::FrameState::kUnparsed;
}

grouping::GroupingFrame toGroupingFrame(const OutputFrame& frame) {
  grouping::GroupingFrame out;
  const std::optional<std::string_view> name =
      frame.kind != nullptr ? frame.kind->groupingName(frame) : std::string_view(frame.frame.function);
  out.name_unknown = !name;
  if (name) out.function = *name;
  out.line = frame.frame.line;
  out.file = frame.frame.file;
  out.scope = frame.frame.scope;
  out.module = frame.frame.module;
  // No copy of frame.raw: grouping never reads GroupingFrame::raw.
  out.in_app = frame.frame.in_app;
  out.kind = frame.kind != nullptr ? &frame.kind->groupingKind() : &grouping::unknownRules();
  out.state = stateOf(frame.status);
  for (const auto& alternative : frame.alternatives) {
    if (!alternative.empty()) out.alternatives.push_back(alternative.front().function);
  }
  return out;
}

// Where each grouping frame came from, to write decisions back.
using FrameRefs = std::vector<OutputFrame*>;

void addFrames(RestoredStack& stack, size_t begin, size_t end, std::vector<grouping::GroupingFrame>& frames,
               FrameRefs& refs) {
  const size_t count = std::min(end, stack.frames.size()) - std::min(begin, stack.frames.size());
  frames.reserve(frames.size() + count);
  refs.reserve(refs.size() + count);
  for (size_t i = begin; i < end && i < stack.frames.size(); ++i) {
    frames.push_back(toGroupingFrame(stack.frames[i]));
    refs.push_back(&stack.frames[i]);
  }
}

void applyDecisions(const std::vector<std::vector<grouping::FrameDecision>>& decisions,
                    const std::vector<FrameRefs>& refs) {
  for (size_t s = 0; s < decisions.size() && s < refs.size(); ++s) {
    for (size_t f = 0; f < decisions[s].size() && f < refs[s].size(); ++f) {
      refs[s][f]->frame.in_app = decisions[s][f].in_app;
    }
  }
}

const char* relationOf(const std::string& prefix) {
  if (prefix == "Caused by: ") return "caused_by";
  if (prefix == "Suppressed: ") return "suppressed";
  return "";
}

// The exception chain: the restorer's Java sections (deobfuscated) when there are some, else
// what the crashed thread's text (then any thread's) states; the event's own exception first.
std::vector<grouping::GroupingException> exceptionChain(const RawEvent& raw, const RestoredEvent& restored) {
  std::vector<grouping::GroupingException> chain;
  std::vector<size_t> order;
  for (size_t t = 0; t < raw.threads.size(); ++t) {
    if (raw.threads[t].crashed)
      order.insert(order.begin(), t);
    else
      order.push_back(t);
  }
  for (size_t t : order) {
    if (t >= restored.threads.size()) continue;
    for (const ExceptionSection& section : restored.threads[t].stack.sections) {
      chain.push_back({section.type, section.message, relationOf(section.prefix)});
    }
    if (chain.empty() && raw.threads[t].has_stack) chain = grouping::readExceptionsFromText(raw.threads[t].stack);
    if (!chain.empty()) break;
  }
  if (!restored.exception_type.empty() &&
      (chain.empty() || !chain.front().relation.empty() || chain.front().type != restored.exception_type)) {
    chain.insert(chain.begin(), {restored.exception_type, restored.exception_message, ""});
  }
  return chain;
}

}  // namespace

EventFingerprint fingerprintEvent(const RawEvent& raw, RestoredEvent& restored,
                                  const grouping::GroupingConfig& config) {
  grouping::GroupingInput input;
  input.app = raw.app;
  input.platform = raw.platform;
  input.kind = raw.kind.empty() ? "crash" : raw.kind;
  input.exception_type = restored.exception_type;
  input.exception_message = restored.exception_message;
  input.event_id = raw.event_id;
  input.build_id = raw.build_id;
  input.timestamp_ms = raw.timestamp_ms > 0 ? static_cast<uint64_t>(raw.timestamp_ms) : 0;
  input.provisional_fingerprint = raw.previous_fingerprint;
  input.exceptions = exceptionChain(raw, restored);

  std::vector<FrameRefs> thread_refs, sample_refs, cause_refs;
  for (size_t t = 0; t < raw.threads.size(); ++t) {
    const RawThread& raw_thread = raw.threads[t];
    RestoredThread& thread = restored.threads[t];
    grouping::GroupingThread out;
    out.name = raw_thread.name;
    out.crashed = raw_thread.crashed;
    FrameRefs refs;
    RestoredStack& stack = thread.stack;
    // A Java chain: the top exception's frames belong to the thread, every "Caused by:" is a
    // cause; "Suppressed:" sections take part in neither.
    size_t top_end = stack.frames.size();
    for (size_t k = 0; k < stack.sections.size(); ++k) {
      if (k > 0 || !stack.sections[k].prefix.empty()) {
        if (stack.sections[k].prefix == "Caused by: " || stack.sections[k].prefix == "Suppressed: ") {
          top_end = std::min(top_end, stack.sections[k].first_frame);
        }
      }
    }
    addFrames(stack, 0, top_end, out.frames, refs);
    for (size_t k = 0; k < stack.sections.size(); ++k) {
      const ExceptionSection& section = stack.sections[k];
      if (section.prefix != "Caused by: ") continue;
      size_t end = k + 1 < stack.sections.size() ? stack.sections[k + 1].first_frame : stack.frames.size();
      grouping::GroupingCause cause;
      cause.type = section.type;
      cause.message = section.message;
      FrameRefs cause_ref;
      addFrames(stack, section.first_frame, end, cause.frames, cause_ref);
      input.causes.push_back(std::move(cause));
      cause_refs.push_back(std::move(cause_ref));
    }
    input.threads.push_back(std::move(out));
    thread_refs.push_back(std::move(refs));
    for (RestoredStack& sample_stack : thread.samples) {
      grouping::GroupingSample sample;
      FrameRefs refs_for_sample;
      addFrames(sample_stack, 0, sample_stack.frames.size(), sample.frames, refs_for_sample);
      input.samples.push_back(std::move(sample));
      sample_refs.push_back(std::move(refs_for_sample));
    }
  }
  for (size_t s = 0, index = 0; s < raw.threads.size(); ++s) {
    for (const RawSample& raw_sample : raw.threads[s].samples) {
      input.samples[index++].timestamp_ms = raw_sample.timestamp_ms;
    }
  }

  grouping::Fingerprint fingerprint = grouping::computeFingerprint(input, config);
  applyDecisions(fingerprint.thread_frames, thread_refs);
  applyDecisions(fingerprint.sample_frames, sample_refs);
  applyDecisions(fingerprint.cause_frames, cause_refs);

  EventFingerprint out;
  out.hash = fingerprint.hash;
  out.key = grouping::fingerprintKey(input, fingerprint);
  out.record_json = grouping::fingerprintRecordJson(input, fingerprint);
  return out;
}

}  // namespace restack::pipeline
