#include "grouping/kinds/js_rules.h"

namespace restack::grouping {
namespace {

constinit const FrameKindRules kJsRules{
    "js",           kinds::jsName, kinds::jsUnnamed, kinds::jsDistinctive,  kinds::jsEnclosing,
    kinds::jsNoise, nullptr,       nullptr,          kinds::jsInAppDefault, false};

}  // namespace

const FrameKindRules& jsRules() {
  return kJsRules;
}

}  // namespace restack::grouping
