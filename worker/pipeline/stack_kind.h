// One stack kind on the restore side (docs/design.md §10): which raw lines are its own, how a
// run of them is restored against the symbol store, how its restored frames read in the
// `restored` text, and what grouping calls it. One implementation per kind lives in
// worker/pipeline/kinds/; stack_kinds.h lists them. The restorer (event_restorer.cc), the
// output writer and the grouping adapter dispatch through this interface and never name a kind.
//
// Cost: the restorer makes one virtual call per kind and event to read the event, one per line
// to find the claiming kind and one per run to restore it; frames are appended straight into the
// stack's output, and rendering is one virtual call per restored raw line.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/stack/stack_line.h"
#include "grouping/model.h"
#include "symbolstore/symbolizer.h"
#include "worker/pipeline/raw_event.h"
#include "worker/pipeline/restored_event.h"

namespace restack::pipeline {

class StackKind;

// A stack's restored text (RestoredStack::restored_text), written line by line into the one
// string: a line is appended where it is printed, not built apart and joined after.
class RestoredTextWriter {
 public:
  explicit RestoredTextWriter(std::string& text) : text_(text) {}

  // Starts a line (after a line break, unless it is the first) with `start` (an indent, or the
  // whole line) and returns the text to append the rest of the line to.
  std::string& line(std::string_view start = {}) {
    if (lines_++ > 0) text_.push_back('\n');
    return text_.append(start);
  }

 private:
  std::string& text_;
  size_t lines_ = 0;
};

// Where a kind puts what one run restored to. Owned by the restorer, one per stack: it appends
// output frames, counts them into the event summary, and prints each restored raw line through
// the kind's `render`.
class RunOutput {
 public:
  RunOutput(RestoredStack& stack, RestoredTextWriter& text, RestoredEvent& summary)
      : stack_(stack), text_(text), summary_(summary) {}

  // The answer for one raw frame of the run (`kind` null: a line no kind restores). Taken by
  // reference: its strings and frames are moved into the output, without a move of the whole
  // lookup first. `device_symbol`: what the raw line printed as the frame's symbol, kept on a
  // frame that is not restored (OutputFrame::device_symbol).
  void frame(const StackKind* kind, const stack::StackLine& line, FrameLookup&& lookup,
             std::string_view device_symbol = {});
  // A line of restored text that is no frame (an exception header, "... N more", a raw line).
  void text(std::string_view line) { text_.line(line); }
  // An exception header; its frames are the ones appended after it.
  void section(std::string prefix, std::string type, std::string message) {
    stack_.sections.push_back({std::move(prefix), std::move(type), std::move(message), stack_.frames.size()});
  }
  uint32_t rawFrames() const { return raw_frames_; }

 private:
  RestoredStack& stack_;
  RestoredTextWriter& text_;
  RestoredEvent& summary_;
  uint32_t raw_frames_ = 0;
};

// The parsed lines of every stack of one event: each thread's stack and each lag sample's, in the
// event's order.
using EventStacks = std::span<const std::vector<stack::StackLine>>;

// What a kind learnt from the whole event before any of its stacks was restored
// (StackKind::readEvent), handed to each of its runs. Each kind derives its own.
class EventFacts {
 public:
  virtual ~EventFacts() = default;
};

// What a kind gets to restore one run: consecutive lines it claims, in one stack.
struct StackRun {
  Symbolizer& symbolizer;
  const EventScope& scope;
  std::span<const stack::StackLine> lines;
  size_t earlier_lines = 0;  // lines of this kind restored before this run in the same stack
  // What this kind's readEvent returned for the run's event; null when it returned nothing.
  const EventFacts* event_facts = nullptr;
};

class StackKind {
 public:
  virtual ~StackKind() = default;

  // "native", "java", "js": the `kind` of its output frames (docs/design.md §5).
  virtual std::string_view name() const = 0;

  // Whether a parsed raw line is this kind's. Kinds claim disjoint lines.
  virtual bool claims(const stack::StackLine& line) const = 0;

  // Whether a run must reach restoreRun whole (Java: rules depend on the exception above a
  // frame). Otherwise the restorer may cut a run where limits.max_frames_per_thread is reached;
  // such a kind records exactly one raw frame per line.
  virtual bool wholeRuns() const { return false; }

  // The event field ("pg_map_id") that names this kind's symbol file for the whole event, if
  // any: raw_event.cc stores its value in EventScope::symbol_ids under name().
  virtual std::string_view eventIdField() const { return {}; }

  // Reads, once per event and before any of its stacks is restored, what the kind's runs need to
  // know from the other stacks of the event (the native kind: where each image was loaded, which
  // one thread's line may print for a frame of another). Null (the default) when nothing; its
  // result reaches every run of the event as StackRun::event_facts and lives until the event is
  // restored.
  virtual std::unique_ptr<EventFacts> readEvent(EventStacks stacks) const { return nullptr; }

  // Restores a run: one `out.frame` per raw frame of it (in order), `out.text` for lines that
  // are no frames. Errors are infrastructure failures only.
  virtual Status restoreRun(const StackRun& run, RunOutput& out) const = 0;

  // The restored text of one raw line whose first frame is symbolicated: one text line per
  // frame (innermost first), then the alternatives of an ambiguous answer.
  virtual void render(const stack::StackLine& line, std::span<const OutputFrame> frames,
                      RestoredTextWriter& out) const = 0;

  // Event-level fields this kind restores (Java: the event's exception type and message).
  virtual Status restoreEvent(Symbolizer& symbolizer, const RawEvent& event, const EventScope& scope,
                              RestoredEvent& restored) const {
    return Status::ok();
  }

  // What grouping does with its frames (grouping/kinds.h; the kind's rules in grouping/kinds/).
  virtual const grouping::FrameKindRules& groupingKind() const = 0;

  // The function name grouping keys the frame by: the restored one, unless the kind knows it is
  // not the function's own. nullopt: no usable name (one the build chose, such as a minified JS
  // name printed as is); grouping keys the frame by position instead.
  virtual std::optional<std::string_view> groupingName(const OutputFrame& frame) const { return frame.frame.function; }
};

// The `kind` string of an output frame: its kind's name, "unknown" for no kind.
inline std::string_view kindName(const StackKind* kind) {
  return kind ? kind->name() : std::string_view("unknown");
}

}  // namespace restack::pipeline
