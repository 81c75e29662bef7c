// JavaScript frames (V8, Firefox/Safari/JSC, Hermes): restored line by line by
// symbolstore/sourcemap, printed in the style of the raw line: "    at render (src/App.jsx:12:7)".
#pragma once

#include "worker/pipeline/stack_kind.h"

namespace restack::pipeline {

const StackKind& jsKind();

}  // namespace restack::pipeline
