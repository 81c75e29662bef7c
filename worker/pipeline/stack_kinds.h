// The registry of stack kinds: one line per kind in stack_kinds.cc. Everything that treats
// lines or frames by kind (the restorer, raw-event parsing, the output writer, the grouping
// adapter, `restack symbolicate`) goes through this list; adding a kind is its own files under
// worker/pipeline/kinds/ plus one line there (docs/design.md §10, "Adding a stack kind").
#pragma once

#include <span>

#include "formats/stack/stack_line.h"
#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {

// Every kind, in registry order.
std::span<const StackKind* const> stackKinds();

// The FrameTally slot (restored_event.h) of a frame of `kind` (nullptr: a line no kind claims)
// with `reason`; with a `status`, that of the status's defaultFrameReason.
size_t frameTallyIndex(const StackKind* kind, FrameReason reason);
inline size_t frameTallyIndex(const StackKind* kind, FrameStatus status) {
  return frameTallyIndex(kind, defaultFrameReason(status));
}
// The kind name of a FrameTally kind slot ("native", …, "unknown"); empty for unused slots.
std::string_view frameTallyKindName(size_t kind_slot);

// The kind that claims `line`, or nullptr (blank and unrecognised lines).
inline const StackKind* kindClaiming(const stack::StackLine& line) {
  for (const StackKind* kind : stackKinds()) {
    if (kind->claims(line)) return kind;
  }
  return nullptr;
}

}  // namespace restack::pipeline
