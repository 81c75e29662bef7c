// Java/Kotlin lines (frames, exception headers, "... N more"): whole runs retraced by
// symbolstore/proguard, printed as R8 retrace prints them: "\tat com.example.Foo.bar(Foo.java:42)".
#pragma once

#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {

const StackKind& javaKind();

}  // namespace restack::pipeline
