// Restored frames -> grouping::GroupingInput -> fingerprint; decisions copied back onto frames.
#include <algorithm>

#include "grouping/exception_text.h"
#include "grouping/fingerprint.h"
#include "grouping/record_json.h"
#include "worker/pipeline/fingerprint.h"
#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {
namespace {

grouping::FrameState stateOf(FrameStatus status, FrameReason reason) {
  switch (status) {
    case FrameStatus::kSymbolicated:
      return grouping::FrameState::kRestored;
    case FrameStatus::kMissingSymbols:
      return reason == FrameReason::kSystemImage ? grouping::FrameState::kSystemSymbolsMissing
                                                 : grouping::FrameState::kMissingSymbols;
    case FrameStatus::kNotFound:
      return grouping::FrameState::kNotFound;
    case FrameStatus::kUnparsed:
      return grouping::FrameState::kUnparsed;
  }
  return grouping::FrameState::kUnparsed;
}

// The grouping frames borrow the restored frames' strings instead of copying them (a real-sized event
// has ~64 frames of four strings each): they are moved in, and moved back once the fingerprint is
// computed (lendBack). `lent` says which were moved, per frame.
enum Lent : uint8_t { kFunction = 1, kFile = 2, kScope = 4, kModule = 8 };

// Fills `out`, a fresh frame already in its vector (not built aside and moved in).
void fillGroupingFrame(OutputFrame& frame, bool borrow, uint8_t& lent, grouping::GroupingFrame& out) {
  lent = 0;
  const std::optional<std::string_view> name =
      frame.kind != nullptr ? frame.kind->groupingName(frame) : std::string_view(frame.frame.function);
  out.name_unknown = !name;
  SymbolizedFrame& restored = frame.frame;
  if (name) {
    // Moved only when the name is the restored function itself, not text a kind made for grouping.
    if (borrow && restored.function.owned() && name->data() == restored.function.data() &&
        name->size() == restored.function.size()) {
      out.function = std::move(restored.function.own());
      lent |= kFunction;
    } else {
      out.function = *name;
    }
  }
  out.line = restored.line;
  auto take = [&](std::string& from, std::string& to, uint8_t bit) {
    if (borrow) {
      to = std::move(from);
      lent |= bit;
    } else {
      to = from;
    }
  };
  // A string a resolver's cache shares is copied: it is not the frame's to lend.
  auto takeShared = [&](FrameString& from, std::string& to, uint8_t bit) {
    if (from.owned()) {
      take(from.own(), to, bit);
    } else {
      to = from.str();
    }
  };
  takeShared(restored.file, out.file, kFile);
  take(restored.scope, out.scope, kScope);
  takeShared(restored.module, out.module, kModule);
  out.in_app = restored.in_app;
  out.kind = frame.kind != nullptr ? &frame.kind->groupingKind() : &grouping::unknownRules();
  out.state = stateOf(frame.status, frame.reason);
  for (const auto& alternative : frame.alternatives) {
    if (!alternative.empty()) out.alternatives.push_back(alternative.front().function);
  }
}

// Where each grouping frame came from, to write decisions back and return the strings lent.
struct FrameRefs {
  std::vector<OutputFrame*> frames;
  std::vector<uint8_t> lent;
};

// Adds frames [begin, end) of `stack`. A frame is lent only once: `lent_until` is where the frames
// this stack already lent end (the thread's own frames, then each cause's, in order); a range that
// starts before it is copied.
void addFrames(RestoredStack& stack, size_t begin, size_t end, size_t& lent_until,
               std::vector<grouping::GroupingFrame>& frames, FrameRefs& refs) {
  end = std::min(end, stack.frames.size());
  begin = std::min(begin, end);
  const bool borrow = begin >= lent_until;
  if (borrow) lent_until = end;
  const size_t count = end - begin;
  frames.reserve(frames.size() + count);
  refs.frames.reserve(refs.frames.size() + count);
  refs.lent.reserve(refs.lent.size() + count);
  for (size_t i = begin; i < end; ++i) {
    uint8_t lent = 0;
    fillGroupingFrame(stack.frames[i], borrow, lent, frames.emplace_back());
    refs.frames.push_back(&stack.frames[i]);
    refs.lent.push_back(lent);
  }
}

void lendBack(std::vector<grouping::GroupingFrame>& frames, const FrameRefs& refs) {
  for (size_t f = 0; f < frames.size() && f < refs.frames.size(); ++f) {
    const uint8_t lent = refs.lent[f];
    if (lent == 0) continue;
    SymbolizedFrame& restored = refs.frames[f]->frame;
    if (lent & kFunction) restored.function = std::move(frames[f].function);
    if (lent & kFile) restored.file = std::move(frames[f].file);
    if (lent & kScope) restored.scope = std::move(frames[f].scope);
    if (lent & kModule) restored.module = std::move(frames[f].module);
  }
}

void applyDecisions(const std::vector<std::vector<grouping::FrameDecision>>& decisions,
                    const std::vector<FrameRefs>& refs) {
  for (size_t s = 0; s < decisions.size() && s < refs.size(); ++s) {
    for (size_t f = 0; f < decisions[s].size() && f < refs[s].frames.size(); ++f) {
      refs[s].frames[f]->frame.in_app = decisions[s][f].in_app;
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
    size_t lent_until = 0;
    addFrames(stack, 0, top_end, lent_until, out.frames, refs);
    for (size_t k = 0; k < stack.sections.size(); ++k) {
      const ExceptionSection& section = stack.sections[k];
      if (section.prefix != "Caused by: ") continue;
      size_t end = k + 1 < stack.sections.size() ? stack.sections[k + 1].first_frame : stack.frames.size();
      grouping::GroupingCause cause;
      cause.type = section.type;
      cause.message = section.message;
      FrameRefs cause_ref;
      addFrames(stack, section.first_frame, end, lent_until, cause.frames, cause_ref);
      input.causes.push_back(std::move(cause));
      cause_refs.push_back(std::move(cause_ref));
    }
    input.threads.push_back(std::move(out));
    thread_refs.push_back(std::move(refs));
    for (RestoredStack& sample_stack : thread.samples) {
      grouping::GroupingSample sample;
      FrameRefs refs_for_sample;
      size_t sample_lent_until = 0;
      addFrames(sample_stack, 0, sample_stack.frames.size(), sample_lent_until, sample.frames, refs_for_sample);
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
  for (size_t t = 0; t < input.threads.size() && t < thread_refs.size(); ++t) {
    lendBack(input.threads[t].frames, thread_refs[t]);
  }
  for (size_t c = 0; c < input.causes.size() && c < cause_refs.size(); ++c) {
    lendBack(input.causes[c].frames, cause_refs[c]);
  }
  for (size_t s = 0; s < input.samples.size() && s < sample_refs.size(); ++s) {
    lendBack(input.samples[s].frames, sample_refs[s]);
  }
  return out;
}

}  // namespace restack::pipeline
