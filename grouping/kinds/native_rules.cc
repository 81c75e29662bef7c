#include "grouping/kinds/native_rules.h"

namespace restack::grouping {
namespace {

constinit const FrameKindRules kNativeRules{"native",
                                            kinds::nativeName,
                                            nullptr,
                                            kinds::nativeDistinctive,
                                            kinds::nativeEnclosing,
                                            kinds::nativeNoise,
                                            kinds::nativeAppRule,
                                            kinds::nativeLibraryCode,
                                            kinds::nativeInAppDefault,
                                            true};

}  // namespace

const FrameKindRules& nativeRules() {
  return kNativeRules;
}

}  // namespace restack::grouping
