// The result of restoring one event: per thread (and per lag sample) the output frames and the
// restored text of docs/design.md §5, plus the event-level symbolication summary.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "formats/stack/stack_line.h"
#include "symbolstore/frame_lookup.h"

namespace restack::pipeline {

class StackKind;  // stack_kind.h

// Raw frames counted by kind and reason (FrameReason, symbolstore/frame_lookup.h; kNone: fully
// restored), for the worker's metrics: slot = kind's registry position (stack_kinds.h; the last
// slot: lines no kind claims) * kFrameReasonCount + reason. A reason has one status
// (frameReasonStatus), so the counts by status are sums of these. frameTallyIndex and
// frameTallyKindName are in stack_kinds.h.
inline constexpr size_t kMaxStackKinds = 8;
inline constexpr size_t kFrameTallyKinds = kMaxStackKinds + 1;
using FrameTally = std::array<uint32_t, kFrameTallyKinds * kFrameReasonCount>;

// One entry of a thread's "frames" array. A raw frame that restored to several frames (inlining)
// yields several entries with the same `raw`, innermost first.
struct OutputFrame {
  OutputFrame() = default;
  // A restored frame (RunOutput::frame): constructed from the resolver's frame rather than
  // default-constructed and then assigned it.
  explicit OutputFrame(SymbolizedFrame&& restored) : frame(std::move(restored)) {}

  // The raw line: a view of the stack's own copy of it (RestoredStack::lines), so the inline
  // frames of one raw frame share it and no frame copies it.
  std::string_view raw;
  const StackKind* kind = nullptr;  // the kind that restored it (stack_kinds.h); null: no kind's line
  FrameStatus status = FrameStatus::kUnparsed;
  // Why the raw frame is not (fully) restored, on every entry of it; kNone when it is.
  FrameReason reason = FrameReason::kNone;
  SymbolizedFrame frame;  // function/file/line/… when restored
  std::string_view tier;  // FrameLookup::tier: static storage
  std::string note;
  std::string missing_id;  // kMissingSymbols: the identifier without symbols, and which one it is
  MissingIdKind missing_id_kind = MissingIdKind::kNone;
  std::vector<std::vector<SymbolizedFrame>> alternatives;
  // On a frame not restored: the symbol the device printed for it ("abort+164" in a tombstone,
  // "__pthread_kill + 8" in an Apple report), as printed. Not Restack's answer, so no part of
  // `frame` or of grouping.
  std::string device_symbol;
};

// A Java exception header inside a stack ("Caused by: a.b.C: msg") and where its frames start.
struct ExceptionSection {
  std::string prefix;  // "", "Caused by: ", "Suppressed: ", "Exception in thread \"main\" "
  std::string type;    // deobfuscated class name
  std::string message;
  size_t first_frame = 0;  // index into RestoredStack::frames
};

struct RestoredStack {
  RestoredStack() = default;
  RestoredStack(RestoredStack&&) noexcept = default;
  RestoredStack& operator=(RestoredStack&&) noexcept = default;
  // A copy's frames would still view the original's lines.
  RestoredStack(const RestoredStack&) = delete;
  RestoredStack& operator=(const RestoredStack&) = delete;

  // The raw stack's lines, which the frames' `raw` views (a move keeps them where they are).
  std::vector<stack::StackLine> lines;
  std::vector<OutputFrame> frames;
  std::vector<ExceptionSection> sections;  // Java traces only, in order
  std::string restored_text;               // reads like the platform's own tools would print it
};

struct RestoredThread {
  RestoredStack stack;                 // when the thread had "stack"
  std::vector<RestoredStack> samples;  // when it had "samples" (lag events)
};

enum class SymbolicationState { kComplete, kPartial, kPending };
const char* symbolicationStateName(SymbolicationState state);

struct RestoredEvent {
  std::vector<RestoredThread> threads;  // same order as RawEvent::threads
  SymbolicationState state = SymbolicationState::kComplete;
  std::set<std::string> missing_ids;  // debug ids / mapping ids / files that had no symbols
  std::string exception_type;         // deobfuscated when a mapping knew it; else as received
  std::string exception_message;      // class names inside it deobfuscated (Android)
  bool any_missing = false;           // some frame waits for symbols never uploaded
  bool any_unrestored = false;        // some frame was not found or not parsed
  size_t frames_total = 0;
  size_t frames_symbolicated = 0;
  FrameTally frames_by_kind{};
};

}  // namespace restack::pipeline
