#include "worker/pipeline/stack_kinds.h"

#include "worker/pipeline/kinds/java_kind.h"
#include "worker/pipeline/kinds/js_kind.h"
#include "worker/pipeline/kinds/native_kind.h"

namespace restack::pipeline {

std::span<const StackKind* const> stackKinds() {
  // One line per kind.
  static const StackKind* const kKinds[] = {
      &nativeKind(),
      &javaKind(),
      &jsKind(),
  };
  return kKinds;
}

}  // namespace restack::pipeline
