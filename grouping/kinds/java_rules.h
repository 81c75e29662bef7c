// Java/Kotlin frames: "pkg.Class.method" after retrace (normalize_java.cc).
#pragma once

#include "grouping/kinds.h"

namespace restack::grouping {

const FrameKindRules& javaRules();

}  // namespace restack::grouping
