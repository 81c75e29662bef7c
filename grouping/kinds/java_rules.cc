#include "grouping/kinds/java_rules.h"

namespace restack::grouping {
namespace {

constinit const FrameKindRules kJavaRules{
    "java",           kinds::javaName,    nullptr, kinds::javaDistinctive,  kinds::javaEnclosing,
    kinds::javaNoise, kinds::javaAppRule, nullptr, kinds::javaInAppDefault, true};

}  // namespace

const FrameKindRules& javaRules() {
  return kJavaRules;
}

}  // namespace restack::grouping
