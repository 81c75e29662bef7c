// Prints the split/merge table of docs/grouping.md for a generated corpus.
//   build/loadtest/grouping/grouping_corpus [--seed N] [--problems N] [--events N] [--missing-share F]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "grouping/fingerprint.h"
#include "loadtest/grouping/corpus_generator.h"

using namespace restack::grouping;

namespace {

void printTable(const char* title, const std::vector<corpus::SplitMergeRow>& rows) {
  std::printf("\n%s\n\n", title);
  std::printf("| events of | true problems | events | fingerprints | split problems | merged fingerprints |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  for (const auto& row : rows) {
    std::printf("| %s | %zu | %zu | %zu | %zu (%.2f %%) | %zu |\n", row.label.c_str(), row.problems, row.events,
                row.fingerprints, row.split_problems,
                row.problems == 0 ? 0.0 : 100.0 * double(row.split_problems) / double(row.problems),
                row.merged_fingerprints);
  }
}

}  // namespace

int main(int argc, char** argv) {
  corpus::CorpusOptions options;
  size_t show = 0;
  double lag_min_share =
      GroupingOptions{}.lag_min_share;  // --show N: print the frames behind N split problems and N merges
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seed") == 0) {
      options.seed = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--problems") == 0) {
      options.problems = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--events") == 0) {
      options.min_events = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--lag-min-share") == 0) {
      lag_min_share = std::strtod(argv[i + 1], nullptr);
    } else if (std::strcmp(argv[i], "--show") == 0) {
      show = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--missing-share") == 0) {
      options.missing_symbols_share = std::strtod(argv[i + 1], nullptr);
    } else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  const auto events = corpus::generateCorpus(options);
  GroupingConfig config;
  config.options.lag_min_share = lag_min_share;
  std::printf("corpus: seed %llu, %zu events, missing-symbols share %.2f\n",
              static_cast<unsigned long long>(options.seed), events.size(), options.missing_symbols_share);

  size_t provisional = 0, partial = 0;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> fingerprints;
  std::vector<Quality> qualities;
  fingerprints.reserve(events.size());
  std::map<uint32_t, std::map<std::string, std::string>> explain_problem;  // problem -> fp -> frames
  std::map<std::string, std::map<uint32_t, std::string>> explain_fp;
  for (const auto& event : events) {
    Fingerprint fp = computeFingerprint(event.input, config);
    if (show > 0 && fp.quality == Quality::kComplete) {
      std::string frames =
          event.label + " [" + fp.stack + "/" + fingerprintSourceName(fp.source) +
          (fp.lag_samples ? " share " + std::to_string(fp.lag_share) + " of " + std::to_string(fp.lag_samples) : "") +
          "]";
      for (const auto& name : fp.frames_used) frames += " | " + name;
      explain_problem[event.true_group][fp.hash] = frames;
      explain_fp[fp.hash][event.true_group] = frames;
    }
    provisional += fp.quality == Quality::kProvisional;
    partial += fp.quality == Quality::kPartial;
    fingerprints.push_back(fp.hash);
    qualities.push_back(fp.quality);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto ours = [&](const corpus::CorpusEvent& e) { return fingerprints[std::stoul(e.input.event_id)]; };
  printTable("Restack v2 fingerprint, every event", corpus::evaluate(events, ours));
  if (options.missing_symbols_share > 0) {
    std::vector<corpus::CorpusEvent> complete;
    for (const auto& event : events) {
      if (qualities[std::stoul(event.input.event_id)] == Quality::kComplete) complete.push_back(event);
    }
    printTable("Restack v2 fingerprint, events of quality \"complete\" only", corpus::evaluate(complete, ours));
  }
  printTable("Naive baseline (type + top 3 restored names, no normalization)",
             corpus::evaluate(events, corpus::naiveFingerprint));
  size_t shown = 0;
  for (const auto& [problem, fps] : explain_problem) {
    if (fps.size() < 2 || shown++ >= show) continue;
    std::printf("\nsplit problem %u:\n", problem);
    for (const auto& [hash, frames] : fps) std::printf("  %s  %s\n", hash.c_str(), frames.c_str());
  }
  shown = 0;
  for (const auto& [hash, problems] : explain_fp) {
    if (problems.size() < 2 || shown++ >= show) continue;
    std::printf("\nmerged fingerprint %s:\n", hash.c_str());
    for (const auto& [problem, frames] : problems) std::printf("  problem %u: %s\n", problem, frames.c_str());
  }
  std::printf("\nquality: %zu partial, %zu provisional of %zu events; %.1f µs per event (single thread)\n", partial,
              provisional, events.size(), 1e6 * seconds / double(events.size()));
  return 0;
}
