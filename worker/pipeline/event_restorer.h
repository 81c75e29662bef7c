// Restores every thread of a raw event through the resolver of each line's kind. This is the one
// code path shared by the Kafka worker and `restack symbolicate`.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "formats/stack/stack_line.h"
#include "symbolstore/symbolizer.h"
#include "worker/pipeline/raw_event.h"
#include "worker/pipeline/restored_event.h"
#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {

struct RestoreLimits {
  uint32_t max_frames_per_thread = 512;  // lines past this are kept raw, status unparsed
};

class EventRestorer {
 public:
  EventRestorer(Symbolizer& symbolizer, const RestoreLimits& limits) : symbolizer_(symbolizer), limits_(limits) {}
  // Errors are infrastructure failures (the symbol store could not be read); a frame that cannot
  // be restored is a status on that frame, never an error.
  Expected<RestoredEvent> restore(const RawEvent& event);

 private:
  // Restores one stack of the event, `lines` parsed from `stack_text`; `facts` holds what each
  // kind (by registry position) read from the whole event.
  Expected<RestoredStack> restoreStack(const EventScope& scope, std::string_view stack_text,
                                       std::vector<stack::StackLine> lines,
                                       std::span<const std::unique_ptr<EventFacts>> facts, RestoredEvent& summary);
  Symbolizer& symbolizer_;
  RestoreLimits limits_;
};

}  // namespace restack::pipeline
