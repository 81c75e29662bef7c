// A generated corpus of restored events with known true groups, for measuring how often
// grouping splits one problem into several fingerprints or merges different problems
// (docs/grouping.md). Deterministic for a given seed.
//
// A true problem is (platform, kind, exception type, crash site), the crash site being a chain
// of one to three app functions (innermost first); for lag it is the hot chain most samples
// show. Everything else varies per event the way real traffic does:
//   - builds: every app has 4 builds whose restored names differ in compiler decorations (lambda
//     and anonymous-class numbers, block_invoke / closure numbers, [clone .cold] and .isra
//     suffixes, std::__1 vs std::__ndk1, outlined functions, synthetic accessors present or
//     not, javac vs D8 vs R8 lambda classes, content-hashed JS chunk names);
//   - call paths: 0-6 app callers and framework frames above the crash site, from a pool shared
//     by all problems;
//   - noise: system and library frames between app frames, throw/abort/crash-handler frames on
//     top, thread entry frames at the bottom, direct recursion of 1-8 levels, Kotlin $default
//     bridges, JS async/new/Object. prefixes and [as alias] suffixes, messages with ids;
//   - problems share functions on purpose (a helper that crashes when reached from different
//     call sites is different problems), so merges are possible when grouping is too coarse.
// With `missing_symbols_share` > 0, that share of events lose the app's symbols (app frames
// unrestored), as when a build's symbols were uploaded late.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "grouping/model.h"

namespace restack::grouping::corpus {

struct CorpusOptions {
  uint64_t seed = 42;                // same seed, same corpus
  size_t problems = 1500;            // distinct true problems
  size_t min_events = 12000;         // events generated (at least one per problem)
  double missing_symbols_share = 0;  // share of events whose app frames are unrestored
};

struct CorpusEvent {
  GroupingInput input;
  uint32_t true_group = 0;
  std::string label;  // "android-java crash", "ios lag", … for the per-kind rows
  bool missing_symbols = false;
};

std::vector<CorpusEvent> generateCorpus(const CorpusOptions& options);

struct SplitMergeRow {
  std::string label;
  size_t problems = 0;
  size_t events = 0;
  size_t fingerprints = 0;
  size_t split_problems = 0;       // true problems that got more than one fingerprint
  size_t merged_fingerprints = 0;  // fingerprints shared by more than one true problem
};

// One row per label plus a final "all" row. `fingerprint` maps an event to its group key.
std::vector<SplitMergeRow> evaluate(const std::vector<CorpusEvent>& events,
                                    const std::function<std::string(const CorpusEvent&)>& fingerprint);

// A deliberately naive fingerprint for comparison: exception type + the top three function
// names exactly as restored (no normalization, no in-app detection, no noise removal).
std::string naiveFingerprint(const CorpusEvent& event);

}  // namespace restack::grouping::corpus
