// The grouping fingerprint of a restored event (docs/design.md §6), computed by grouping/ from the
// restored frames. The pipeline also records grouping's in-app decision on every output frame.
#pragma once

#include <memory>
#include <string>

#include "grouping/rules.h"
#include "worker/pipeline/raw_event.h"
#include "worker/pipeline/restored_event.h"

namespace restack::pipeline {

struct EventFingerprint {
  std::string hash;         // 32 hex digits; the output key is "<app>:<hash>"
  std::string key;          // "<app>:<hash>"
  std::string record_json;  // the compact record for restack.fingerprints (and the event's field)
};

// Computes the fingerprint and writes grouping's in-app decisions into `restored`'s frames.
EventFingerprint fingerprintEvent(const RawEvent& raw, RestoredEvent& restored, const grouping::GroupingConfig& config);

}  // namespace restack::pipeline
