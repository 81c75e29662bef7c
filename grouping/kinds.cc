#include "grouping/kinds.h"

namespace restack::grouping {
namespace {

// A frame of unknown kind is read as a native one (its name, if any, is a printed symbol) but
// has no in-app default of its own.
constinit const FrameKindRules kUnknownRules{
    "unknown",          kinds::nativeName, nullptr, kinds::nativeDistinctive,   kinds::nativeEnclosing,
    kinds::nativeNoise, nullptr,           nullptr, kinds::unknownInAppDefault, true};

}  // namespace

const FrameKindRules& unknownRules() {
  return kUnknownRules;
}

}  // namespace restack::grouping
