// What grouping does with the frames of each kind (docs/design.md §10): one FrameKindRules
// object per kind, defined in grouping/kinds/<kind>_rules.cc (the unknown kind's in kinds.cc),
// which every GroupingFrame points at. normalize.h, in_app.h, annotate.cc and the fingerprint
// read a frame's kind only through its rules; the rules point at each kind's own code
// (normalize_<kind>.cc, the kind's lists in normalize_common.cc and in_app.cc). There is no
// list of kinds: a new kind is its rules file, and the worker's StackKind::groupingKind()
// returns its rules.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "grouping/in_app.h"
#include "grouping/model.h"
#include "grouping/normalize.h"

namespace restack::grouping {

struct FrameKindRules {
  const char* name;  // "native", "java", "js", "unknown" (the record's frame kind)
  // The normalized form of one candidate name of `frame` (its function or an alternative).
  NormalizedName (*normalize_name)(std::string_view function, const GroupingFrame& frame);
  // The key of a frame whose restorer knows its position but no name (name_unknown); null when
  // the kind has no such frames.
  NormalizedName (*normalize_unnamed)(const GroupingFrame& frame);
  // Whether a normalized name (position suffix already cut) tells problems apart (normalize.h).
  bool (*is_distinctive)(std::string_view normalized);
  // The enclosing named function of a lambda or anonymous function, "" when none.
  std::string (*enclosing_function)(std::string_view normalized);
  // Why a normalized name is noise every crash of this kind shares, nullptr when it is not.
  const char* (*noise)(std::string_view normalized);
  // The app's rule file beyond its `in_app` rules (app_packages, app_modules); null when no such
  // setting applies to the kind. Returns nothing when the setting does not decide.
  std::optional<InAppDecision> (*app_rule)(const GroupingFrame& frame, std::string_view normalized,
                                           const AppRules& rules);
  // Library code even inside the app's own image, before the restorer's decision: its reason,
  // nullptr when not. Null when the kind has none.
  const char* (*library_code)(std::string_view normalized);
  // The in-app default when neither the rules nor the restorer decided.
  InAppDecision (*in_app_default)(const GroupingFrame& frame, std::string_view normalized);
  // Whether a name the device printed is usable when symbols did not cover the frame (a Java or
  // native name is real; a minified JavaScript name is not).
  bool unrestored_name_usable;
};

// The kinds' own functions the rules point at.
namespace kinds {
NormalizedName nativeName(std::string_view function, const GroupingFrame& frame);
NormalizedName javaName(std::string_view function, const GroupingFrame& frame);
NormalizedName jsName(std::string_view function, const GroupingFrame& frame);
NormalizedName jsUnnamed(const GroupingFrame& frame);
bool nativeDistinctive(std::string_view normalized);
bool javaDistinctive(std::string_view normalized);
bool jsDistinctive(std::string_view normalized);
std::string nativeEnclosing(std::string_view normalized);
std::string javaEnclosing(std::string_view normalized);
std::string jsEnclosing(std::string_view normalized);
const char* nativeNoise(std::string_view normalized);
const char* javaNoise(std::string_view normalized);
const char* jsNoise(std::string_view normalized);
std::optional<InAppDecision> nativeAppRule(const GroupingFrame& frame, std::string_view normalized,
                                           const AppRules& rules);
std::optional<InAppDecision> javaAppRule(const GroupingFrame& frame, std::string_view normalized,
                                         const AppRules& rules);
const char* nativeLibraryCode(std::string_view normalized);
InAppDecision nativeInAppDefault(const GroupingFrame& frame, std::string_view normalized);
InAppDecision javaInAppDefault(const GroupingFrame& frame, std::string_view normalized);
InAppDecision jsInAppDefault(const GroupingFrame& frame, std::string_view normalized);
InAppDecision unknownInAppDefault(const GroupingFrame& frame, std::string_view normalized);
}  // namespace kinds

}  // namespace restack::grouping
