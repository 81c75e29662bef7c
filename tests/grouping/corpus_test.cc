// Split/merge guard on the generated corpus (loadtest/grouping/corpus_generator.h): zero merges
// and under 1 % split problems, as docs/grouping.md reports for the full corpus.
#include <gtest/gtest.h>

#include "grouping/fingerprint.h"
#include "loadtest/grouping/corpus_generator.h"

namespace restack::grouping {
namespace {

TEST(GroupingCorpus, NoMergesAndFewSplits) {
  corpus::CorpusOptions options;
  options.seed = 7;
  options.problems = 400;
  options.min_events = 3000;
  const auto events = corpus::generateCorpus(options);
  ASSERT_GE(events.size(), 3000u);
  GroupingConfig config;
  auto rows = corpus::evaluate(
      events, [&](const corpus::CorpusEvent& event) { return computeFingerprint(event.input, config).hash; });
  const auto& all = rows.back();
  ASSERT_EQ(all.label, "all");
  EXPECT_EQ(all.problems, 400u);
  EXPECT_EQ(all.merged_fingerprints, 0u);
  EXPECT_LT(double(all.split_problems), 0.01 * double(all.problems));

  // The naive baseline on the same corpus splits almost everything: the corpus is not trivial.
  auto naive = corpus::evaluate(events, corpus::naiveFingerprint).back();
  EXPECT_GT(double(naive.split_problems), 0.5 * double(naive.problems));
}

TEST(GroupingCorpus, MissingSymbolsAreFlaggedNotSilentlyMisgrouped) {
  corpus::CorpusOptions options;
  options.seed = 11;
  options.problems = 300;
  options.min_events = 2000;
  options.missing_symbols_share = 0.1;
  const auto events = corpus::generateCorpus(options);
  GroupingConfig config;
  size_t missing = 0, flagged = 0;
  std::vector<corpus::CorpusEvent> complete;
  for (const auto& event : events) {
    Fingerprint fp = computeFingerprint(event.input, config);
    missing += event.missing_symbols;
    flagged += event.missing_symbols && fp.quality != Quality::kComplete;
    if (fp.quality == Quality::kComplete) complete.push_back(event);
  }
  ASSERT_GT(missing, 100u);
  EXPECT_EQ(flagged, missing);  // every event that lost its app symbols says so
  auto all = corpus::evaluate(complete, [&](const corpus::CorpusEvent& event) {
               return computeFingerprint(event.input, config).hash;
             }).back();
  EXPECT_EQ(all.merged_fingerprints, 0u);
}

}  // namespace
}  // namespace restack::grouping
