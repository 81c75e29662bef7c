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
  static_assert(std::size(kKinds) <= kMaxStackKinds, "raise kMaxStackKinds (restored_event.h)");
  return kKinds;
}

size_t frameTallyIndex(const StackKind* kind, FrameReason reason) {
  const auto kinds = stackKinds();
  size_t slot = kMaxStackKinds;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == kind) slot = i;
  }
  return slot * kFrameReasonCount + static_cast<size_t>(reason);
}

std::string_view frameTallyKindName(size_t kind_slot) {
  const auto kinds = stackKinds();
  if (kind_slot < kinds.size()) return kinds[kind_slot]->name();
  return kind_slot == kMaxStackKinds ? std::string_view("unknown") : std::string_view();
}

}  // namespace restack::pipeline
