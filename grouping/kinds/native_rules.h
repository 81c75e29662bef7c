// iOS and Android native frames: demangled C++/Swift/Objective-C/Rust names (normalize_native.cc).
#pragma once

#include "grouping/kinds.h"

namespace restack::grouping {

const FrameKindRules& nativeRules();

}  // namespace restack::grouping
