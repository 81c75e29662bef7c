// Lag events: the stack that most samples show (fingerprint.h, "Lag").
#include <algorithm>
#include <map>

#include "grouping/annotate.h"

namespace restack::grouping {
namespace {

struct SamplePath {
  std::vector<size_t> frames;  // frame indices, root first
};

std::vector<SamplePath> pathsOf(const std::vector<AnnotatedStack>& samples, bool in_app_only) {
  std::vector<SamplePath> paths(samples.size());
  for (size_t s = 0; s < samples.size(); ++s) {
    const auto& decisions = samples[s].decisions;
    for (size_t i = decisions.size(); i-- > 0;) {
      if (candidate(decisions[i]) && (!in_app_only || decisions[i].in_app)) {
        paths[s].frames.push_back(i);
      }
    }
  }
  return paths;
}

}  // namespace

LagChoice chooseLagStack(const std::vector<AnnotatedStack>& samples, const GroupingOptions& options) {
  LagChoice choice;
  choice.samples = static_cast<uint32_t>(samples.size());
  choice.used_frames.resize(samples.size());
  if (samples.empty()) return choice;

  bool any_in_app = false;
  for (const auto& sample : samples) {
    for (const auto& decision : sample.decisions) any_in_app = any_in_app || (candidate(decision) && decision.in_app);
  }
  choice.in_app = any_in_app;
  const std::vector<SamplePath> paths = pathsOf(samples, any_in_app);
  auto nameAt = [&](size_t sample, size_t depth) -> const std::string& {
    return samples[sample].decisions[paths[sample].frames[depth]].normalized;
  };
  const size_t limit = any_in_app ? options.in_app_frames : options.fallback_frames;
  const double total = static_cast<double>(samples.size());

  // Descend from the root while one child holds a majority (lag_min_share) of the samples that
  // show any such frame: samples of an idle thread say nothing about which code was slow.
  std::vector<size_t> current;
  for (size_t s = 0; s < paths.size(); ++s) {
    if (!paths[s].frames.empty()) current.push_back(s);
  }
  const double with_frames = static_cast<double>(current.size());
  size_t depth = 0;
  for (;;) {
    std::map<std::string_view, std::vector<size_t>> children;  // ordered: ties go to the smallest
    for (size_t s : current) {
      if (paths[s].frames.size() > depth) children[nameAt(s, depth)].push_back(s);
    }
    const std::vector<size_t>* best = nullptr;
    for (const auto& [name, members] : children) {
      if (best == nullptr || members.size() > best->size()) best = &members;
    }
    if (best == nullptr || static_cast<double>(best->size()) <= options.lag_min_share * with_frames) break;
    current = *best;
    ++depth;
  }

  if (depth > 0) {
    const size_t first = depth > limit ? depth - limit : 0;
    const size_t sample0 = current.front();
    for (size_t d = depth; d-- > first;) choice.names.push_back(nameAt(sample0, d));
    for (size_t s : current) {
      for (size_t d = first; d < depth; ++d) choice.used_frames[s].push_back(paths[s].frames[d]);
    }
    choice.share = static_cast<double>(current.size()) / total;
    return choice;
  }

  // No majority even at the root: take the most common innermost key.
  std::map<std::vector<std::string>, std::vector<size_t>> keys;
  for (size_t s = 0; s < paths.size(); ++s) {
    const auto& frames = paths[s].frames;
    if (frames.empty()) continue;
    std::vector<std::string> key;
    for (size_t d = frames.size(); d-- > 0 && key.size() < limit;) key.push_back(nameAt(s, d));
    keys[key].push_back(s);
  }
  const std::pair<const std::vector<std::string>, std::vector<size_t>>* best = nullptr;
  for (const auto& entry : keys) {
    if (best == nullptr || entry.second.size() > best->second.size()) best = &entry;
  }
  if (best == nullptr) return choice;
  choice.names = best->first;
  for (size_t s : best->second) {
    const auto& frames = paths[s].frames;
    for (size_t d = frames.size(); d-- > 0 && frames.size() - d <= limit;) {
      choice.used_frames[s].push_back(frames[d]);
    }
  }
  choice.share = static_cast<double>(best->second.size()) / total;
  return choice;
}

}  // namespace restack::grouping
