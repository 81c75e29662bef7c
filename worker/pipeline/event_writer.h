// Writes the restored event of DESIGN.md §5: the input event with its unknown fields untouched,
// plus "frames" and "restored" on every thread (and lag sample), "symbolication" and
// "fingerprint".
#pragma once

#include <string>

#include "worker/pipeline/fingerprint.h"
#include "worker/pipeline/raw_event.h"
#include "worker/pipeline/restored_event.h"

namespace restack::pipeline {

std::string writeRestoredEvent(const RawEvent& raw, const RestoredEvent& restored, const EventFingerprint& fingerprint);

}  // namespace restack::pipeline
