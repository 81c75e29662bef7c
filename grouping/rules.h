// Per-app grouping rules and the options every app shares.
//
// A rule file is YAML, one per app (`<rules_dir>/<app>.yaml`); see
// config/grouping-rules.example.yaml for every key with comments. Worked example:
//
//   version: 1
//   app_packages: [com.shopee.]           # Java package prefixes that are the app's own
//   app_modules: [ShopeeApp, "libshopee*.so"]  # native images / libraries that are the app's own
//   in_app:                                # explicit decisions, first match wins
//     - {package: com.shopee.thirdparty., in_app: false}
//   ignore:                                # frames never hashed (still shown on the event)
//     - {function: "com.shopee.log.*"}
//   fingerprint:                           # force a fingerprint, first match wins
//     - {exception_type: java.lang.OutOfMemoryError, fingerprint: out-of-memory, title: Out of memory}
//     - {message: "*Unable to resolve host*", fingerprint: no-network}
//
// Patterns are globs: `*` matches any run of characters (including `/` and `.`), `?` one
// character; everything else is literal and case-sensitive. `package` is a plain prefix.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "formats/common/status.h"
#include "grouping/model.h"

namespace restack::grouping {

// Glob match as described above. Bounded: O(|text| * |pattern|) in the worst case.
bool globMatch(std::string_view pattern, std::string_view text);

// Which frames a rule applies to. Every non-empty field must match; all empty matches nothing.
struct FrameMatcher {
  std::string function;  // glob on the normalized function name
  std::string package;   // prefix of the normalized Java function ("com.shopee.")
  std::string module;    // glob on the module as given, or on its basename
  std::string file;      // glob on the file / URL
  std::string platform;  // only for this platform ("" = every platform)

  bool empty() const;
  bool matches(const GroupingFrame& frame, std::string_view normalized_function, std::string_view platform_name) const;
  std::string describe() const;  // "package com.shopee. module libfoo.so"
};

struct InAppRule {
  FrameMatcher match;
  bool in_app = true;
  std::string origin;  // "shopee.yaml:7", used in reasons and rules_applied
};

struct IgnoreRule {
  FrameMatcher match;
  std::string origin;
};

struct FingerprintRule {
  std::string exception_type;  // glob ("" = any)
  std::string message;         // glob on the first line of the message ("" = any)
  std::string kind;            // crash | anr | lag | error ("" = any)
  std::string platform;        // "" = any
  std::string fingerprint;     // the group name all matching events share (hashed)
  std::string title;           // replaces the computed title when set
  std::string origin;
};

struct AppRules {
  std::string source;                     // file the rules came from
  std::vector<std::string> app_packages;  // Java package prefixes that are in-app
  std::vector<std::string> app_modules;   // globs on native module names that are in-app
  std::vector<InAppRule> in_app;
  std::vector<IgnoreRule> ignore;
  std::vector<FingerprintRule> fingerprints;
};

// Knobs shared by every app. Defaults are the ones the corpus in docs/grouping.md measured.
struct GroupingOptions {
  // How many in-app frames (innermost first, after normalization) make the fingerprint.
  // Default 3: enough to tell call sites of a shared helper apart, few enough that different
  // paths into the same crash site still group.
  size_t in_app_frames = 3;
  // How many frames are hashed when the stack has no in-app frame (fallback to all frames).
  // Default 3.
  size_t fallback_frames = 3;
  // Lag events: descend the samples' common path while one child is seen in more than this
  // share of the samples that show in-app frames. Default 0.5 (a strict majority).
  double lag_min_share = 0.5;
  // Frames examined per stack; deeper frames are ignored (bounds work on hostile input).
  // Default 512.
  size_t max_frames_per_stack = 512;
  // Characters of the message's first line kept for the title and the message fallback.
  // Default 200.
  size_t message_max_chars = 200;
};

struct GroupingConfig {
  GroupingOptions options;
  std::map<std::string, AppRules> apps;  // by app name

  const AppRules* rulesFor(std::string_view app) const;
};

// Parses one rule file's text. `source_name` prefixes every error ("shopee.yaml:12: …").
Expected<AppRules> parseAppRules(std::string_view yaml_text, const std::string& source_name);
// Reads and parses a rule file.
Expected<AppRules> loadAppRules(const std::string& path);
// Loads every `<app>.yaml` / `<app>.yml` of a folder into `config.apps` (app = file stem).
Status loadRulesDirectory(const std::string& directory, GroupingConfig& config);

}  // namespace restack::grouping
