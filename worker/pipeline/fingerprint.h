// The grouping fingerprint attached to every restored event (DESIGN.md §6), as the pipeline
// carries it. Computed by grouping_adapter.cc from the restored frames.
#pragma once

#include <string>
#include <vector>

#include "worker/pipeline/raw_event.h"
#include "worker/pipeline/restored_event.h"

namespace restack::pipeline {

struct EventFingerprint {
  std::string id;         // hex hash; the output key is "<app>:<id>"
  std::string algorithm;  // "v1"
  std::string title;
  std::string culprit;
  std::string quality;    // complete | partial | provisional
  std::vector<std::string> frames;  // the normalized frames that produced the hash
  std::string record_json;          // the compact record for restack.fingerprints
};

EventFingerprint fingerprintEvent(const RawEvent& raw, const RestoredEvent& restored);

}  // namespace restack::pipeline

namespace restack::pipeline {

// The compact record published to restack.fingerprints:
//   {"app":"shop","build_id":"7.8.0","event_id":"e1","platform":"android","kind":"crash",
//    "timestamp_ms":1700000000000,"symbolication":"complete","fingerprint":{…}}
std::string fingerprintRecord(const RawEvent& raw, const RestoredEvent& restored,
                              const EventFingerprint& fingerprint);

}  // namespace restack::pipeline
