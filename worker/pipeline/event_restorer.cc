#include "worker/pipeline/event_restorer.h"

#include <algorithm>
#include <span>

#include "formats/stack/thread_note_line.h"
#include "worker/pipeline/stack_kinds.h"

namespace restack::pipeline {

void RunOutput::frame(const StackKind* kind, const stack::StackLine& line, FrameLookup&& lookup,
                      std::string_view device_symbol) {
  // Restored without a frame to show counts as not covered.
  if (lookup.status == FrameStatus::kSymbolicated && lookup.frames.empty() && !lookup.removed) {
    lookup.status = FrameStatus::kNotFound;
  }
  // The resolver's reason, unless it names none or one of another status (then the status's
  // default): a frame's reason always matches its status, which the metrics rely on.
  if (frameReasonStatus(lookup.reason) != lookup.status) lookup.reason = defaultFrameReason(lookup.status);
  ++raw_frames_;
  ++summary_.frames_total;
  ++summary_.frames_by_kind[frameTallyIndex(kind, lookup.reason)];
  if (lookup.status == FrameStatus::kSymbolicated) ++summary_.frames_symbolicated;
  // Only symbols an upload for the app can bring are waited for; an operating-system image's
  // (reason system_image) leaves the frame unrestored like one the symbols do not cover.
  if (lookup.reason == FrameReason::kMissingSymbols) {
    summary_.any_missing = true;
    if (!lookup.missing_id.empty()) summary_.missing_ids.insert(lookup.missing_id);
  } else if (lookup.status != FrameStatus::kSymbolicated) {
    summary_.any_unrestored = true;
  }
  // Synthesized / outlined frames vanish from the frames and from the text.
  if (lookup.removed) return;
  std::vector<OutputFrame>& frames = stack_.frames;
  if (lookup.status != FrameStatus::kSymbolicated) {
    OutputFrame& frame = frames.emplace_back();
    frame.raw = line.raw;
    frame.kind = kind;
    frame.status = lookup.status;
    frame.reason = lookup.reason;
    frame.tier = lookup.tier;
    frame.note = std::move(lookup.note);
    frame.missing_id = std::move(lookup.missing_id);
    frame.missing_id_kind = lookup.missing_id_kind;
    frame.device_symbol = device_symbol;
    // A kind's frame keeps its raw line with why it is not restored after it. Lines no kind
    // claims (report headers, message lines) and lines past the frame limit stay as they are:
    // the text reads as the platform prints it, and their frames carry the reason.
    if (kind == nullptr) {
      text_.line(line.raw);
      return;
    }
    std::string& text = text_.line(line.raw);
    text += "  (";
    text += notRestoredText(frameReasonName(frame.reason), missingIdKindName(frame.missing_id_kind), frame.missing_id);
    text += ')';
    return;
  }
  const size_t first = frames.size();
  for (size_t i = 0; i < lookup.frames.size(); ++i) {
    OutputFrame& frame = frames.emplace_back(std::move(lookup.frames[i]));
    frame.raw = line.raw;
    frame.kind = kind;
    frame.status = FrameStatus::kSymbolicated;
    frame.reason = lookup.reason;
    frame.tier = lookup.tier;
    // The last frame of an inline chain takes the lookup's note, the others copy it.
    const bool last = i + 1 == lookup.frames.size();
    frame.note = last ? std::move(lookup.note) : lookup.note;
    if (i == 0) frame.alternatives = std::move(lookup.alternatives);
  }
  if (kind == nullptr) {
    text_.line(line.raw);
    return;
  }
  kind->render(line, std::span<const OutputFrame>(frames.data() + first, frames.size() - first), text_);
}

const char* symbolicationStateName(SymbolicationState state) {
  switch (state) {
    case SymbolicationState::kComplete:
      return "complete";
    case SymbolicationState::kPartial:
      return "partial";
    case SymbolicationState::kPending:
      return "pending";
  }
  return "partial";
}

Expected<RestoredStack> EventRestorer::restoreStack(const EventScope& scope, std::string_view stack_text,
                                                    std::vector<stack::StackLine> lines,
                                                    std::span<const std::unique_ptr<EventFacts>> facts,
                                                    RestoredEvent& summary) {
  const std::span<const StackKind* const> kinds = stackKinds();
  RestoredStack out;
  // An output frame per line, and as many again for inlined ones (R8-inlined Java and inlined
  // native code often add more than one per line), so the frames are rarely moved: with half as
  // many, one stack of five of the load test's grew and moved every frame.
  out.frames.reserve(2 * lines.size());
  // Restored lines run up to about twice their raw ones (a deobfuscated Java name, inline frames
  // added); past that the text grows as a string does.
  out.restored_text.reserve(2 * stack_text.size() + 64);
  RestoredTextWriter text(out.restored_text);
  RunOutput output(out, text, summary);
  // Lines each kind restored so far in this stack, by registry position.
  std::vector<size_t> earlier(kinds.size(), 0);

  for (size_t i = 0; i < lines.size();) {
    const stack::StackLine& line = lines[i];
    // Blank lines and a thread dump's notes about the thread ("- waiting on <0x…>") are no
    // frames: they stay in the text as they came.
    if (line.isBlank() || stack::isThreadNote(line)) {
      text.line(line.raw);
      ++i;
      continue;
    }
    if (output.rawFrames() >= limits_.max_frames_per_thread) {
      FrameLookup skipped;
      skipped.status = FrameStatus::kUnparsed;
      skipped.reason = FrameReason::kFrameLimit;
      skipped.note = "the thread has more than limits.max_frames_per_thread frames";
      output.frame(nullptr, line, std::move(skipped));
      ++i;
      continue;
    }
    const StackKind* kind = kindClaiming(line);
    if (kind == nullptr) {
      FrameLookup unparsed;
      unparsed.status = FrameStatus::kUnparsed;
      unparsed.reason = FrameReason::kUnparsed;
      output.frame(nullptr, line, std::move(unparsed));
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < lines.size() && kind->claims(lines[end])) ++end;
    // A kind that restores line by line records one raw frame per line: cut its run where the
    // frame limit is reached, the lines after it are kept raw above.
    if (!kind->wholeRuns()) end = std::min(end, i + (limits_.max_frames_per_thread - output.rawFrames()));
    const size_t slot = static_cast<size_t>(std::find(kinds.begin(), kinds.end(), kind) - kinds.begin());
    StackRun run{symbolizer_, scope, std::span<const stack::StackLine>(lines.data() + i, end - i), earlier[slot],
                 facts[slot].get()};
    RESTACK_RETURN_IF_ERROR(kind->restoreRun(run, output));
    earlier[slot] += end - i;
    i = end;
  }
  out.lines = std::move(lines);  // the frames' raw views move with the vector's buffer
  return out;
}

Expected<RestoredEvent> EventRestorer::restore(const RawEvent& event) {
  EventScope scope{event.app, event.build_id, event.platform, event.symbol_ids};
  RestoredEvent restored;
  restored.exception_type = event.exception_type;
  restored.exception_message = event.exception_message;
  for (const StackKind* kind : stackKinds()) {
    RESTACK_RETURN_IF_ERROR(kind->restoreEvent(symbolizer_, event, scope, restored));
  }
  // Every stack is parsed before any is restored: a kind may need what another thread's lines say
  // (StackKind::readEvent; an Apple frame is placed by the load address another thread prints).
  std::vector<std::vector<stack::StackLine>> parsed;
  for (const RawThread& thread : event.threads) {
    if (thread.has_stack) parsed.push_back(stack::parseStack(thread.stack));
    for (const RawSample& sample : thread.samples) parsed.push_back(stack::parseStack(sample.stack));
  }
  const std::span<const StackKind* const> kinds = stackKinds();
  std::vector<std::unique_ptr<EventFacts>> facts(kinds.size());
  for (size_t slot = 0; slot < kinds.size(); ++slot) facts[slot] = kinds[slot]->readEvent(parsed);
  size_t next = 0;  // the next of `parsed`, in the order they were parsed
  for (const RawThread& thread : event.threads) {
    RestoredThread out;
    if (thread.has_stack) {
      auto stack = restoreStack(scope, thread.stack, std::move(parsed[next++]), facts, restored);
      if (!stack) return stack.error();
      out.stack = std::move(*stack);
    }
    for (const RawSample& sample : thread.samples) {
      auto stack = restoreStack(scope, sample.stack, std::move(parsed[next++]), facts, restored);
      if (!stack) return stack.error();
      out.samples.push_back(std::move(*stack));
    }
    restored.threads.push_back(std::move(out));
  }
  restored.state = restored.any_missing      ? SymbolicationState::kPending
                   : restored.any_unrestored ? SymbolicationState::kPartial
                                             : SymbolicationState::kComplete;
  return restored;
}

}  // namespace restack::pipeline
