// JavaScript frames: original names from source maps, or positions (normalize_js.cc).
#pragma once

#include "grouping/kinds.h"

namespace restack::grouping {

const FrameKindRules& jsRules();

}  // namespace restack::grouping
