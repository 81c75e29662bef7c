#include "worker/cli/progress.h"

#include <cstdio>
#include <memory>

namespace restack::cli {

IngestProgress stderrProgress(const std::string& label) {
  struct State {
    std::chrono::steady_clock::time_point last{};
  };
  auto state = std::make_shared<State>();
  return [label, state](uint64_t done, uint64_t total, std::string_view stage) {
    auto now = std::chrono::steady_clock::now();
    bool finished = total != 0 && done >= total;
    if (!finished && now - state->last < std::chrono::seconds(1)) return;
    state->last = now;
    if (total != 0) {
      std::fprintf(stderr, "%s: %.*s %llu/%llu (%.0f%%)\n", label.c_str(), static_cast<int>(stage.size()), stage.data(),
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                   100.0 * static_cast<double>(done) / static_cast<double>(total));
    } else {
      std::fprintf(stderr, "%s: %.*s %llu\n", label.c_str(), static_cast<int>(stage.size()), stage.data(),
                   static_cast<unsigned long long>(done));
    }
  };
}

}  // namespace restack::cli
