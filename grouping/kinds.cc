#include "grouping/kinds.h"

#include <array>

namespace restack::grouping {
namespace {

// One row per FrameKind, in the enum's order. A frame of unknown kind is read as a native one
// (its name, if any, is a printed symbol) but has no in-app default of its own.
constexpr std::array<FrameKindRules, 4> kRows = {{
    {FrameKind::kUnknown, "unknown", kinds::nativeName, nullptr, kinds::nativeDistinctive, kinds::nativeEnclosing,
     kinds::nativeNoise, nullptr, nullptr, kinds::unknownInAppDefault, true},
    {FrameKind::kNative, "native", kinds::nativeName, nullptr, kinds::nativeDistinctive, kinds::nativeEnclosing,
     kinds::nativeNoise, kinds::nativeAppRule, kinds::nativeLibraryCode, kinds::nativeInAppDefault, true},
    {FrameKind::kJava, "java", kinds::javaName, nullptr, kinds::javaDistinctive, kinds::javaEnclosing, kinds::javaNoise,
     kinds::javaAppRule, nullptr, kinds::javaInAppDefault, true},
    {FrameKind::kJs, "js", kinds::jsName, kinds::jsUnnamed, kinds::jsDistinctive, kinds::jsEnclosing, kinds::jsNoise,
     nullptr, nullptr, kinds::jsInAppDefault, false},
}};

constexpr bool inEnumOrder() {
  for (size_t i = 0; i < kRows.size(); ++i) {
    if (static_cast<size_t>(kRows[i].kind) != i) return false;
  }
  return true;
}
static_assert(inEnumOrder(), "kRows must list the FrameKind values in order");

}  // namespace

const FrameKindRules& frameKindRules(FrameKind kind) {
  const size_t index = static_cast<size_t>(kind);
  return index < kRows.size() ? kRows[index] : kRows[0];
}

const char* frameKindName(FrameKind kind) {
  return frameKindRules(kind).name;
}

}  // namespace restack::grouping
